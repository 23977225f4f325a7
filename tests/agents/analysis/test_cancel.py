"""A turn whose cancel flag is set while its generated code runs stops at once: the sandboxed
run is killed (not left to its wall limit), the turn raises CANCELLED, the run is recorded
nowhere (no ``code_exec`` event, no execution result, no next LLM call) and nothing it wrote
reaches the workspace. A flag set after the last step check, before the code starts, starts no
process at all. The scripted LLM plays the model; the code runs in the real sandbox."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest

from keiri_agent.agents.analysis import AnalysisContext, AnalysisSession
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import NullEmitter, RunEvent
from keiri_agent.sandbox import SandboxExecutor
from tests.support import ScriptedLLMServer

pytestmark = pytest.mark.timeout(600)  # the jail's start may take minutes on a loaded machine

JAIL_START_S = 300.0  # until the code runs: includes starting this test's own jail
CANCELLED_WITHIN_S = 60.0  # well before the code's 120 s sleep; generous for a loaded machine
SLEEPING = (
    "import time\n"
    "with open('half.csv', 'w') as out:\n"
    "    out.write('取引先,金額\\n')\n"
    "    out.flush()\n"
    "    print('start', flush=True)\n"
    "    time.sleep(120)\n"
    "    out.write('あおば商事,1\\n')\n"
)
ACT = {"next_action": "act", "instruction": "取引先を書き出す", "rationale": "試験"}


class _CancelAtCodeGen(NullEmitter):
    """Events of a turn, with the flag set as the code is about to run (after the step check)."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.kinds: list[str] = []

    def emit(self, kind: Any, /, **fields: Any) -> RunEvent | None:
        self.kinds.append(str(kind))
        if str(kind) == "code_gen":
            self.cancel.set()
        return None


@pytest.fixture
def executor() -> Iterator[SandboxExecutor]:
    """This test's own executor: cancelling closes it (the shared one stays warm)."""
    own = SandboxExecutor()
    yield own
    own.close()


def _session(
    root: Path, executor: SandboxExecutor, llm_server: ScriptedLLMServer, code: str
) -> tuple[AnalysisSession, threading.Event]:
    """A session whose turn acts once, running ``code``, and the cancel flag it watches."""
    cancel = threading.Event()
    session = AnalysisSession(
        workspace_root=root / "workspace",
        runs_dir=root / "runs",
        context=AnalysisContext(executor=executor, cancel=cancel),
    )
    session.add_frame("sales", pd.DataFrame({"取引先": ["あおば商事"], "金額": [1]}))
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json={"code": code, "expected_outputs": []})
    return session, cancel


def _running(executor: SandboxExecutor) -> bool:
    try:
        return any("python" in psutil.Process(pid).name() for pid in executor.action_pids())
    except psutil.NoSuchProcess:
        return False


def test_a_cancel_while_the_code_runs_kills_it_and_ends_the_turn_cancelled(
    public_dir: Path, executor: SandboxExecutor, llm_server: ScriptedLLMServer
) -> None:
    session, cancel = _session(public_dir, executor, llm_server, SLEEPING)
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "never asked"})
    cancelled_at: list[float] = []

    def cancel_once_running() -> None:
        deadline = time.monotonic() + JAIL_START_S
        while not _running(executor) and time.monotonic() < deadline:
            time.sleep(0.05)
        cancelled_at.append(time.monotonic())
        cancel.set()

    threading.Thread(target=cancel_once_running, daemon=True).start()
    with pytest.raises(BlockError) as raised:
        session.ask("取引先を書き出して")

    assert cancelled_at, "the code never ran"
    assert time.monotonic() - cancelled_at[0] < CANCELLED_WITHIN_S
    assert raised.value.code == ErrorCode.CANCELLED
    assert raised.value.message == "分析は取り消されました（実行中のコードは止めました）。"
    turn = raised.value.details["turn"]
    assert turn["execution_results"] == []  # the killed run is recorded nowhere
    assert len(llm_server.chat_requests()) == 2  # no next step asked for
    assert session.execution_results == []
    assert not list((public_dir / "workspace").rglob("half.csv"))  # nothing half-written
    gone_by = time.monotonic() + CANCELLED_WITHIN_S
    while executor.action_pids() and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert executor.action_pids() == []


def test_a_cancel_right_before_the_code_starts_runs_nothing(
    public_dir: Path, executor: SandboxExecutor, llm_server: ScriptedLLMServer
) -> None:
    session, cancel = _session(public_dir, executor, llm_server, "print('ran')\n")
    events = _CancelAtCodeGen(cancel)

    with pytest.raises(BlockError) as raised:
        session.ask("取引先を書き出して", events=events)

    assert raised.value.code == ErrorCode.CANCELLED
    assert "code_gen" in events.kinds
    assert "code_exec" not in events.kinds  # the code never ran
    assert executor.server_pid is None  # not even a jail was started


def test_stopping_one_workdir_leaves_the_others_jail_running(
    public_dir: Path, executor: SandboxExecutor
) -> None:
    """A cancel stops its own action only: a block's turn shares the process's executor with
    every other run (``SandboxExecutor.stop`` of one workdir, never ``close``)."""
    mine, other = public_dir / "mine", public_dir / "other"
    executor.warm(mine)
    executor.warm(other)
    assert len(executor.jail_pids()) == 2

    executor.stop(mine)

    assert len(executor.jail_pids()) == 1
    outcome = executor.run("print('続行')\n", workdir=other, profile="analysis")
    assert outcome.success, outcome.error
    assert outcome.stdout.strip() == "続行"


class _CancelDuringReason(NullEmitter):
    """Events of a turn, with the flag set as the reason step starts its LLM call."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def emit(self, kind: Any, /, **fields: Any) -> RunEvent | None:
        if str(kind) == "stage" and fields.get("step") == "reason":
            self.cancel.set()
        return None


def test_a_cancel_during_an_llm_call_ends_the_turn_before_its_next_step(
    public_dir: Path, executor: SandboxExecutor, llm_server: ScriptedLLMServer
) -> None:
    session, cancel = _session(public_dir, executor, llm_server, "print('ran')\n")

    with pytest.raises(BlockError) as raised:
        session.ask("取引先を書き出して", events=_CancelDuringReason(cancel))

    assert raised.value.code == ErrorCode.CANCELLED
    assert raised.value.message == "分析は取り消されました。"  # no code had run
    assert raised.value.details["step"] == "コード生成・実行"
    assert len(llm_server.chat_requests()) == 1  # the code was never asked for
    assert executor.server_pid is None
