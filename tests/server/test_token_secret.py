"""Task tokens are signed with the server's own secret (``<workspace>/.server/secret``), never
with anything in the users file: reading that file forges nothing. A token binds its task and
its owner, stays valid across restarts, and ``keiri-agent serve --rotate-secret`` ends every
earlier token, even on a server that is running. Concurrent first starts make one secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import multiprocessing
import os
import stat
from collections.abc import Callable
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import keiri_agent.cli.serve  # noqa: F401  (registers the command)
from keiri_agent.cli import app
from keiri_agent.errors import ConfigurationError
from keiri_agent.server import create_app
from keiri_agent.server.auth import task_token
from keiri_agent.server.secret import SECRET_BYTES, ServerSecret
from tests.server.conftest import LiveServer, make_settings

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}
KEYS = {"sato": "sato-key-secret-test-0123", "suzuki": "suzuki-key-secret-test-0123"}
WORKERS = 8


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _users_file(root: Path) -> Path:
    path = root / "users.yaml"
    lines = ["users:"] + [f"  - {{name: {n}, key_sha256: {_sha(k)}}}" for n, k in KEYS.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}"}


def _hmac(secret: bytes, message: str) -> str:
    digest = hmac.new(secret, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _finished_task(live: LiveServer, user: str = "sato") -> dict[str, Any]:
    with live.client(headers=_bearer(user)) as client:
        task_id = client.post("/agent/run", json=PLAN_TASK).json()["task_id"]
        assert live.wait_finished(task_id) == "success"
        task: dict[str, Any] = client.get(f"/agent/tasks/{task_id}").json()
    return task


def _status(live: LiveServer, task_id: object, token: str) -> int:
    with live.client() as client:
        return client.get(f"/agent/tasks/{task_id}", params={"token": token}).status_code


def test_the_users_file_forges_no_token(serve: Callable[..., LiveServer], tmp_path: Path) -> None:
    live = serve(make_settings(tmp_path, keiri_api_keys_file=_users_file(tmp_path)))
    task = _finished_task(live)
    assert _status(live, task["task_id"], str(task["token"])) == 200
    # What a reader of users.yaml can compute from sato's key_sha256, in every spelling.
    known = bytes.fromhex(_sha(KEYS["sato"]))
    for forged in (
        _hmac(known, f"task:{task['task_id']}"),
        task_token(known, "sato", str(task["task_id"])),
        task_token(_sha(KEYS["sato"]).encode(), "sato", str(task["task_id"])),
    ):
        assert _status(live, task["task_id"], forged) == 401
    secret = ServerSecret.of(live.settings)
    assert secret.path == tmp_path / "workspace" / ".server" / "secret"
    assert stat.S_IMODE(secret.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(secret.path.parent.stat().st_mode) == 0o700
    assert len(secret.path.read_bytes()) == SECRET_BYTES
    assert task["token"] == task_token(secret.current(), "sato", str(task["task_id"]))


def test_a_token_binds_its_owner(serve: Callable[..., LiveServer], tmp_path: Path) -> None:
    live = serve(make_settings(tmp_path, keiri_api_keys_file=_users_file(tmp_path)))
    task = _finished_task(live)
    secret = ServerSecret.of(live.settings).current()
    assert _status(live, task["task_id"], task_token(secret, "suzuki", str(task["task_id"]))) == 401


def test_tokens_stay_valid_across_restarts_until_the_secret_is_rotated(
    serve: Callable[..., LiveServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(tmp_path, keiri_api_keys_file=_users_file(tmp_path))
    first = serve(settings)
    task = _finished_task(first)
    token = str(task["token"])
    first.server.should_exit = True
    first.thread.join(30)
    live = serve(settings)  # a restart: same workspace, same secret
    assert _status(live, task["task_id"], token) == 200
    with live.client() as client:
        sse = client.get("/agent/sse", params={"task_id": task["task_id"], "token": token})
    assert sse.status_code == 200

    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(settings.keiri_workspace_root))
    result = CliRunner().invoke(app, ["serve", "--rotate-secret"])
    assert result.exit_code == 0, result.output
    assert "秘密鍵を作り直しました" in result.output
    assert "使えなくなりました" in result.output
    # The running server uses the new secret at once: the old token is refused, a new one works.
    assert _status(live, task["task_id"], token) == 401
    with live.client(headers=_bearer("sato")) as client:
        renewed = client.get(f"/agent/tasks/{task['task_id']}").json()["token"]
    assert renewed != token
    assert _status(live, task["task_id"], renewed) == 200
    assert stat.S_IMODE(ServerSecret.of(settings).path.stat().st_mode) == 0o600


def test_a_damaged_secret_stops_the_server_with_a_japanese_error(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, keiri_api_keys_file=_users_file(tmp_path))
    path = ServerSecret.of(settings).path
    path.parent.mkdir(parents=True)
    path.write_bytes(b"short")
    with pytest.raises(ConfigurationError) as caught:
        create_app(settings)
    assert "壊れています（5 バイト、32 バイトのはずです）" in caught.value.message
    assert str(tmp_path) not in caught.value.message  # no server path in what a user reads
    assert "--rotate-secret" in caught.value.hint
    assert path.read_bytes() == b"short"  # nothing replaced behind the operator's back


def _first_use(path: str, start: Barrier, out: Queue[bytes]) -> None:
    start.wait()
    out.put(ServerSecret(Path(path)).current())


def test_workers_starting_together_make_one_secret(tmp_path: Path) -> None:
    path = tmp_path / "workspace" / ".server" / "secret"
    context = multiprocessing.get_context("fork")  # a worker process, as uvicorn's workers are
    start, out = context.Barrier(WORKERS), context.Queue()
    workers = [
        context.Process(target=_first_use, args=(str(path), start, out)) for _ in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    seen = [out.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert len(set(seen)) == 1
    assert seen[0] == path.read_bytes()
    assert os.listdir(path.parent) == ["secret"]  # no temporary file left


def test_rotating_where_no_secret_can_be_written_fails_in_japanese(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_a_folder = tmp_path / "workspace"
    not_a_folder.write_text("a file where the workspace should be", encoding="utf-8")
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(not_a_folder))
    result = CliRunner().invoke(app, ["serve", "--rotate-secret"])
    assert result.exit_code != 0
    assert "サーバーの秘密鍵" in result.output
    assert "読み書きできません" in result.output
    assert "KEIRI_WORKSPACE_ROOT に書き込めるか" in result.output
    assert not_a_folder.read_text(encoding="utf-8") == "a file where the workspace should be"
