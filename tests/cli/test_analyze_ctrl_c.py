"""Ctrl+C during a long sandboxed step of `keiri-agent analyze` (a real process): the code is
killed at once (not left to its sleep), the command says in Japanese that it stopped and what
the workspace keeps, exits 130, and leaves no process behind; nothing half-written is kept.
The scripted LLM plays the model; the code runs in the real sandbox. Ctrl+C at the interactive
prompt ends with 130 as well (not as an ordinary end)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
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


PROMPT_SHOWN_S = 120.0  # imports and loading the file on a loaded machine


def _wait_for_prompt(
    proc: subprocess.Popen[str], seen: list[str], *, within_s: float
) -> threading.Thread:
    """Read ``proc``'s stderr into ``seen`` (in the returned thread, which goes on to its end)
    until the interactive prompt is shown; fails if it is not within ``within_s``."""
    shown = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read(1):
            seen.append(chunk)
            if "質問:" in "".join(seen[-8:]):
                shown.set()

    reader = threading.Thread(target=read, daemon=True, name="stderr-reader")
    reader.start()
    if not shown.wait(within_s):
        proc.kill()
        proc.wait()
        pytest.fail("the prompt was not shown: " + "".join(seen))
    return reader


def test_ctrl_c_at_the_interactive_prompt_exits_130_and_names_the_workspace(
    public_dir: Path,
) -> None:
    """Ctrl+C at the prompt is not the user's ordinary end (empty line, exit, Ctrl+D, exit 0):
    the command says in Japanese that it was interrupted and what the workspace keeps."""
    data = public_dir / "売上.csv"
    data.write_text("取引先,金額\nあおば商事,120000\n", encoding="utf-8")
    root = public_dir / "ws"
    env = {**os.environ, "PYTHONPATH": str(SRC), "KEIRI_RUNS_DIR": str(public_dir / "runs")}
    command = [str(Path(sys.executable).parent / "keiri-agent"), "analyze", str(data)]
    proc = subprocess.Popen(
        [*command, "--workspace-root", str(root)],
        stdin=subprocess.PIPE,  # kept open: the prompt waits for a line
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen: list[str] = []
    reader = _wait_for_prompt(proc, seen, within_s=PROMPT_SHOWN_S)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=STOPPED_WITHIN_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stdout is not None
    stdout = proc.stdout.read()
    reader.join(STOPPED_WITHIN_S)  # it reads the rest of stderr, to its end
    stderr = "".join(seen)

    assert proc.returncode == 130, stderr
    assert "分析を中断しました（Ctrl-C）" in stderr
    (workspace,) = root.iterdir()
    assert f"作業ディレクトリ {workspace}" in stderr
    assert "Traceback" not in stderr
    assert "Aborted" not in stderr
    assert stdout == ""
    assert sorted(p.name for p in workspace.iterdir()) == ["売上.csv"]  # the session's data kept
