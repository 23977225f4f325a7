"""keiri-agent: an LLM workbench for Japanese back-office work (経理).

Layers, from the bottom up (a module imports only from its own layer or below): yaml_words /
byte_place / _lazy, errors, config, localtime / sudachi / rlimits / threads / stop_flag /
bank_words / shell_words, sandbox, privacy, documents / events / workspace / file_access /
users, versions, llm, retrieval, agents, blocks, plan, examples, schedule, design / server /
doctor / control, then cli and ui side by side. ARCHITECTURE.md is the map; the layers are a
checked contract (``[tool.importlinter]`` in pyproject.toml; ``tests/test_architecture_doc.py``
keeps this list, ARCHITECTURE.md's and the contract's the same).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("keiri-agent")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
