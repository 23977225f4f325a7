"""The API server: ``create_app()`` builds the FastAPI app that ``keiri-agent serve`` runs.

One API serves every agent (seed 003 §7, extended):

=======  ===================================  ==============================================
POST     ``/agent/run``                       start a task (conversion, plan run, analysis)
GET      ``/agent/sse?task_id=``              its events as SSE, replayable (see ``sse``)
GET      ``/agent/tasks``                     the newest tasks (``?limit=``)
GET      ``/agent/tasks/{id}``                status, step, progress, answer, files, error
POST     ``/agent/tasks/{id}/cancel``         stop a running task and its sandbox processes
GET      ``/agent/tasks/{id}/files/{path}``   download a file of the task
GET      ``/``                                the progress page (static HTML and JS)
=======  ===================================  ==============================================

Every ``/agent`` route requires the API key once ``KEIRI_API_KEY`` is set (``auth``). Request
bodies larger than ``KEIRI_MAX_REQUEST_BYTES`` are refused with 413 before they are read in
full. Every error is a Japanese JSON body ``{code, message, hint}`` (``errors``). There is no
``/docs`` page: it would be the one route outside the key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path, PurePosixPath
from typing import Annotated, Any
from urllib.parse import quote

import anyio.to_thread
from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keiri_agent.config import Settings, load_settings
from keiri_agent.server.auth import SSE_PATH, Authenticator
from keiri_agent.server.errors import error_response, install_error_handlers
from keiri_agent.server.runners import TaskRequest
from keiri_agent.server.sse import DEFAULT_PING_S, last_event_id, task_events
from keiri_agent.server.tasks import DEFAULT_LIST_LIMIT, Task, TaskRegistry

__all__ = ["STATIC_DIR", "BodyLimit", "create_app"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
MAX_LIST_LIMIT = 1000


class _BodyTooLargeError(Exception):
    pass


class BodyLimit:
    """ASGI middleware: 413 for a body over ``max_bytes`` (declared, or counted as it arrives)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _refusal(self) -> Response:
        return error_response(
            413,
            "REQUEST_TOO_LARGE",
            f"リクエストが大きすぎます（上限 {self.max_bytes:,} バイト）。",
            "データは本文に入れず、ファイルを KEIRI_WORKSPACE_ROOT に置いてパスで指定してください"
            "（上限は KEIRI_MAX_REQUEST_BYTES で変えられます）。",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refusal()(scope, receive, send)
            return
        received = 0
        over = refused = False

        async def counted_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    over = True
                    raise _BodyTooLargeError
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal refused
            if not over:
                await send(message)
            elif not refused:  # the app turned the error into its own answer: replace it
                refused = True
                await self._refusal()(scope, receive, send)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except _BodyTooLargeError:
            if not refused:
                refused = True
                await self._refusal()(scope, receive, send)


def _view(task: Task, auth: Authenticator) -> dict[str, Any]:
    """A task as the API shows it: its record, download URLs, the SSE URL, its token."""
    data = task.to_dict()
    base = f"/agent/tasks/{task.id}"
    files = []
    for rel in task.files:
        path = task.directory / rel
        files.append(
            {
                "path": rel,
                "name": PurePosixPath(rel).name,
                "size": path.stat().st_size if path.is_file() else None,
                "url": f"{base}/files/{quote(rel)}",
            }
        )
    data["files"] = files
    data["sse_url"] = f"{SSE_PATH}?task_id={task.id}"
    token = auth.token_for(task.id)
    if token is not None:
        data["token"] = token
    return data


def create_app(
    settings: Settings | None = None,
    *,
    registry: TaskRegistry | None = None,
    ping_s: float = DEFAULT_PING_S,
) -> FastAPI:
    """The app; ``registry`` and ``ping_s`` (the SSE heartbeat interval) are for tests."""
    settings = settings or load_settings()
    tasks = registry or TaskRegistry(settings)
    auth = Authenticator(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await anyio.to_thread.run_sync(tasks.close)

    app = FastAPI(
        title="keiri-agent",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    install_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=settings.keiri_max_request_bytes)
    api = APIRouter(prefix="/agent", dependencies=[Depends(auth)])

    @api.post("/run", status_code=202)
    def run(body: Annotated[TaskRequest, Body()]) -> dict[str, Any]:
        return _view(tasks.submit(body), auth)

    @api.get(SSE_PATH.removeprefix("/agent"), response_model=None)
    def sse(
        request: Request,
        task_id: str,
        last_event_id_param: Annotated[str | None, Query(alias="last_event_id")] = None,
    ) -> Response:
        after = last_event_id(request, last_event_id_param)
        return task_events(tasks.get(task_id), after, ping_s=ping_s)

    @api.get("/tasks")
    def list_tasks(
        limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = DEFAULT_LIST_LIMIT,
    ) -> dict[str, Any]:
        return {"tasks": [_view(task, auth) for task in tasks.list(limit)]}

    @api.get("/tasks/{task_id}")
    def get_task(task_id: str) -> dict[str, Any]:
        return _view(tasks.get(task_id), auth)

    @api.post("/tasks/{task_id}/cancel", status_code=202)
    def cancel_task(task_id: str) -> dict[str, Any]:
        return _view(tasks.cancel(task_id), auth)

    @api.get("/tasks/{task_id}/files/{path:path}", response_model=None)
    def download(task_id: str, path: str) -> FileResponse:
        real = tasks.file(task_id, path)
        return FileResponse(real, filename=real.name)

    app.include_router(api)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "progress.html", media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
