"""Who is asking, and which tasks they may see.

Authentication is on once users exist (``users``: the users file ``KEIRI_API_KEYS_FILE``, or
the single ``KEIRI_API_KEY``, which is the admin user ``admin``); then every ``/agent`` route
requires ``Authorization: Bearer <key>``. Each task belongs to the user who sent it
(``Task.owner``): a user sees, lists, downloads, answers and cancels only their own tasks; an
admin sees every task, including those made while the server ran without authentication
(which no ordinary user sees). Another user's task answers 404, exactly like a task that does
not exist.

A browser's ``EventSource`` cannot set headers and neither can a download link, so the routes
about one task (its SSE stream, status, files, answers, retry and cancel) also accept
``?token=<task token>``: ``HMAC-SHA256(server secret, owner + task_id)``. The server secret
(``secret``) is kept under the workspace, not in the users file, so reading that file forges
nothing; it stays across restarts (so do tokens) and ``keiri-agent serve --rotate-secret``
replaces it (every earlier token stops working). A token opens only its own task, and only while
the task's owner is still a user; it is shown only to those who may see the task and never
reveals a key. Comparisons are constant-time. With no users at all there is no authentication
(``keiri-agent serve`` warns when it binds to a non-loopback address that way).

Every ``/agent`` route takes its :class:`Access` as a ``Caller`` parameter; routes about what is
shared (the task list, plans, schedules and triggers) also require
:meth:`Authenticator.signed_in`, which a task's token does not pass.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends
from starlette.requests import Request

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.server.errors import ApiError
from keiri_agent.server.redaction import TOKEN_PARAM
from keiri_agent.server.secret import ServerSecret
from keiri_agent.server.store import not_found
from keiri_agent.server.task_model import Task
from keiri_agent.users import User, Users, load_users

__all__ = ["SSE_PATH", "TOKEN_PARAM", "Access", "Authenticator", "Caller", "task_token"]

SSE_PATH = "/agent/sse"  # the one route that names its task in the query
_AUTH_HINT = (
    "Authorization: Bearer <API キー> ヘッダーを付けてください"
    "（画面では「API キー」欄に入力します）。"
)


def task_token(secret: bytes, owner: str, task_id: str) -> str:
    """The token that opens the routes of ``owner``'s task ``task_id`` without the key
    (URL-safe, unpadded). NUL cannot occur in a user's name or a task id: the message is
    unambiguous."""
    message = "\0".join(("task", owner, task_id)).encode("utf-8")
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _unauthorized(code: ErrorCode, message: str) -> ApiError:
    return ApiError(
        401,
        code,
        message,
        hint=_AUTH_HINT,
        headers={"WWW-Authenticate": 'Bearer realm="keiri-agent"'},
    )


@dataclass(frozen=True)
class Access:
    """What one request may see: everything (no authentication), a user's tasks (all for an
    admin), or the one task its token opens."""

    user: User | None = None
    token_task: str | None = None
    open: bool = False  # no authentication configured

    @property
    def owner(self) -> str | None:
        """The owner of the tasks this request creates."""
        return self.user.name if self.user is not None else None

    @property
    def admin(self) -> bool:
        return self.open or (self.user is not None and self.user.admin)

    def sees(self, task: Task) -> bool:
        if self.admin:
            return True
        if self.user is not None:
            return task.owner == self.user.name
        return self.token_task == task.id

    def check(self, task: Task) -> Task:
        """``task`` if this request may see it; 404 otherwise (its existence is not told)."""
        if not self.sees(task):
            raise not_found(task.id)
        return task


class Authenticator:
    """A FastAPI dependency: the :class:`Access` of a request, or 401."""

    def __init__(self, settings: Settings, owner_of: Callable[[str], Task]) -> None:
        self.users: Users = load_users(settings)
        self._task = owner_of
        self._secret = ServerSecret.of(settings)
        if self.users:
            self._secret.current()  # made (or found unusable) when the server starts

    @property
    def enabled(self) -> bool:
        return bool(self.users)

    @staticmethod
    def missing_key() -> ApiError:
        return _unauthorized(ErrorCode.API_KEY_REQUIRED, "API キーが必要です。")

    @staticmethod
    def signed_in(access: Access) -> Access:
        """``access`` when it is a user's key or the server has no keys; 401 for a task's token,
        which opens its one task and nothing shared (the task list, plans, schedules)."""
        if access.user is None and not access.open:
            raise Authenticator.missing_key()
        return access

    def token_for(self, task: Task) -> str | None:
        owner = self.users.by_name(task.owner)
        if owner is None:
            return None
        return task_token(self._secret.current(), owner.name, task.id)

    def user_for(self, request: Request) -> User | None:
        """The user of the request's Bearer key (None without a header); 401 for a wrong key."""
        header = request.headers.get("authorization")
        if header is None:
            return None
        scheme, _, value = header.partition(" ")
        user = self.users.by_key(value.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise _unauthorized(ErrorCode.INVALID_API_KEY, "API キーが正しくありません。")
        return user

    def __call__(self, request: Request) -> Access:
        if not self.enabled:
            return Access(open=True)
        user = self.user_for(request)
        if user is not None:
            return Access(user=user)
        token = request.query_params.get(TOKEN_PARAM)
        task_id = request.path_params.get("task_id")
        if task_id is None and request.url.path.endswith(SSE_PATH):
            task_id = request.query_params.get("task_id")
        if token is not None and task_id:
            try:
                expected = self.token_for(self._task(str(task_id)))
            except BlockError:  # no such task: the token cannot be right
                expected = None
            if expected is not None and _same(token, expected):
                return Access(token_task=str(task_id))
            raise _unauthorized(ErrorCode.INVALID_API_KEY, "タスクのトークンが正しくありません。")
        raise self.missing_key()


def _access(request: Request) -> Access:
    """Who is asking (the app's ``Authenticator``); a dependency of every ``/agent`` route."""
    authenticator: Authenticator = request.app.state.auth
    return authenticator(request)


Caller = Annotated[Access, Depends(_access)]
