"""A scripted, OpenAI-compatible HTTP server: the LLM test double of the whole suite.

Product code talks to LLMs through the OpenAI wire protocol (``OPENAI_BASE_URL``), the
same way a user points it at vLLM or Ollama. Tests therefore replace the model at the
HTTP boundary rather than by mocking Python objects: :class:`ScriptedLLMServer` is a real
server on ``127.0.0.1`` that the unmodified ``openai`` SDK and ``langchain_openai`` talk
to, and every answer it gives was scripted by the test::

    with ScriptedLLMServer() as server:
        server.add_chat("こんにちは")                       # plain text reply
        server.add_chat(json={"amount": 1200})              # structured output reply
        server.add_error(429, retry_after=0.01)             # one rate-limit response
        ...  # exercise product code with OPENAI_BASE_URL=server.url
        assert server.pending() == 0

Chat steps are consumed in order; a step with ``when=`` only answers requests whose JSON
body satisfies the predicate (see :func:`prompt_contains`). A request no step matches
gets an HTTP 500 saying so, so a missing script fails loudly instead of hanging. The
embeddings endpoint answers with deterministic n-gram-hash vectors unless scripted.
``conformance=Conformance("openai" | "anthropic")`` (:mod:`tests.support.conformance`) refuses,
with the provider's HTTP 400, tool schemas that provider would refuse.
The same chat steps also answer the Anthropic Messages API (``POST /v1/messages``, for
``ANTHROPIC_BASE_URL=server.root_url``) and Azure OpenAI's deployment paths
(``/openai/deployments/<name>/chat/completions``, for ``AZURE_OPENAI_ENDPOINT=server.root_url``). Payload shapes live in :mod:`tests.support.llm_wire`
and :mod:`tests.support.anthropic_wire`, HTTP plumbing in :mod:`tests.support.llm_http`.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from tests.support import anthropic_wire
from tests.support import llm_wire as wire
from tests.support.conformance import Conformance
from tests.support.llm_http import RecordedRequest, Response, ScriptedHTTPServer

Predicate = Callable[[dict[str, Any]], bool]
Endpoint = Literal["chat", "embeddings"]

DEFAULT_MODEL = "scripted-model"
_CHAT_PATH = "/v1/chat/completions"
_EMBEDDINGS_PATH = "/v1/embeddings"
_MODELS_PATH = "/v1/models"
_MESSAGES_PATH = anthropic_wire.MESSAGES_PATH
_AZURE_DEPLOYMENT = re.compile(r"^/openai/deployments/[^/]+(/chat/completions|/embeddings)$")


def _endpoint(path: str) -> str:
    """The OpenAI path a request is for: Azure's deployment paths answer as ``/v1/...``."""
    match = _AZURE_DEPLOYMENT.match(path)
    return "/v1" + match.group(1) if match else path


@dataclass
class _ChatStep:
    content: str | None
    json_value: Any
    tool_calls: list[dict[str, Any]] | None
    usage: tuple[int, int] | None
    delay: float
    when: Predicate | None
    repeat: bool
    finish_reason: str | None


@dataclass
class _ErrorStep:
    status: int
    message: str
    retry_after: float | None
    delay: float
    when: Predicate | None
    repeat: bool = False


@dataclass
class _EmbeddingStep:
    vectors: list[list[float]] | None
    when: Predicate | None
    repeat: bool


_Step = _ChatStep | _ErrorStep | _EmbeddingStep


def prompt_contains(text: str) -> Predicate:
    """``when=`` predicate: true when any message of the chat request contains ``text``."""

    def predicate(body: dict[str, Any]) -> bool:
        return text in wire.all_prompt_text(body)

    return predicate


class ScriptedLLMServer:
    """OpenAI Chat Completions + Embeddings API double answering from a script."""

    embedding_dim: int = 64

    def __init__(
        self, *, embedding_dim: int | None = None, conformance: Conformance | None = None
    ) -> None:
        if embedding_dim is not None:
            self.embedding_dim = embedding_dim
        # provider-conformance mode: requests a real provider would refuse get its HTTP 400
        self.conformance = conformance
        self.requests: list[RecordedRequest] = []
        self._lock = threading.RLock()  # reentrant: `when` predicates may call pending()
        self._steps: dict[str, list[_Step]] = {"chat": [], "embeddings": []}
        self._models: list[str] = []
        self._counters: dict[str, itertools.count[int]] = {}
        self._stopping = threading.Event()
        self._httpd: ScriptedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        """Base URL including ``/v1``: the value for ``OPENAI_BASE_URL``."""
        if self._httpd is None:
            raise RuntimeError("ScriptedLLMServer is not running; call start() first")
        return f"http://127.0.0.1:{self._httpd.port}/v1"

    @property
    def root_url(self) -> str:
        """Base URL without ``/v1``: the value for ``ANTHROPIC_BASE_URL``."""
        return self.url.removesuffix("/v1")

    def start(self) -> ScriptedLLMServer:
        if self._httpd is not None:
            raise RuntimeError("ScriptedLLMServer already started")
        self._stopping.clear()
        self._httpd = ScriptedHTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and interrupt pending ``delay``s."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd, self._thread = None, None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ scripting

    def add_chat(
        self,
        content: str | None = None,
        *,
        json: Any = None,
        tool_calls: list[dict[str, Any]] | None = None,
        usage: tuple[int, int] | None = None,
        delay: float = 0.0,
        when: Predicate | None = None,
        repeat: bool = False,
        finish_reason: str | None = None,
    ) -> None:
        """Script one assistant reply.

        ``content``: text reply. ``json``: a structured-output object, returned as JSON
        content when the request has a ``response_format``, as a call of the requested
        (or first) tool when it has ``tools``, as JSON text otherwise. ``tool_calls``:
        explicit calls ``[{"name": ..., "arguments": {...} | "raw json", "id"?: ...}]``,
        may be combined with ``content``. ``usage``: ``(prompt_tokens,
        completion_tokens)``, estimated when omitted. ``delay``: seconds to wait before
        answering. ``when``: predicate on the request body. ``repeat``: keep the step
        instead of consuming it. ``finish_reason``: override ("stop"/"tool_calls").
        """
        if json is not None and (content is not None or tool_calls):
            raise ValueError("add_chat: json= cannot be combined with content= or tool_calls=")
        if content is None and json is None and not tool_calls:
            raise ValueError("add_chat: give content=, json= or tool_calls=")
        step = _ChatStep(content, json, tool_calls, usage, delay, when, repeat, finish_reason)
        with self._lock:
            self._steps["chat"].append(step)

    def add_error(
        self,
        status: int,
        message: str = "scripted error",
        *,
        times: int = 1,
        retry_after: float | None = None,
        delay: float = 0.0,
        when: Predicate | None = None,
        endpoint: Endpoint = "chat",
    ) -> None:
        """Script ``times`` consecutive error responses with an OpenAI-style error body.

        ``retry_after`` sets the ``Retry-After`` header (fractional seconds are accepted
        by the openai SDK); ``endpoint`` is ``"chat"`` or ``"embeddings"``.
        """
        if endpoint not in self._steps:
            raise ValueError(f"add_error: unknown endpoint {endpoint!r}")
        with self._lock:
            for _ in range(times):
                self._steps[endpoint].append(_ErrorStep(status, message, retry_after, delay, when))

    def add_embedding(
        self,
        vectors: list[list[float]] | None = None,
        *,
        when: Predicate | None = None,
        repeat: bool = False,
    ) -> None:
        """Script one embeddings response (one vector per input, or one for all inputs).

        ``vectors=None`` answers with the default hashed vectors but still consumes a step.
        """
        with self._lock:
            self._steps["embeddings"].append(_EmbeddingStep(vectors, when, repeat))

    # ------------------------------------------------------------------ inspection

    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of all ``/chat/completions`` requests, in arrival order."""
        return self._bodies(_CHAT_PATH)

    def message_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of all Anthropic ``/messages`` requests, in arrival order."""
        return self._bodies(_MESSAGES_PATH)

    def embedding_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of all ``/embeddings`` requests, in arrival order."""
        return self._bodies(_EMBEDDINGS_PATH)

    def pending(self, endpoint: Endpoint = "chat") -> int:
        """Number of scripted (non-repeating) steps not consumed yet."""
        with self._lock:
            return sum(1 for step in self._steps[endpoint] if not step.repeat)

    def _bodies(self, path: str) -> list[dict[str, Any]]:
        with self._lock:
            records = list(self.requests)
        return [r.body for r in records if _endpoint(r.path) == path and isinstance(r.body, dict)]

    # ------------------------------------------------------------------ request handling

    @property
    def stopping(self) -> threading.Event:
        """Set while stopping; pending ``delay`` waits end early."""
        return self._stopping

    def record(self, request: RecordedRequest) -> None:
        """Append ``request`` to :attr:`requests` (called by the HTTP layer)."""
        with self._lock:
            self.requests.append(request)

    def _next_id(self, kind: str) -> int:
        """Next number of the ``kind`` sequence ("chatcmpl", "call", "req"), from 1."""
        with self._lock:
            return next(self._counters.setdefault(kind, itertools.count(1)))

    def _take(self, endpoint: str, body: dict[str, Any]) -> _Step | None:
        """Pop (unless repeating) the first step of ``endpoint`` whose predicate matches."""
        with self._lock:
            steps = self._steps[endpoint]
            for index, step in enumerate(steps):
                if step.when is None or step.when(body):
                    if not step.repeat:
                        del steps[index]
                    return step
        return None

    def _see_model(self, model: str) -> None:
        with self._lock:
            if model not in self._models:
                self._models.append(model)

    def respond(self, method: str, path: str, body: Any, bad_json: bool) -> Response:
        """Decide the response to one request (called by the HTTP layer)."""
        path = _endpoint(path)
        if method == "POST" and path in (_CHAT_PATH, _EMBEDDINGS_PATH):
            if bad_json or not isinstance(body, dict):
                return _error(400, "scripted LLM server: request body must be a JSON object")
            self._see_model(str(body.get("model") or DEFAULT_MODEL))
            try:
                if path == _CHAT_PATH:
                    return self._chat(body)
                return self._embeddings(body)
            except Exception as exc:  # a broken `when` predicate or an unexpected body
                message = f"scripted LLM server: internal error: {type(exc).__name__}: {exc}"
                return _error(500, message, retry=False)
        if method == "POST" and path == _MESSAGES_PATH:
            if bad_json or not isinstance(body, dict):
                return _anthropic_error(400, "scripted LLM server: body must be a JSON object")
            self._see_model(str(body.get("model") or DEFAULT_MODEL))
            try:
                return self._messages(body)
            except Exception as exc:  # a broken `when` predicate or an unexpected body
                message = f"scripted LLM server: internal error: {type(exc).__name__}: {exc}"
                return _anthropic_error(500, message, retry=False)
        if method == "GET" and path == _MODELS_PATH:
            return Response(200, {"object": "list", "data": self._model_list()})
        if method == "GET" and path.startswith(_MODELS_PATH + "/"):
            return Response(200, wire.model_object(path.removeprefix(_MODELS_PATH + "/")))
        return _error(404, f"scripted LLM server: unknown endpoint {method} {path}", retry=False)

    def _model_list(self) -> list[dict[str, Any]]:
        with self._lock:
            names = [*self._models, *([] if DEFAULT_MODEL in self._models else [DEFAULT_MODEL])]
        return [wire.model_object(name) for name in names]

    def _chat(self, body: dict[str, Any]) -> Response:
        refused = self.conformance.check(_CHAT_PATH, body) if self.conformance else None
        if refused is not None:
            return _error(400, refused, retry=False)
        step = self._take("chat", body)
        if step is None:
            summary = wire.summarize(wire.last_user_text(body))
            message = (
                "scripted LLM server: no scripted response matches this request "
                f"(last user message: {summary!r}; pending chat steps: {self.pending()})"
            )
            return _error(500, message, retry=False)
        if isinstance(step, _ErrorStep):
            return _scripted_error(step)
        assert isinstance(step, _ChatStep)
        reply = self._build_reply(step, body)
        headers = {"x-request-id": f"req_{self._next_id('req')}"}
        if body.get("stream") is True:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            events = list(wire.chat_completion_chunks(reply, include_usage=include_usage))
            return Response(200, events=events, headers=headers, delay=step.delay)
        payload = wire.chat_completion(reply)
        return Response(200, payload, headers=headers, delay=step.delay)

    def _build_reply(self, step: _ChatStep, body: dict[str, Any]) -> wire.ChatReply:
        content = step.content
        calls = [
            wire.ToolCall(
                id=str(call.get("id") or f"call_{self._next_id('call')}"),
                name=str(call["name"]),
                arguments=wire.tool_arguments(call.get("arguments", {})),
            )
            for call in step.tool_calls or []
        ]
        if step.json_value is not None:
            encoded = json.dumps(step.json_value, ensure_ascii=False)
            response_format = body.get("response_format")
            tools = body.get("tools")
            tool_choice = body.get("tool_choice")
            if isinstance(response_format, dict) and response_format.get("type") in (
                "json_schema",
                "json_object",
            ):
                content = encoded
            elif isinstance(tools, list) and tools and tool_choice != "none":
                name = wire.forced_tool_name(tools, tool_choice)
                calls = [wire.ToolCall(f"call_{self._next_id('call')}", name, encoded)]
            else:
                content = encoded
        finish_reason = step.finish_reason or ("tool_calls" if calls else "stop")
        if step.usage is not None:
            prompt_tokens, completion_tokens = step.usage
        else:
            prompt_tokens = wire.estimate_tokens(wire.all_prompt_text(body))
            completion_tokens = max(1, wire.reply_text_length(content, calls) // 4)
        return wire.ChatReply(
            completion_id=f"chatcmpl-{self._next_id('chatcmpl')}",
            model=str(body.get("model") or DEFAULT_MODEL),
            created=int(time.time()),
            content=content,
            tool_calls=tuple(calls),
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def _messages(self, body: dict[str, Any]) -> Response:
        """Answer an Anthropic Messages request from the chat steps."""
        if body.get("stream") is True:
            message = "scripted LLM server: streaming is not offered on /v1/messages"
            return _anthropic_error(400, message, retry=False)
        refused = self.conformance.check(_MESSAGES_PATH, body) if self.conformance else None
        if refused is not None:
            return _anthropic_error(400, refused, retry=False)
        view = anthropic_wire.as_openai_view(body)
        step = self._take("chat", view)
        if step is None:
            summary = wire.summarize(wire.last_user_text(view))
            message = (
                "scripted LLM server: no scripted response matches this request "
                f"(last user message: {summary!r}; pending chat steps: {self.pending()})"
            )
            return _anthropic_error(500, message, retry=False)
        if isinstance(step, _ErrorStep):
            response = _anthropic_error(step.status, step.message)
            response.delay = step.delay
            if step.retry_after is not None:
                response.headers["Retry-After"] = f"{step.retry_after:g}"
            return response
        assert isinstance(step, _ChatStep)
        payload = anthropic_wire.reply(
            body,
            view,
            content=step.content,
            json_value=step.json_value,
            tool_calls=step.tool_calls,
            usage=step.usage,
            next_id=self._next_id,
        )
        headers = {"request-id": f"req_{self._next_id('req')}"}
        return Response(200, payload, headers=headers, delay=step.delay)

    def _embeddings(self, body: dict[str, Any]) -> Response:
        if "input" not in body:
            return _error(400, "scripted LLM server: embeddings request without 'input'")
        texts = wire.embedding_inputs(body["input"])
        dimensions = body.get("dimensions")
        dim = dimensions if isinstance(dimensions, int) and dimensions > 0 else self.embedding_dim
        vectors = [wire.hashed_embedding(text, dim) for text in texts]
        step = self._take("embeddings", body)
        if isinstance(step, _ErrorStep):
            return _scripted_error(step)
        if isinstance(step, _EmbeddingStep) and step.vectors is not None:
            if len(step.vectors) == len(texts):
                vectors = step.vectors
            elif len(step.vectors) == 1:
                vectors = step.vectors * len(texts)
            else:
                message = (
                    f"scripted LLM server: add_embedding gave {len(step.vectors)} vectors "
                    f"for a request with {len(texts)} inputs"
                )
                return _error(500, message, retry=False)
        payload = wire.embeddings_response(
            vectors,
            model=str(body.get("model") or DEFAULT_MODEL),
            encoding_format=str(body.get("encoding_format") or "float"),
            prompt_tokens=sum(wire.estimate_tokens(text) for text in texts),
        )
        return Response(200, payload, headers={"x-request-id": f"req_{self._next_id('req')}"})


def _error(status: int, message: str, *, retry: bool = True) -> Response:
    # `x-should-retry: false` makes the openai SDK fail at once on harness errors
    # (missing script, bad request) instead of retrying with backoff.
    headers = {} if retry else {"x-should-retry": "false"}
    return Response(status, wire.error_body(status, message), headers=headers)


def _anthropic_error(status: int, message: str, *, retry: bool = True) -> Response:
    headers = {} if retry else {"x-should-retry": "false"}
    return Response(status, anthropic_wire.error_body(status, message), headers=headers)


def _scripted_error(step: _ErrorStep) -> Response:
    response = _error(step.status, step.message)
    response.delay = step.delay
    if step.retry_after is not None:
        response.headers["Retry-After"] = f"{step.retry_after:g}"
    return response
