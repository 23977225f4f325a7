"""Shared test support: the scripted OpenAI-compatible LLM server and its fixtures.

Fixtures are registered by ``pytest_plugins = ["tests.support.fixtures"]`` in the root
``tests/conftest.py``; import the server class from here for direct use.
"""

from tests.support.llm_http import RecordedRequest
from tests.support.llm_server import DEFAULT_MODEL, ScriptedLLMServer, prompt_contains
from tests.support.llm_wire import hashed_embedding

__all__ = [
    "DEFAULT_MODEL",
    "RecordedRequest",
    "ScriptedLLMServer",
    "hashed_embedding",
    "prompt_contains",
]
