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

PLAN = """\
apiVersion: v1
id: ask
graph:
  - id: approve
    block: ui.interactive_input
    in: { mode: confirm, message: 始めてよいですか }
"""


def _missing(root: Path) -> Path:
    return root / "missing.yaml"


def _not_yaml(root: Path) -> Path:
    path = root / "broken.yaml"
    path.write_text("start: [1,\n", encoding="utf-8")
    return path


def _not_utf8(root: Path) -> Path:
    path = root / "sjis.yaml"
    path.write_bytes("税率: 0.1\n".encode("cp932"))
    return path


def _a_list(root: Path) -> Path:
    path = root / "list.yaml"
    path.write_text("- tax_rate\n- 0.1\n", encoding="utf-8")
    return path


def _a_text(root: Path) -> Path:
    path = root / "text.yaml"
    path.write_text("税率は 10%\n", encoding="utf-8")
    return path


def _a_folder(root: Path) -> Path:
    path = root / "config_dir"
    path.mkdir()
    return path


def _unreadable(root: Path) -> Path:
    path = root / "secret.yaml"
    path.write_text("tax_rate: 0.1\n", encoding="utf-8")
    path.chmod(0)
    return path


FORMS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing": (_missing, "を読めません: "),
    "not YAML": (_not_yaml, "を読めません: "),
    "not UTF-8": (_not_utf8, "を読めません: "),
    "a list": (_a_list, "YAML のマッピング）ではありません（いちばん上がリストです）"),
    "a text": (_a_text, "YAML のマッピング）ではありません（いちばん上が文字列です）"),
    "a folder": (_a_folder, "を読めません: "),
    "unreadable": (_unreadable, "を読めません: "),
}
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture(params=sorted(FORMS))
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    if request.param == "unreadable" and AS_ROOT:
        pytest.skip("root reads a file whatever its permissions")
    make, said = FORMS[request.param]
    return make(tmp_path), said


def _designs(root: Path) -> Path:
    designs = root / "designs"
    designs.mkdir()
    (designs / "ask.yaml").write_text(PLAN, encoding="utf-8")
    return designs


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
    settings = make_settings(
        tmp_path, keiri_designs_dir=_designs(tmp_path), keiri_plan_config=config
    )
    server = serve(settings)
    status = STATUS_BY_CODE["CONFIGURATION_ERROR"]

    with server.client() as client:
        run = client.post("/agent/run", json={"kind": "plan", "plan": "ask", "answers": {}})
        save = client.post("/agent/plans/ask/versions", json={"yaml": PLAN})
        tasks = client.get("/agent/tasks").json()["tasks"]
        versions = client.get("/agent/plans/ask/versions").json()["versions"]

    assert (run.status_code, save.status_code) == (status, status), (run.text, save.text)
    _refused(run.json(), config, said)
    _refused(save.json(), config, said)
    assert tasks == []  # nothing queued
    assert versions == []  # nothing saved
