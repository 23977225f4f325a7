"""The API server: ``create_app()`` builds the FastAPI app that ``keiri-agent serve`` runs.

One API serves every agent (seed 003 §7, extended):

=======  ===================================  ==============================================
POST     ``/agent/run``                       start a task (conversion, plan run, analysis, design)
POST     ``/agent/tasks/{id}/answers``        answers for a task waiting for input (plan run, CodeAct question)
POST     ``/agent/tasks/{id}/retry``          run an interrupted task again (``lifecycle``)
GET      ``/agent/sse?task_id=``              its events as SSE, replayable (see ``sse``)
GET      ``/agent/tasks``                     the newest tasks the caller may see (``?limit=``)
GET      ``/agent/tasks/{id}``                status, step, progress, answer, files, error
POST     ``/agent/tasks/{id}/cancel``         stop a running or paused task (and its sandbox)
GET      ``/agent/tasks/{id}/files/{path}``   download a file of the task
GET      ``/agent/plans``                     the plans a user may run, with their inputs (``plan_catalog``)
*        ``/agent/plans/{plan_id}/...``       plan versions: save, list, diff, review (``plans_api``)
*        ``/agent/schedules`` ``/agent/triggers``  schedules, triggers, webhook calls (``schedules_api``)
GET      ``/healthz`` ``/readyz`` ``/metrics``  liveness, readiness, Prometheus (``ops``)
GET      ``/``                                the progress page (static HTML and JS)
GET      ``/favicon.ico``                     the page icon (the app's: a file of the package)
=======  ===================================  ==============================================

Both POST routes take JSON, or ``multipart/form-data`` with the same JSON in the form field
``request`` and files in ``files`` parts: the files are
stored under the task (``inputs``). Every ``/agent`` route requires a key once users are
configured (``KEIRI_API_KEYS_FILE`` or ``KEIRI_API_KEY``), and a user sees only their own
tasks (``auth``). Request bodies larger than ``KEIRI_MAX_REQUEST_BYTES``
(``KEIRI_MAX_UPLOAD_BYTES`` for multipart) are refused with 413 before they are read in full;
a ``Host`` header the server is not meant to be reached by is refused with 400 (``hosts``);
without keys, a POST that is not provably from the server's own origin is refused with 403
(``csrf``).
Every error is a Japanese JSON body ``{code, title, message, hint}`` (``errors``); every answer
carries an ``X-Request-ID`` that the log records share (``requests``, ``logconfig``). There is
no ``/docs`` page: it would be one more route outside the key.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Annotated, Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import anyio.to_thread
from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from starlette.datastructures import UploadFile
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import ErrorCode, input_error
from keiri_agent.server.auth import SSE_PATH, Access, Authenticator, Caller
from keiri_agent.server.csrf import CrossSiteGuard
from keiri_agent.server.errors import ApiError, install_error_handlers
from keiri_agent.server.hosts import AllowedHosts, allowed_hosts
from keiri_agent.server.lifecycle import STOP_GRACE_S, Lifecycle
from keiri_agent.server.ops import METRICS_CONTENT_TYPE, ServerMetrics, readiness
from keiri_agent.server.plan_catalog import plan_catalog
from keiri_agent.server.plans_api import plan_routes
from keiri_agent.server.requests import RequestIds
from keiri_agent.server.retention import Retention
from keiri_agent.server.runners import MAX_DATA_FILES, MAX_REQUEST_CHARS, TaskRequest
from keiri_agent.server.scheduler import Clock, Scheduler, utc_now
from keiri_agent.server.schedules_api import schedule_routes
from keiri_agent.server.sse import DEFAULT_PING_S, last_event_id, task_events
from keiri_agent.server.tasks import (
    DEFAULT_LIST_LIMIT,
    Task,
    TaskRegistry,
    Upload,
    result_file,
)

__all__ = ["STATIC_DIR", "BodyLimit", "create_app"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
ICON_FILE = "icon.png"  # the progress page's icon, and the app's
MAX_LIST_LIMIT = 1000
MAX_FORM_FIELD_BYTES = 1_000_000  # the JSON part of a multipart request
FORM_JSON_FIELD = "request"  # the form field holding the JSON body in a multipart request
_TASK_REQUEST: TypeAdapter[Any] = TypeAdapter(TaskRequest)


class AnswersRequest(BaseModel):
    """Answers for the ``ui.interactive_input`` nodes a plan run waits on (``answers``), or the
    answer to the question a conversion's CodeAct asked (``answer``)."""

    model_config = ConfigDict(extra="forbid")
    answers: dict[str, dict[str, Any]] | None = None
    answer: str | None = Field(default=None, max_length=MAX_REQUEST_CHARS)


def _is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("multipart/form-data")


class _BodyTooLargeError(Exception):
    pass


class BodyLimit:
    """ASGI middleware: 413 for a body over ``max_bytes`` (declared, or counted as it arrives)."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_upload_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_upload_bytes = max_upload_bytes

    @staticmethod
    def _refusal(limit: int, upload: bool) -> Response:
        if upload:
            return ApiError(
                413,
                ErrorCode.UPLOAD_TOO_LARGE,
                f"アップロードするファイルが大きすぎます（合計の上限 {limit:,} バイト）。",
                hint="ファイルを分けるか小さくして送り直してください（上限は KEIRI_MAX_UPLOAD_BYTES"
                " で変えられます）。",
            ).response()
        return ApiError(
            413,
            ErrorCode.REQUEST_TOO_LARGE,
            f"リクエストが大きすぎます（上限 {limit:,} バイト）。",
            hint="データは本文に入れず、ファイルをアップロードするか KEIRI_WORKSPACE_ROOT に置いて"
            "パスで指定してください（上限は KEIRI_MAX_REQUEST_BYTES で変えられます）。",
        ).response()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        upload = headers.get(b"content-type", b"").startswith(b"multipart/form-data")
        limit = self.max_upload_bytes if upload else self.max_bytes
        refusal = self._refusal(limit, upload)
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await refusal(scope, receive, send)
            return
        received = 0
        over = refused = False

        async def counted_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    over = True
                    raise _BodyTooLargeError
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal refused
            if not over:
                await send(message)
            elif not refused:  # the app turned the error into its own answer: replace it
                refused = True
                await refusal(scope, receive, send)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except _BodyTooLargeError:
            if not refused:
                refused = True
                await refusal(scope, receive, send)


def _view(task: Task, auth: Authenticator, zone: ZoneInfo) -> dict[str, Any]:
    """A task as the API shows it: its record (times in UTC), the times as people read them in
    ``zone`` (``local_times``), download URLs, the SSE URL, its token."""
    data = task.to_dict()
    data["local_times"] = task.local_times(zone)
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
    token = auth.token_for(task)
    if token is not None:
        data["token"] = token
    return data


async def _read_form(request: Request, json_field: str) -> tuple[bytes, list[UploadFile]]:
    """The JSON text and the files of a multipart request (python-multipart via Starlette)."""
    form = await request.form(
        max_files=MAX_DATA_FILES, max_fields=10, max_part_size=MAX_FORM_FIELD_BYTES
    )
    raw = form.get(json_field)
    files = [part for part in form.getlist("files") if isinstance(part, UploadFile)]
    if raw is None or isinstance(raw, UploadFile):
        raise input_error(
            f"multipart のフォーム項目「{json_field}」（JSON の文字列）がありません。",
            f"{json_field} に JSON を、files にファイルを入れて送ってください。",
        )
    return raw.encode("utf-8"), files


async def _body(request: Request) -> tuple[bytes, list[Upload]]:
    if not _is_multipart(request):
        return await request.body(), []
    raw, files = await _read_form(request, FORM_JSON_FIELD)
    return raw, [(part.filename or "", part.file) for part in files]


def _parse(adapter: TypeAdapter[Any], raw: bytes) -> Any:
    try:
        return adapter.validate_json(raw or b"{}")
    except ValidationError as exc:
        try:  # the request as sent tells its keys from the union's tags in a location
            body = json.loads(raw)
        except ValueError:
            body = None
        raise RequestValidationError(exc.errors(include_url=False), body=body) from None


def create_app(
    settings: Settings | None = None,
    *,
    registry: TaskRegistry | None = None,
    ping_s: float = DEFAULT_PING_S,
    bind_host: str | None = None,
    lifecycle: Lifecycle | None = None,
    clock: Clock = utc_now,
) -> FastAPI:
    """The app; ``bind_host`` is the address it listens on (its name is an allowed Host);
    ``lifecycle`` drains its tasks when the server stops (``keiri-agent serve`` starts the
    drain at SIGTERM); ``registry`` and ``ping_s`` (the SSE heartbeat interval) are for tests;
    ``clock`` is the scheduler's (schedules fire and webhook signatures age by it)."""
    settings = settings or load_settings()
    tasks = registry or TaskRegistry(settings)
    life = lifecycle or Lifecycle(tasks)
    auth = Authenticator(settings, tasks.get)
    metrics = ServerMetrics(tasks)
    retention = Retention(settings)
    zone = settings.keiri_timezone  # the task views' local_times
    scheduler = Scheduler(settings, tasks, clock=clock)
    sse_grace_s = life.timeout_s + STOP_GRACE_S + 5.0

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(life.recover)
        retention.start()
        if settings.keiri_scheduler:
            scheduler.start()
        yield
        await anyio.to_thread.run_sync(scheduler.stop)
        retention.stop()
        await anyio.to_thread.run_sync(life.shutdown)

    app = FastAPI(
        title="keiri-agent",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.lifecycle, app.state.auth, app.state.scheduler = life, auth, scheduler
    install_error_handlers(app)
    if not auth.enabled:  # with keys, a request's key proves where it comes from
        app.add_middleware(CrossSiteGuard)
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.keiri_max_request_bytes,
        max_upload_bytes=settings.keiri_max_upload_bytes,
    )
    hosts = allowed_hosts(settings, bind_host)
    if "*" not in hosts:
        app.add_middleware(AllowedHosts, hosts=hosts)
    app.add_middleware(RequestIds, count=metrics.requests)  # outermost: every answer has an id
    api = APIRouter(prefix="/agent")

    def visible(access: Access, task_id: str) -> Task:
        return access.check(tasks.get(task_id))

    @api.post("/run", status_code=202)
    async def run(request: Request, access: Caller) -> dict[str, Any]:
        raw, uploads = await _body(request)
        body = _parse(_TASK_REQUEST, raw)
        submit = partial(tasks.submit, body, uploads, access.owner)
        return _view(await anyio.to_thread.run_sync(submit), auth, zone)

    @api.post("/tasks/{task_id}/answers", status_code=202)
    async def answer(task_id: str, request: Request, access: Caller) -> dict[str, Any]:
        await anyio.to_thread.run_sync(visible, access, task_id)
        raw, uploads = await _body(request)
        body: AnswersRequest = _parse(TypeAdapter(AnswersRequest), raw)
        task = await anyio.to_thread.run_sync(
            partial(tasks.answer, task_id, body.answers or {}, uploads, text=body.answer)
        )
        return _view(task, auth, zone)

    @api.post("/tasks/{task_id}/retry", status_code=202)
    def retry(task_id: str, access: Caller) -> dict[str, Any]:
        visible(access, task_id)
        return _view(tasks.retry(task_id), auth, zone)

    @api.get(SSE_PATH.removeprefix("/agent"), response_model=None)
    async def sse(
        request: Request,
        task_id: str,
        access: Caller,
        last_event_id_param: Annotated[str | None, Query(alias="last_event_id")] = None,
    ) -> Response:
        after = last_event_id(request, last_event_id_param)
        task = await anyio.to_thread.run_sync(visible, access, task_id)
        return task_events(tasks, task, after, ping_s=ping_s, grace_s=sse_grace_s)

    @api.get("/tasks")
    def list_tasks(
        access: Caller,
        limit: Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)] = DEFAULT_LIST_LIMIT,
    ) -> dict[str, Any]:
        auth.signed_in(access)
        return {"tasks": [_view(task, auth, zone) for task in tasks.list(limit, access.sees)]}

    @api.get("/tasks/{task_id}")
    def get_task(task_id: str, access: Caller) -> dict[str, Any]:
        return _view(visible(access, task_id), auth, zone)

    @api.post("/tasks/{task_id}/cancel", status_code=202)
    def cancel_task(task_id: str, access: Caller) -> dict[str, Any]:
        visible(access, task_id)
        return _view(tasks.cancel(task_id), auth, zone)

    @api.get("/tasks/{task_id}/files/{path:path}", response_model=None)
    def download(task_id: str, path: str, access: Caller) -> FileResponse:
        real = result_file(visible(access, task_id), path)
        return FileResponse(real, filename=real.name)

    @api.get("/plans")
    def plans(access: Caller) -> dict[str, Any]:
        auth.signed_in(access)
        return {"plans": plan_catalog(settings)}

    app.include_router(api)
    app.include_router(plan_routes(settings, auth))
    app.include_router(schedule_routes(settings, auth, scheduler))

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC_DIR / ICON_FILE, media_type="image/png")

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", include_in_schema=False, response_model=None)
    def readyz() -> JSONResponse:
        report = readiness(tasks)
        return JSONResponse(report, status_code=200 if report["status"] == "ready" else 503)

    @app.get("/metrics", include_in_schema=False, response_model=None)
    def metrics_page(request: Request) -> Response:
        if auth.enabled:
            user = auth.user_for(request)
            if user is None:
                raise auth.missing_key()
            if not user.admin:
                raise ApiError(
                    403,
                    ErrorCode.ADMIN_REQUIRED,
                    "メトリクスは管理者（role: admin）のキーでだけ読めます。",
                    hint="Prometheus の scrape 設定に管理者のキーを Bearer で指定してください。",
                )
        return Response(metrics.render(), media_type=METRICS_CONTENT_TYPE)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "progress.html", media_type="text/html; charset=utf-8")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
