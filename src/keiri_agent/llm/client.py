"""``LLMClient``: the one way keiri-agent talks to a language model.

A client is bound to a role (``reason``, ``codegen``, ``plan``, ...), which picks the model from
the settings. It builds the model lazily, so creating a client never needs a key; the first call
does, and a missing key raises ``CredentialsMissingError`` naming the variable to set.

Each call (plain, with tools, structured, streamed) runs under the retry policy, is timed,
counts tokens, emits one ``llm_call`` event and is added to the run's ``UsageLedger``. Failures
are ``BlockError``s with Japanese messages and hints; nothing is swallowed. A client with a
cancel event, or any client inside ``keiri_agent.llm.cancel.cancellable``, aborts its call in
flight when the event is set (see ``cancel``).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, TypeVar, Unpack, cast

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from pydantic import BaseModel

from keiri_agent.config import ROLE_LABELS, LLMRole, ModelRef, Settings, load_settings
from keiri_agent.errors import BlockError, ConfigurationError
from keiri_agent.events import EventEmitter, LLMUsage
from keiri_agent.llm.cancel import Call, cancellable_sleep, current_cancel, run_cancellable
from keiri_agent.llm.masking import (
    StreamRestorer,
    mask_for_embedding,
    mask_input,
    mask_tools,
    merged_counts,
    restore_reply,
)
from keiri_agent.llm.providers import build_chat_model, build_embeddings
from keiri_agent.llm.repair import Check, structured_call
from keiri_agent.llm.retry import RetryPolicy, classify_failure, to_block_error
from keiri_agent.llm.usage import UsageLedger, usage_from_message
from keiri_agent.privacy import Vault, current_vault

__all__ = [
    "Binding",
    "ClientOptions",
    "EmbeddingClient",
    "LLMClient",
    "StructuredMethod",
    "get_embedder",
    "get_llm",
]

M = TypeVar("M", bound=BaseModel)
B = TypeVar("B", bound="_Bound")
R = TypeVar("R")
StructuredMethod = Literal["json_schema", "function_calling"]


class Binding(TypedDict, total=False):
    """Where a client reports its calls and what stops them (see ``_Bound.bind``)."""

    events: EventEmitter | None
    ledger: UsageLedger | None
    node_id: str | None
    cancel: threading.Event | None


class ClientOptions(Binding, total=False):
    """What every client takes besides its role and model; ``None`` means the default."""

    settings: Settings | None
    retry: RetryPolicy | None


@dataclass(frozen=True)
class _CallFacts:
    """What a logical call's accounting knows from its start: when, what kind of call, and how
    many values of each kind the request's masking replaced."""

    started: float
    structured: bool = False
    streamed: bool = False
    masked: Mapping[str, int] | None = None


class _Bound:
    """What a client and an embedder share: settings, role, events, ledger, retry policy."""

    def __init__(self, role: LLMRole | str, **options: Unpack[ClientOptions]) -> None:
        self.role = LLMRole(role)
        settings = options.get("settings")
        self.settings = settings if settings is not None else load_settings()
        self.events = options.get("events")
        self.ledger = options.get("ledger")
        self.node_id = options.get("node_id")
        self.cancel = options.get("cancel")
        self.retry = options.get("retry") or RetryPolicy(
            max_retries=self.settings.keiri_llm_max_retries,
            backoff_s=self.settings.keiri_llm_retry_backoff_s,
        )
        self._lock = threading.Lock()
        # Placeholders of calls made outside any job (privacy.job_scope); copies share it.
        self._own_vault = Vault()

    def bind(self: B, **binding: Unpack[Binding]) -> B:
        """A copy reporting to ``events``/``ledger`` as ``node_id`` (and stopping on
        ``cancel``); what is ``None`` or left out stays as it is, and the model is shared."""
        bound = copy.copy(self)
        for name, value in binding.items():
            if value is not None:
                setattr(bound, name, value)
        return bound

    @property
    def ref(self) -> ModelRef:
        ref = self.settings.model_for(self.role)
        if ref is None:
            var = f"KEIRI_LLM_MODEL_{self.role.value.upper()}"
            raise ConfigurationError(
                f"役割「{ROLE_LABELS[self.role.value]}」のモデルが設定されていません。",
                hint=f"{var} に provider:model（例: openai:text-embedding-3-small）を設定してください。",
                details={"role": self.role.value, "variable": var},
            )
        return ref

    def _describe(self) -> str:
        """The call as an error names it: what the model was asked for, and which model."""
        return f"{ROLE_LABELS[self.role.value]}（{self.ref}）"

    def vault(self) -> Vault | None:
        """Where this call's placeholders live: the job's vault, else the client's own; None
        when ``KEIRI_LLM_MASK_PII`` is off."""
        if not self.settings.keiri_llm_mask_pii:
            return None
        job = current_vault()
        return job if job is not None else self._own_vault

    def _record(
        self,
        facts: _CallFacts,
        *,
        attempts: int,
        message: BaseMessage | None,
        error: BlockError | None,
    ) -> LLMUsage:
        input_tokens, output_tokens, total = usage_from_message(message)
        ref = self.ref
        record = LLMUsage(
            role=self.role.value,
            provider=ref.provider,
            model=ref.model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=total,
            latency_ms=round((time.perf_counter() - facts.started) * 1000, 3),
            attempts=attempts,
            ok=error is None,
            error_code=error.code if error is not None else None,
            structured=facts.structured,
            streamed=facts.streamed,
            masked=dict(facts.masked) if facts.masked else None,
        )
        if self.ledger is not None:
            self.ledger.add(record)
        if self.events is not None:
            self.events.emit("llm_call", node_id=self.node_id, **record.model_dump())
        return record

    def _attempt(
        self,
        call: Callable[[], R],
        facts: _CallFacts,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> tuple[R, int]:
        """``call`` under the retry policy: (result, attempts). A call that still fails is
        accounted (``llm_call`` event, ledger) before its ``BlockError`` is raised."""
        try:
            return self.retry.call(call, describe=self._describe(), sleep=sleep)
        except BlockError as exc:
            attempts = int(exc.details.get("attempts", 1))
            self._record(facts, attempts=attempts, message=None, error=exc)
            raise

    def _run(
        self,
        call: Call[R],
        *,
        message_of: Callable[[R], BaseMessage | None],
        structured: bool = False,
        masked: Mapping[str, int] | None = None,
    ) -> R:
        """Run one logical call under the retry policy and account for it, success or not.

        ``call.run`` makes the call in this thread; ``call.arun`` is used when the call is
        cancellable (a cancel event on the client or in the context).
        ``masked``: how many values of each kind the request's masking replaced (logged).
        """
        facts = _CallFacts(time.perf_counter(), structured=structured, masked=masked)
        describe = self._describe()
        cancel = self.cancel or current_cancel()
        if cancel is None:
            result, attempts = self._attempt(call.run, facts)
        else:
            result, attempts = self._attempt(
                lambda: run_cancellable(call.arun, cancel, describe),
                facts,
                sleep=cancellable_sleep(cancel, describe),
            )
        self._record(facts, attempts=attempts, message=message_of(result), error=None)
        return result


class LLMClient(_Bound):
    """A chat model for one role, with retries, timeouts, accounting and events."""

    def __init__(
        self,
        role: LLMRole | str = LLMRole.DEFAULT,
        *,
        timeout_s: float | None = None,
        model: BaseChatModel | None = None,
        **options: Unpack[ClientOptions],
    ) -> None:
        super().__init__(role, **options)
        self.timeout_s = timeout_s
        self._model = model

    @property
    def chat_model(self) -> BaseChatModel:
        """The underlying LangChain model, built on first use (this is when keys are checked)."""
        with self._lock:
            if self._model is None:
                self._model = build_chat_model(
                    self.ref, self.settings, timeout_s=self.timeout_s, purpose=self.role.value
                )
            return self._model

    def invoke(
        self,
        messages: LanguageModelInput,
        *,
        tools: Sequence[Any] | None = None,
        tool_choice: str | None = None,
    ) -> AIMessage:
        """One chat completion; with ``tools`` the reply may carry ``tool_calls``.

        Personal data in ``messages`` is masked before sending; the reply comes back with the
        real values (``llm.masking``)."""
        model = self.chat_model
        runnable: Any = model
        vault = self.vault()
        sent, masked = mask_input(messages, vault)
        if tools:
            # the tools' schemas are sent with their texts masked like the messages
            schemas, in_tools = mask_tools(tools, vault)
            masked = merged_counts(masked, in_tools)
            runnable = model.bind_tools(schemas, tool_choice=tool_choice)

        def call() -> AIMessage:
            return cast(AIMessage, runnable.invoke(sent))

        async def acall() -> AIMessage:
            return cast(AIMessage, await runnable.ainvoke(sent))

        reply = self._run(Call(call, acall), message_of=lambda message: message, masked=masked)
        return restore_reply(reply, vault)

    def run_structured(
        self, ask: Call[AIMessage], *, masked: Mapping[str, int] | None = None
    ) -> AIMessage:
        """One call of ``llm.repair`` under the retry policy, accounted as a structured call
        (``masked``: how many values of each kind its request's masking replaced)."""
        return self._run(ask, message_of=lambda message: message, structured=True, masked=masked)

    def structured(
        self,
        schema: type[M],
        messages: LanguageModelInput,
        *,
        method: StructuredMethod | None = None,
        check: Check | None = None,
        repair_rounds: int | None = None,
        tool_schema: Mapping[str, Any] | None = None,
        strict: bool | None = None,
    ) -> M:
        """A validated ``schema`` instance from the model (``json_schema`` or function calling).

        The reply's JSON object is found even in prose or a fence; one that does not validate
        (or that ``check`` rejects) is sent back with what was wrong, up to ``repair_rounds``
        (default ``KEIRI_LLM_REPAIR_ROUNDS``) times, then raises ``LLMOutputError``
        (OUTPUT_SCHEMA_MISMATCH, or OUTPUT_TRUNCATED / OUTPUT_FILTERED / OUTPUT_EMPTY by finish
        reason) with the raw reply in the details: it is never patched up or defaulted.
        ``tool_schema`` replaces the JSON Schema the provider is sent (the reply is still parsed
        by ``schema``); ``strict`` asks for the provider's strict mode (OpenAI).
        """
        return structured_call(
            self,
            schema,
            messages,
            method=method or self.settings.keiri_llm_structured_method,
            rounds=self.settings.keiri_llm_repair_rounds
            if repair_rounds is None
            else repair_rounds,
            check=check,
            tool_schema=tool_schema,
            strict=strict,
        )

    def stream(self, messages: LanguageModelInput) -> Iterator[str]:
        """Stream the reply's text. Connecting is retried; a stream that breaks midway is not
        (its text has already been shown), it raises an ``LLMError`` instead."""
        model = self.chat_model
        started = time.perf_counter()
        describe = self._describe()
        vault = self.vault()
        sent, masked = mask_input(messages, vault)
        facts = _CallFacts(started, streamed=True, masked=masked)
        restorer = StreamRestorer(vault)

        def open_stream() -> tuple[Iterator[BaseMessage], BaseMessage | None]:
            iterator = iter(model.stream(sent))
            return iterator, next(iterator, None)

        (iterator, first), attempts = self._attempt(open_stream, facts)
        total: AIMessageChunk | None = None
        chunk: BaseMessage | None = first
        try:
            while chunk is not None:
                piece = cast(AIMessageChunk, chunk)
                total = piece if total is None else total + piece
                if piece.text:
                    text = restorer.feed(piece.text)
                    if text:
                        yield text
                chunk = next(iterator, None)
            rest = restorer.flush()
            if rest:
                yield rest
        except BlockError:
            raise
        except Exception as exc:
            error = to_block_error(exc, classify_failure(exc), attempts=attempts, describe=describe)
            self._record(facts, attempts=attempts, message=total, error=error)
            raise error from exc
        self._record(facts, attempts=attempts, message=total, error=None)


class EmbeddingClient(_Bound):
    """The embedding model of the ``embedding`` role (``KEIRI_LLM_MODEL_EMBEDDING``).

    Token counts are not reported by LangChain's embeddings interface; calls are still
    accounted with their latency and attempts.
    """

    def __init__(
        self, *, model: Embeddings | None = None, **options: Unpack[ClientOptions]
    ) -> None:
        super().__init__(LLMRole.EMBEDDING, **options)
        self._model = model

    @property
    def configured(self) -> bool:
        """Whether an embedding model is configured (retrieval reports BM25-only otherwise)."""
        return self._model is not None or self.settings.model_for(LLMRole.EMBEDDING) is not None

    @property
    def embeddings(self) -> Embeddings:
        with self._lock:
            if self._model is None:
                self._model = build_embeddings(self.ref, self.settings)
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of ``texts``, personal data replaced by its kind before sending."""
        model = self.embeddings
        items, masked = mask_for_embedding(texts, self.vault())
        return self._run(
            Call(lambda: model.embed_documents(items), lambda: model.aembed_documents(items)),
            message_of=lambda _: None,
            masked=masked,
        )

    def embed_query(self, text: str) -> list[float]:
        """The vector of ``text``, personal data replaced by its kind before sending."""
        model = self.embeddings
        (item,), masked = mask_for_embedding([text], self.vault())
        return self._run(
            Call(lambda: model.embed_query(item), lambda: model.aembed_query(item)),
            message_of=lambda _: None,
            masked=masked,
        )


def get_llm(role: LLMRole | str = LLMRole.DEFAULT, **options: Unpack[ClientOptions]) -> LLMClient:
    """A chat client for ``role``; the model is built (and keys checked) on first use.

    With ``cancel``, setting the event aborts the client's call in flight (see ``llm.cancel``).
    """
    return LLMClient(role, **options)


def get_embedder(**options: Unpack[ClientOptions]) -> EmbeddingClient:
    """The embedding client; check ``.configured`` before relying on dense retrieval."""
    return EmbeddingClient(**options)
