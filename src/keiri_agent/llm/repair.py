"""Structured output that survives what real models reply: extract, validate, repair, explain.

Every agent's structured call (analysis, conversion, help desk, plan generation) goes through
:func:`structured_call`, the way smolagents and PandasAI treat parse errors: as an observation
the model gets to act on, not as the end of the run.

1. The model is asked for the schema (``json_schema`` or function calling) and its *raw* reply
   is kept: the JSON object is taken from a tool call, or from the text even when it is wrapped
   in prose or in a ```` ```json ```` fence (:mod:`keiri_agent.llm.extract`).
2. The object is validated against the Pydantic model, then by the caller's ``check`` (rules a
   schema cannot say, e.g. "a question when next_action is ask").
3. On failure the model is shown its reply and a short description of what was wrong (a missing
   field, a wrong type, a near-miss enum value with the allowed values) and asked again, at most
   ``KEIRI_LLM_REPAIR_ROUNDS`` times. Transport failures are retried separately, inside each
   round, under ``KEIRI_LLM_MAX_RETRIES``. What a person reads of a schema failure (the
   ``log`` event of a repair round, the final error's message) is Japanese only
   (:mod:`keiri_agent.llm.field_problems` with the schema: each field by its label, what was
   wrong, the received value in words; the call by its role's label, ``ROLE_LABELS``, never
   the schema's class name); the observation sent to the model adds the validator's location
   and English wording to each line and names the schema, and the error's ``details``
   (``schema``, ``validation``) keep them for whoever debugs it.
4. Finish reasons are their own errors: a reply cut at the length limit (``OUTPUT_TRUNCATED``),
   one stopped by a content filter (``OUTPUT_FILTERED``) and a reply that stays empty
   (``OUTPUT_EMPTY``) say so in Japanese with a fitting hint; repeating the same request
   cannot fix the first two, so they are not repaired.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

import openai
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from keiri_agent.config import ROLE_LABELS, LLMRole, ModelRef
from keiri_agent.errors import ErrorCode, LLMOutputError
from keiri_agent.events import EventEmitter
from keiri_agent.llm.cancel import Call
from keiri_agent.llm.extract import extract_json_object
from keiri_agent.llm.field_problems import FieldProblem, details_of, field_problems, lines_of
from keiri_agent.llm.masking import (
    as_messages,
    mask_input,
    mask_tool,
    merged_counts,
    restore_reply,
)
from keiri_agent.privacy import Vault

__all__ = [
    "MAX_REPAIR_ROUNDS",
    "Check",
    "StructuredClient",
    "finish_reason_of",
    "structured_call",
]

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
Check = Callable[[Any], Sequence[str]]  # problems of a validated reply, in Japanese; [] = fine

MAX_REPAIR_ROUNDS = 5  # upper bound of KEIRI_LLM_REPAIR_ROUNDS
MAX_RAW_IN_ERROR = 2000  # characters of the last reply kept in the error details
TRUNCATED_REASONS = frozenset({"length", "max_tokens"})
FILTERED_REASONS = frozenset({"content_filter", "refusal"})


class StructuredClient(Protocol):
    """What a structured call needs of its client (``llm.client.LLMClient``)."""

    role: LLMRole
    events: EventEmitter | None
    node_id: str | None

    @property
    def ref(self) -> ModelRef: ...

    @property
    def chat_model(self) -> BaseChatModel: ...

    def vault(self) -> Vault | None:
        """Where the call's personal-data placeholders live (None: masking is off)."""
        ...

    def run_structured(
        self, ask: Call[AIMessage], *, masked: Mapping[str, int] | None = None
    ) -> AIMessage:
        """One call under the client's retry policy, accounted as a structured call."""
        ...


class _UnusableReplyError(Exception):
    """One reply that could not be used: what a person reads (``lines``), what the model is told
    (``model_lines``: the same, plus the validator's exact words), and whether it was empty."""

    def __init__(
        self,
        lines: Sequence[str],
        *,
        raw: str,
        empty: bool = False,
        model_lines: Sequence[str] | None = None,
        problems: Sequence[FieldProblem] = (),
    ) -> None:
        super().__init__("; ".join(lines))
        self.lines = list(lines)
        self.model_lines = list(lines if model_lines is None else model_lines)
        self.raw = raw
        self.empty = empty
        self.problems = list(problems)

    @classmethod
    def invalid(
        cls, exc: ValidationError, *, schema: type[BaseModel], value: Any, raw: str
    ) -> _UnusableReplyError:
        """The schema failures of the reply's ``value`` (the first ``MAX_PROBLEMS_LISTED``
        listed)."""
        problems = field_problems(exc, data=value, schema=schema)
        return cls(
            lines_of(problems),
            raw=raw,
            model_lines=lines_of(problems, model=True),
            problems=problems,
        )


def finish_reason_of(message: AIMessage) -> str | None:
    """Why the model stopped (OpenAI ``finish_reason``, Anthropic ``stop_reason``)."""
    meta = message.response_metadata or {}
    reason = meta.get("finish_reason") or meta.get("stop_reason")
    return str(reason) if reason else None


def _reply_text(raw: AIMessage) -> str:
    if raw.tool_calls:
        return json.dumps(raw.tool_calls[0].get("args"), ensure_ascii=False)
    if raw.invalid_tool_calls:
        return str(raw.invalid_tool_calls[0].get("args") or "")
    return raw.text


def _candidate(raw: AIMessage) -> Any:
    """The JSON object the reply carries (a tool call's arguments or the text's object)."""
    if raw.tool_calls:
        return raw.tool_calls[0].get("args")
    text = _reply_text(raw)
    if not text.strip():
        raise _UnusableReplyError(["応答が空でした"], raw="", empty=True)
    found = extract_json_object(text)
    if found is None:
        raise _UnusableReplyError(["応答に JSON オブジェクトが見つかりませんでした"], raw=text)
    return found


def _parse(schema: type[M], raw: AIMessage, check: Check | None) -> M:
    value = _candidate(raw)
    try:
        parsed = schema.model_validate(value)
    except ValidationError as exc:
        raise _UnusableReplyError.invalid(
            exc, schema=schema, value=value, raw=_reply_text(raw)
        ) from exc
    problems = list(check(parsed)) if check is not None else []
    if problems:
        raise _UnusableReplyError(problems, raw=_reply_text(raw))
    return parsed


def _observation(schema: type[BaseModel], problem: _UnusableReplyError) -> str:
    listing = "\n".join(f"- {line}" for line in problem.model_lines)
    return (
        f"直前の応答は {schema.__name__} の形式に合いませんでした。\n{listing}\n"
        f"指示と形式に従って直し、{schema.__name__} の JSON オブジェクトだけを返してください"
        "（前置きの文章や ``` で囲まないこと）。\n"
        f"(Your previous reply did not match {schema.__name__}; fix the problems above and "
        "reply with the JSON object only.)"
    )


# Why a reply stopped early -> (code, message, hint). Neither is repaired: asking again the same
# way cannot fix a reply cut at the length limit or stopped by a content filter.
_STOPPED: dict[str, tuple[ErrorCode, str, str]] = {
    "length": (
        ErrorCode.OUTPUT_TRUNCATED,
        "LLM（{role}）の出力が長さの上限で途中で切れました。",
        "モデル・サーバーの出力トークンの上限（max_tokens）を上げるか、依頼を分ける・入力を減らすなどして"
        "出力が短くなるようにして再実行してください。",
    ),
    "content_filter": (
        ErrorCode.OUTPUT_FILTERED,
        "LLM（{role}）の応答がプロバイダーのコンテンツフィルターで止められました。",
        "入力や依頼文に不適切と判定されうる表現がないか確認し、言い換えて再実行してください"
        "（Azure OpenAI ではデプロイのコンテンツフィルター設定も確認してください）。",
    ),
}


_SDK_STOPS = (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError)


def _stopped(
    client: StructuredClient, schema: type[BaseModel], raw: str, reason: str
) -> LLMOutputError:
    """The error of a reply stopped for ``reason`` (a key of ``_STOPPED``)."""
    code, message, hint = _STOPPED[reason]
    return LLMOutputError(
        message.format(role=_role_words(client)),
        code=code,
        hint=hint,
        details=_details(client, schema, raw, finish_reason=reason),
    )


def _role_words(client: StructuredClient) -> str:
    """What the call was for, as a person reads it (``データ分析: 判断``), never the schema's
    class name, which stays in the details."""
    return ROLE_LABELS.get(client.role.value, client.role.value)


def _details(
    client: StructuredClient, schema: type[BaseModel], raw: str, **extra: Any
) -> dict[str, Any]:
    return {
        "schema": schema.__name__,
        "model": str(client.ref),
        "role": client.role.value,
        "raw": raw[:MAX_RAW_IN_ERROR],
        **extra,
    }


def _completion_text(
    exc: openai.LengthFinishReasonError | openai.ContentFilterFinishReasonError,
) -> str:
    completion = exc.completion
    if completion is None or not completion.choices:
        return ""
    return completion.choices[0].message.content or ""


def _check_finish(client: StructuredClient, schema: type[BaseModel], raw: AIMessage) -> None:
    reason = finish_reason_of(raw)
    if reason in TRUNCATED_REASONS:
        raise _stopped(client, schema, _reply_text(raw), "length")
    if reason in FILTERED_REASONS:
        raise _stopped(client, schema, _reply_text(raw), "content_filter")


def _failed(
    client: StructuredClient,
    schema: type[BaseModel],
    method: str,
    problem: _UnusableReplyError,
    rounds: int,
) -> LLMOutputError:
    details = _details(
        client, schema, problem.raw, method=method, repair_rounds=rounds, problems=problem.lines
    )
    if problem.problems:
        details["validation"] = details_of(problem.problems)
    after = f"（修正を {rounds} 回依頼しても直りませんでした）" if rounds else ""
    if problem.empty:
        return LLMOutputError(
            f"LLM（{_role_words(client)}）が空の応答を返しました{after}。",
            code=ErrorCode.OUTPUT_EMPTY,
            hint="モデルやサーバー（vLLM・Ollama など）が構造化出力に対応しているか確認し、"
            "KEIRI_LLM_STRUCTURED_METHOD を json_schema / function_calling で切り替えるか、"
            "KEIRI_LLM_MODEL_<ROLE> で別のモデルを指定してください。",
            details=details,
        )
    return LLMOutputError(
        f"LLM（{_role_words(client)}）の応答が期待した形式に合いませんでした{after}: "
        + "; ".join(problem.lines),
        hint="KEIRI_LLM_REPAIR_ROUNDS を増やすか、KEIRI_LLM_MODEL_<ROLE> で指示に従いやすいモデルを"
        "指定するか、KEIRI_LLM_STRUCTURED_METHOD を json_schema / function_calling で切り替えて"
        "再実行してください。",
        details=details,
    )


def structured_call(
    client: StructuredClient,
    schema: type[M],
    messages: LanguageModelInput,
    *,
    method: str,
    rounds: int,
    check: Check | None = None,
    tool_schema: Mapping[str, Any] | None = None,
    strict: bool | None = None,
) -> M:
    """A validated ``schema`` instance, repairing the reply up to ``rounds`` times.

    ``tool_schema``: the JSON Schema sent instead of the one Pydantic derives from ``schema``
    (a caller that knows what the provider accepts); ``strict``: the provider's strict mode.
    """
    tool = convert_to_openai_tool(schema)["function"]
    if tool_schema is not None:
        tool = {**tool, "parameters": dict(tool_schema)}
    vault = client.vault()
    # a schema built from a plan (ai.process_llm) holds the user's words: masked like messages
    tool, in_schema = mask_tool(tool, vault)
    options: dict[str, Any] = {} if strict is None else {"strict": strict}
    runnable = client.chat_model.with_structured_output(
        tool, method=method, include_raw=True, **options
    )
    conversation = as_messages(messages)
    sent: list[BaseMessage] = []

    def stopped(
        exc: openai.LengthFinishReasonError | openai.ContentFilterFinishReasonError,
    ) -> LLMOutputError:
        # The OpenAI SDK raises on these finish reasons before LangChain sees the reply.
        length = isinstance(exc, openai.LengthFinishReasonError)
        return _stopped(
            client, schema, _completion_text(exc), "length" if length else "content_filter"
        )

    def ask() -> AIMessage:
        try:
            result = runnable.invoke(sent)
        except _SDK_STOPS as exc:
            raise stopped(exc) from exc
        return cast(AIMessage, cast(dict[str, Any], result)["raw"])

    async def aask() -> AIMessage:
        try:
            result = await runnable.ainvoke(sent)
        except _SDK_STOPS as exc:
            raise stopped(exc) from exc
        return cast(AIMessage, cast(dict[str, Any], result)["raw"])

    round_number = 0
    while True:
        # Personal data is masked in what is sent; the reply is read with the real values.
        sent, masked = mask_input(conversation, vault)
        raw = client.run_structured(Call(ask, aask), masked=merged_counts(masked, in_schema))
        raw = restore_reply(raw, vault)
        _check_finish(client, schema, raw)
        try:
            return _parse(schema, raw, check)
        except _UnusableReplyError as problem:
            if round_number >= rounds:
                raise _failed(client, schema, method, problem, rounds) from None
            round_number += 1
            note = (
                f"LLM（{_role_words(client)}）の応答が期待した形式に合わないため修正を依頼します"
                f"（{round_number}/{rounds} 回目）: " + "; ".join(problem.lines)
            )
            logger.warning("%s", note)
            if client.events is not None:
                client.events.emit("log", node_id=client.node_id, msg=note, level="warning")
            conversation = [
                *conversation,
                AIMessage(problem.raw or "（空の応答）"),
                HumanMessage(_observation(schema, problem)),
            ]
