"""Anthropic Messages API shapes for the scripted LLM server (``POST /v1/messages``).

The scripted server answers Anthropic requests from the same chat steps as OpenAI ones, so a
test scripts a reply once and points ``ANTHROPIC_BASE_URL`` at :attr:`ScriptedLLMServer.root_url`
to run product code with ``KEIRI_LLM_MODEL_<ROLE>=anthropic:<model>``. This module turns a
request into the OpenAI-like view the steps' ``when=`` predicates read, and a scripted reply
into a ``message`` body (text blocks, ``tool_use`` blocks for tools and structured output) or an
``error`` body, exactly as the ``anthropic`` SDK and ``langchain_anthropic`` parse them.
Streaming is not offered: a ``stream: true`` request gets a 400 saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support import llm_wire as wire

MESSAGES_PATH = "/v1/messages"

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class ToolUse:
    """One ``tool_use`` content block (``input`` is the decoded arguments object)."""

    id: str
    name: str
    input: Any


def system_text(body: dict[str, Any]) -> str:
    """The ``system`` prompt of a request: a string or a list of text blocks."""
    return wire.content_text(body.get("system"))


def as_openai_view(body: dict[str, Any]) -> dict[str, Any]:
    """The request as an OpenAI-like body (system first), for ``when=`` predicates."""
    messages: list[dict[str, Any]] = []
    system = system_text(body)
    if system:
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            messages.append(
                {
                    "role": message.get("role"),
                    "content": _blocks_text(message.get("content")),
                }
            )
    view = dict(body)
    view["messages"] = messages
    return view


def _blocks_text(content: Any) -> str:
    """Text of a message ``content``, including tool results given back to the model."""
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                parts.append(_blocks_text(block.get("content")))
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        return "".join(parts)
    return wire.content_text(content)


def forced_tool(body: dict[str, Any]) -> str | None:
    """The tool a request forces (``tool_choice: {type: tool, name}``), else its first tool."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
        return str(choice["name"])
    if isinstance(choice, dict) and choice.get("type") == "none":
        return None
    tools = body.get("tools")
    if isinstance(tools, list):
        for tool in tools:
            if isinstance(tool, dict) and tool.get("name"):
                return str(tool["name"])
    return None


def decode_arguments(arguments: Any) -> Any:
    """Tool arguments as the object Anthropic sends (JSON strings are decoded)."""
    if isinstance(arguments, str):
        return json.loads(arguments) if arguments.strip() else {}
    return arguments


def message(
    *,
    message_id: str,
    model: str,
    text: str | None,
    tool_uses: list[ToolUse],
    input_tokens: int,
    output_tokens: int,
) -> dict[str, Any]:
    """A non-streaming Messages API response body."""
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for use in tool_uses:
        content.append({"type": "tool_use", "id": use.id, "name": use.name, "input": use.input})
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if tool_uses else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def reply(
    body: dict[str, Any],
    view: dict[str, Any],
    *,
    content: str | None,
    json_value: Any,
    tool_calls: list[dict[str, Any]] | None,
    usage: tuple[int, int] | None,
    next_id: Callable[[str], int],
) -> dict[str, Any]:
    """The ``message`` body for one scripted chat step (see ``ScriptedLLMServer.add_chat``).

    ``json=`` becomes a ``tool_use`` of the forced (or first) tool when the request has tools,
    as LangChain's structured output asks for, else JSON text; ``tool_calls=`` become
    ``tool_use`` blocks; ``view`` is :func:`as_openai_view` of ``body`` (for token estimates).
    """
    text = content
    uses = [
        ToolUse(
            id=str(call.get("id") or f"toolu_{next_id('call')}"),
            name=str(call["name"]),
            input=decode_arguments(call.get("arguments", {})),
        )
        for call in tool_calls or []
    ]
    if json_value is not None:
        tool = forced_tool(body)
        if tool is not None:
            uses = [ToolUse(f"toolu_{next_id('call')}", tool, json_value)]
        else:
            text = json.dumps(json_value, ensure_ascii=False)
    if usage is not None:
        input_tokens, output_tokens = usage
    else:
        input_tokens = wire.estimate_tokens(wire.all_prompt_text(view))
        generated = len(text or "") + len(json.dumps([use.input for use in uses]))
        output_tokens = max(1, generated // 4)
    return message(
        message_id=f"msg_{next_id('msg')}",
        model=str(body.get("model") or "scripted-model"),
        text=text,
        tool_uses=uses,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def error_type_for(status: int) -> str:
    """Anthropic's error ``type`` for an HTTP status."""
    if status in _ERROR_TYPES:
        return _ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def error_body(status: int, message_text: str) -> dict[str, Any]:
    """An Anthropic error body: ``{"type": "error", "error": {"type", "message"}}``."""
    return {"type": "error", "error": {"type": error_type_for(status), "message": message_text}}
