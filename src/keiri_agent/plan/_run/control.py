"""Loop and subflow nodes (seed 002 §5.2, §5.3): nested frames driven by a parent frame.

- foreach: one frame per item, at most ``max_concurrency`` (or ``policy.concurrency.per_node``)
  at a time, with threads from the run's bound, added only while items block
  (``_run.workers.Crew``); exports collected in input order. Node paths inside are ``loop[i]/child``. At most ``KEIRI_PLAN_MAX_FOREACH_ITEMS`` items.
- while: the condition is checked before each iteration; body nodes it references hold the
  previous iteration's outputs (null before the first). ``max_iterations`` bounds it; still
  meeting the condition at the bound is an error with ``required: true``, and otherwise a
  ``LOOP_LIMIT_REACHED`` warning that makes the run ``partial`` (never a plain success).
- Failures continued past inside an iteration or a subflow (``on_error: continue``) make the
  loop or subflow node, and so the run, ``partial`` too.
- subflow: ``designs/<plan_id>.yaml`` run in its own vars scope (the parent's vars are not
  inherited), with run id ``<run>.sub#n``; its errors become the subflow node's error.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan._dsl.expr import truthy
from keiri_agent.plan._dsl.models import (
    MAX_LOOP_ITERATIONS,
    Export,
    LoopNode,
    Plan,
    SubflowNode,
)
from keiri_agent.plan._dsl.refs import Reference, bare_reference, resolve_path
from keiri_agent.plan._graph.names import subflow_said
from keiri_agent.plan._graph.scope import Scope
from keiri_agent.plan._run.engine import (
    Frame,
    FrameResult,
    NodeResult,
    RunScope,
    render_vars,
)
from keiri_agent.plan._run.workers import Crew

if TYPE_CHECKING:
    from keiri_agent.plan._graph.compiled import CompiledGraph

__all__ = ["load_subflow", "run_loop", "run_subflow"]


def _export_value(export: Export | Reference, scope: RunScope) -> Any:
    ref = export if isinstance(export, Reference) else bare_reference(export.from_)
    assert ref is not None, "validated plans export node.alias paths"
    found = scope.read(ref)
    if found.answer != "found" or found.value is None:
        return None  # a node that did not run exports null
    return resolve_path(found.value, ref)


def _frame_outcome(result: FrameResult, path: str, what: str) -> NodeResult | None:
    """The node outcome for a nested frame that did not succeed (None when it did)."""
    if result.status in ("success", "partial"):
        return None
    if result.status == "waiting_input":
        return NodeResult("waiting")
    if result.status == "cancelled":
        return NodeResult("cancelled")
    inner = result.error
    assert inner is not None
    return NodeResult(
        "failed",
        None,
        BlockError(
            f"{what} でエラーが発生しました: {inner.message}",
            code=inner.code,
            hint=inner.hint,
            details={
                **inner.details,
                "node_id": path,
                "inner_node_id": inner.details.get("node_id"),
            },
            input_snapshot=inner.input_snapshot,
            recoverable=inner.recoverable,
        ),
    )


def _emit_failure(frame: Frame, path: str, outcome: NodeResult) -> NodeResult:
    if outcome.status == "failed" and outcome.error is not None:
        frame.events.emit("node_error", node_id=path, error=outcome.error.to_dict(), retry=0)
    return outcome


def run_loop(frame: Frame, node: LoopNode, path: str) -> NodeResult:
    started = time.perf_counter()
    body = frame.graph.bodies[node.id]
    frame.events.emit("node_start", node_id=path, block="loop")
    exports = node.body.plan.exports
    names = node.out.names(exports)
    if node.foreach is not None:
        try:
            items = frame.graph.bindings[node.id].render(frame.resolve)
        except BlockError as exc:
            return frame.failed(path, exc, 0)
        if not isinstance(items, list | tuple):
            return frame.failed(
                path,
                BlockError(
                    f"ループ {path} の foreach.input が配列ではありません（{type(items).__name__}）。",
                    code=ErrorCode.INPUT_VALIDATION_FAILED,
                    hint="配列を出力するノードの出力を foreach.input に指定してください。",
                    details={"node_id": path},
                    recoverable=True,
                ),
                0,
            )
        too_many = frame.ctx.too_many_items(path, len(items))
        if too_many is not None:
            return frame.failed(path, too_many, 0)
        results, outcome, warnings = _foreach(frame, node, body, path, list(items))
    else:
        results, outcome, warnings = _while(frame, node, body, path)
    if outcome is not None:
        return _emit_failure(frame, path, outcome)
    collected = {name: [r.get(name) for r in results] for name in names}
    done = frame.complete(path, collected, started)
    done.warnings.extend(warnings)
    return done


def _iteration(
    frame: Frame,
    node: LoopNode,
    body: CompiledGraph,
    path: str,
    index: int,
    loop_vars: dict[str, Any],
) -> tuple[FrameResult, RunScope]:
    scope: RunScope = Scope(frame.scope.vars, parent=frame.scope, loop_vars=loop_vars)
    child = Frame(
        frame.ctx,
        frame.plan,
        body,
        scope,
        runners=frame.runners,
        prefix=f"{path}[{index}]/",
        sub_run_id=frame.sub_run_id,
    )
    return child.run(), scope


def _foreach(
    frame: Frame, node: LoopNode, body: CompiledGraph, path: str, items: list[Any]
) -> tuple[list[dict[str, Any]], NodeResult | None, list[BlockError]]:
    assert node.foreach is not None
    spec = node.foreach
    limit = frame.policy.concurrency.per_node.get(node.id, spec.max_concurrency)
    results: list[dict[str, Any]] = [{} for _ in items]
    outcomes: list[NodeResult | None] = [None] * len(items)
    warnings: list[list[BlockError]] = [[] for _ in items]
    first_bad: tuple[int, NodeResult] | None = None
    waiting = False
    stop = threading.Event()

    def one(index: int) -> NodeResult | None:
        if stop.is_set() or frame.ctx.cancel.is_set():
            return NodeResult("cancelled")
        loop_vars = {spec.itemVar: items[index]}
        if spec.indexVar:
            loop_vars[spec.indexVar] = index
        frame.events.emit("loop_iteration", node_id=path, iteration=index, item=items[index])
        result, scope = _iteration(frame, node, body, path, index, loop_vars)
        bad = _frame_outcome(result, path, f"ループ {path} の {index + 1} 件目")
        if bad is None:
            results[index] = {name: _export_value(ref, scope) for name, ref in body.exports}
            warnings[index] = result.errors
        elif bad.status == "failed" and frame.policy.on_error != "continue":
            stop.set()  # halt: start no further iterations
        return bad

    def item(index: int) -> None:
        outcomes[index] = one(index)

    # Iterations are taken in order by this thread and, while items block, by helpers of the
    # run's thread bound (_run.workers.Crew).
    Crew(frame.ctx.workers, item, len(items), limit).run()
    for index, bad in enumerate(outcomes):
        if bad is None:
            continue
        if bad.status == "waiting":
            waiting = True
        elif (bad.status == "failed" and first_bad is None) or (
            bad.status == "cancelled" and first_bad is None and not stop.is_set()
        ):
            first_bad = (index, bad)
    if first_bad is not None:
        return results, first_bad[1], []
    if waiting:
        return results, NodeResult("waiting"), []
    return results, None, [w for ws in warnings for w in ws]


def _while(
    frame: Frame, node: LoopNode, body: CompiledGraph, path: str
) -> tuple[list[dict[str, Any]], NodeResult | None, list[BlockError]]:
    assert node.while_ is not None
    spec = node.while_
    condition = frame.graph.loop_conditions[node.id]
    # Before the first iteration the body's nodes exist with null outputs.
    previous: RunScope = Scope(frame.scope.vars, parent=frame.scope)
    previous.nodes = dict.fromkeys(body.nodes)
    results: list[dict[str, Any]] = []
    warnings: list[BlockError] = []
    # The condition is checked before each iteration and once more after the last one allowed:
    # still true then, the loop has reached its limit.
    for index in range(spec.max_iterations + 1):
        try:
            go = truthy(condition.evaluate(partial(frame.resolve, scope=previous)))
        except BlockError as exc:
            return results, NodeResult("failed", None, exc), []
        if not go:
            return results, None, warnings
        if index == spec.max_iterations:
            break
        frame.events.emit("loop_iteration", node_id=path, iteration=index)
        result, scope = _iteration(frame, node, body, path, index, {})
        bad = _frame_outcome(result, path, f"ループ {path} の {index + 1} 回目")
        if bad is not None:
            return results, bad, []
        warnings.extend(result.errors)
        results.append({name: _export_value(ref, scope) for name, ref in body.exports})
        previous = scope
    limit = BlockError(
        f"ループ {path} は max_iterations（{spec.max_iterations:,} 回）に達したため打ち切りました"
        f"（条件 {condition.text} は真のままです）。",
        code=ErrorCode.LOOP_LIMIT_REACHED,
        hint="結果は途中までです。max_iterations を増やすか、条件が偽になる入力を与えてください"
        f"（上限 {MAX_LOOP_ITERATIONS:,} 回）。上限に達したら失敗にするには required: true を指定します。",
        details={"node_id": path, "max_iterations": spec.max_iterations},
        recoverable=True,
    )
    if spec.required:
        return results, NodeResult("failed", None, limit), []
    frame.events.emit(
        "log", node_id=path, level="warning", code=limit.code, msg=f"{limit.message} {limit.hint}"
    )
    return results, None, [*warnings, limit]


def load_subflow(frame: Frame, plan_id: str) -> tuple[Plan, CompiledGraph]:
    """The subflow as the run's validation read it (``_graph.subflows``: once per run)."""
    return frame.ctx.env.subflows.plan(plan_id)


def run_subflow(frame: Frame, node: SubflowNode, path: str) -> NodeResult:
    started = time.perf_counter()
    try:
        plan, graph = load_subflow(frame, node.call.plan_id)
        inputs = frame.graph.bindings[node.id].render(frame.resolve)
    except BlockError as exc:
        return frame.failed(path, exc, 0)
    sub_run_id = frame.ctx.next_sub_run_id(frame.sub_run_id or frame.ctx.run_id)
    frame.events.emit("node_start", node_id=path, block=f"subflow:{plan.id}")
    try:
        own = render_vars({k: v for k, v in plan.vars.items() if k not in inputs}, frame.ctx)
    except BlockError as exc:
        return frame.failed(path, exc, 0)
    scope: RunScope = Scope({**own, **inputs})  # no parent: the subflow sees only its inputs
    child = Frame(
        frame.ctx,
        plan,
        graph,
        scope,
        runners=frame.runners,
        prefix=f"{path}/",
        sub_run_id=sub_run_id,
    )
    result = child.run()
    bad = _frame_outcome(result, path, subflow_said(node.call.plan_id, plan, node))
    if bad is not None:
        return _emit_failure(frame, path, bad)
    by_name = {e.as_: e for e in plan.exports}
    outputs: dict[str, Any] = {}
    for export in node.out.exports:
        inner = by_name.get(export.from_, export)
        outputs[export.as_] = _export_value(inner, scope)
    done = frame.complete(path, outputs, started)
    done.warnings.extend(result.errors)
    return done
