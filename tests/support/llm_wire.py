"""Wire-format builders for the scripted OpenAI-compatible test server.

Pure functions that turn a scripted reply into the exact JSON shapes of the OpenAI
Chat Completions and Embeddings APIs (non-streaming bodies, ``chat.completion.chunk``
SSE events, error bodies), plus the deterministic helpers the server uses when a test
does not pin a value itself: token estimates and hashed character-n-gram embeddings.

Kept separate from :mod:`tests.support.llm_server` so the HTTP plumbing and the
payload shapes can be read (and checked against the SDK sources) independently.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import struct
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

STREAM_PIECE_CHARS = 8
"""Size of each content / arguments fragment in a streamed reply."""


@dataclass(frozen=True)
class ToolCall:
    """One assistant tool call, already in wire form (``arguments`` is a JSON string)."""

    id: str
    name: str
    arguments: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class ChatReply:
    """A fully resolved assistant reply for one request."""

    completion_id: str
    model: str
    created: int
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int

    def usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


# --------------------------------------------------------------------------- text helpers


def content_text(content: Any) -> str:
    """Plain text of a message ``content`` (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def messages_of(body: Any) -> list[dict[str, Any]]:
    """The ``messages`` list of a chat request body (empty when malformed)."""
    if not isinstance(body, dict):
        return []
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict)]


def all_prompt_text(body: Any) -> str:
    """All message contents of a chat request joined by newlines."""
    return "\n".join(content_text(m.get("content")) for m in messages_of(body))


def last_user_text(body: Any) -> str:
    """Text of the last ``user`` message of a chat request ("" when there is none)."""
    for message in reversed(messages_of(body)):
        if message.get("role") == "user":
            return content_text(message.get("content"))
    return ""


def summarize(text: str, limit: int = 120) -> str:
    """One-line, length-limited rendering of ``text`` for error messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate: one token per four characters, at least one."""
    return max(1, len(text) // 4)


def reply_text_length(content: str | None, tool_calls: Sequence[ToolCall]) -> int:
    """Length of everything the assistant "generated", for completion-token estimates."""
    return len(content or "") + sum(len(c.name) + len(c.arguments) for c in tool_calls)


# --------------------------------------------------------------------------- chat bodies


def chat_completion(reply: ChatReply) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` response body."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [call.to_wire() for call in reply.tool_calls]
    return {
        "id": reply.completion_id,
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": reply.usage(),
        "system_fingerprint": None,
    }


def _pieces(text: str) -> list[str]:
    return [text[i : i + STREAM_PIECE_CHARS] for i in range(0, len(text), STREAM_PIECE_CHARS)]


def chat_completion_chunks(reply: ChatReply, *, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` events of a streamed reply, in order (without [DONE]).

    Mirrors OpenAI: a role-only first delta, content fragments, tool-call deltas (the first
    delta of each call carries ``id``/``type``/``name``, later ones only argument
    fragments), a final empty delta with ``finish_reason`` and, when the request asked for
    ``stream_options.include_usage``, a trailing ``choices: []`` chunk with ``usage`` (all
    earlier chunks then carry ``"usage": null``).
    """

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        event: dict[str, Any] = {
            "id": reply.completion_id,
            "object": "chat.completion.chunk",
            "created": reply.created,
            "model": reply.model,
            "system_fingerprint": None,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        if include_usage:
            event["usage"] = None
        return event

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in _pieces(reply.content or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }
                ]
            }
        )
        for piece in _pieces(call.arguments):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, reply.finish_reason)
    if include_usage:
        yield {
            "id": reply.completion_id,
            "object": "chat.completion.chunk",
            "created": reply.created,
            "model": reply.model,
            "system_fingerprint": None,
            "choices": [],
            "usage": reply.usage(),
        }


def tool_arguments(arguments: Any) -> str:
    """Wire form of tool-call arguments: a JSON string (strings pass through untouched)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def forced_tool_name(tools: list[Any], tool_choice: Any) -> str:
    """Name of the function ``tool_choice`` forces, else of the first function tool."""
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        if isinstance(function, dict) and function.get("name"):
            return str(function["name"])
    if isinstance(tool_choice, str) and tool_choice not in ("auto", "required", "none"):
        return tool_choice
    for tool in tools:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            return str(tool["function"].get("name", "tool"))
    return "tool"


def model_object(name: str) -> dict[str, Any]:
    """One entry of the ``/v1/models`` list."""
    return {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}


# --------------------------------------------------------------------------- errors

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
}


def error_type_for(status: int) -> str:
    """OpenAI-style error ``type`` for an HTTP status."""
    if status >= 500:
        return "server_error"
    return _ERROR_TYPES.get(status, "invalid_request_error")


def error_body(status: int, message: str, *, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body: ``{"error": {"message", "type", "param", "code"}}``."""
    error_type = error_type_for(status)
    return {
        "error": {
            "message": message,
            "type": error_type,
            "param": None,
            "code": code if code is not None else error_type,
        }
    }


# --------------------------------------------------------------------------- embeddings


def embedding_inputs(raw: Any) -> list[str]:
    """Normalize the ``input`` of an embeddings request to a list of strings.

    Accepts a string, a list of strings, one token array (``list[int]``) or a list of
    token arrays; token arrays are embedded via their ``str()``.
    """
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        if raw and all(isinstance(item, int) for item in raw):
            return [str(raw)]
        return [item if isinstance(item, str) else str(item) for item in raw]
    return [str(raw)]


def _features(text: str) -> Iterator[tuple[str, float]]:
    normalized = "".join(unicodedata.normalize("NFKC", text).lower().split())
    for char in normalized:
        yield "u:" + char, 0.5
    for first, second in itertools.pairwise(normalized):
        yield "b:" + first + second, 1.0


def hashed_embedding(text: str, dim: int) -> list[float]:
    """Deterministic, L2-normalized feature-hashing embedding of ``text``.

    Character unigrams and bigrams of the NFKC-normalized, lower-cased, whitespace-free
    text are hashed (blake2b, stable across processes) into ``dim`` signed buckets, so
    texts sharing many n-grams, Japanese included, have a high cosine similarity while
    unrelated texts stay near zero. Text without features maps to the first unit vector.
    """
    vector = [0.0] * dim
    for feature, weight in _features(text):
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        sign = 1.0 if value & 1 else -1.0
        vector[(value >> 1) % dim] += sign * weight
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


def encode_base64_floats(vector: Sequence[float]) -> str:
    """Base64 of a little-endian float32 array: the ``encoding_format="base64"`` form."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def embeddings_response(
    vectors: Sequence[Sequence[float]], *, model: str, encoding_format: str, prompt_tokens: int
) -> dict[str, Any]:
    """An embeddings ``list`` response body in the requested encoding."""
    data: list[dict[str, Any]] = []
    for index, vector in enumerate(vectors):
        encoded: Any = encode_base64_floats(vector) if encoding_format == "base64" else list(vector)
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }


def dumps(payload: Any) -> bytes:
    """Compact UTF-8 JSON encoding used for every response body."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
