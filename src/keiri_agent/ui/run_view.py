"""Plan runs on the 実行 page: the person's answers, the run with live progress, its outcome.

Answers for ``ui.interactive_input`` nodes follow the Session State contract (seed 002 §8.2):
each node's fields are drawn by :func:`keiri_agent.ui.fields.render_fields` under
``plan:{plan_id}::node:{node_id}::v{version}``, and the answers handed to the runner are built
from those values when a run starts (the run itself, in a worker thread, never touches Session
State). Approval and free-text replies of confirm/inquire/mixed nodes sit beside them under
``reply:{key}``. Progress lines are the CLI's (``describe_event``); an :class:`Outcome` is what
the page keeps of a run, built from the runner's result or read back from a run log.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final, Literal

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.answer_state import SessionStateStore, session_key
from keiri_agent.blocks.ui.field_types import normalize_requirements
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.events.follow import LogFollower
from keiri_agent.events.logfile import first_event
from keiri_agent.events.models import PlanStart, RunEvent, RunStatus
from keiri_agent.events.runlog import find_run_log
from keiri_agent.plan import (
    BlockNode,
    Plan,
    PlanNames,
    PlanRunner,
    RunResult,
    describe_event,
    load_run,
    load_yaml,
)
from keiri_agent.ui.fields import WIDGET_PREFIX, render_fields, session_mapping
from keiri_agent.ui.run_digest import LiveLines
from keiri_agent.ui.signin import acting_name

__all__ = [
    "INPUT_BLOCK",
    "Outcome",
    "UINode",
    "collect_answers",
    "execute",
    "outcome_from_log",
    "render_ui_node",
    "reset_inputs",
    "ui_nodes",
    "use_answers",
    "waiting_nodes",
]

INPUT_BLOCK: Final = "ui.interactive_input"
REPLY_PREFIX: Final = "reply:"
APPROVAL_OPTIONS: Final = [
    {"value": True, "label": "承認する"},
    {"value": False, "label": "却下する"},
]
_FINISHED_EVENTS: Final = frozenset({"node_complete", "node_skipped", "node_waiting"})


@dataclass(frozen=True)
class UINode:
    """One ``ui.interactive_input`` node a person answers on the page."""

    plan_id: str
    node_id: str  # the node path (``loop[2]/approve`` inside loops)
    version: str
    mode: str
    message: str
    requirements: list[dict[str, Any]]

    @property
    def store_key(self) -> str:
        return session_key(self.plan_id, self.node_id, self.version)


def ui_nodes(plan: Plan, registry: BlockRegistry) -> list[UINode]:
    """The plan's top-level input nodes whose inputs are literal, so they can be shown before
    the run; the others (inputs built from ``${...}``) are asked for when the run reaches them."""
    found = []
    for node in plan.graph:
        if not isinstance(node, BlockNode) or registry.get(node.block).id != INPUT_BLOCK:
            continue
        if "${" in json.dumps(node.inputs, ensure_ascii=False, default=str):
            continue
        found.append(
            UINode(
                plan.id,
                node.id,
                registry.get(node.block).version,
                str(node.inputs.get("mode") or "collect"),
                str(node.inputs.get("message") or ""),
                normalize_requirements(node.inputs.get("requirements")),
            )
        )
    return found


def waiting_nodes(
    plan_id: str,
    waiting: Sequence[Mapping[str, Any]],
    blocks: Mapping[str, str],
    registry: BlockRegistry,
) -> list[UINode]:
    """The nodes a paused run waits for, with the requirements the run rendered (``blocks``:
    the block of each waiting node, from its node_start)."""
    nodes = []
    for item in waiting:
        node_id = str(item["node_id"])
        request = item.get("request") or {}
        ref = blocks.get(node_id) or INPUT_BLOCK
        version = ref.partition("@")[2] or registry.get(ref).version
        nodes.append(
            UINode(
                plan_id,
                node_id,
                version,
                str(request.get("mode") or "collect"),
                str(request.get("message") or ""),
                normalize_requirements(request.get("requirements")),
            )
        )
    return nodes


def _reply_requirements(mode: str) -> list[dict[str, Any]]:
    """The approval and free-text reply a mode asks for besides the fields."""
    reqs: list[dict[str, Any]] = []
    if mode in ("confirm", "mixed"):
        reqs.append(
            {"id": "approval", "type": "select", "label": "承認", "options": APPROVAL_OPTIONS}
        )
    if mode == "inquire":
        reqs.append({"id": "reply", "type": "chat", "label": "回答"})
    elif mode in ("confirm", "mixed"):
        reqs.append({"id": "reply", "type": "chat", "label": "コメント", "required": False})
    return reqs


def render_ui_node(
    node: UINode,
    *,
    upload_dir: Path | None = None,
    disabled: bool = False,
    name: str | None = None,
) -> None:
    """One node's message (its ``name`` when it has none), fields and (by mode) approval or
    reply. The node's id is not shown: the page lists ids in its details."""
    st.markdown(f"**{node.message or name or node.node_id}**")
    if node.requirements:
        render_fields(
            node.requirements, store_key=node.store_key, upload_dir=upload_dir, disabled=disabled
        )
    reply = _reply_requirements(node.mode)
    if reply:
        render_fields(reply, store_key=REPLY_PREFIX + node.store_key, disabled=disabled)


def collect_answers(plan_id: str) -> dict[str, dict[str, Any]]:
    """Answers for every input node of ``plan_id`` shown on the page (node path → values)."""
    store = SessionStateStore(session_mapping())
    answers: dict[str, dict[str, Any]] = {}
    for key in store.keys_for_plan(plan_id):
        node_path = key.removeprefix(f"plan:{plan_id}::node:").rpartition("::v")[0]
        values = store.collected_at(key)
        if REPLY_PREFIX + key in st.session_state:
            reply = store.collected_at(REPLY_PREFIX + key)
            if reply.get("approval") is not None:
                values["approved"] = reply["approval"]
            if reply.get("reply") is not None:
                values["response"] = reply["reply"]
        answers[node_path] = values
    return answers


def use_answers(nodes: Sequence[UINode], answers: Mapping[str, Mapping[str, Any]]) -> None:
    """Fill the nodes' fields with ``answers`` (node id → field id → value: a bundled example's
    sample data), as if typed; fields ``answers`` does not name keep their values."""
    store = SessionStateStore(session_mapping())
    for node in nodes:
        given = answers.get(node.node_id) or {}
        if not given:
            continue
        store.get_at(node.store_key, node.requirements)
        known = {str(r["id"]) for r in node.requirements}
        for field_id, value in given.items():
            if field_id in known:
                store.update_at(node.store_key, field_id, value)
        prefix = f"{WIDGET_PREFIX}{node.store_key}::"  # widgets reseed from the new values
        for key in [k for k in map(str, st.session_state.keys()) if k.startswith(prefix)]:
            del st.session_state[key]


def reset_inputs(plan_id: str) -> list[str]:
    """Clear every answer of ``plan_id`` and its widgets (the page's explicit リセット)."""
    prefixes = tuple(
        f"{head}plan:{plan_id}::node:"
        for head in ("", REPLY_PREFIX, WIDGET_PREFIX, WIDGET_PREFIX + REPLY_PREFIX)
    )
    doomed = [k for k in map(str, st.session_state.keys()) if k.startswith(prefixes)]
    for key in doomed:
        del st.session_state[key]
    return doomed


@dataclass
class Outcome:
    """What the page keeps of one run (or of a plan that could not start)."""

    plan_id: str
    status: RunStatus | Literal["invalid", "running"]  # invalid: the plan could not start
    run_id: str | None = None
    error: BlockError | None = None
    waiting: list[dict[str, Any]] = field(default_factory=list)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    log_path: Path | None = None
    duration_ms: float = 0.0
    resume_of: str | None = None
    rerun_from: str | None = None
    started: datetime | None = None  # the plan_start's time (UTC)

    @classmethod
    def from_result(cls, result: RunResult) -> Outcome:
        start = None
        if result.log_path is not None:
            first = first_event(result.log_path)
            start = first if isinstance(first, PlanStart) else None
        return cls(
            plan_id=result.plan_id,
            status=result.status,
            run_id=result.run_id,
            error=result.error,
            waiting=list(result.waiting),
            outputs=_in_plan_order(
                {k: dict(v) for k, v in result.outputs.items()}, start, result.log_path
            ),
            log_path=result.log_path,
            duration_ms=result.duration_ms,
            resume_of=start.resume_of if start else None,
            rerun_from=start.rerun_from if start else None,
            started=start.timestamp if start else None,
        )


def _in_plan_order(
    outputs: dict[str, dict[str, Any]], start: PlanStart | None, log_path: Path | None
) -> dict[str, dict[str, Any]]:
    """Outputs in the plan's node order, not in the order parallel nodes happened to finish.

    The order comes from the plan snapshot the run executed (``plan_file``, relative to the
    run log's folder)."""
    order: list[str] = []
    snapshot = (
        log_path.parent / start.plan_file
        if start is not None and start.plan_file and log_path is not None
        else None
    )
    if snapshot is not None and snapshot.is_file():
        raw = load_yaml(snapshot.read_text(encoding="utf-8"))
        graph = raw.get("graph") if isinstance(raw, dict) else None
        if isinstance(graph, list):
            order = [str(n.get("id")) for n in graph if isinstance(n, dict)]
    rank = {node_id: i for i, node_id in enumerate(order)}
    ids = sorted(outputs, key=lambda n: (rank.get(n, len(rank)), list(outputs).index(n)))
    return {node_id: outputs[node_id] for node_id in ids}


def outcome_from_log(log_path: Path) -> Outcome:
    """A past run read back from its JSONL log (outputs of finished top-level nodes)."""
    record = load_run(log_path)
    start, end = record.start, record.end
    waiting = [{"node_id": e.node_id, "request": e.request} for e in record.waiting]
    return Outcome(
        plan_id=record.plan_id,
        status=record.status or "running",
        run_id=record.run_id,
        error=BlockError.from_dict(end.error) if end is not None and end.error else None,
        waiting=waiting if record.status == "waiting_input" else [],
        outputs=_in_plan_order(
            {
                path: dict(reused.outputs)
                for path, reused in record.completed.items()
                if "/" not in path and "[" not in path
            },
            start,
            log_path,
        ),
        log_path=log_path,
        duration_ms=end.total_duration_ms if end is not None else 0.0,
        resume_of=start.resume_of,
        rerun_from=start.rerun_from,
        started=start.timestamp,
    )


Start = Callable[[PlanRunner, Callable[[RunEvent], None]], RunResult]


def execute(
    start: Start,
    settings: Settings,
    *,
    plan_id: str,
    total_nodes: int,
    names: PlanNames | None = None,
) -> Outcome:
    """Run ``start`` in a worker thread while its events are shown here, line by line (nodes
    named by ``names``).

    The runner calls ``on_event`` in its own threads, and Streamlit elements can only be updated
    from this (the script's) thread: the listener only notes the newest event, and this thread
    reads the events from the run's log (a page slower than the run holds none in memory).
    """
    box: dict[str, Any] = {}
    runs_dir = Path(settings.keiri_runs_dir)
    started_by = acting_name(settings)  # read here: Session State is the script thread's

    def locate(first: RunEvent) -> Path:
        return find_run_log(getattr(first, "plan_id", plan_id), first.run_id, runs_dir=runs_dir)

    events = LogFollower(locate)

    def work() -> None:
        try:
            with PlanRunner(settings=settings, runs_dir=runs_dir, started_by=started_by) as runner:
                box["result"] = start(runner, events.see)
        except BaseException as exc:  # handed to the script's thread below
            box["error"] = exc
        finally:
            events.finish()

    finished: set[str] = set()
    live = st.empty()  # the bar and the lines, shown while the run lasts
    with live.container():
        bar = st.progress(0.0, text="開始しています…")
        with st.status("実行しています…", expanded=True):
            lines = LiveLines(st.empty())
            worker = threading.Thread(target=work, name="keiri-run-page", daemon=True)
            worker.start()
            for event in events:
                line = describe_event(event, names)
                if line is not None:
                    lines.add(line)
                top = event.node_id is not None and "/" not in event.node_id
                if top and (event.event in _FINISHED_EVENTS or _final_error(event)):
                    finished.add(str(event.node_id))
                    done = min(len(finished) / max(total_nodes, 1), 1.0)
                    bar.progress(done, text=f"{len(finished)} / {total_nodes} ノード")
            lines.draw()
            worker.join()
    live.empty()
    if "error" in box:
        error = box["error"]
        if isinstance(error, BlockError):  # the plan did not start (invalid, unknown run...)
            return Outcome(plan_id=plan_id, status="invalid", error=error)
        raise error
    result: RunResult = box["result"]
    return Outcome.from_result(result)


def _final_error(event: RunEvent) -> bool:
    return event.event == "node_error" and not getattr(event, "will_retry", None)
