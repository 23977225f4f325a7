"""Users apart (KEIRI_API_KEYS_FILE): each task belongs to its sender; users cannot see each
other's tasks, files or tokens; an admin sees every task, including those sent without a key;
a malformed users file stops the server with a Japanese error."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.server import create_app
from tests.server.conftest import LiveServer, make_settings

KEYS = {"sato": "sato-key-0123456789", "suzuki": "suzuki-key-0123456789", "ops": "ops-key-01234567"}
PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _users_file(root: Path) -> Path:
    path = root / "users.yaml"
    lines = ["users:"]
    for name, key in KEYS.items():
        role = "admin" if name == "ops" else "user"
        lines += [f"  - name: {name}", f"    key_sha256: {_sha(key)}", f"    role: {role}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}"}


def test_users_see_only_their_own_tasks_files_and_tokens_an_admin_sees_all(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    open_server = serve(make_settings(tmp_path))  # earlier, without any key
    with open_server.client() as client:
        keyless_id = client.post("/agent/run", json=PLAN_TASK).json()["task_id"]
    assert open_server.wait_finished(keyless_id) == "success"
    live = serve(make_settings(tmp_path, keiri_api_keys_file=_users_file(tmp_path)))
    with (
        live.client(headers=_bearer("sato")) as sato,
        live.client(headers=_bearer("suzuki")) as suzuki,
        live.client(headers=_bearer("ops")) as ops,
    ):
        started = sato.post("/agent/run", json=PLAN_TASK).json()
        task_id = started["task_id"]
        assert live.wait_finished(task_id) == "success"
        mine = sato.get(f"/agent/tasks/{task_id}").json()
        url = mine["files"][0]["url"]
        # suzuki: nothing of sato's, and not the keyless task either
        assert suzuki.get("/agent/tasks").json() == {"tasks": []}
        for response in (
            suzuki.get(f"/agent/tasks/{task_id}"),
            suzuki.get(url),
            suzuki.get("/agent/sse", params={"task_id": task_id}),
            suzuki.post(f"/agent/tasks/{task_id}/cancel"),
            suzuki.get(f"/agent/tasks/{keyless_id}"),
        ):
            assert response.status_code == 404
            assert response.json()["code"] == "TASK_NOT_FOUND"
        # sato: their task, its file and its token; not the keyless task
        assert [t["task_id"] for t in sato.get("/agent/tasks").json()["tasks"]] == [task_id]
        assert sato.get(url).status_code == 200
        assert sato.get(f"/agent/tasks/{keyless_id}").status_code == 404
        # the admin: every task, including the one sent without a key
        listed = {t["task_id"]: t for t in ops.get("/agent/tasks").json()["tasks"]}
        assert set(listed) == {task_id, keyless_id}
        assert listed[task_id]["owner"] == "sato"
        assert listed[keyless_id]["owner"] is None
        assert ops.get(url).content == sato.get(url).content
    token = started["token"]
    assert listed[task_id]["token"] == token
    with live.client() as anonymous:
        by_token = anonymous.get(f"/agent/tasks/{task_id}", params={"token": token})
        other = anonymous.get(f"/agent/tasks/{keyless_id}", params={"token": token})
        listing = anonymous.get("/agent/tasks", params={"token": token})
    assert by_token.status_code == 200
    assert other.status_code == 401  # a token opens only its own task
    assert listing.status_code == 401


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("users: []\n", "users"),
        ("users:\n  - {name: a, key_sha256: abc, role: user}\n", "key_sha256"),
        ("users:\n  - {name: a, key_sha256: " + "a" * 64 + ", role: root}\n", "role"),
        (
            "users:\n  - {name: a, key_sha256: " + "a" * 64 + "}\n"
            "  - {name: a, key_sha256: " + "b" * 64 + "}\n",
            "重複",
        ),
        ("users: [\n", "YAML"),
    ],
)
def test_a_malformed_users_file_stops_the_server_with_a_japanese_error(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "users.yaml"
    path.write_text(content, encoding="utf-8")
    settings: Settings = make_settings(tmp_path, keiri_api_keys_file=path)
    with pytest.raises(ConfigurationError) as caught:
        create_app(settings)
    assert problem in caught.value.message
    assert "key_sha256" in caught.value.hint


def test_a_missing_users_file_is_named(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, keiri_api_keys_file=tmp_path / "none.yaml")
    with pytest.raises(ConfigurationError) as caught:
        create_app(settings)
    assert "none.yaml" in caught.value.message
