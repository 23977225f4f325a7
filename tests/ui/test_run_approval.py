"""The 実行 page when only approved plan versions may run: an unapproved version is refused with
the error the CLI and the API give; once approved it runs, and its log names the version, its
approval and who started it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError
from keiri_agent.events.runlog import list_runs
from keiri_agent.users import os_user
from keiri_agent.versions import Reviewer, SaveNote, VersionStore, check_run, review
from tests.ui.conftest import run_page

PAGE_TIMEOUT_S = 120
MEMO = """\
apiVersion: v1
id: keiri/memo
graph:
  - id: note
    block: report.markdown
    in: {template: "承認済みの版で実行しました"}
"""


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    (tmp_path / "designs" / "keiri").mkdir(parents=True)
    (tmp_path / "designs" / "keiri" / "memo.yaml").write_text(MEMO, encoding="utf-8")
    return AppTest.from_function(run_page, default_timeout=PAGE_TIMEOUT_S)


def test_an_unapproved_version_is_refused_with_the_same_error_then_runs_once_approved(
    page: AppTest, tmp_path: Path
) -> None:
    settings = load_settings()
    store = VersionStore.of(settings)
    store.save("keiri/memo", MEMO, SaveNote(author="suzuki", source="cli"))
    with pytest.raises(BlockError) as expected:  # what the CLI and the API say (one function)
        check_run(settings, [("keiri/memo", MEMO)])

    page.run()
    page.selectbox(key="run_plan").set_value("keiri/memo.yaml").run()
    page.button(key="run_start").click().run()

    assert not page.exception, page.exception
    shown = [str(e.value) for e in page.error]
    assert any(expected.value.message in text for text in shown), shown
    assert list_runs("keiri/memo", runs_dir=tmp_path / "runs") == []  # nothing ran

    review(store, "keiri/memo", "v1", "approve", Reviewer("kato", True), settings)
    page.button(key="run_start").click().run()
    assert any("成功しました" in str(s.value) for s in page.success)
    (log,) = list_runs("keiri/memo", runs_dir=tmp_path / "runs")
    start = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert start["approval"]["by"] == "kato"
    assert start["started_by"] == os_user()  # the app is open: the OS user started it
