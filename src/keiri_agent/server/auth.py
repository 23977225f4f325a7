"""The optional API key: once ``KEIRI_API_KEY`` is set, every ``/agent`` route requires it.

Clients send ``Authorization: Bearer <key>``. A browser's ``EventSource`` cannot set headers
and neither can a download link, so the routes about one task (its SSE stream, status, files
and cancel) also accept ``?token=<task token>``: ``HMAC-SHA256(key, task_id)``, returned by
``POST /agent/run`` and ``GET /agent/tasks/{id}``. A token opens only its own task and never
reveals the key, so a URL that ends up in a proxy log or the browser history exposes one task,
not the server. The progress page and its static files are public: they hold no data, and the
page asks for the key in a password field and keeps it in memory only.

Comparisons are constant-time. With no key configured there is no authentication at all
(``keiri-agent serve`` warns when it binds to a non-loopback address that way).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from starlette.requests import Request

from keiri_agent.config import Settings
from keiri_agent.server.errors import ApiError

__all__ = ["SSE_PATH", "TOKEN_PARAM", "Authenticator", "configured_key", "task_token"]

TOKEN_PARAM = "token"
SSE_PATH = "/agent/sse"  # the one route that names its task in the query
_AUTH_HINT = (
    "Authorization: Bearer <KEIRI_API_KEY> ヘッダーを付けてください"
    "（画面では「API キー」欄に入力します）。"
)


def configured_key(settings: Settings) -> str | None:
    """The API key, or None when authentication is off (unset or blank)."""
    key = settings.keiri_api_key
    if key is None or not key.get_secret_value().strip():
        return None
    return key.get_secret_value().strip()


def task_token(key: str, task_id: str) -> str:
    """The token that opens one task's routes without the key (URL-safe, unpadded)."""
    digest = hmac.new(key.encode("utf-8"), f"task:{task_id}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _unauthorized(code: str, message: str) -> ApiError:
    return ApiError(
        401,
        code,
        message,
        hint=_AUTH_HINT,
        headers={"WWW-Authenticate": 'Bearer realm="keiri-agent"'},
    )


class Authenticator:
    """A FastAPI dependency that rejects requests without the right key or task token."""

    def __init__(self, settings: Settings) -> None:
        self.key = configured_key(settings)

    @property
    def enabled(self) -> bool:
        return self.key is not None

    def token_for(self, task_id: str) -> str | None:
        return task_token(self.key, task_id) if self.key is not None else None

    def __call__(self, request: Request) -> None:
        if self.key is None:
            return
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, value = header.partition(" ")
            if scheme.lower() == "bearer" and _same(value.strip(), self.key):
                return
            raise _unauthorized("INVALID_API_KEY", "API キーが正しくありません。")
        token = request.query_params.get(TOKEN_PARAM)
        task_id = request.path_params.get("task_id")
        if task_id is None and request.url.path == SSE_PATH:
            task_id = request.query_params.get("task_id")
        if token is not None and task_id:
            if _same(token, task_token(self.key, str(task_id))):
                return
            raise _unauthorized("INVALID_API_KEY", "タスクのトークンが正しくありません。")
        raise _unauthorized("API_KEY_REQUIRED", "API キーが必要です。")
