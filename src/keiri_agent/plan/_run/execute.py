"""Running one block: inputs checked against the contract, the block run, outputs checked.

``run_block`` is what every backend ends up calling. For remote backends (Dask) the work is
described by a picklable :class:`BlockJob`; :func:`execute_job` rebuilds the block on the worker
and returns the outputs together with the events the block emitted, which the runner then logs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import Block, BlockContext
from keiri_agent.blocks.registry import instantiate
from keiri_agent.blocks.schema import SchemaRefError, check_value, resolve_port, validator_for
from keiri_agent.blocks.spec import BlockSpec, port_is_required
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.models import EventType, RunEvent, is_table, summarize_value
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._run.record import file_sha256

__all__ = ["BlockJob", "JobResult", "check_outputs", "execute_job", "prepare_inputs", "run_block"]


# Keys that describe a value without constraining it: a schema of only these accepts anything.
_ANNOTATIONS = frozenset(
    {"description", "title", "$comment", "examples", "default", "deprecated", "readOnly"}
)


class _PortCheck:
    """One port's JSON Schema, resolved and compiled once: :meth:`problem` of a value."""

    __slots__ = ("broken", "schema", "validator")

    def __init__(self, port: dict[str, Any]) -> None:
        self.broken: str | None = None  # an unresolvable $ref: every value has this problem
        self.schema: dict[str, Any] | None = None  # None: any value fits
        self.validator: Any = None
        try:
            schema = resolve_port(port)
        except SchemaRefError as exc:
            self.broken = exc.message
            return
        if schema.keys() - _ANNOTATIONS:
            self.schema = schema
            self.validator = validator_for(schema)

    def problem(self, value: Any) -> str | None:
        """Why ``value`` does not fit the port (None when it does)."""
        if self.broken is not None:
            return self.broken
        if self.schema is None:
            return None
        if is_table(value):  # by columns and a sample of rows, not row by row
            from keiri_agent.blocks.table_schema import table_problem

            return table_problem(value, self.schema, self.validator)
        try:
            if self.validator.is_valid(value):
                return None
        except Exception:  # check_value below describes what went wrong
            pass
        return check_value(value, self.schema)


# id(spec) → (spec, checks of its inputs, of its outputs); the spec is kept so its id stays its.
_CHECKS: dict[int, tuple[BlockSpec, dict[str, _PortCheck], dict[str, _PortCheck]]] = {}


def _checks(spec: BlockSpec) -> tuple[dict[str, _PortCheck], dict[str, _PortCheck]]:
    found = _CHECKS.get(id(spec))
    if found is None or found[0] is not spec:
        found = _CHECKS[id(spec)] = (
            spec,
            {name: _PortCheck(port) for name, port in spec.inputs.items()},
            {name: _PortCheck(port) for name, port in spec.outputs.items()},
        )
    return found[1], found[2]


def _refuse_ports(
    spec: BlockSpec,
    node_path: str,
    problems: list[str],
    what: str,
    *,
    code: ErrorCode,
    hint: str,
    input_snapshot: dict[str, Any] | None = None,
    recoverable: bool | None = None,
) -> None:
    """Raise the BlockError listing ``problems`` with a node's inputs or outputs, if any."""
    if problems:
        raise BlockError(
            f"ノード {node_path}（{spec.id}）{what}: " + "; ".join(problems),
            code=code,
            hint=hint,
            details={"node_id": node_path, "block": spec.ref, "problems": problems},
            input_snapshot=input_snapshot,
            recoverable=recoverable,
        )


def prepare_inputs(spec: BlockSpec, node_path: str, given: dict[str, Any]) -> dict[str, Any]:
    """Defaults filled in and every input checked against its port (all problems at once)."""
    inputs = dict(given)
    problems: list[str] = []
    checks = _checks(spec)[0]
    for name, port in spec.inputs.items():
        if name not in inputs:
            if "default" in port:
                inputs[name] = port["default"]
            elif port_is_required(port):
                problems.append(f"必須入力 '{name}' がありません")
            continue
        if inputs[name] is None and not port.get("nullable") and not port_is_required(port):
            # An optional input left empty (an unanswered optional field, a skipped upstream
            # node) means "not given": the block sees its default, as if the key were absent.
            if "default" in port:
                inputs[name] = port["default"]
            continue
        problem = checks[name].problem(inputs[name])
        if problem:
            problems.append(f"入力 '{name}': {problem}")
    _refuse_ports(
        spec,
        node_path,
        problems,
        "の入力が不正です",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint="上流ノードの出力か Plan の in の値を、ブロックの入力定義に合わせてください。",
        input_snapshot=summarize_value(inputs) if problems else None,
        recoverable=True,
    )
    return inputs


def check_outputs(spec: BlockSpec, node_path: str, outputs: Any) -> dict[str, Any]:
    if not isinstance(outputs, dict):
        raise BlockError(
            f"ノード {node_path}（{spec.id}）の出力が辞書ではありません（{type(outputs).__name__}）。",
            code=ErrorCode.OUTPUT_SCHEMA_MISMATCH,
            hint="ブロックの run() は出力名をキーとする dict を返す必要があります。",
            details={"node_id": node_path, "block": spec.ref},
        )
    problems: list[str] = []
    checks = _checks(spec)[1]
    for name, port in spec.outputs.items():
        if name not in outputs:
            problems.append(f"出力 '{name}' がありません")
            continue
        if outputs[name] is None and not port_is_required(port):
            continue
        problem = checks[name].problem(outputs[name])
        if problem:
            problems.append(f"出力 '{name}': {problem}")
    extra = sorted(outputs.keys() - spec.outputs.keys())
    if extra:
        problems.append(f"定義にない出力 {', '.join(extra)}")
    _refuse_ports(
        spec,
        node_path,
        problems,
        "の出力が定義と合いません",
        code=ErrorCode.OUTPUT_SCHEMA_MISMATCH,
        hint="ブロックの実装か、block_specs の outputs 定義を直してください。",
    )
    return outputs


def run_block(block: Block, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
    spec = block.spec
    prepared = prepare_inputs(spec, ctx.node_id, inputs)
    block.check_inputs(prepared)
    try:
        outputs = block.run(prepared, ctx)
    except BlockError as exc:
        exc.details.setdefault("node_id", ctx.node_id)
        if not exc.input_snapshot:
            exc.input_snapshot = summarize_value(prepared)
        raise
    return check_outputs(spec, ctx.node_id, outputs)


class _ListEmitter:
    """Collects a remote block's events so the runner can log them in its own stream."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None:
        self.items.append((str(kind), summarize_value(fields)))
        return None


def _log_read(emitter: _ListEmitter, path: Path, field: str) -> None:
    """A file a block on a worker was let read, logged with its hash (``record.FileLedger``
    does this in the runner's own process)."""
    digest, size = file_sha256(path)
    where = str(path.absolute())
    if not any(kind == "file_digest" and f.get("path") == where for kind, f in emitter.items):
        emitter.emit("file_digest", role="input", path=where, sha256=digest, size=size, field=field)


@dataclass
class BlockJob:
    spec: BlockSpec
    spec_root: str | None
    inputs: dict[str, Any]
    run_id: str
    plan_id: str
    node_path: str
    workspace: str
    access: FileAccess = field(default_factory=FileAccess)  # the run's, on the worker too


@dataclass
class JobResult:
    outputs: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def execute_job(job: BlockJob) -> JobResult:
    """Run a block from a picklable description (on a Dask worker)."""
    emitter = _ListEmitter()
    try:
        block = instantiate(job.spec, Path(job.spec_root) if job.spec_root else None)
        ctx = BlockContext(
            run_id=job.run_id,
            plan_id=job.plan_id,
            node_id=job.node_path,
            block_version=job.spec.version,
            workspace=Path(job.workspace),
            events=emitter,
            access=job.access.observed(partial(_log_read, emitter)),
        )
        return JobResult(outputs=run_block(block, job.inputs, ctx), events=emitter.items)
    except BlockError as exc:
        return JobResult(error=exc.to_dict(), events=emitter.items)


def timeout_error(path: str, spec: BlockSpec, timeout_ms: int | None) -> BlockError:
    """The error of a node that did not finish within ``policy.timeout_ms``."""
    return BlockError(
        f"ノード {path}（{spec.id}）が {timeout_ms} ms 以内に終わりませんでした。",
        code=ErrorCode.TIMEOUT_ERROR,
        hint="policy.timeout_ms を延ばすか、入力を小さく分けてください（foreach など）。",
        details={"node_id": path, "block": spec.ref, "timeout_ms": timeout_ms},
        recoverable=True,
    )
