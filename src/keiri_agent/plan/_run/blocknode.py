"""Block nodes: inputs rendered, the block run (inline, on the backend, or remote), retries.

A node's block spec and block instance are looked up once per run and kept in the run's context
(``RunContext.block_spec`` / ``block``), so a loop body run ten thousand times asks the registry
once.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from typing import Any

from keiri_agent.blocks.base import BlockContext, InputRequired
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.plan._dsl.models import BlockNode
from keiri_agent.plan._run.engine import Frame, NodeResult, retry_delay
from keiri_agent.plan._run.execute import BlockJob, execute_job, run_block, timeout_error
from keiri_agent.privacy import learn_tables

__all__ = ["run_block_node"]


def run_block_node(frame: Frame, node: BlockNode, path: str) -> NodeResult:
    started = time.perf_counter()
    try:
        spec = frame.ctx.block_spec(node.block)
        inputs = frame.graph.bindings[node.id].render(frame.resolve)
    except BlockError as exc:
        return frame.failed(path, exc, 0)
    frame.events.emit("node_start", node_id=path, block=spec.ref)
    policy = frame.policy
    attempts = policy.retries + 1 if policy.on_error == "retry" else 1
    error: BlockError | None = None
    for attempt in range(attempts):
        try:
            outputs = _call(frame, spec, inputs, path)
        except InputRequired as pause:
            frame.events.emit("node_waiting", node_id=path, request=pause.request)
            with frame.ctx._lock:
                frame.ctx.waiting.append({"node_id": path, "request": pause.request})
            return NodeResult("waiting")
        except BlockError as exc:
            error = exc
        except Exception as exc:
            error = BlockError(
                f"ブロック {spec.id} を実行できませんでした: {reason_of(exc)}",
                code=ErrorCode.INTERNAL_ERROR,
                hint="入力データを確認してください。解決しない場合はブロックの不具合として報告してください。",
                details={"node_id": path, "block": spec.ref, "cause": cause_of(exc)},
                recoverable=True,
            )
        else:
            exposed = {node.out.get(port, port): value for port, value in outputs.items()}
            return frame.complete(path, exposed, started)
        if frame.ctx.cancel.is_set() or error.code == ErrorCode.CANCELLED:
            return frame.failed(path, error, attempt)
        if attempt + 1 < attempts:
            frame.events.emit(
                "node_error", node_id=path, error=error.to_dict(), retry=attempt, will_retry=True
            )
            frame.ctx.sleep(retry_delay(attempt))
            if frame.ctx.cancel.is_set():  # cancelled while waiting: no further attempt
                return NodeResult("cancelled", None, error)
    assert error is not None
    return frame.failed(path, error, attempts - 1)


def _call(frame: Frame, spec: BlockSpec, inputs: dict[str, Any], path: str) -> dict[str, Any]:
    timeout_ms = frame.policy.timeout_ms
    timeout = timeout_ms / 1000 if timeout_ms else None
    ctx = frame.ctx
    if not (ctx.backend.local or spec.is_ui):
        return _call_remote(frame, spec, inputs, path, timeout)
    block = frame.ctx.block(spec)
    if spec.category == "ai" and ctx.env.settings.keiri_llm_mask_pii:
        # Tables reach the model as text: their personal columns are masked by header too.
        learn_tables(inputs)
    cancel = ctx.node_event(timeout)
    block_ctx = BlockContext(
        run_id=frame.sub_run_id or ctx.run_id,
        plan_id=frame.plan.id,
        node_id=path,
        block_version=spec.version,
        workspace=ctx.workspace,
        events=frame.events,
        cancel_event=cancel,
        settings=ctx.env.settings,
        inputs=ctx.answers,
        replaceable=ctx.replaceable.get(path, frozenset()),
        access=ctx.access,
    )
    if timeout is None:
        return run_block(block, inputs, block_ctx)
    future = ctx.backend.submit(run_block, block, inputs, block_ctx)
    try:
        return future.result(timeout=timeout)
    except cf.TimeoutError:
        # Its flag's deadline has passed too: cooperative blocks stop at their next check.
        raise timeout_error(path, spec, timeout_ms) from None
    except BlockError as exc:
        # A block waiting on its flag meets the deadline at the same moment as this wait: its
        # CANCELLED may arrive first. Without the run's cancel, that is the node's timeout.
        if exc.code == ErrorCode.CANCELLED and cancel.expired and not ctx.cancel.is_set():
            raise timeout_error(path, spec, timeout_ms) from exc
        raise


def _call_remote(
    frame: Frame, spec: BlockSpec, inputs: dict[str, Any], path: str, timeout: float | None
) -> dict[str, Any]:
    ctx = frame.ctx
    root = ctx.env.registry.root_of(spec)
    job = BlockJob(
        spec=spec,
        spec_root=str(root) if root else None,
        inputs=inputs,
        run_id=frame.sub_run_id or ctx.run_id,
        plan_id=frame.plan.id,
        node_path=path,
        workspace=str(ctx.workspace),
        access=ctx.access.observed(None),  # the worker logs its reads itself (execute_job)
    )
    future = ctx.backend.submit(execute_job, job)
    try:
        result = future.result(timeout=timeout)
    except cf.TimeoutError:
        future.cancel()
        raise timeout_error(path, spec, frame.policy.timeout_ms) from None
    for kind, fields in result.events:
        fields = {k: v for k, v in fields.items() if k not in ("id", "event", "run_id")}
        fields["node_id"] = path
        frame.events.emit(kind, **fields)
    if result.error is not None:
        raise BlockError.from_dict(result.error)
    assert result.outputs is not None
    return result.outputs
