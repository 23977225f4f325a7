"""The plan runner's public face: run, resume, rerun (seed 002 §8).

``PlanRunner.run`` validates the plan (an invalid plan never starts), checks its version
(``keiri_agent.versions.check_run``: with ``KEIRI_REQUIRE_APPROVAL`` an unapproved version, or
subflow, never starts either), opens the run log ``runs/{plan_id}/{timestamp}.jsonl`` (whose
``plan_start`` names the version, its approval and who started the run), snapshots the plan
beside it, and executes the graph; the files it reads and writes are logged with their hashes
and, once the log is closed, its run record seals it (``record``).
A UI node without an answer pauses the run (status ``waiting_input``); ``resume`` continues it
in a new run that reuses every finished node, and ``rerun`` starts again from one node with the
outputs of everything upstream reused; both run the plan snapshot of the run they continue
(the version it started with, even if the working copy changed since), approved again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Unpack

from keiri_agent.blocks.base import InputProvider
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.events import Redactor, RunStatus, open_run
from keiri_agent.events.models import RunEvent
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._dsl.loader import PlanSource, load_source, parse_source
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, Plan, SubflowNode
from keiri_agent.plan._graph.compiled import compile_graph
from keiri_agent.plan._graph.env import EnvOptions, PlanEnv
from keiri_agent.plan._graph.names import PlanNames, plan_names
from keiri_agent.plan._graph.scope import Scope
from keiri_agent.plan._run.answers import check_answers
from keiri_agent.plan._run.backends import Backend, DaskBackend, ThreadBackend
from keiri_agent.plan._run.blocknode import run_block_node
from keiri_agent.plan._run.control import run_loop, run_subflow
from keiri_agent.plan._run.engine import (
    Frame,
    NodeRunners,
    Reused,
    RunContext,
    RunScope,
    render_vars,
)
from keiri_agent.plan._run.output_store import NotPersistable, OutputStore
from keiri_agent.plan._run.record import RunTrail
from keiri_agent.plan._run.recovery import recover_outputs
from keiri_agent.plan._run.rerun_scope import invalidated
from keiri_agent.plan._run.runstate import AnswersFile, RunRecord, find_run, load_run
from keiri_agent.plan._run.workers import Workers
from keiri_agent.plan._validate.validator import validate_source
from keiri_agent.privacy import job_scope
from keiri_agent.users import os_user
from keiri_agent.workspace import fsync_path

__all__ = ["NODE_RUNNERS", "PlanRunner", "RunResult", "cancelled_error", "kept_subflows"]

# How a frame runs each kind of node; nested frames (loop bodies, subflows) get the same table.
NODE_RUNNERS: NodeRunners = {
    BlockNode: run_block_node,
    LoopNode: run_loop,
    SubflowNode: run_subflow,
}


@dataclass(frozen=True)
class _Again:
    """What a resume or a rerun takes from the run it continues."""

    reuse: Mapping[str, Reused]  # node path → its outputs, not run again
    replace: Mapping[str, frozenset[str]]  # node path → files it wrote, to be replaced
    env: PlanEnv  # the new run's: its subflow loader reads the texts the run kept, if any
    resume_of: str | None = None
    rerun_from: str | None = None

    @classmethod
    def of(
        cls,
        record: RunRecord,
        reuse: Mapping[str, Reused],
        env: PlanEnv,
        *,
        resume_of: str | None = None,
        rerun_from: str | None = None,
    ) -> _Again:
        replace = recover_outputs(record, lambda path: path not in reuse)
        return cls(reuse, replace, env, resume_of, rerun_from)


# Beside a run's plan snapshot, the subflow texts it read (a resume or rerun calls these); "#"
# never appears in the folders of node outputs (``output_store.OutputStore``), as for "#vars".
SUBFLOWS_DIR = "#subflows"


@dataclass
class RunResult:
    run_id: str
    plan_id: str
    status: RunStatus
    outputs: dict[str, Any] = field(default_factory=dict)  # top-level node → its outputs
    error: BlockError | None = None
    waiting: list[dict[str, Any]] = field(default_factory=list)
    log_path: Path | None = None
    duration_ms: float = 0.0
    # The run's secrets, masked in the JSON form (the CLI's --json, the server's result).
    redactor: Redactor = field(default_factory=Redactor, repr=False, compare=False)
    # Personal data masked before the run's LLM calls: kind → distinct values (never values).
    masked: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from keiri_agent.events.models import summarize_value

        data = {
            "run_id": self.run_id,
            "plan_id": self.plan_id,
            "status": self.status,
            "outputs": summarize_value(self.outputs),
            "error": self.error.to_dict() if self.error else None,
            "waiting": summarize_value(self.waiting),
            "log_path": str(self.log_path) if self.log_path else None,
            "duration_ms": round(self.duration_ms, 1),
        }
        if self.masked:  # only runs whose prompts held personal data say so
            data["masked"] = dict(self.masked)
        return self.redactor.redact(data)


class PlanRunner:
    """Runs plans; one runner can run many plans (and reuses its backends)."""

    def __init__(
        self,
        registry: BlockRegistry | PlanEnv | None = None,
        *,
        runs_dir: Path | None = None,
        backend: Backend | None = None,
        sleep: Callable[[float], object] | None = None,
        access: FileAccess | None = None,
        started_by: str | None = None,
        **options: Unpack[EnvOptions],
    ) -> None:
        """``registry``: the command's :class:`PlanEnv` (each run reads subflows with a new
        loader of it), or a registry with ``options`` to build one from; ``sleep`` waits
        between a node's retries (default: a wait the run's cancel ends); ``access`` says where
        the paths blocks are given may lead (default: anywhere; the API server confines each
        task's runs), each run's own work folder added; ``started_by`` is who starts its runs,
        as their logs record it (default: the OS user)."""
        self.plan_env = PlanEnv.given(registry, **options)
        self.settings = self.plan_env.settings
        self.runs_dir = Path(runs_dir or self.settings.keiri_runs_dir)
        self.access = access if access is not None else FileAccess()
        self.started_by = started_by or os_user()
        self._sleep = sleep
        self._backends: dict[str, Backend] = {}
        if backend is not None:
            self._backends[backend.name] = backend

    def close(self) -> None:
        for backend in self._backends.values():
            backend.close()

    def __enter__(self) -> PlanRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def backend(self, name: str) -> Backend:
        if name not in self._backends:
            if name == "dask":
                self._backends[name] = DaskBackend(self.settings.keiri_dask_scheduler)
            else:
                self._backends[name] = ThreadBackend(self.settings.keiri_plan_max_threads)
        return self._backends[name]

    # --- entry points ------------------------------------------------------------------------

    def run(
        self,
        plan: Path | str | PlanSource,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: InputProvider | Path | str | Mapping[str, Any] | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult:
        return self._run(plan, vars, answers, on_event, cancel, None)

    def _run(
        self,
        plan: Path | str | PlanSource,
        vars: Mapping[str, Any] | None,
        answers: InputProvider | Path | str | Mapping[str, Any] | None,
        on_event: Callable[[RunEvent], None] | None,
        cancel: threading.Event | None,
        again: _Again | None,
    ) -> RunResult:
        """:meth:`run`, continuing an earlier run when ``again`` says how (resume, rerun)."""
        source = plan if isinstance(plan, PlanSource) else load_source(plan)
        # Validation and run read the same files; a resume or rerun, its run's subflows first.
        env = again.env if again else self.plan_env.fresh()
        subflows = env.subflows
        report = validate_source(source, env)
        report.raise_if_invalid(getattr(source.raw, "get", lambda _k: None)("id"))
        model = report.plan  # a valid report holds the plan it checked
        assert model is not None
        unknown = sorted(set(vars or {}) - set(model.vars))
        if unknown:
            raise input_error(
                f"Plan {model.id} に vars {''.join(f'「{name}」' for name in unknown)} はありません。",
                f"指定できる vars: {model.var_listing()}",
                unknown=unknown,
            )
        graph = compile_graph(list(model.graph))
        provider = _provider(answers)
        if isinstance(provider, AnswersFile):
            check_answers(provider.answers, model, env)
        trail = RunTrail.check(self.settings, model, source, subflows, self.started_by)
        durable = self.settings.keiri_run_log_fsync
        stream = open_run(model.id, runs_dir=self.runs_dir, fsync=durable)
        assert stream.log_path is not None
        store = OutputStore(stream.log_path, fsync=durable)
        snapshot = store.dir / "plan.yaml"
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(source.text, encoding="utf-8")
        if durable:  # a resume needs the snapshot as much as the log
            fsync_path(snapshot)
            fsync_path(snapshot.parent, directory=True)
            fsync_path(snapshot.parent.parent, directory=True)  # the new folder's own entry
        kept = subflows.keep(store.dir / SUBFLOWS_DIR)  # what a resume or rerun calls
        if durable:
            for path in kept:
                fsync_path(path)
            for folder in sorted({path.parent for path in kept}, key=lambda p: -len(p.parts)):
                fsync_path(folder, directory=True)
            if kept:
                fsync_path(store.dir, directory=True)
        workspace = store.dir / "work"
        workspace.mkdir(exist_ok=True)
        trail.watch(stream)
        if on_event is not None:
            stream.add_listener(on_event)
        cancelled = cancel if cancel is not None else threading.Event()  # seen at once
        ctx = RunContext(
            run_id=stream.run_id,
            plan_id=model.id,
            events=stream,
            env=env,
            backend=self.backend(model.policy.executor),
            workers=Workers(self.settings.keiri_plan_max_threads),
            workspace=workspace,
            answers=provider,
            store=store,
            reuse=dict(again.reuse) if again else {},
            replaceable=dict(again.replace) if again else {},
            cancel=cancelled,
            access=self.access.with_own(workspace).observed(trail.read),
            sleep=self._sleep or cancelled.wait,
        )
        started = time.perf_counter()
        result = RunResult(
            stream.run_id, model.id, "failed", log_path=stream.log_path, redactor=stream.redactor
        )
        try:
            vars_file, unsaved = _save_vars(store, vars or {}, stream.redactor)
            stream.emit(
                "plan_start",
                plan_id=model.id,
                plan_version=model.version,
                plan_file=str(snapshot.relative_to(stream.log_path.parent)),
                inputs={"vars": dict(vars or {})},  # a display copy; the exact vars: vars_file
                vars_file=vars_file,
                vars_saved=unsaved is None,
                resume_of=again.resume_of if again else None,
                rerun_from=again.rerun_from if again else None,
                **trail.start_fields(),
            )
            if unsaved is not None:
                stream.emit(
                    "log",
                    level="warning",
                    msg=f"vars を保存できないため、この実行は再開・再実行できません（{unsaved}）。",
                )
            scope: RunScope = Scope(render_vars({**model.vars, **(vars or {})}, ctx))
            # One run, one set of placeholders for personal data; its log masks what they hide.
            with job_scope(learnt=stream.redactor.learn_personal) as vault:
                try:
                    frame_result = Frame(ctx, model, graph, scope, runners=NODE_RUNNERS).run()
                finally:
                    result.masked = vault.counts()
            result.status = frame_result.status
            result.error = frame_result.error
            result.outputs = {k: v for k, v in scope.nodes.items() if v is not None}
            result.waiting = list(ctx.waiting)
        except BlockError as exc:
            result.status, result.error = "failed", exc
        except KeyboardInterrupt:  # Ctrl-C: the run ends cancelled, its log says so
            cancelled.set()  # running blocks stop at their next check
            result.status = "cancelled"
            raise
        finally:
            if result.status == "cancelled" and result.error is None:
                result.error = cancelled_error(stream.run_id)
            result.duration_ms = (time.perf_counter() - started) * 1000
            trail.finish()
            stream.emit(
                "plan_complete",
                status=result.status,
                total_duration_ms=result.duration_ms,
                error=result.error.to_dict() if result.error else None,
            )
            stream.close()
            trail.seal(stream, durable=durable)
        return result

    def resume(
        self,
        run: str | Path,
        *,
        answers: InputProvider | Path | str | Mapping[str, Any] | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult:
        """Continue a paused (or failed) run: finished nodes are reused, the rest run.
        ``cancel``: stops the continued run, as for :meth:`run`."""
        record = load_run(find_run(run, self.runs_dir))
        source = self._snapshot(record.plan_file, record.run_id)
        env = self.plan_env.fresh(pinned=kept_subflows(record.plan_file))
        again = _Again.of(record, record.completed, env, resume_of=record.run_id)
        names = _names_of(source, env.registry)
        return self._run(source, record.exact_vars(names), answers, on_event, cancel, again)

    def rerun(
        self,
        run: str | Path,
        from_node: str,
        *,
        answers: InputProvider | Path | str | Mapping[str, Any] | None = None,
        plan: Path | str | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> RunResult:
        """Run again from ``from_node``: it and everything downstream run, upstream is reused.
        ``cancel``: stops the new run, as for :meth:`run`."""
        record = load_run(find_run(run, self.runs_dir))
        if from_node not in record.seen:
            raise input_error(
                f"実行 {record.run_id} にノード {from_node} はありません。",
                "このログのノード: " + ", ".join(sorted(record.seen)[:30]),
                run_id=record.run_id,
                node=from_node,
            )
        source = load_source(plan) if plan else self._snapshot(record.plan_file, record.run_id)
        pinned = None if plan else kept_subflows(record.plan_file)
        env = self.plan_env.fresh(pinned=pinned)  # what is dropped is read as the rerun reads it
        report = validate_source(source, env)  # a fixed plan is checked before it is walked
        report.raise_if_invalid(getattr(source.raw, "get", lambda _k: None)("id"))
        model = report.plan
        assert model is not None
        dropped = invalidated(model, compile_graph(list(model.graph)), from_node, env.subflows)
        reuse = {p: v for p, v in record.completed.items() if not dropped(p)}
        again = _Again.of(record, reuse, env, rerun_from=from_node)
        names = plan_names(model, env.registry)
        return self._run(source, record.exact_vars(names), answers, on_event, cancel, again)

    # --- helpers -----------------------------------------------------------------------------

    def _snapshot(self, plan_file: Path | None, run_id: str) -> PlanSource:
        if plan_file is None or not plan_file.is_file():
            raise BlockError(
                f"実行 {run_id} の Plan のスナップショットが見つかりません（{plan_file}）。",
                code=ErrorCode.DEPENDENCY_NOT_FOUND,
                hint="ログと同じ場所の .files/plan.yaml が消えていないか確認してください。",
                details={"run_id": run_id},
            )
        return parse_source(plan_file.read_text(encoding="utf-8"), file=str(plan_file))


def kept_subflows(plan_file: Path | None) -> Path | None:
    """The subflow texts a run kept beside its plan snapshot, with what the door of a run of a
    saved version resolved (None: a run from before)."""
    if plan_file is None:
        return None
    folder = plan_file.parent / SUBFLOWS_DIR
    return folder if folder.is_dir() else None


def cancelled_error(run_id: str) -> BlockError:
    """Why a cancelled run stopped, and how to continue it."""
    return BlockError(
        "実行を中止しました。",
        code=ErrorCode.CANCELLED,
        hint=f"終わったノードを再利用して続けるには: keiri-agent plan resume {run_id}",
        details={"run_id": run_id},
    )


def _save_vars(
    store: OutputStore, vars: Mapping[str, Any], redactor: Redactor
) -> tuple[str | None, str | None]:
    """``(vars_file, why_not_saved)``: the run's exact vars beside its log, for resume/rerun.
    Like node outputs, vars holding a secret are not written."""
    if not vars:
        return None, None
    if redactor.contains(dict(vars)):
        return None, "秘密情報（環境変数・設定の値）を含むため保存しません"
    try:
        return store.encode_vars(vars), None
    except NotPersistable as exc:
        return None, str(exc)


def _provider(
    answers: InputProvider | Path | str | Mapping[str, Any] | None,
) -> InputProvider | None:
    if answers is None or isinstance(answers, AnswersFile):
        return answers
    if isinstance(answers, Mapping):
        return AnswersFile(answers)
    if isinstance(answers, Path | str):
        return AnswersFile.load(answers)
    return answers  # any other InputProvider (the app's session state, for instance)


def _names_of(source: PlanSource, registry: BlockRegistry) -> PlanNames | None:
    """How the plan of ``source`` names its vars and nodes to a person (None when it does not
    load: the run's validation then says why)."""
    from pydantic import ValidationError

    try:
        return plan_names(Plan.model_validate(source.raw), registry)
    except (BlockError, ValidationError):
        return None
