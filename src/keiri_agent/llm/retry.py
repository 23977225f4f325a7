"""Bounded retries with exponential backoff for LLM calls, and the translation of provider
failures into Japanese ``BlockError``s.

The provider SDKs are built with ``max_retries=0`` so that this module is the only place that
retries: every attempt is counted, logged and reported in the ``llm_call`` event. Retried are
HTTP 429, HTTP 5xx, timeouts and connection failures; any other 4xx fails at once because
repeating the same request cannot succeed.
"""

from __future__ import annotations

import logging
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from keiri_agent.errors import BlockError, LLMError, LLMTimeoutError

__all__ = [
    "MAX_BACKOFF_S",
    "MAX_RETRY_AFTER_S",
    "FailureKind",
    "RetryPolicy",
    "classify_failure",
    "to_block_error",
]

logger = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0  # cap of the exponential backoff between two attempts
MAX_RETRY_AFTER_S = 60.0  # a server's Retry-After is honoured up to this many seconds
RETRYABLE_STATUS_MIN = 500

T = TypeVar("T")


class FailureKind(StrEnum):
    RATE_LIMIT = "rate_limit"
    SERVER = "server"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    AUTH = "auth"
    NOT_FOUND = "not_found"
    BAD_REQUEST = "bad_request"
    OTHER = "other"

    @property
    def retryable(self) -> bool:
        return self in (
            FailureKind.RATE_LIMIT,
            FailureKind.SERVER,
            FailureKind.TIMEOUT,
            FailureKind.CONNECTION,
        )


_SDK_MODULES = ("openai", "anthropic")


def _sdk_types(name: str, builtin: type[BaseException]) -> tuple[type[BaseException], ...]:
    """``builtin`` plus each provider SDK's exception class ``name``, for the SDKs already loaded.

    An SDK's exception can only exist once its module is imported, so looking in ``sys.modules``
    classifies every SDK error without importing SDKs a command never uses (anthropic alone
    costs seconds of start-up).
    """
    found: list[type[BaseException]] = [builtin]
    for module_name in _SDK_MODULES:
        module = sys.modules.get(module_name)
        sdk_type = getattr(module, name, None) if module is not None else None
        if isinstance(sdk_type, type) and issubclass(sdk_type, BaseException):
            found.append(sdk_type)
    return tuple(found)


def _status_code(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def classify_failure(exc: BaseException) -> FailureKind:
    """What kind of failure ``exc`` is, judged by type and HTTP status, provider-agnostic."""
    if isinstance(exc, _sdk_types("APITimeoutError", TimeoutError)):
        return FailureKind.TIMEOUT
    status = _status_code(exc)
    if status is not None:
        if status == 429:
            return FailureKind.RATE_LIMIT
        if status in (408,):
            return FailureKind.TIMEOUT
        if status >= RETRYABLE_STATUS_MIN:
            return FailureKind.SERVER
        if status in (401, 403):
            return FailureKind.AUTH
        if status == 404:
            return FailureKind.NOT_FOUND
        return FailureKind.BAD_REQUEST
    if isinstance(exc, _sdk_types("APIConnectionError", ConnectionError)):
        return FailureKind.CONNECTION
    return FailureKind.OTHER


def _retry_after_s(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:  # an HTTP date: rare from LLM APIs, fall back to our own backoff
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` retries after the first attempt, waiting ``backoff_s * 2**n`` (jittered)."""

    max_retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = MAX_BACKOFF_S

    def delay(self, retry_number: int, exc: BaseException) -> float:
        """Seconds to wait before retry ``retry_number`` (1-based)."""
        server_says = _retry_after_s(exc)
        if server_says is not None:
            return server_says
        base: float = min(self.backoff_s * 2.0 ** (retry_number - 1), self.max_backoff_s)
        # Equal jitter: never less than half the base, so backoff still grows.
        return base / 2 + random.uniform(0, base / 2)

    def call(
        self,
        fn: Callable[[], T],
        *,
        describe: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> tuple[T, int]:
        """Run ``fn`` until it succeeds or retries are spent; return (result, attempts).

        Non-retryable failures and exhausted retries are raised as ``LLMError`` subclasses
        carrying the number of attempts in ``details['attempts']``.
        """
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn(), attempt
            except BlockError:
                raise
            except Exception as exc:
                kind = classify_failure(exc)
                if not kind.retryable or attempt > self.max_retries:
                    raise to_block_error(exc, kind, attempts=attempt, describe=describe) from exc
                wait = self.delay(attempt, exc)
                logger.warning(
                    "%s failed (%s, attempt %d/%d); retrying in %.2fs: %s",
                    describe,
                    kind.value,
                    attempt,
                    self.max_retries + 1,
                    wait,
                    exc,
                )
                sleep(wait)


def _provider_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(exc) or type(exc).__name__


def to_block_error(
    exc: BaseException, kind: FailureKind, *, attempts: int, describe: str
) -> LLMError:
    """A Japanese, user-facing error for a failed LLM call."""
    status = _status_code(exc)
    details: dict[str, object] = {
        "call": describe,
        "failure": kind.value,
        "attempts": attempts,
        "status_code": status,
        "provider_message": _provider_message(exc)[:500],
        "exception": type(exc).__name__,
    }
    tries = f"（{attempts} 回試行）"
    if kind is FailureKind.TIMEOUT:
        return LLMTimeoutError(
            f"LLM の応答が制限時間内に返りませんでした{tries}: {describe}",
            hint="KEIRI_LLM_TIMEOUT_S を延ばすか、入力を小さくして再実行してください。"
            " サーバーが混雑している場合は時間をおいて再実行してください。",
            details=details,
        )
    if kind is FailureKind.RATE_LIMIT:
        message = f"LLM API のレート制限（HTTP 429）が続きました{tries}: {describe}"
        hint = (
            "しばらく待ってから再実行してください。頻発する場合はプロバイダーの利用上限を確認するか、"
            "KEIRI_LLM_MAX_RETRIES / KEIRI_LLM_RETRY_BACKOFF_S を増やしてください。"
        )
    elif kind is FailureKind.SERVER:
        message = f"LLM API がサーバーエラー（HTTP {status}）を返し続けました{tries}: {describe}"
        hint = "プロバイダー側の障害の可能性があります。時間をおいて再実行してください。"
    elif kind is FailureKind.CONNECTION:
        message = f"LLM API に接続できませんでした{tries}: {describe}"
        hint = (
            "OPENAI_BASE_URL などの接続先とネットワークを確認してください（`keiri-agent doctor`）。"
        )
    elif kind is FailureKind.AUTH:
        message = f"LLM API の認証に失敗しました（HTTP {status}）: {describe}"
        hint = "API キー（OPENAI_API_KEY / AZURE_OPENAI_API_KEY / ANTHROPIC_API_KEY）が正しいか確認してください。"
    elif kind is FailureKind.NOT_FOUND:
        message = (
            f"LLM API がモデルまたはエンドポイントを見つけられませんでした（HTTP 404）: {describe}"
        )
        hint = "KEIRI_LLM_MODEL（または役割別の KEIRI_LLM_MODEL_<ROLE>）のモデル名と接続先を確認してください。"
    elif kind is FailureKind.BAD_REQUEST:
        message = f"LLM API がリクエストを受け付けませんでした（HTTP {status}）: {describe}"
        hint = (
            "入力が長すぎるか、モデルがこの機能（構造化出力など）に対応していない可能性があります。"
        )
    else:
        message = (
            f"LLM 呼び出し中に予期しないエラーが発生しました（{type(exc).__name__}）: {describe}"
        )
        hint = "エラー詳細を確認してください。再現する場合は不具合として報告してください。"
    return LLMError(message, hint=hint, details=details)
