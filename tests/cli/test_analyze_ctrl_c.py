"""Ctrl+C during a long sandboxed step of `keiri-agent analyze` (a real process): the code is
killed at once (not left to its sleep), the command says in Japanese that it stopped and what
the workspace keeps, exits 130, and leaves no process behind; nothing half-written is kept.
The scripted LLM plays the model; the code runs in the real sandbox."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

import keiri_agent
from tests.support import ScriptedLLMServer
from tests.support.processes import (
    HALF_WRITTEN,
    LONG_STEP_CODE,
    interrupt,
    once_code_holds,
    start_interruptible,
)

pytestmark = pytest.mark.timeout(600)  # the jail's start may take minutes on a loaded machine

SRC = Path(keiri_agent.__file__).resolve().parents[1]  # the copy of the package under test
CODE_RUNNING_S = 300.0  # until the code runs: imports, the jail's start, two LLM replies
STOPPED_WITHIN_S = 60.0  # well before the code's 120 s sleep; generous for a loaded machine


STOPPED = "分析を中止しました（Ctrl-C）。実行中の処理とコードは止め、このターンのレポートと実行記録は保存していません"


@dataclass
class Stopped:
    """What `keiri-agent analyze` did on Ctrl+C while its generated code ran."""

    exit_code: int
    stdout: str
    stderr: str
    workspace: Path


def _ctrl_c_while_the_code_runs(
    public_dir: Path, llm_server: ScriptedLLMServer, *extra: str
) -> Stopped:
    data = public_dir / "売上.csv"
    data.write_text("取引先,金額\nあおば商事,120000\n", encoding="utf-8")
    llm_server.add_chat(json={"next_action": "act", "instruction": "書き出す", "rationale": "試験"})
    llm_server.add_chat(json={"code": LONG_STEP_CODE, "expected_outputs": []})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "never asked"})
    root = public_dir / "ws"
    env = {**os.environ, "PYTHONPATH": str(SRC), "KEIRI_RUNS_DIR": str(public_dir / "runs")}
    command = [str(Path(sys.executable).parent / "keiri-agent"), "analyze", str(data)]
    proc = start_interruptible(
        [*command, "取引先を書き出して", "--workspace-root", str(root), *extra], env=env
    )
    try:
        below = once_code_holds(
            proc.pid, HALF_WRITTEN, within_s=CODE_RUNNING_S, alive=lambda: proc.poll() is None
        )
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    stdout, stderr = interrupt(proc, within_s=STOPPED_WITHIN_S)
    (workspace,) = root.iterdir()
    _, alive = psutil.wait_procs(below, timeout=STOPPED_WITHIN_S)
    assert alive == [], f"left running: {alive}"
    assert sorted(p.name for p in workspace.iterdir()) == ["売上.csv"]  # nothing half-written
    assert len(llm_server.chat_requests()) == 2  # no next step asked for
    return Stopped(proc.returncode, stdout, stderr, workspace)


def test_ctrl_c_while_the_code_runs_stops_it_and_exits_130_with_nothing_left(
    public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    stopped = _ctrl_c_while_the_code_runs(public_dir, llm_server)

    assert stopped.exit_code == 130, stopped.stderr
    assert STOPPED in stopped.stderr
    assert f"作業ディレクトリ {stopped.workspace}" in stopped.stderr
    assert "読み込んだデータと完了した結果だけが残っています" in stopped.stderr
    assert stopped.stdout == ""  # no report


def test_ctrl_c_with_json_prints_one_cancelled_document(
    public_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    stopped = _ctrl_c_while_the_code_runs(public_dir, llm_server, "--json")

    assert stopped.exit_code == 130, stopped.stderr
    document = json.loads(stopped.stdout)
    assert document["status"] == "cancelled"
    assert document["error"]["code"] == "CANCELLED"
    assert document["error"]["message"].startswith(STOPPED)
    assert str(stopped.workspace) in document["error"]["hint"]
