"""The optional API key: every /agent route rejects a missing or wrong key once it is set, the
per-task token opens only its own task, and nothing is required when no key is set."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.server.auth import task_token
from keiri_agent.server.secret import ServerSecret
from keiri_agent.users import SINGLE_KEY_USER
from tests.server.conftest import LiveServer, make_settings

KEY = "k3iri-test-key-0123456789"
PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}


def _token(live: LiveServer, task_id: str) -> str:
    """The token of a task of KEIRI_API_KEY's holder (the user ``admin``)."""
    return task_token(ServerSecret.of(live.settings).current(), SINGLE_KEY_USER, task_id)


@pytest.fixture
def secured(serve: Callable[..., LiveServer], tmp_path: Path) -> tuple[LiveServer, str, str]:
    """A server with a key, one finished task, and the path of one of its files."""
    live = serve(make_settings(tmp_path, keiri_api_key=KEY))
    with live.client(headers={"Authorization": f"Bearer {KEY}"}) as client:
        started = client.post("/agent/run", json=PLAN_TASK)
        assert started.status_code == 202, started.text
        task_id = started.json()["task_id"]
        assert started.json()["token"] == _token(live, task_id)
        live.wait_finished(task_id)
        files = client.get(f"/agent/tasks/{task_id}").json()["files"]
    return live, task_id, files[0]["url"]


def _routes(task_id: str, file_url: str) -> list[tuple[str, str, dict[str, object] | None]]:
    return [
        ("POST", "/agent/run", PLAN_TASK),
        ("GET", f"/agent/sse?task_id={task_id}", None),
        ("GET", "/agent/tasks", None),
        ("GET", f"/agent/tasks/{task_id}", None),
        ("POST", f"/agent/tasks/{task_id}/cancel", None),
        ("GET", file_url, None),
    ]


@pytest.mark.parametrize(
    ("authorization", "code"),
    [
        (None, "API_KEY_REQUIRED"),
        (f"Bearer {KEY}x", "INVALID_API_KEY"),
        ("Bearer", "INVALID_API_KEY"),
        (f"Basic {KEY}", "INVALID_API_KEY"),
        ("Bearer キー".encode(), "INVALID_API_KEY"),  # non-ASCII bytes
    ],
)
def test_every_route_rejects_a_missing_or_wrong_key(
    secured: tuple[LiveServer, str, str], authorization: str | bytes | None, code: str
) -> None:
    live, task_id, file_url = secured
    headers = {"Authorization": authorization} if authorization is not None else {}
    with live.client() as client:
        for method, url, body in _routes(task_id, file_url):
            response = client.request(method, url, json=body, headers=headers)
            assert response.status_code == 401, (method, url, response.text)
            assert response.json()["code"] == code
            assert response.json()["message"].startswith(("API キー", "タスクのトークン"))
            assert "Authorization: Bearer" in response.json()["hint"]
            assert response.headers["www-authenticate"].startswith("Bearer")
    assert len(live.registry.list()) == 1  # the refused POST started nothing


def test_the_right_key_opens_every_route(secured: tuple[LiveServer, str, str]) -> None:
    live, task_id, file_url = secured
    expected = {"/agent/run": 202, f"/agent/tasks/{task_id}/cancel": 409}
    with live.client(headers={"Authorization": f"Bearer {KEY}"}) as client:
        for method, url, body in _routes(task_id, file_url):
            response = client.request(method, url, json=body)
            assert response.status_code == expected.get(url, 200), (url, response.text)


def test_a_task_token_opens_only_its_own_task(secured: tuple[LiveServer, str, str]) -> None:
    live, task_id, file_url = secured
    token = _token(live, task_id)
    with live.client() as client:
        sse = client.get("/agent/sse", params={"task_id": task_id, "token": token})
        status = client.get(f"/agent/tasks/{task_id}", params={"token": token})
        download = client.get(file_url, params={"token": token})
        other = client.get(f"/agent/tasks/{'y' * 22}", params={"token": token})
        # Naming the task in the query opens only the SSE route, not the others.
        named = {"task_id": task_id, "token": token}
        listing = client.get("/agent/tasks", params=named)
        run = client.post("/agent/run", params=named, json=PLAN_TASK)
    assert sse.status_code == 200
    assert "event: done" in sse.text
    assert status.status_code == 200
    assert status.json()["status"] == "success"
    assert download.status_code == 200
    assert other.status_code == 401
    assert other.json()["code"] == "INVALID_API_KEY"
    assert listing.status_code == 401
    assert run.status_code == 401


def test_the_page_is_public_and_holds_no_data(secured: tuple[LiveServer, str, str]) -> None:
    live, _, _ = secured
    with live.client() as client:
        page = client.get("/")
        script = client.get("/static/progress.js")
    assert page.status_code == 200
    assert "API キー" in page.text
    assert script.status_code == 200
    assert KEY not in page.text + script.text


def test_no_key_configured_means_no_authentication(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_api_key="  "))  # blank is unset
    with live.client() as client:
        started = client.post("/agent/run", json=PLAN_TASK)
        assert started.status_code == 202
        task_id = started.json()["task_id"]
        assert "token" not in started.json()
        live.wait_finished(task_id)
        file_url = client.get(f"/agent/tasks/{task_id}").json()["files"][0]["url"]
        for method, url, body in _routes(task_id, file_url):
            response = client.request(method, url, json=body)
            assert response.status_code != 401, (url, response.text)
