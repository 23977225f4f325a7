"""Japanese JSON error bodies for every failure the API reports.

Every error response has the body ``{"code", "message", "hint"}`` (plus ``details`` when there
are any), the same shape as ``BlockError.to_dict()`` shows elsewhere. :class:`ApiError` is a
``BlockError`` that also knows its HTTP status; other BlockErrors get one from their code
(``PERMISSION_DENIED`` → 403, ``DEPENDENCY_NOT_FOUND`` → 404, input problems → 400).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["ApiError", "install_error_handlers"]

STATUS_BY_CODE: dict[str, int] = {
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.DEPENDENCY_NOT_FOUND: 404,
    ErrorCode.INPUT_VALIDATION_FAILED: 400,
    ErrorCode.PLAN_INVALID: 400,
    ErrorCode.CONFIGURATION_ERROR: 500,
    ErrorCode.SANDBOX_BUSY: 409,
    ErrorCode.APPROVAL_REQUIRED: 409,
}
_HTTP_MESSAGES = {
    404: (
        "NOT_FOUND",
        "そのアドレスはありません。",
        "URL を確認してください（API は /agent/ 以下です）。",
    ),
    405: (
        "METHOD_NOT_ALLOWED",
        "このアドレスはそのメソッドに対応していません。",
        "GET と POST を確認してください。",
    ),
}


class ApiError(BlockError):
    """A failure with its own HTTP status (401, 404, 409, 413, ...)."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        *,
        hint: str = "",
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message, code=code, hint=hint, details=details)
        self.status_code = status_code
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        """The API's JSON form of a failure: code, message, hint, and details when any."""
        body: dict[str, Any] = {"code": self.code, "message": self.message, "hint": self.hint}
        if self.details:
            body["details"] = self.details
        return JSONResponse(body, status_code=self.status_code, headers=self.headers or None)


async def _block_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BlockError)
    if isinstance(exc, ApiError):
        return exc.response()
    status = STATUS_BY_CODE.get(exc.code, 500)
    return ApiError(status, exc.code, exc.message, hint=exc.hint, details=exc.details).response()


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [
        {
            "field": ".".join(str(part) for part in err.get("loc", ()) if part != "body"),
            "problem": str(err.get("msg", "")),
        }
        for err in exc.errors()
    ]
    listing = "; ".join(f"{p['field'] or '(本文)'}: {p['problem']}" for p in problems[:5])
    return ApiError(
        422,
        ErrorCode.INPUT_VALIDATION_FAILED,
        f"リクエストの内容が不正です: {listing}",
        hint="kind（convert / plan / analysis）ごとの項目を確認してください"
        '（例: {"request": "売上.csv を Parquet に変換して"}）。',
        details={"errors": problems},
    ).response()


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code, message, hint = _HTTP_MESSAGES.get(
        exc.status_code,
        ("HTTP_ERROR", f"リクエストを処理できませんでした（HTTP {exc.status_code}）。", ""),
    )
    headers = dict(exc.headers or {})
    return ApiError(exc.status_code, code, message, hint=hint, headers=headers).response()


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(BlockError, _block_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
