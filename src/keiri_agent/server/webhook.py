"""Webhook triggers: who may start a run, proved by an HMAC-SHA256 signature.

A caller of ``POST /agent/triggers/{id}`` signs each request with the trigger's secret
(``keiri-agent trigger add --webhook`` shows it once):

- ``X-Keiri-Timestamp``: the time of the call, in Unix seconds;
- ``X-Keiri-Signature``: ``sha256=`` and the hex HMAC-SHA256, keyed by the secret, of the
  timestamp, a ``.``, and the request body as sent (Stripe's and Slack's scheme).

A call whose signature does not match, or whose timestamp is more than
:data:`REPLAY_WINDOW_S` from the server's clock, is refused with 401; a signature already used
within the window (a captured call sent again) with 409. Signatures are recorded in the
workspace's SQLite file, so the refusal holds across server processes.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta

from keiri_agent.errors import ErrorCode
from keiri_agent.schedule import ScheduleStore, Trigger
from keiri_agent.server.errors import ApiError

__all__ = [
    "REPLAY_WINDOW_S",
    "SIGNATURE_HEADER",
    "SIGNATURE_PREFIX",
    "TIMESTAMP_HEADER",
    "check_signature",
    "sign",
]

REPLAY_WINDOW_S = 300  # 5 minutes: clocks of caller and server may differ by this much
SIGNATURE_HEADER = "X-Keiri-Signature"
TIMESTAMP_HEADER = "X-Keiri-Timestamp"
SIGNATURE_PREFIX = "sha256="
_HINT = (
    f"{TIMESTAMP_HEADER} に Unix 秒の現在時刻を、{SIGNATURE_HEADER} に "
    f"{SIGNATURE_PREFIX}<HMAC-SHA256(秘密鍵, タイムスタンプ + '.' + 本文) の 16 進> を付けてください"
    "（秘密鍵は keiri-agent trigger add --webhook が表示したもの）。"
)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header's value for a call (what a caller computes)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return SIGNATURE_PREFIX + digest.hexdigest()


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, ErrorCode.SIGNATURE_INVALID, message, hint=_HINT)


def check_signature(
    store: ScheduleStore,
    trigger: Trigger,
    timestamp: str | None,
    signature: str | None,
    body: bytes,
    now: datetime,
) -> None:
    """Accept the call or raise 401 (no, bad or stale signature) / 409 (a replay)."""
    if trigger.secret is None or not timestamp or not signature:
        raise _unauthorized("署名がありません。")
    try:
        sent = datetime.fromtimestamp(int(timestamp.strip()), tz=now.tzinfo)
    except (ValueError, OverflowError, OSError):
        raise _unauthorized("署名のタイムスタンプを読めません。") from None
    if abs((now - sent).total_seconds()) > REPLAY_WINDOW_S:
        raise _unauthorized(
            f"署名のタイムスタンプが {REPLAY_WINDOW_S // 60} 分の許容範囲の外です。"
        )
    expected = sign(trigger.secret, timestamp.strip(), body)
    if not hmac.compare_digest(expected, signature.strip()):
        raise _unauthorized("署名が一致しません。")
    window = timedelta(seconds=REPLAY_WINDOW_S)
    if not store.claim_signature(trigger.id, expected, now=now, forget_before=now - 2 * window):
        raise ApiError(
            409,
            ErrorCode.SIGNATURE_REPLAYED,
            "この署名の呼び出しはすでに受け付けました（再送は受け付けません）。",
            hint="呼び出しごとに新しいタイムスタンプで署名し直してください。",
        )
