"""Request ids, request counts, and internal errors written to the log with their traceback.

:class:`RequestIds` is the outermost ASGI middleware: every request gets an id (the client's
``X-Request-ID`` when it is a short plain token, else a new one), which is in every log record
written while it is answered (``logconfig``) and in the ``X-Request-ID`` response header. An
exception nothing else handled becomes a Japanese ``500 INTERNAL_ERROR`` body naming the
request id, and its traceback goes to the log under that id, so "check the server log" leads
somewhere.
"""

from __future__ import annotations

import logging
import re
import secrets

from prometheus_client import Counter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keiri_agent.errors import ErrorCode
from keiri_agent.server.errors import ApiError
from keiri_agent.server.logconfig import request_context

__all__ = ["REQUEST_ID_HEADER", "RequestIds"]

REQUEST_ID_HEADER = "x-request-id"
_CLIENT_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
log = logging.getLogger(__name__)


class RequestIds:
    """Gives each HTTP request an id, counts answers, and logs unhandled errors."""

    def __init__(self, app: ASGIApp, count: Counter | None = None) -> None:
        self.app = app
        self.count = count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        request_id = given if _CLIENT_ID_RE.match(given) else secrets.token_hex(8)
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
                if self.count is not None:
                    self.count.labels(scope["method"], str(message["status"])).inc()
            await send(message)

        with request_context(request_id):
            try:
                await self.app(scope, receive, send_with_id)
            except Exception:
                log.exception("予期しないエラー: %s %s", scope["method"], scope["path"])
                if started:
                    raise
                answer = ApiError(
                    500,
                    ErrorCode.INTERNAL_ERROR,
                    "サーバー内部で予期しないエラーが起きました。",
                    hint=f"サーバーのログでリクエスト ID {request_id} を探し、不具合として報告してください。",
                    details={"request_id": request_id},
                ).response()
                await answer(scope, receive, send_with_id)
