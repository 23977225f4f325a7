"""The runner's core: one :class:`Frame` executes one graph (a plan, a loop iteration, a subflow).

A frame starts every node whose dependencies are done, up to
``policy.concurrency.default_max_workers`` at a time, skips nodes whose ``when`` is false (null
outputs, ``node_skipped``), applies ``on_error`` (halt | continue | retry) and ``timeout_ms``,
pauses on UI nodes that have no answer yet, and reuses the outputs of nodes that finished in an
earlier run (resume, rerun). Loops and subflows are in ``_run.control``.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventEmitter, RunStatus
from keiri_agent.plan._dsl.expr import truthy
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, Plan, Policy, SubflowNode
from keiri_agent.plan._dsl.refs import Reference, resolve_path
from keiri_agent.plan._graph.compiled import CompiledGraph
from keiri_agent.plan._run.context import (
    Reused,
    RunContext,
    RunScope,
    TaggedEmitter,
    render_vars,
)
from keiri_agent.plan._run.output_store import NotPersistable

__all__ = [
    "Frame",
    "FrameResult",
    "NodeResult",
    "NodeRunners",
    "Reused",
    "RunContext",
    "RunScope",
    "render_vars",
]

Status = Literal["ok", "skipped", "failed", "waiting", "cancelled"]
# How each kind of node runs: _run.blocknode (blocks) and _run.control (loops and subflows, which
# drive nested frames). The runner builds the table (_run.runner.NODE_RUNNERS) and passes it in,
# so a frame runs them without importing them.
NodeRunners = Mapping[type, Callable[["Frame", Any, str], "NodeResult"]]


# Durability of node_complete (KEIRI_RUN_LOG_FSYNC): a node that ran at least REDO_S is on disk
# before its completion counts; quicker ones share an fsync with later lines, taken once the
# oldest unsynced line is MAX_UNSYNCED_S old, and at the latest at a pause (node_waiting), a
# file write or the run's end. A power cut so makes a resume redo at most the quick nodes that
# finished within MAX_UNSYNCED_S (the log is one append-only file: each fsync covers every line
# written before it).
REDO_S = 0.005
MAX_UNSYNCED_S = 0.05
RETRY_BACKOFF_S = 0.5  # the wait before a node's first retry; it doubles for each next one
RETRY_BACKOFF_MAX_S = 30.0


# A reference to a node that has no outputs to read: what the run says, and what to check.
_NO_OUTPUTS: Final = {
    "missing": (
        "の出力がまだありません。",
        "参照先のノードが実行されているか（スキップ・失敗していないか）確認してください。",
    ),
    "skipped": (
        "はスキップまたは失敗したため出力がありません。",
        "when 条件か on_error の設定、上流ノードのエラーを確認してください。",
    ),
}


def retry_delay(attempt: int) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based) before the next one."""
    return min(RETRY_BACKOFF_MAX_S, RETRY_BACKOFF_S * 2.0**attempt)


@dataclass
class NodeResult:
    """What one node came to in a frame: its status, outputs or error (a frame's is FrameResult)."""

    status: Status
    outputs: dict[str, Any] | None = None
    error: BlockError | None = None
    # "ok" but not complete: failures continued past inside a loop or subflow, a while loop
    # stopped by max_iterations. They make the enclosing frame (and the run) "partial".
    warnings: list[BlockError] = field(default_factory=list)


@dataclass
class FrameResult:
    status: RunStatus
    error: BlockError | None = None
    errors: list[BlockError] = field(default_factory=list)


@dataclass
class _Progress:
    """What a frame's nodes have come to so far."""

    halted: bool = False
    cancelled: bool = False
    waiting: bool = False
    first_error: BlockError | None = None
    continued: list[BlockError] = field(default_factory=list)

    def result(self) -> FrameResult:
        if self.first_error is not None:
            return FrameResult("failed", self.first_error, [self.first_error, *self.continued])
        if self.cancelled:
            return FrameResult("cancelled")
        if self.waiting:
            return FrameResult("waiting_input", errors=self.continued)
        return FrameResult("partial" if self.continued else "success", errors=self.continued)


class Frame:
    """Executes one graph: see the module docstring."""

    def __init__(
        self,
        ctx: RunContext,
        plan: Plan,
        graph: CompiledGraph,
        scope: RunScope,
        *,
        runners: NodeRunners,
        prefix: str = "",
        sub_run_id: str | None = None,
        env_root: dict[str, Any] | None = None,
    ) -> None:
        self.ctx = ctx
        self.plan = plan
        self.policy: Policy = plan.policy
        self.graph = graph
        self.scope = scope
        self.runners = runners
        self.prefix = prefix
        self.sub_run_id = sub_run_id
        # A subflow's events carry its run id; the plan's own go straight to the stream.
        self.events: EventEmitter = (
            ctx.events if sub_run_id is None else TaggedEmitter(ctx.events, sub_run_id)
        )

    # --- references --------------------------------------------------------------------------

    def resolve(self, ref: Reference, scope: RunScope | None = None) -> Any:
        """The value of ``ref`` in this frame's scope (or in ``scope``, a while loop's last pass)."""
        scope = scope or self.scope
        root = ref.root
        if root == "vars":
            return resolve_path(scope.vars, ref)
        if root in ("env", "config"):
            return self.ctx.env_config(ref)
        found = scope.read(ref)
        if found.answer == "null":
            return None
        if found.answer in _NO_OUTPUTS:
            message, hint = _NO_OUTPUTS[found.answer]
            raise BlockError(
                f"{ref.text}: ノード '{root}' {message}",
                code=ErrorCode.DEPENDENCY_NOT_FOUND,
                hint=hint,
                details={"reference": ref.text},
            )
        return resolve_path(found.value, ref)

    # --- scheduling --------------------------------------------------------------------------

    def run(self) -> FrameResult:
        graph = self.graph
        left = {n: len(ds) for n, ds in graph.deps.items() if ds}
        ready = deque(graph.starts)
        in_flight: dict[cf.Future[NodeResult], str] = {}
        limit = self.policy.concurrency.default_max_workers
        state = _Progress()
        while True:
            while ready and not state.halted and len(in_flight) < limit:
                if self.ctx.cancel.is_set():
                    state.halted = state.cancelled = True
                    break
                node_id = ready.popleft()
                started = self.start(node_id, not ready and not in_flight)
                if isinstance(started, NodeResult):  # ran here: settle it at once
                    ready.extend(self.settle(node_id, started, state, left))
                else:
                    in_flight[started] = node_id
            if not in_flight:
                break
            done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
            released: list[str] = []
            for future in done:
                node_id = in_flight.pop(future)
                released += self.settle(node_id, future.result(), state, left)
            ready.extend(
                sorted(released, key=graph.position.__getitem__) if len(released) > 1 else released
            )
        return state.result()

    def settle(
        self, node_id: str, outcome: NodeResult, state: _Progress, left: dict[str, int]
    ) -> list[str]:
        """Record a node's outcome; the dependents it releases, in the graph's order."""
        if outcome.status in ("ok", "skipped") or (
            outcome.status == "failed" and self.policy.on_error == "continue"
        ):
            if outcome.status == "failed" and outcome.error is not None:
                state.continued.append(outcome.error)
            state.continued.extend(outcome.warnings)
            self.scope.nodes[node_id] = outcome.outputs
            released = []
            for user in self.graph.dependents[node_id]:
                left[user] -= 1
                if not left[user]:
                    released.append(user)
            return (
                sorted(released, key=self.graph.position.__getitem__)
                if len(released) > 1
                else released
            )
        if outcome.status == "waiting":
            state.waiting = True
        elif outcome.status == "cancelled":
            state.halted = state.cancelled = True
        else:
            state.halted = True
            state.first_error = state.first_error or outcome.error
        return []

    def start(self, node_id: str, alone: bool) -> NodeResult | cf.Future[NodeResult]:
        """Run the node here (its outcome) or on a worker thread (a future of it)."""
        node = self.graph.nodes[node_id]
        inline = (
            alone
            and isinstance(node, BlockNode)
            and self.policy.timeout_ms is None
            and self.ctx.backend.local
        )
        if inline or (self.prefix + node_id) in self.ctx.reuse:
            return self.node_job(node_id)
        # A thread within the run's bound, or this thread when none is free (_run.workers).
        future = self.ctx.workers.try_submit(self.node_job, node_id)
        return future if future is not None else self.node_job(node_id)

    # --- one node ----------------------------------------------------------------------------

    def node_job(self, node_id: str) -> NodeResult:
        node = self.graph.nodes[node_id]
        path = self.prefix + node_id
        reused = self.ctx.reuse.get(path)
        if reused is not None:
            self.events.emit(
                "node_complete",
                node_id=path,
                outputs=reused.outputs,
                stored=reused.stored,
                outputs_file=reused.outputs_file,
                reused=True,
            )
            return NodeResult("ok", reused.outputs)
        try:
            if node.when is not None:
                expression = self.graph.conditions[node_id]
                if not truthy(expression.evaluate(self.resolve)):
                    self.events.emit(
                        "node_skipped",
                        node_id=path,
                        reason="when_condition_false",
                        condition=expression.text,
                    )
                    return NodeResult("skipped", None)
        except BlockError as exc:
            return self.failed(path, exc, 0)
        limit = self.policy.concurrency.per_node.get(node_id)
        if limit is not None and not isinstance(node, LoopNode):
            with self.ctx.semaphore(f"{self.plan.id}:{node_id}", limit):
                return self.dispatch(node, path)
        return self.dispatch(node, path)

    def dispatch(self, node: BlockNode | LoopNode | SubflowNode, path: str) -> NodeResult:
        return self.runners[type(node)](self, node, path)

    def failed(self, path: str, error: BlockError, attempt: int) -> NodeResult:
        error.details.setdefault("node_id", path)
        self.ctx.events.redactor.scrub_error(error)  # the run's result holds it too
        self.events.emit("node_error", node_id=path, error=error.to_dict(), retry=attempt)
        if error.code == ErrorCode.CANCELLED:
            return NodeResult("cancelled", None, error)
        return NodeResult("failed", None, error)

    def complete(self, path: str, outputs: dict[str, Any], started: float) -> NodeResult:
        stored: dict[str, Any] | None = None
        file: str | None = None
        if self.ctx.events.redactor.contains(outputs):
            self.events.emit(
                "log",
                node_id=path,
                level="warning",
                msg="出力に秘密情報（環境変数・設定の値）が含まれるため保存しません。"
                "再開・再実行ではこのノードを実行し直します。",
            )
        elif self.ctx.store is not None:
            try:
                stored, file = self.ctx.store.encode(path, outputs)
                if stored is not None and self.ctx.events.redactor.clean(stored) != stored:
                    # The log masks personal data: the exact values go to the outputs file.
                    stored, file = self.ctx.store.encode(path, outputs, inline=False)
            except NotPersistable as exc:
                self.events.emit(
                    "log",
                    node_id=path,
                    level="warning",
                    msg=f"出力を保存できないため、再開・再実行ではこのノードを実行し直します（{exc}）。",
                )
        took = time.perf_counter() - started
        self.events.emit(
            "node_complete",
            node_id=path,
            outputs=outputs,
            duration_ms=took * 1000,
            stored=stored,
            outputs_file=file,
        )
        # Durable at once when redoing the node would cost more than an fsync; a quick node
        # waits for the next fsync (group commit), at most MAX_UNSYNCED_S.
        self.ctx.events.sync(older_than=None if took >= REDO_S else MAX_UNSYNCED_S)
        return NodeResult("ok", outputs)
