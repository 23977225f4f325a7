"""Japanese JSON error bodies for every failure the API reports.

Every error response has the body ``{"code", "title", "message", "hint"}`` (plus ``details``
when there are any): the shape of ``BlockError.to_dict()`` elsewhere, with ``title`` the code in
words (``errors.CODE_WORDS``, the words the app and the CLI say it in). An API's own code is an
``ErrorCode`` too (``ApiError`` takes no other), so each has its words. :class:`ApiError` is a
``BlockError`` that also knows its HTTP status; other BlockErrors get one from their code
(``PERMISSION_DENIED`` → 403, ``DEPENDENCY_NOT_FOUND`` → 404, input problems → 400).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from keiri_agent.errors import BlockError, ErrorCode, code_word
from keiri_agent.llm.field_problems import FieldProblem, details_of, field_problems, lines_of

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
        ErrorCode.NOT_FOUND,
        "そのアドレスはありません。",
        "URL を確認してください（API は /agent/ 以下です）。",
    ),
    405: (
        ErrorCode.METHOD_NOT_ALLOWED,
        "このアドレスはそのメソッドに対応していません。",
        "GET と POST を確認してください。",
    ),
}


class ApiError(BlockError):
    """A failure with its own HTTP status (401, 404, 409, 413, ...)."""

    def __init__(
        self,
        status_code: int,
        code: ErrorCode,
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
        return _response(self, self.status_code, self.headers)


def _response(
    error: BlockError, status: int, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The API's JSON form of a failure: code, its words, message, hint, and details when any."""
    body: dict[str, Any] = {
        "code": error.code,
        "title": code_word(error.code),
        "message": error.message,
        "hint": error.hint,
    }
    if error.details:
        body["details"] = error.details
    return JSONResponse(body, status_code=status, headers=headers or None)


async def _block_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, BlockError)
    if isinstance(exc, ApiError):
        return exc.response()
    return _response(exc, STATUS_BY_CODE.get(exc.code, 500))


# Where FastAPI says a request's value was (the first part of an error's location), in words.
_PLACES: Final = {"body": "本文", "query": "URL のパラメータ", "path": "URL", "header": "ヘッダー"}
RUN_HINT: Final = (
    "kind（convert / plan / analysis / design）ごとの項目を確認してください"
    '（例: {"request": "売上.csv を Parquet に変換して"}）。'
)
REQUEST_HINT: Final = (
    "項目ごとの問題は details.errors にあります。項目名と値の形を確認してください。"
)


def _problem(err: Mapping[str, Any], body: Any) -> FieldProblem:
    """One of a request's validation errors, in Japanese (``llm.field_problems``): the field
    with the place it was sent in (本文, URL のパラメータ, ...), what was wrong, what came."""
    loc = tuple(err.get("loc", ()))
    place = _PLACES.get(str(loc[0])) if loc else None
    inner = loc[1:] if place is not None else loc
    if err.get("type") == "json_invalid":  # JSON that does not parse: no field to name
        at = f"（{inner[0] + 1} 文字目）" if inner and isinstance(inner[0], int) else ""
        problem = field_problems([{**err, "loc": ()}])[0]  # type: ignore[typeddict-item]
        return replace(problem, field=_PLACES["body"], problem=problem.problem + at, received=None)
    problem = field_problems([{**err, "loc": inner}], data=body)[0]  # type: ignore[typeddict-item]
    if place is None or place == _PLACES["body"]:
        return problem
    return replace(problem, field=f"{place} {problem.field}")


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """A request that fails its model (FastAPI's parameters and bodies, ``/agent/run``'s
    request): each problem in Japanese; Pydantic's English only in ``details.errors[].message``."""
    assert isinstance(exc, RequestValidationError)
    problems = [_problem(err, exc.body) for err in exc.errors()]
    return ApiError(
        422,
        ErrorCode.INPUT_VALIDATION_FAILED,
        f"リクエストの内容が正しくありません: {'、'.join(lines_of(problems))}",
        hint=RUN_HINT if request.url.path.endswith("/agent/run") else REQUEST_HINT,
        details={"errors": details_of(problems)},
    ).response()


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code, message, hint = _HTTP_MESSAGES.get(
        exc.status_code,
        (ErrorCode.HTTP_ERROR, f"リクエストを処理できませんでした（HTTP {exc.status_code}）。", ""),
    )
    headers = dict(exc.headers or {})
    return ApiError(exc.status_code, code, message, hint=hint, headers=headers).response()


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(BlockError, _block_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
