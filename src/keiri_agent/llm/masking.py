"""Personal data out of every prompt, the real values back in every reply (issue 37).

The client (``llm.client``) and the structured-output loop (``llm.repair``) call these at the
wire: :func:`mask_input` replaces personal data in every message about to be sent (text, text
parts of multimodal content, tool-call arguments of earlier replies, tool results) by the
job's placeholders, all but the pieces the product wrote itself (prompt templates, the block
catalog: marked where the request is written, ``privacy.ours``); :func:`restore_reply` puts the values back into the reply (its text, its
tool calls) before any agent, block or page sees it. Code a model writes therefore runs on the
real data in the sandbox, and what a user reads (reports, answers, plans, file names) shows
the real values. :class:`StreamRestorer` does the same for a streamed reply, holding back a
placeholder cut between two chunks. Embedding inputs are masked with the kind alone
(:func:`mask_for_embedding`): nothing is read back from a vector, and the same text always
embeds the same way.

Which vault: the job's (``privacy.job_scope``), else the client's own. ``KEIRI_LLM_MASK_PII=off``
turns all of this off (a model on the company's own machines).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_messages,
)
from langchain_core.prompt_values import PromptValue
from langchain_core.utils.function_calling import convert_to_openai_tool

from keiri_agent.privacy import Vault, mask_json_text, mask_structured, mask_theirs
from keiri_agent.privacy.schema import map_schema_texts
from keiri_agent.privacy.vault import CLOSE, placeholder_pattern

__all__ = [
    "MAX_PLACEHOLDER_CHARS",
    "StreamRestorer",
    "add_counts",
    "as_messages",
    "mask_for_embedding",
    "mask_input",
    "mask_tool",
    "mask_tools",
    "merged_counts",
    "restore_reply",
]

MAX_PLACEHOLDER_CHARS = 16  # 〔マイナンバー12345〕 with room; a longer tail is not held back

T = TypeVar("T")
_OPENERS = "〔[［【<"
_PLACEHOLDER = placeholder_pattern()


def as_messages(messages: LanguageModelInput) -> list[BaseMessage]:
    if isinstance(messages, str):
        return [HumanMessage(messages)]
    if isinstance(messages, PromptValue):
        return messages.to_messages()
    return convert_to_messages(cast(Sequence[Any], messages))


def add_counts(total: Counter[str], counts: Mapping[str, int]) -> None:
    for kind, n in counts.items():
        total[kind] += n


def merged_counts(*counts: Mapping[str, int]) -> dict[str, int]:
    """How many values of each kind were masked in all of ``counts`` together."""
    total: Counter[str] = Counter()
    for each in counts:
        add_counts(total, each)
    return dict(total)


def _walk(value: T, fn: Callable[[str], str]) -> T:
    """``value`` with ``fn`` applied to every string inside (dicts and their keys, lists)."""
    if isinstance(value, str):
        return cast(T, fn(value))
    if isinstance(value, Mapping):
        return cast(T, {_walk(k, fn): _walk(v, fn) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return cast(T, type(value)(_walk(v, fn) for v in value))
    return value


def _content(content: Any, fn: Callable[[str], str], args_fn: Callable[[Any], Any]) -> Any:
    """Message content with ``fn`` applied to its text and ``args_fn`` to the input of its
    tool-use parts (Anthropic's ``tool_use`` / ``tool_result``); never to images, and never
    to a model's signed thinking."""
    if isinstance(content, str):
        return fn(content)
    if isinstance(content, list):
        parts: list[Any] = []
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if isinstance(part, str):
                parts.append(fn(part))
            elif kind == "text":
                parts.append({**part, "text": fn(str(part.get("text", "")))})
            elif kind == "tool_use":
                mapped = {**part, "input": args_fn(part.get("input"))}
                if isinstance(part.get("partial_json"), str):
                    mapped["partial_json"] = fn(part["partial_json"])
                parts.append(mapped)
            elif kind == "tool_result":
                parts.append({**part, "content": _content(part.get("content"), fn, args_fn)})
            else:
                parts.append(part)
        return parts
    return content


def _raw_tool_calls(kwargs: Mapping[str, Any], fn: Callable[[str], str]) -> dict[str, Any]:
    """``additional_kwargs`` with the JSON arguments of its provider-shaped tool calls mapped."""
    calls = kwargs.get("tool_calls")
    if not isinstance(calls, list):
        return dict(kwargs)
    mapped = []
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
            call = {**call, "function": {**function, "arguments": fn(function["arguments"])}}
        mapped.append(call)
    return {**kwargs, "tool_calls": mapped}


def _map_message(
    message: BaseMessage,
    fn: Callable[[str], str],
    args_fn: Callable[[Any], Any] | None = None,
) -> BaseMessage:
    """``message`` with ``fn`` applied to its texts, and ``args_fn`` (else ``fn`` on every
    string) to the parsed arguments of its tool calls."""
    walk = args_fn or (lambda args: _walk(args, fn))
    update: dict[str, Any] = {"content": _content(message.content, fn, walk)}
    if isinstance(message, AIMessage):
        update["tool_calls"] = [
            {**call, "args": walk(call.get("args"))} for call in message.tool_calls
        ]
        update["invalid_tool_calls"] = [
            {**call, "args": fn(args) if isinstance(args := call.get("args"), str) else None}
            for call in message.invalid_tool_calls
        ]
        update["additional_kwargs"] = _raw_tool_calls(message.additional_kwargs, fn)
    return message.model_copy(update=update)


def _text_mask(vault: Vault, counts: Counter[str]) -> Callable[[str], str]:
    def mask(text: str) -> str:
        # the product's own pieces of a composed text (privacy.ours) are not the user's data
        return mask_theirs(text, lambda theirs: mask_json_text(vault, theirs, counts))

    return mask


def mask_tool(
    tool: Mapping[str, Any], vault: Vault | None
) -> tuple[dict[str, Any], dict[str, int]]:
    """A tool or structured-output schema as sent (OpenAI's function shape: ``name``,
    ``description``, ``parameters``; or ``{"type": "function", "function": ...}``) with the
    texts of its description and JSON Schema masked like message text (``privacy.schema``:
    property names, descriptions, enum values...; ``ai.process_llm`` builds one from a plan),
    and how many values of each kind were masked. The name stays: it is an identifier the
    reply's tool call must repeat."""
    if vault is None:
        return dict(tool), {}
    function = tool.get("function")
    if tool.get("type") == "function" and isinstance(function, Mapping):
        inner, inner_counts = mask_tool(function, vault)
        return {**tool, "function": inner}, inner_counts
    counts: Counter[str] = Counter()
    masked = map_schema_texts(
        {k: v for k, v in tool.items() if k != "name"}, _text_mask(vault, counts)
    )
    if "name" in tool:
        masked = {"name": tool["name"], **masked}
    return masked, dict(counts)


def mask_tools(
    tools: Sequence[Any], vault: Vault | None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Tools to bind (LangChain tools, functions, models or schemas) as OpenAI tool schemas,
    each masked by :func:`mask_tool`; and the kinds masked."""
    schemas: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for tool in tools:
        schema, found = mask_tool(convert_to_openai_tool(tool), vault)
        schemas.append(schema)
        counts = merged_counts(counts, found)
    return schemas, counts


def mask_input(
    messages: LanguageModelInput, vault: Vault | None
) -> tuple[list[BaseMessage], dict[str, int]]:
    """The messages with personal data masked, and how many values of each kind were masked."""
    listed = as_messages(messages)
    if vault is None:
        return listed, {}
    counts: Counter[str] = Counter()
    mask = _text_mask(vault, counts)

    def mask_args(args: Any) -> Any:
        return mask_structured(vault, args, counts)

    # JSON text and tool-call arguments are masked as JSON: valid for their schema afterwards.
    return [_map_message(message, mask, mask_args) for message in listed], dict(counts)


def restore_reply(message: AIMessage, vault: Vault | None) -> AIMessage:
    """``message`` with the vault's placeholders replaced by the real values."""
    if vault is None or not len(vault):
        return message
    return cast(AIMessage, _map_message(message, _restorer(vault)))


def _restorer(vault: Vault) -> Callable[[str], str]:
    def restore(text: str) -> str:
        restored = vault.restore(text)
        if restored == text or not text.lstrip().startswith(("{", "[")):
            return restored
        # Inside JSON text a value must stay a valid JSON string (a name with a quote).
        try:
            json.loads(text)
        except ValueError:
            return restored
        return _PLACEHOLDER.sub(
            lambda m: json.dumps(vault.restore(m.group()), ensure_ascii=False)[1:-1], text
        )

    return restore


def mask_for_embedding(
    texts: Sequence[str], vault: Vault | None
) -> tuple[list[str], dict[str, int]]:
    """Texts to embed with each piece of personal data replaced by its kind (``〔人名〕``)."""
    if vault is None:
        return list(texts), {}
    counts: Counter[str] = Counter()
    masked_texts = []
    for text in texts:
        masked = vault.mask(text, numbered=False)
        add_counts(counts, masked.counts)
        masked_texts.append(masked.text)
    return masked_texts, dict(counts)


class StreamRestorer:
    """Restores placeholders in a streamed reply, chunk by chunk.

    A chunk may end inside a placeholder (``〔人`` then ``名1〕``): the tail from the last
    opening bracket is held back until the placeholder closes, or is clearly not one.
    """

    def __init__(self, vault: Vault | None) -> None:
        self._vault = vault
        self._held = ""

    def feed(self, text: str) -> str:
        if self._vault is None or not len(self._vault):
            return self.flush() + text if self._held else text
        buffer = self._held + text
        cut = max(buffer.rfind(ch) for ch in _OPENERS)
        if cut >= 0 and CLOSE not in buffer[cut:] and len(buffer) - cut < MAX_PLACEHOLDER_CHARS:
            tail = buffer[cut:]
            if not any(ch in tail for ch in "]］】>"):
                self._held = tail
                return self._vault.restore(buffer[:cut])
        self._held = ""
        return self._vault.restore(buffer)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return self._vault.restore(held) if self._vault is not None else held
