"""The データ分析 page's 中止 button while a long sandboxed step runs (AppTest, the scripted LLM,
the real process-wide sandbox): the click, sent while the script waits on the step as a
browser sends it (a rerun with the button triggered), kills the running code at once, and the
turn stays in the history as 中止 with nothing of it kept.

AppTest can only click between script runs, so the test keeps the run's script runner (the
object a browser session talks to) and sends it the click while the run lasts.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest
from streamlit.runtime.scriptrunner import RerunData
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import app_test as app_test_module
from streamlit.testing.v1.element_tree import parse_tree_from_messages
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

from keiri_agent.errors import ErrorCode
from keiri_agent.threads import in_daemon_thread
from keiri_agent.ui.views.analysis import HISTORY_KEY, SESSION_KEY
from tests.support import ScriptedLLMServer
from tests.support.processes import HALF_WRITTEN, LONG_STEP_CODE, holding, once_code_holds

CODE_RUNNING_S = 300.0  # until the code runs: the first script run, the jail's start
STOPPED_WITHIN_S = 60.0  # well before the code's 120 s sleep; generous for a loaded machine
STOPPED = "分析を中止しました。実行中の処理とコードは止め、このターンのレポートと実行記録は保存していません"


@pytest.fixture
def runners(monkeypatch: pytest.MonkeyPatch) -> list[LocalScriptRunner]:
    """The script runner of every AppTest run, newest last."""
    made: list[LocalScriptRunner] = []

    class Kept(LocalScriptRunner):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(app_test_module, "LocalScriptRunner", Kept)
    return made


def test_the_stop_button_kills_the_running_code_and_keeps_the_turn_as_stopped(
    app: AppTest,
    llm_server: ScriptedLLMServer,
    workspace_root: Path,
    runners: list[LocalScriptRunner],
) -> None:
    app.run()
    data = "取引先,金額\nあおば商事,120000\n".encode()
    app.file_uploader[0].set_value(("売上.csv", data, "text/csv")).run()
    llm_server.add_chat(json={"next_action": "act", "instruction": "書き出す", "rationale": "試験"})
    llm_server.add_chat(json={"code": LONG_STEP_CODE, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "never asked"})

    asked = in_daemon_thread(app.chat_input[0].set_value("取引先を書き出して").run, name="page")
    below = once_code_holds(
        os.getpid(), HALF_WRITTEN, within_s=CODE_RUNNING_S, alive=lambda: not asked.done()
    )
    code = holding(below, HALF_WRITTEN)
    runner = runners[-1]
    shown = parse_tree_from_messages(list(runner.forward_msgs()))
    shown._runner = app  # as AppTest links the tree of each run it parses
    (stop,) = [button for button in shown.button if button.label == "中止"]
    stop.set_value(True)
    clicked = time.monotonic()
    runner.request_rerun(
        RerunData(widget_states=shown.get_widget_states(), page_script_hash=app._page_hash)
    )
    asked.result(timeout=STOPPED_WITHIN_S)

    assert time.monotonic() - clicked < STOPPED_WITHIN_S
    _, alive = psutil.wait_procs(code, timeout=STOPPED_WITHIN_S)
    assert alive == [], f"the code still runs: {alive}"
    assert not app.exception, app.exception
    (turn,) = app.session_state[HISTORY_KEY]
    assert turn.text == "取引先を書き出して"
    assert turn.error is not None
    assert turn.error.code == ErrorCode.CANCELLED
    assert any(STOPPED in error.value for error in app.error)
    assert "中止" not in [button.label for button in app.button]  # no turn runs now
    assert "再実行" in [button.label for button in app.button]
    session = app.session_state[SESSION_KEY]
    assert not session.running
    assert session.execution_results == []  # the killed run is recorded nowhere
    assert sorted(p.name for p in session.workspace.iterdir()) == ["売上.csv"]
    assert len(llm_server.chat_requests()) == 2  # no next step asked for
