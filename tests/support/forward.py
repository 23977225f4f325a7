"""An httpx transport that delivers requests meant for a public endpoint to the scripted server.

Product code reaches the scripted server through ``OPENAI_BASE_URL``, as it reaches vLLM or
Ollama. What it sends to OpenAI's *own* endpoint (no ``OPENAI_BASE_URL``, or
``https://api.openai.com/v1``) is tested by handing the chat model an ``httpx.Client`` with
:class:`ToScriptedServer`: the request keeps its path, headers (``Host: api.openai.com``
included) and body; only the connection goes to the server on 127.0.0.1.
"""

from __future__ import annotations

import httpx

from tests.support.llm_server import ScriptedLLMServer

__all__ = ["ToScriptedServer", "forwarding_client"]


class ToScriptedServer(httpx.BaseTransport):
    """Sends every request to ``server`` whatever host its URL names."""

    def __init__(self, server: ScriptedLLMServer) -> None:
        self._target = httpx.URL(server.url)
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(
            scheme=self._target.scheme, host=self._target.host, port=self._target.port
        )
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def forwarding_client(server: ScriptedLLMServer) -> httpx.Client:
    """An ``httpx.Client`` (for a model's ``http_client``) whose requests reach ``server``."""
    return httpx.Client(transport=ToScriptedServer(server))
