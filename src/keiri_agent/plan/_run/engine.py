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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from keiri_agent.blocks.base import BlockContext, InputRequired
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventEmitter
from keiri_agent.plan._dsl.expr import truthy
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, Plan, Policy, SubflowNode
from keiri_agent.plan._dsl.refs import Reference, resolve_path
from keiri_agent.plan._graph.compiled import CompiledGraph
from keiri_agent.plan._run.context import (
    Reused,
    RunContext,
    TaggedEmitter,
    Values,
    render_vars,
)
from keiri_agent.plan._run.execute import BlockJob, execute_job, run_block, timeout_error
from keiri_agent.plan._run.values import NotPersistable
from keiri_agent.plan._run.workers import run_inline

__all__ = [
    "CONTROL_NODES",
    "Frame",
    "FrameResult",
    "Outcome",
    "Reused",
    "RunContext",
    "Values",
    "control_node",
    "render_vars",
]

Status = Literal["ok", "skipped", "failed", "waiting", "cancelled"]
# Runners of the nodes that drive nested frames (loops, subflows), registered by plan._run.control:
# a frame runs them without this module importing the module that builds frames.
ControlNodeRunner = Callable[["Frame", Any, str], "Outcome"]
CONTROL_NODES: dict[type, ControlNodeRunner] = {}


def control_node(kind: type) -> Callable[[ControlNodeRunner], ControlNodeRunner]:
    def register(run: ControlNodeRunner) -> ControlNodeRunner:
        CONTROL_NODES[kind] = run
        return run

    return register


RETRY_BACKOFF_S = 0.5  # the wait before a node's first retry; it doubles for each next one
RETRY_BACKOFF_MAX_S = 30.0


def retry_delay(attempt: int) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based) before the next one."""
    return min(RETRY_BACKOFF_MAX_S, RETRY_BACKOFF_S * 2.0**attempt)


@dataclass
class Outcome:
    status: Status
    outputs: dict[str, Any] | None = None
    error: BlockError | None = None
    # "ok" but not complete: failures continued past inside a loop or subflow, a while loop
    # stopped by max_iterations. They make the enclosing frame (and the run) "partial".
    warnings: list[BlockError] = field(default_factory=list)


@dataclass
class FrameResult:
    status: Literal["success", "failed", "waiting", "cancelled", "partial"]
    error: BlockError | None = None
    errors: list[BlockError] = field(default_factory=list)


class Frame:
    """Executes one graph: see the module docstring."""

    def __init__(
        self,
        ctx: RunContext,
        plan: Plan,
        graph: CompiledGraph,
        values: Values,
        *,
        prefix: str = "",
        sub_run_id: str | None = None,
        env_root: dict[str, Any] | None = None,
    ) -> None:
        self.ctx = ctx
        self.plan = plan
        self.policy: Policy = plan.policy
        self.graph = graph
        self.values = values
        self.prefix = prefix
        self.sub_run_id = sub_run_id
        self.events: EventEmitter = TaggedEmitter(ctx.events, sub_run_id)

    # --- references --------------------------------------------------------------------------

    def resolve(self, ref: Reference, values: Values | None = None) -> Any:
        """The value of ``ref`` in this frame's scope (or in ``values``, a while loop's last pass)."""
        scope = values or self.values
        root = ref.root
        if root == "vars":
            return resolve_path(scope.vars, ref)
        if root in ("env", "config"):
            return self.ctx.env_config(ref)
        found, value, is_node = scope.find(root)
        if not found:
            raise BlockError(
                f"{ref.text}: ノード '{root}' の出力がまだありません。",
                code=ErrorCode.DEPENDENCY_NOT_FOUND,
                hint="参照先のノードが実行されているか（スキップ・失敗していないか）確認してください。",
                details={"reference": ref.text},
            )
        if is_node and value is None:
            if len(ref.path) <= 1 and not ref.length:
                return None
            raise BlockError(
                f"{ref.text}: ノード '{root}' はスキップまたは失敗したため出力がありません。",
                code=ErrorCode.DEPENDENCY_NOT_FOUND,
                hint="when 条件か on_error の設定、上流ノードのエラーを確認してください。",
                details={"reference": ref.text},
            )
        return resolve_path(value, ref)

    # --- scheduling --------------------------------------------------------------------------

    def run(self) -> FrameResult:
        graph = self.graph
        left = {n: set(graph.deps[n]) for n in graph.order}
        position = {n: i for i, n in enumerate(graph.order)}
        ready = deque(n for n in graph.order if not left[n])
        in_flight: dict[cf.Future[Outcome], str] = {}
        limit = self.policy.concurrency.default_max_workers
        halted = cancelled = waiting = False
        first_error: BlockError | None = None
        continued: list[BlockError] = []
        while True:
            while ready and not halted and len(in_flight) < limit:
                if self.ctx.cancel.is_set():
                    halted = cancelled = True
                    break
                node_id = ready.popleft()
                alone = not ready and not in_flight
                in_flight[self.start(node_id, alone)] = node_id
            if not in_flight:
                break
            done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
            released: list[str] = []
            for future in done:
                node_id = in_flight.pop(future)
                outcome = future.result()
                if outcome.status in ("ok", "skipped") or (
                    outcome.status == "failed" and self.policy.on_error == "continue"
                ):
                    if outcome.status == "failed" and outcome.error is not None:
                        continued.append(outcome.error)
                    continued.extend(outcome.warnings)
                    self.values.outputs[node_id] = outcome.outputs
                    for user in graph.dependents[node_id]:
                        left[user].discard(node_id)
                        if not left[user]:
                            released.append(user)
                elif outcome.status == "waiting":
                    waiting = True
                elif outcome.status == "cancelled":
                    halted = cancelled = True
                else:
                    halted = True
                    first_error = first_error or outcome.error
            ready.extend(sorted(released, key=position.__getitem__))
        if first_error is not None:
            return FrameResult("failed", first_error, [first_error, *continued])
        if cancelled:
            return FrameResult("cancelled")
        if waiting:
            return FrameResult("waiting", errors=continued)
        return FrameResult("partial" if continued else "success", errors=continued)

    def start(self, node_id: str, alone: bool) -> cf.Future[Outcome]:
        node = self.graph.nodes[node_id]
        inline = (
            alone
            and isinstance(node, BlockNode)
            and self.policy.timeout_ms is None
            and self.ctx.backend.local
        )
        if inline or (self.prefix + node_id) in self.ctx.reuse:
            return run_inline(self.node_job, node_id)
        # A thread within the run's bound, or this thread when none is free (_run.workers).
        return self.ctx.workers.submit(self.node_job, node_id)

    # --- one node ----------------------------------------------------------------------------

    def node_job(self, node_id: str) -> Outcome:
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
            return Outcome("ok", reused.outputs)
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
                    return Outcome("skipped", None)
        except BlockError as exc:
            return self.failed(path, exc, 0)
        limit = self.policy.concurrency.per_node.get(node_id)
        if limit is not None and not isinstance(node, LoopNode):
            with self.ctx.semaphore(f"{self.plan.id}:{node_id}", limit):
                return self.dispatch(node, path)
        return self.dispatch(node, path)

    def dispatch(self, node: BlockNode | LoopNode | SubflowNode, path: str) -> Outcome:
        if isinstance(node, BlockNode):
            return self.run_block_node(node, path)
        run = CONTROL_NODES.get(type(node))
        if run is None:  # plan._run.control registers loops and subflows when it is imported
            raise RuntimeError(f"no runner registered for {type(node).__name__}")
        return run(self, node, path)

    def failed(self, path: str, error: BlockError, attempt: int) -> Outcome:
        error.details.setdefault("node_id", path)
        self.ctx.events.redactor.scrub_error(error)  # the run's result holds it too
        self.events.emit("node_error", node_id=path, error=error.to_dict(), retry=attempt)
        if error.code == ErrorCode.CANCELLED:
            return Outcome("cancelled", None, error)
        return Outcome("failed", None, error)

    def complete(self, path: str, outputs: dict[str, Any], started: float) -> Outcome:
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
            except NotPersistable as exc:
                self.events.emit(
                    "log",
                    node_id=path,
                    level="warning",
                    msg=f"出力を保存できないため、再開・再実行ではこのノードを実行し直します（{exc}）。",
                )
        self.events.emit(
            "node_complete",
            node_id=path,
            outputs=outputs,
            duration_ms=(time.perf_counter() - started) * 1000,
            stored=stored,
            outputs_file=file,
        )
        return Outcome("ok", outputs)

    def run_block_node(self, node: BlockNode, path: str) -> Outcome:
        started = time.perf_counter()
        try:
            spec = self.ctx.registry.get(node.block)
            inputs = self.graph.bindings[node.id].render(self.resolve)
        except BlockError as exc:
            return self.failed(path, exc, 0)
        self.events.emit("node_start", node_id=path, block=spec.ref)
        attempts = self.policy.retries + 1 if self.policy.on_error == "retry" else 1
        error: BlockError | None = None
        for attempt in range(attempts):
            try:
                outputs = self.call_block(spec, inputs, path)
            except InputRequired as pause:
                self.events.emit("node_waiting", node_id=path, request=pause.request)
                with self.ctx._lock:
                    self.ctx.waiting.append({"node_id": path, "request": pause.request})
                return Outcome("waiting")
            except BlockError as exc:
                error = exc
            except Exception as exc:
                error = BlockError(
                    f"ブロック {spec.id} の実行中に予期しないエラーが起きました: {type(exc).__name__}: {exc}",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="入力データを確認してください。解決しない場合はブロックの不具合として報告してください。",
                    details={"node_id": path, "block": spec.ref},
                    recoverable=True,
                )
            else:
                exposed = {node.out.get(port, port): value for port, value in outputs.items()}
                return self.complete(path, exposed, started)
            if self.ctx.cancel.is_set() or error.code == ErrorCode.CANCELLED:
                return self.failed(path, error, attempt)
            if attempt + 1 < attempts:
                self.events.emit(
                    "node_error",
                    node_id=path,
                    error=error.to_dict(),
                    retry=attempt,
                    will_retry=True,
                )
                self.ctx.sleep(retry_delay(attempt))
                if self.ctx.cancel.is_set():  # cancelled while waiting: no further attempt
                    return Outcome("cancelled", None, error)
        assert error is not None
        return self.failed(path, error, attempts - 1)

    def call_block(self, spec: BlockSpec, inputs: dict[str, Any], path: str) -> dict[str, Any]:
        timeout = self.policy.timeout_ms / 1000 if self.policy.timeout_ms else None
        ctx = self.ctx
        if not (ctx.backend.local or spec.is_ui):
            return self._call_remote(spec, inputs, path, timeout)
        block = ctx.registry.load(spec.ref)
        cancel = ctx.node_event()
        block_ctx = BlockContext(
            run_id=self.sub_run_id or ctx.run_id,
            plan_id=self.plan.id,
            node_id=path,
            block_version=spec.version,
            workspace=ctx.workspace,
            events=self.events,
            cancel_event=cancel,
            settings=ctx.settings,
            inputs=ctx.answers,
            replaceable=ctx.replaceable.get(path, frozenset()),
        )
        try:
            if timeout is None:
                return run_block(block, inputs, block_ctx)
            future = ctx.backend.submit(run_block, block, inputs, block_ctx)
            try:
                return future.result(timeout=timeout)
            except cf.TimeoutError:
                cancel.set()  # cooperative blocks stop at their next check_cancelled()
                raise timeout_error(path, spec, self.policy.timeout_ms) from None
        finally:
            ctx.release(cancel)

    def _call_remote(
        self, spec: BlockSpec, inputs: dict[str, Any], path: str, timeout: float | None
    ) -> dict[str, Any]:
        root = self.ctx.registry.root_of(spec)
        job = BlockJob(
            spec=spec,
            spec_root=str(root) if root else None,
            inputs=inputs,
            run_id=self.sub_run_id or self.ctx.run_id,
            plan_id=self.plan.id,
            node_path=path,
            workspace=str(self.ctx.workspace),
        )
        future = self.ctx.backend.submit(execute_job, job)
        try:
            result = future.result(timeout=timeout)
        except cf.TimeoutError:
            future.cancel()
            raise timeout_error(path, spec, self.policy.timeout_ms) from None
        for kind, fields in result.events:
            fields = {k: v for k, v in fields.items() if k not in ("id", "event", "run_id")}
            fields["node_id"] = path
            self.events.emit(kind, **fields)
        if result.error is not None:
            raise BlockError.from_dict(result.error)
        assert result.outputs is not None
        return result.outputs
