"""Runs a person can find again: the run id comes first, `plan runs` lists runs with what to do
next, and Ctrl-C ends a run as cancelled (a real `keiri-agent plan run` process)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner, Result

import keiri_agent
from keiri_agent.cli import app
from keiri_agent.events import read_events, replay
from tests.plan.blockkit import SPEC_DIR

runner = CliRunner()
REPO = Path(keiri_agent.__file__).resolve().parents[2]
STARTUP_DEADLINE_S = 120  # a loaded machine can take long to import everything
EXIT_DEADLINE_S = 120

CALC = """\
apiVersion: v1
id: calc
graph:
  - {id: first, block: test.add, in: {a: 1, b: 2}}
  - {id: second, block: test.add, in: {a: "${first.sum}", b: 10}}
"""
FAILING = """\
apiVersion: v1
id: failing
graph:
  - {id: boom, block: test.fail, in: {message: 計算に失敗しました}}
"""
APPROVAL = """\
apiVersion: v1
id: approval
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: confirm
      message: 確認してください
"""
SLOW = """\
apiVersion: v1
id: slow
graph:
  - {id: wait, block: test.sleep, in: {seconds: 600, value: 1}}
  - {id: after, block: test.add, in: {a: 1, b: "${wait.value}"}}
"""


@pytest.fixture(autouse=True)
def plan_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    (tmp_path / "designs").mkdir()
    return tmp_path


def _plan(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _run_id(tmp_path: Path, name: str, text: str) -> str:
    result = _invoke("plan", "run", _plan(tmp_path, name, text), "--json")
    return str(json.loads(result.stdout)["run_id"])


def test_the_run_id_is_the_first_line_of_a_run(tmp_path: Path) -> None:
    result = _invoke("plan", "run", _plan(tmp_path, "calc", CALC))
    assert result.exit_code == 0, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("実行 ID: run_")
    assert f"実行 ID: {first.removeprefix('実行 ID: ')}" in result.stdout  # the same run
    assert result.stderr.index(first) < result.stderr.index("▶ a + b 開始")


def test_with_json_the_run_id_still_comes_first_on_stderr(tmp_path: Path) -> None:
    result = _invoke("plan", "run", _plan(tmp_path, "calc", CALC), "--json")
    assert result.exit_code == 0, result.output
    run_id = json.loads(result.stdout)["run_id"]
    assert result.stderr.splitlines() == [f"実行 ID: {run_id}"]


def test_plan_runs_lists_runs_with_status_and_next_command(tmp_path: Path) -> None:
    ok = _run_id(tmp_path, "calc", CALC)
    failed = _run_id(tmp_path, "failing", FAILING)
    waiting = _run_id(tmp_path, "approval", APPROVAL)

    result = _invoke("plan", "runs", "--json")

    assert result.exit_code == 0, result.output
    listed = {run["run_id"]: run for run in json.loads(result.stdout)["runs"]}
    assert set(listed) == {ok, failed, waiting}
    assert listed[ok]["status"] == "success"
    assert listed[ok]["next_command"] == f"keiri-agent plan rerun {ok} --from first"
    assert listed[failed]["status"] == "failed"
    assert listed[failed]["failed_node"] == "boom"
    assert listed[failed]["next_command"] == f"keiri-agent plan resume {failed}"
    assert listed[waiting]["status"] == "waiting_input"
    assert listed[waiting]["next_command"] == (
        f"keiri-agent plan resume {waiting} --answers answers.yaml"
    )
    assert all(run["started"].endswith("Z") for run in listed.values())

    text = _invoke("plan", "runs").stdout
    assert f"keiri-agent plan resume {failed}" in text
    assert "失敗（ノード fail が真なら失敗する（boom））" in text


def _start_at(log: Path, stamp: str) -> None:
    """Let the run in ``log`` have started at ``stamp`` (UTC, as the log stores it)."""
    lines = log.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert first["event"] == "plan_start"
    first["timestamp"] = stamp
    log.write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n", "utf-8")


def test_plan_runs_shows_the_start_in_keiri_timezone_labelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log keeps UTC; a person reads the time where they live, with the zone named."""
    run_id = _run_id(tmp_path, "calc", CALC)
    (log,) = (tmp_path / "runs" / "calc").glob("*.jsonl")
    _start_at(log, "2026-12-06T15:30:00Z")  # 00:30 the next day in Tokyo

    text = _invoke("plan", "runs").stdout
    assert f"{run_id}  calc  2026-12-07 00:30:00 JST  成功" in text
    (run,) = json.loads(_invoke("plan", "runs", "--json").stdout)["runs"]
    assert run["started"] == "2026-12-06T15:30:00Z"  # stored and machine-read: UTC

    monkeypatch.setenv("KEIRI_TIMEZONE", "America/New_York")
    assert f"{run_id}  calc  2026-12-06 10:30:00 EST  成功" in _invoke("plan", "runs").stdout


def test_plan_run_progress_says_when_the_run_started(tmp_path: Path) -> None:
    result = _invoke("plan", "run", _plan(tmp_path, "calc", CALC))
    assert result.exit_code == 0, result.output
    (log,) = (tmp_path / "runs" / "calc").glob("*.jsonl")
    start = read_events(log)[0].timestamp.astimezone(ZoneInfo("Asia/Tokyo"))
    second = result.stderr.splitlines()[1]
    assert second == f"開始: {start:%Y-%m-%d %H:%M:%S} JST"


def test_plan_runs_filters_by_plan_and_status(tmp_path: Path) -> None:
    _run_id(tmp_path, "calc", CALC)
    failed = _run_id(tmp_path, "failing", FAILING)
    _run_id(tmp_path, "calc", CALC)

    by_status = json.loads(_invoke("plan", "runs", "--status", "failed", "--json").stdout)
    assert [run["run_id"] for run in by_status["runs"]] == [failed]
    by_plan = json.loads(_invoke("plan", "runs", "--plan", "calc", "--json").stdout)
    assert [run["plan_id"] for run in by_plan["runs"]] == ["calc", "calc"]
    newest_first = [run["started"] for run in by_plan["runs"]]
    assert newest_first == sorted(newest_first, reverse=True)


def test_a_run_whose_log_has_no_end_is_incomplete_and_resumable(tmp_path: Path) -> None:
    run_id = _run_id(tmp_path, "calc", CALC)
    (log,) = (tmp_path / "runs" / "calc").glob("*.jsonl")
    lines = log.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # the process died

    (run,) = json.loads(_invoke("plan", "runs", "--json").stdout)["runs"]
    assert run["status"] == "incomplete"
    assert run["next_command"] == f"keiri-agent plan resume {run_id}"


def test_an_unreadable_log_is_reported_not_skipped(tmp_path: Path) -> None:
    _run_id(tmp_path, "calc", CALC)
    broken = tmp_path / "runs" / "calc" / "20000101T000000Z.jsonl"
    broken.write_text('{"id": 1, "event": "plan_start", broken\n', encoding="utf-8")

    listed = _invoke("plan", "runs", "--json")
    data = json.loads(listed.stdout)
    assert len(data["runs"]) == 1
    (error,) = data["unreadable"]
    assert str(broken) in error["message"]
    text = _invoke("plan", "runs")
    assert "読めないログ" in text.stderr
    assert "calc" in text.stdout  # the rest is listed, and the exit code says what was not
    assert (listed.exit_code, text.exit_code) == (1, 1)


def _lines(stream: Any, into: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):
        into.put(line)


def _node_started(runs: Path, node: str) -> bool:
    """Whether the run log under ``runs`` says ``node`` has started (a log being written reads
    as its whole lines)."""
    logs = list(runs.glob("*.jsonl"))
    return any(e.event == "node_start" and e.node_id == node for log in logs for e in replay(log))


def test_ctrl_c_ends_a_run_as_cancelled(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "slow", SLOW)
    # The package this test imported (a worktree's src/ before the installed copy), and the tree.
    package_root = Path(keiri_agent.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package_root), str(REPO)])}
    env["COLUMNS"] = "200"
    command = [str(Path(sys.executable).parent / "keiri-agent"), "plan", "run", str(plan)]
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal delivers it, even when this test runs in a background job.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stderr, lines), daemon=True).start()
    try:
        deadline = time.monotonic() + STARTUP_DEADLINE_S
        first = ""
        while not first.startswith("実行 ID:"):
            first = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        run_id = first.removeprefix("実行 ID:").strip()
        # Ctrl-C while the slow node runs: the run has started and its log is open.
        while not _node_started(tmp_path / "runs" / "slow", "wait"):
            assert proc.poll() is None, "the run ended before Ctrl-C"
            assert time.monotonic() < deadline, "the slow node did not start"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=EXIT_DEADLINE_S) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    events = read_events(next((tmp_path / "runs" / "slow").glob("*.jsonl")))
    end = events[-1]
    assert end.event == "plan_complete"
    assert end.model_dump()["status"] == "cancelled"
    assert end.model_dump()["error"]["code"] == "CANCELLED"
    assert not any(e.event == "node_complete" and e.node_id == "wait" for e in events)
    listed = json.loads(_invoke("plan", "runs", "--json").stdout)["runs"]
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "cancelled")]
