"""A server without keys takes a POST only when it is provably not cross-site: a foreign
``Origin`` or ``Sec-Fetch-Site`` is refused with 403, a body other than JSON needs a same-origin
``Origin``, a program sending JSON (no Origin) works as before; with keys nothing changes; behind
a proxy (``serve --proxy-headers --root-path``) the scheme uvicorn applied from
``X-Forwarded-Proto`` and the forwarded ``Host`` make the server's own origin."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.examples import example_answers
from tests.server.conftest import LiveServer, make_settings
from tests.server.service import ServerProcess

PLAN = "duplicate_invoice_check"
PLAN_TASK = {"kind": "plan", "plan": PLAN}
PLAN_JSON = json.dumps(PLAN_TASK)
INVOICES = Path(example_answers(PLAN)["collect_inputs"]["invoice_list"])
KEY = "k3y-for-the-csrf-test-0123456789"


def _simple(kind: str) -> dict[str, Any]:
    """The bodies a web page can send to another site without a CORS preflight."""
    if kind == "text/plain":
        return {"content": PLAN_JSON, "headers": {"Content-Type": "text/plain"}}
    if kind == "form":
        return {"data": {"request": PLAN_JSON}}
    if kind == "multipart":
        return {"data": {"request": PLAN_JSON}, "files": [("files", ("a.csv", b"a\n1\n"))]}
    return {"json": PLAN_TASK}


def _post(live: LiveServer, kind: str, headers: dict[str, str], url: str = "/agent/run") -> Any:
    body = _simple(kind)
    with live.client() as client:
        return client.post(url, headers={**body.pop("headers", {}), **headers}, **body)


@pytest.mark.parametrize("kind", ["text/plain", "form", "multipart", "json"])
@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},  # sandboxed frames, file:// pages
        {"Origin": "http://localhost:1"},  # another port of this machine
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    ],
)
def test_a_cross_site_post_is_refused_and_starts_nothing(
    serve: Callable[..., LiveServer], settings: Settings, kind: str, headers: dict[str, str]
) -> None:
    live = serve(settings)
    response = _post(live, kind, headers)
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["code"] == "CROSS_SITE_REQUEST"
    assert "別のサイト" in body["message"]
    assert f"{live.url}/" in body["hint"]  # where the page really is
    assert "API キー" in body["hint"]
    assert live.registry.list() == []


@pytest.mark.parametrize("kind", ["text/plain", "form", "multipart"])
def test_a_body_other_than_json_needs_a_same_origin_request(
    serve: Callable[..., LiveServer], settings: Settings, kind: str
) -> None:
    live = serve(settings)
    response = _post(live, kind, {})
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["code"] == "ORIGIN_REQUIRED"
    assert "JSON 以外の本文" in body["message"]
    assert "application/json" in body["hint"]
    assert f"Origin: {live.url}" in body["hint"]
    assert live.registry.list() == []


@pytest.mark.parametrize(
    "headers",
    [
        {},  # a program (curl, a script): JSON as before
        {"Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},  # the user typed it
        {"Origin": "SELF", "Sec-Fetch-Site": "same-origin"},
    ],
)
def test_json_from_a_program_or_the_servers_own_page_is_accepted(
    serve: Callable[..., LiveServer], settings: Settings, headers: dict[str, str]
) -> None:
    live = serve(settings)
    headers = {k: live.url if v == "SELF" else v for k, v in headers.items()}
    response = _post(live, "json", headers)
    assert response.status_code == 202, response.text
    assert live.wait_finished(response.json()["task_id"]) == "success"


@pytest.mark.parametrize("kind", ["multipart", "text/plain"])
def test_the_servers_own_origin_may_send_other_bodies(
    serve: Callable[..., LiveServer], settings: Settings, kind: str
) -> None:
    live = serve(settings)
    port = live.url.rsplit(":", 1)[1]
    # letter case does not matter; the page's own scheme, host and port do
    for origin in (live.url, f"HTTP://127.0.0.1:{port}"):
        response = _post(live, kind, {"Origin": origin})
        assert response.status_code == 202, response.text
        assert live.wait_finished(response.json()["task_id"]) == "success"


def test_answers_and_cancel_from_another_site_change_nothing(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    answers = {"answers": {"collect_inputs": {"invoice_list": "一覧.xlsx"}}}
    evil = {"Origin": "https://evil.example"}
    with live.client() as client:
        paused_id = client.post("/agent/run", json={**PLAN_TASK, "answers": {}}).json()["task_id"]
        assert live.wait_finished(paused_id) == "waiting_input"
        with INVOICES.open("rb") as content:
            refused = client.post(
                f"/agent/tasks/{paused_id}/answers",
                headers=evil,
                data={"request": json.dumps(answers, ensure_ascii=False)},
                files=[("files", ("一覧.xlsx", content, "application/octet-stream"))],
            )
        cancel = client.post(f"/agent/tasks/{paused_id}/cancel", headers=evil)
        assert (refused.status_code, cancel.status_code) == (403, 403)
        task = client.get(f"/agent/tasks/{paused_id}").json()
        assert task["status"] == "waiting_input"
        assert "uploads" not in task["request"]
        # The same from a program without Origin: a cancel has no body and goes through.
        assert client.post(f"/agent/tasks/{paused_id}/cancel").status_code == 202
        assert client.get(f"/agent/tasks/{paused_id}").json()["status"] == "cancelled"


def test_with_keys_the_key_decides_as_before(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_api_key=KEY))
    bearer = {"Authorization": f"Bearer {KEY}"}
    for kind, headers in (("multipart", {}), ("json", {"Origin": "https://elsewhere.example"})):
        response = _post(live, kind, {**bearer, **headers})
        assert response.status_code == 202, response.text
    without_key = _post(live, "text/plain", {"Origin": "https://evil.example"})
    assert without_key.status_code == 401


def test_behind_a_proxy_the_forwarded_scheme_is_the_servers_own(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    # The test server trusts X-Forwarded-Proto from 127.0.0.1 (uvicorn's default), as
    # `serve --proxy-headers --forwarded-allow-ips 127.0.0.1` does.
    live = serve(make_settings(tmp_path, keiri_allowed_hosts="keiri.example"))
    proxied = {"Host": "keiri.example", "X-Forwarded-Proto": "https"}
    for origin in ("https://keiri.example", "https://keiri.example:443"):
        accepted = _post(live, "multipart", {**proxied, "Origin": origin})
        assert accepted.status_code == 202, accepted.text
    plain_http = _post(live, "multipart", {**proxied, "Origin": "http://keiri.example"})
    unforwarded = _post(
        live, "multipart", {"Host": "keiri.example", "Origin": "https://keiri.example"}
    )
    assert (plain_http.status_code, unforwarded.status_code) == (403, 403)
    assert plain_http.json()["code"] == "CROSS_SITE_REQUEST"
    assert "https://keiri.example/" in plain_http.json()["hint"]


@pytest.mark.timeout(600)
def test_keiri_agent_serve_behind_a_proxy_under_a_root_path(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KEIRI_WORKSPACE_ROOT": str(tmp_path / "workspace"),
        "KEIRI_RUNS_DIR": str(tmp_path / "runs"),
        "KEIRI_ALLOWED_HOSTS": "keiri.example",
    }
    env.pop("KEIRI_API_KEY", None)
    env.pop("KEIRI_API_KEYS_FILE", None)
    args = ["--root-path", "/keiri", "--proxy-headers", "--forwarded-allow-ips", "127.0.0.1"]
    server = ServerProcess(tmp_path, env, args=args).start()
    proxied = {"Host": "keiri.example", "X-Forwarded-Proto": "https"}
    body = _simple("multipart")
    try:  # the proxy serves https://keiri.example/keiri/ and forwards without the prefix
        with server.client(headers=proxied) as client:
            own = client.post("/agent/run", headers={"Origin": "https://keiri.example"}, **body)
            foreign = client.post("/agent/run", headers={"Origin": "https://evil.example"}, **body)
            plain_http = client.post(
                "/agent/run", headers={"Origin": "http://keiri.example"}, **body
            )
            assert own.status_code == 202, own.text
            server.wait_status(own.json()["task_id"], lambda s: s == "success", headers=proxied)
    finally:
        server.stop()
    assert (foreign.status_code, plain_http.status_code) == (403, 403)
    assert foreign.json()["code"] == "CROSS_SITE_REQUEST"
