"""A plan config (``KEIRI_PLAN_CONFIG``) the server cannot read refuses every plan request at the
door, over real HTTP: a Japanese ``CONFIGURATION_ERROR`` body (message naming the file and why,
hint naming the setting) with the status the API gives configuration errors, and nothing run,
queued or saved. A file whose top is not a mapping is refused too (it used to run the plan with an
empty config, as if its author had set nothing).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.server.errors import STATUS_BY_CODE
from tests.server.conftest import LiveServer, make_settings
from tests.server.test_plan_task_env import APPROVE

# How KEIRI_PLAN_CONFIG is broken: what the file holds (None: no file; a folder in its place;
# text; bytes not UTF-8) and what the message says of it.
FORMS: dict[str, tuple[str | bytes | None, str]] = {
    "missing": (None, "を読めません: "),
    "a folder": ("folder", "を読めません: "),
    "not YAML": ("start: [1,\n", "を読めません: "),
    "not UTF-8": ("税率: 0.1\n".encode("cp932"), "を読めません: "),
    "a list": ("- tax_rate\n- 0.1\n", "ではありません（いちばん上がリストです）"),
    "a text": ("税率は 10%\n", "ではありません（いちばん上が文字列です）"),
    "unreadable": ("tax_rate: 0.1\n", "を読めません: "),
}
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(params=sorted(FORMS))
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """The broken plan config of one form, and what the error says of it."""
    if request.param == "unreadable" and AS_ROOT:
        pytest.skip("root reads a file whatever its permissions")
    held, said = FORMS[request.param]
    path = tmp_path / "plan_config.yaml"
    if held == "folder":
        path.mkdir()
    elif isinstance(held, bytes):
        path.write_bytes(held)
    elif held is not None:
        path.write_text(held, encoding="utf-8")
    if request.param == "unreadable":
        path.chmod(0)
    return path, said


def _refused(body: dict[str, object], config: Path, said: str) -> None:
    assert body["code"] == "CONFIGURATION_ERROR", body
    message = str(body["message"])
    assert message.startswith(f"設定ファイル {config} "), message
    assert said in message, message
    assert "KEIRI_PLAN_CONFIG" in str(body["hint"])


def test_a_plan_request_with_an_unreadable_plan_config_is_a_japanese_error_and_runs_nothing(
    serve: Callable[..., LiveServer], tmp_path: Path, broken: tuple[Path, str]
) -> None:
    config, said = broken
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "approve.yaml").write_text(APPROVE, encoding="utf-8")
    settings = make_settings(tmp_path, keiri_designs_dir=designs, keiri_plan_config=config)
    server = serve(settings)
    status = STATUS_BY_CODE["CONFIGURATION_ERROR"]

    with server.client() as client:
        run = client.post("/agent/run", json={"kind": "plan", "plan": "approve", "answers": {}})
        save = client.post("/agent/plans/approve/versions", json={"yaml": APPROVE})
        tasks = client.get("/agent/tasks").json()["tasks"]
        versions = client.get("/agent/plans/approve/versions").json()["versions"]

    assert (run.status_code, save.status_code) == (status, status), (run.text, save.text)
    _refused(run.json(), config, said)
    _refused(save.json(), config, said)
    assert tasks == []  # nothing queued
    assert versions == []  # nothing saved
