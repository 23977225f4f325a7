"""One rule for an agent's events inside a node or a task (``events.node_events``, issue 39).

Every place that runs an agent -- the ``data.convert``, ``ai.helpdesk_answer`` and
``ai.analyze_data`` blocks and the server's analysis task -- hands it a :class:`NodeEvents`: the
events carry the node's id, and a step that starts after a cancel is stopped with CANCELLED
before it runs. The agents are replaced by stand-ins that ask for a cancel between two steps, so
each path is checked exactly, without a model or a sandbox.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from keiri_agent.blocks.ai.analyze_data import AnalyzeDataBlock
from keiri_agent.blocks.ai.helpdesk_answer import HelpDeskAnswerBlock
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.data.convert import ConvertBlock
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventStream, NodeEvents
from keiri_agent.server.inputs import TaskFiles
from keiri_agent.server.jobs import Job
from keiri_agent.server.runners import AnalysisRequest, prepare
from tests.blocks.conftest import ContextFactory
from tests.support import ScriptedLLMServer


class Steps:
    """An agent's two steps; a cancel is asked for when the first ends."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.ran: list[str] = []

    def drive(self, events: Any) -> None:
        for step in ("reason", "report"):
            events.emit("stage", node_id=step, step=step, status="start")
            self.ran.append(step)
            events.emit("log", node_id=step, msg=f"{step} を実行しました。")
            if step == "reason":
                self.cancel.set()  # the user presses 中止 while the first step ends
            events.emit("stage", node_id=step, step=step, status="done")


def _convert(
    registry: BlockRegistry, ctx: BlockContext, steps: Steps, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keiri_agent.agents.convert.pipeline as pipeline

    def run_convert(request: str, **kwargs: Any) -> Any:
        steps.drive(kwargs["events"])
        raise AssertionError("the conversion went on after the cancel")

    monkeypatch.setattr(pipeline, "run_convert", run_convert)
    ConvertBlock(registry.get("data.convert")).run({"request": "Excel に変換して"}, ctx)


def _helpdesk(
    registry: BlockRegistry, ctx: BlockContext, steps: Steps, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keiri_agent.agents.helpdesk.agent as agent

    class Agent:
        def __init__(self, kb: Any, *, events: Any, **kwargs: Any) -> None:
            self.events = events

        def run_agent(self, question: str) -> Any:
            steps.drive(self.events)
            raise AssertionError("the help desk went on after the cancel")

    monkeypatch.setattr(agent, "HelpDeskAgent", Agent)
    block = HelpDeskAnswerBlock(registry.get("ai.helpdesk_answer"), tools=[])
    block.run({"question": "再設定は？"}, ctx)


def _analysis_agent(steps: Steps, monkeypatch: pytest.MonkeyPatch) -> None:
    import keiri_agent.agents.analysis as analysis

    class Session:
        def __init__(self, **kwargs: Any) -> None:
            pass

        def add_files(self, paths: list[Path]) -> list[Any]:
            return [SimpleNamespace(shape=(2, 2), name=path.stem, notes=[]) for path in paths]

        def ask(self, question: str, *, events: Any) -> Any:
            steps.drive(events)
            raise AssertionError("the analysis went on after the cancel")

    monkeypatch.setattr(analysis, "AnalysisSession", Session)
    monkeypatch.setattr(analysis, "AnalysisContext", lambda **kwargs: None)


def _analyze_data(
    registry: BlockRegistry, ctx: BlockContext, steps: Steps, monkeypatch: pytest.MonkeyPatch
) -> None:
    _analysis_agent(steps, monkeypatch)
    data = ctx.workspace.parent / "sales.csv"
    data.write_text("月,売上\n4,100\n", encoding="utf-8")
    executor: Any = object()  # the stand-in session never runs code
    block = AnalyzeDataBlock(registry.get("ai.analyze_data"), executor=executor)
    block.run({"question": "売上の合計は？", "files": [str(data)]}, ctx)


BlockPath = Callable[[BlockRegistry, BlockContext, Steps, pytest.MonkeyPatch], None]
BLOCK_PATHS: dict[str, BlockPath] = {
    "data.convert": _convert,
    "ai.helpdesk_answer": _helpdesk,
    "ai.analyze_data": _analyze_data,
}


@pytest.mark.parametrize("path", sorted(BLOCK_PATHS))
def test_a_block_s_agent_stops_at_the_first_step_after_a_cancel(
    path: str,
    registry: BlockRegistry,
    make_ctx: ContextFactory,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stream = EventStream("run-1", "plan-1")
    ctx = make_ctx("node")
    ctx.events = stream
    steps = Steps(ctx.cancel_event)

    with pytest.raises(BlockError) as caught:
        BLOCK_PATHS[path](registry, ctx, steps, monkeypatch)

    assert caught.value.code == ErrorCode.CANCELLED
    assert "取り消されました" in caught.value.message
    assert steps.ran == ["reason"]  # the second step never ran
    seen = [(e.node_id, e.event, getattr(e, "step", None)) for e in stream.events()]
    assert ("node", "stage", "report") not in seen  # nor was it announced as started
    assert ("node", "stage", "reason") in seen  # the agent's events are the node's
    assert llm_server.chat_requests() == []


def test_the_server_s_analysis_task_stops_at_the_first_step_after_a_cancel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uploads = tmp_path / "task" / "uploads"
    uploads.mkdir(parents=True)
    (uploads / "sales.csv").write_text("月,売上\n4,100\n", encoding="utf-8")
    executor: Any = SimpleNamespace()
    stream = EventStream("task-1", "analysis")
    job = Job("task-1", tmp_path / "task", stream, threading.Event(), executor, Settings())
    steps = Steps(job.cancel)
    _analysis_agent(steps, monkeypatch)
    runner = prepare(
        AnalysisRequest(kind="analysis", request="売上の合計は？"),
        job.settings,
        TaskFiles(tmp_path / "task"),
    )

    with pytest.raises(BlockError) as caught:
        runner(job)

    assert caught.value.code == ErrorCode.CANCELLED
    assert steps.ran == ["reason"]
    assert "report" not in [getattr(e, "step", None) for e in stream.events()]


def test_node_events_re_tag_count_usage_and_stop_only_at_step_starts() -> None:
    stream = EventStream("run-1", "plan-1")
    cancel = threading.Event()

    def check() -> None:
        if cancel.is_set():
            raise BlockError("取り消されました。", code=ErrorCode.CANCELLED)

    events = NodeEvents(stream, check, node_id="ask")
    events.emit("stage", node_id="subtask[0]", step="select_tools", status="start")
    events.emit(
        "llm_call",
        node_id="s",
        role="helpdesk",
        provider="openai",
        model="m",
        input_tokens=3,
        output_tokens=4,
    )
    cancel.set()
    # A step's end, a log, usage and an error report pass: an agent's cleanup is never cut.
    events.emit("stage", node_id="report", step="report", status="done")
    events.emit("log", node_id="report", msg="終了処理")
    events.emit("error", node_id="report", step="report", message="失敗")
    for kind, fields in (("stage", {"step": "x", "status": "start"}), ("code_gen", {"code": ""})):
        with pytest.raises(BlockError):
            events.emit(kind, node_id="x", **fields)

    seen = stream.events()
    assert {e.node_id for e in seen} == {"ask"}
    assert getattr(seen[0], "step", None) == "subtask[0]/select_tools"
    assert (events.llm_calls, events.tokens) == (1, 7)
    assert [e.event for e in seen] == ["stage", "llm_call", "stage", "log", "error"]


def test_a_task_s_events_keep_their_own_tags() -> None:
    stream = EventStream("task-1", "analysis")
    NodeEvents(stream, lambda: None).emit("stage", node_id="reason", step="reason", status="start")
    (event,) = stream.events()
    assert (event.node_id, getattr(event, "step", None)) == ("reason", "reason")


def test_every_agent_path_builds_its_events_the_one_way() -> None:
    """No block or server module keeps an emitter adapter of its own."""
    root = Path(__file__).resolve().parents[2] / "src" / "keiri_agent"
    modules = [*(root / "blocks").rglob("*.py"), *(root / "server").rglob("*.py")]
    assert len(modules) > 50
    own = [
        str(path.relative_to(root))
        for path in modules
        if "def emit(self" in path.read_text(encoding="utf-8")
    ]
    assert own == []
