"""Plan runs as server tasks (seed 002): start one, and continue one that waits for input.

A plan that reaches a ``ui.interactive_input`` node without answers pauses: its task becomes
``waiting_input`` with the waiting nodes and their requests (message and requirements) in
``details.waiting``, which is what the progress page builds its answers form from. Answers sent
to ``POST /agent/tasks/{id}/answers`` continue the same task by resuming its plan run (the
engine's ``PlanRunner.resume``: nodes already done are reused, never run again).

A plan task's runs live in its own folder (``<task>/runs/``) and run with the task's
``FileAccess`` (``inputs``): every block reads only the task's uploads and outputs and the
shared data, and writes only under the task's folder, whatever path reaches it (answers,
``vars``, literals, values computed in the run). Answers of path fields are also checked before
the task starts or continues (at any depth: loops and subflows), for an early 403 naming the
answer.

The id of the task's current plan run is saved in the task's record (``details.run_id``) as
soon as the run starts, and every answer the task was given is kept in ``answers.json`` in the
task's directory, so a task cut by a restart or a crash continues from its run log
(:func:`continue_plan`) with the same answers.

A task builds one :class:`~keiri_agent.plan.PlanEnv` (registry, designs folder, plan config,
subflow loader) when its request or its answers are checked, and its run runs with that one:
what the door checked is what the run reads. A task retried or continued after a restart builds
its own from the server's settings when it is put back in the queue (an unreadable plan config
leaves it interrupted).

Progress follows the seed's steps (interpret → fetch → convert → finish): validation, then
input and file-reading nodes, then the rest, then collecting the result files.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from keiri_agent.agents.convert.progress import step_progress
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import RunEvent, RunStatus
from keiri_agent.server.inputs import TaskFiles, base_node_id, check_answer_paths, task_files
from keiri_agent.server.jobs import Job, JobResult, Runner, cancelled_error
from keiri_agent.users import load_users

if TYPE_CHECKING:
    from keiri_agent.plan import Plan, PlanEnv, PlanRunner

__all__ = [
    "ANONYMOUS_CALLER",
    "ANSWERS_FILE",
    "FETCH_BLOCK_PREFIXES",
    "VERSION_FILE",
    "continue_plan",
    "prepare_plan",
    "prepare_resume",
    "prepare_retry",
    "saved_answers",
    "team_editor",
]


class PlanOrder(Protocol):
    """What a plan task reads of its request (``server.runners.PlanRequest``)."""

    @property
    def plan(self) -> str: ...
    @property
    def vars(self) -> dict[str, Any]: ...
    @property
    def answers(self) -> dict[str, dict[str, Any]] | None: ...
    @property
    def version(self) -> str | None: ...


# Blocks whose nodes count as "fetch" in a plan run: human input and reading files.
FETCH_BLOCK_PREFIXES = ("ui.", "file.", "excel.read")
ANSWERS_FILE = "answers.json"  # every answer the task was given, by node
ANONYMOUS_CALLER = "（API・認証なし）"  # who starts a run on a server without keys
VERSION_FILE = "plan_version.yaml"  # the saved version a task runs (``PlanRequest.version``)


def saved_answers(directory: Path) -> dict[str, Any]:
    """The answers a task was given so far (``{}`` when none)."""
    try:
        data = json.loads((directory / ANSWERS_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return dict(data) if isinstance(data, dict) else {}


def _save_answers(directory: Path, answers: Mapping[str, Any], *, durable: bool) -> None:
    """Keep every answer the task was given (a resumed run reads them: on disk first when
    ``durable``, like the run log)."""
    from keiri_agent.workspace import atomic_path

    with atomic_path(directory / ANSWERS_FILE, durable=durable) as tmp:
        tmp.write_text(json.dumps(dict(answers), ensure_ascii=False), encoding="utf-8")


def _plan_source(request: PlanOrder, settings: Settings) -> tuple[Path, Mapping[str, Any] | None]:
    from keiri_agent.examples import example_answers, example_names, example_plan
    from keiri_agent.plan import resolve_plan_file
    from keiri_agent.versions import plan_not_found

    if request.plan in example_names():
        answers = request.answers
        # The shipped answers of an example name the example's own data: no confinement.
        return example_plan(request.plan), (
            answers if answers is not None else example_answers(request.plan)
        )
    path = resolve_plan_file(request.plan, Path(settings.keiri_designs_dir))
    if path is None:
        raise plan_not_found(request.plan, example_names())
    return path, request.answers


def _model(raw: Any) -> Plan | None:
    """The plan of ``raw``; None when it does not load (its run stops before any block)."""
    from pydantic import ValidationError

    from keiri_agent.plan import Plan

    try:
        return Plan.model_validate(raw)
    except (BlockError, ValidationError):
        return None


def _answer_paths(
    answers: Mapping[str, Any], raw: Any, env: PlanEnv
) -> dict[str, frozenset[str] | None]:
    """The path fields of the answered nodes of the plan ``raw`` at any depth (subflows
    included); none for a plan that does not load."""
    from keiri_agent.plan import answer_paths

    plan = _model(raw)
    if plan is None:
        return {}
    try:
        return answer_paths(answers, plan, env)
    except BlockError:  # a subflow that does not load: the run's validation says so
        return {}


def _check_vars(vars: Mapping[str, Any], raw: Any, env: PlanEnv, files: TaskFiles) -> None:
    """Refuse a var the plan gives a block as a path (its spec says so) when it leads where the
    task may not read or write; a name found nowhere is left to the block to report. The
    refusal names the var as the plan names it to a person (``設定値「締め月のファイル」``,
    its ``ui.vars`` label); ``details.var`` keeps the name the request used."""
    from keiri_agent.plan import PlanNames, plan_names, var_paths

    if not vars:
        return
    plan = _model(raw)
    used = var_paths(plan, env.registry) if plan is not None else {}
    names = plan_names(plan, env.registry) if plan is not None else PlanNames()
    for name, value in vars.items():
        field = f"設定値「{names.var(name)}」"
        try:
            for use in used.get(name, []):
                _check_var_path(value, use.mode, field, files)
        except BlockError as exc:
            exc.details["var"] = name
            raise


def _check_var_path(value: Any, mode: str, field: str, files: TaskFiles) -> None:
    """Each path text of one var's ``value`` where the task may read (``mode`` read) or write."""
    texts = value if isinstance(value, list) else [value]
    for text in texts:
        if isinstance(text, str) and text.strip().lower().startswith("s3://"):
            files.access.read_s3(text, field)  # the server's credentials
            continue
        if not isinstance(text, str) or not text.strip() or "://" in text:
            continue  # not a path
        if mode == "write":
            files.access.write(text, field, base=files.runs)
            continue
        try:
            files.resolve(text, field)
        except BlockError as exc:
            if exc.details.get("reason") != "not_found":
                raise


def _version_file(plan_id: str, vid: str, settings: Settings, files: TaskFiles) -> Path:
    """The text of a saved version of ``plan_id``, written into the task's folder (what its
    run, and a restart that continues it, read)."""
    from keiri_agent.versions import VersionStore

    store = VersionStore.of(settings)
    version = store.get(plan_id, vid)
    if version is None:
        raise BlockError(
            f"Plan {plan_id} に版 {vid[:12]} はありません。",
            code=ErrorCode.DEPENDENCY_NOT_FOUND,
            hint=f"keiri-agent plan versions {plan_id} で版を確かめてください。",
            details={"plan_id": plan_id, "version": vid},
        )
    target = files.directory / VERSION_FILE
    target.write_text(store.text(version), encoding="utf-8")
    return target


def prepare_plan(request: PlanOrder, settings: Settings, files: TaskFiles) -> Runner:
    """Check a plan request (its plan exists; its answers' paths, and its vars given to blocks
    as paths, lead only where the task may read and write), with the :class:`PlanEnv` its run
    will run with. A request of a saved ``version`` (a schedule's or a trigger's) calls saved
    subflow versions, each resolved here once (``plan._graph.saved``: the run calls those), and
    one with none to run is refused here, naming it. What it resolved is kept in the task's
    folder (``plan._graph.saved.SAVED_FILE``): a retry runs those versions, not newer ones."""
    from keiri_agent.plan import PlanEnv, load_source
    from keiri_agent.versions import check_run

    answers: Mapping[str, Any] | None
    if request.version is not None:
        path = _version_file(request.plan, request.version, settings, files)
        answers = request.answers
    else:
        path, answers = _plan_source(request, settings)
    source = load_source(path)
    raw = source.raw
    plan_id = raw.get("id") if isinstance(raw, Mapping) else None
    if isinstance(plan_id, str):  # refused at the door (409) as the runner would refuse it
        check_run(settings, [(plan_id, source.text)])
    env = PlanEnv.of(settings=settings)
    if request.version is not None:  # a saved version calls saved subflows, resolved here
        # (or, for a retry, where its first attempt resolved them) and kept in the task's folder
        env = env.saved_subflows(source, kept=files.directory)
        model = _model(raw)
        if model is not None:  # refused at the door as the run would refuse it
            env.subflows.called(model)
        assert env.subflows.saved is not None
        env.subflows.saved.write(files.directory)
    _check_vars(request.vars, raw, env, files)
    if request.answers is not None:
        check_answer_paths(request.answers, _answer_paths(request.answers, raw, env), files)
    return partial(_run_plan, env, request.vars, path, answers or {})


def prepare_resume(
    details: Mapping[str, Any], answers: Mapping[str, Any], settings: Settings, files: TaskFiles
) -> Runner:
    """Check answers for a paused plan run (``details`` of its task) and return the runner
    that continues it with these answers added to the ones given before (with the
    :class:`PlanEnv` the answers were checked with)."""
    from keiri_agent.blocks.ui.field_types import PATH_FIELD_TYPES

    run_id, raw, env = _continued(details, settings, files)
    paths_of = _answer_paths(answers, raw, env)
    # The requirements the run actually asked for decide the paths of waiting nodes (computed
    # ones included); nodes not reached yet are known from the plan, at any depth.
    waiting = {str(w.get("node_id")): w.get("request") or {} for w in details.get("waiting", [])}
    asked = {
        base_node_id(node): frozenset(
            str(r.get("id"))
            for r in request.get("requirements", [])
            if isinstance(r, Mapping) and str(r.get("type", "text")) in PATH_FIELD_TYPES
        )
        for node, request in waiting.items()
    }
    for key in answers:
        if base_node_id(key) in asked:
            paths_of[key] = (paths_of.get(key) or frozenset()) | asked[base_node_id(key)]
    check_answer_paths(answers, paths_of, files)
    merged = {**saved_answers(files.directory), **answers}
    return continue_plan(run_id, merged, env)


def prepare_retry(details: Mapping[str, Any], settings: Settings, files: TaskFiles) -> Runner:
    """The runner that continues the plan run of an interrupted task (``details``) from its
    log with the answers given before; refused here (409), as an answer is, when a version
    the run started with lost the approval its door held it to."""
    run_id, _raw, env = _continued(details, settings, files)
    return continue_plan(run_id, saved_answers(files.directory), env)


def _continued(
    details: Mapping[str, Any], settings: Settings, files: TaskFiles
) -> tuple[str, Any, PlanEnv]:
    """The run a task continues (``details.run_id``): its id, its plan as it ran, and the
    :class:`PlanEnv` its continuation runs with -- the run's own subflows; a run of a saved
    version is refused here when a version it started with lost the approval its door held
    it to (``plan._graph.saved``: ``SavedSubflows.reopen``)."""
    from keiri_agent.plan import PlanEnv, find_run, kept_subflows, load_run, load_source

    run_id = str(details.get("run_id", ""))
    try:
        record = load_run(find_run(run_id, files.runs))
    except BlockError as exc:  # its message would name the server's folders
        raise BlockError(
            f"再開する実行 {run_id} の記録が見つかりません。",
            code=ErrorCode.DEPENDENCY_NOT_FOUND,
            hint="同じ依頼を最初から送り直してください。",
            details={"run_id": run_id},
        ) from exc
    snapshot = record.plan_file
    raw = load_source(snapshot).raw if snapshot is not None and snapshot.is_file() else {}
    env = PlanEnv.of(settings=settings).fresh(pinned=kept_subflows(snapshot))
    return record.run_id, raw, env


def continue_plan(run_id: str, answers: Mapping[str, Any], env: PlanEnv | None = None) -> Runner:
    """The runner that continues plan run ``run_id`` (paused, interrupted or cut by a crash),
    with ``env`` (the one its answers were checked with, or the one its retry built; None:
    the task's own, built from its settings when it runs)."""
    return partial(_resume_plan, env, run_id, dict(answers))


class _PlanProgress:
    """Turns a plan run's node events into the seed's progress steps."""

    def __init__(self, job: Job, total_nodes: int) -> None:
        self.job = job
        self.total = max(total_nodes, 1)
        self.finished = 0
        self.step = "interpret"

    def advance(self, step: str) -> None:
        self.job.stage(self.step, "done")
        self.step = step
        self.job.stage(step, "start")

    def see(self, event: RunEvent) -> None:
        data = event.to_dict()
        node = event.node_id or ""
        if event.event == "plan_start":
            self.advance("fetch")
        elif event.event == "node_start" and self.step == "fetch":
            if not str(data.get("block", "")).startswith(FETCH_BLOCK_PREFIXES):
                self.advance("convert")
        elif event.event in ("node_complete", "node_skipped") and "/" not in node:
            self.finished += 1
            if self.step == "convert":
                start, end = step_progress("convert", "start"), step_progress("convert", "done")
                share = min(self.finished / self.total, 1.0)
                self.job.stage("convert", "progress", round(start + (end - start) * share, 3))

    def relay(self, event: RunEvent) -> None:
        if event.event == "plan_start":  # saved now: a restart continues from this run
            self.job.note(run_id=event.run_id)
        fields = {
            k: v
            for k, v in event.to_dict().items()
            if k not in ("id", "event", "run_id", "timestamp")
        }
        self.job.events.emit(event.event, **fields)
        self.see(event)


def _note_names(raw: Any, env: PlanEnv, job: Job) -> None:
    """The plan's node names in the task's record (``details.node_names``): the progress page
    names the nodes of the run's events by them."""
    from keiri_agent.plan import plan_names

    plan = _model(raw)
    if plan is not None:
        job.note(node_names=dict(plan_names(plan, env.registry).nodes))


def _graph_size(raw: Any) -> int:
    graph = raw.get("graph") if isinstance(raw, Mapping) else None
    return len(graph) if isinstance(graph, list) else 0


def _runner(job: Job, env: PlanEnv) -> PlanRunner:
    """A plan runner for ``job`` with the task's one :class:`PlanEnv`: its runs in the task's
    folder, its blocks' paths confined to what the task may read and write, started by the
    task's owner."""
    from keiri_agent.plan import PlanRunner

    files = task_files(job.directory, job.settings)
    editor = team_editor(job.settings, job.owner)
    return PlanRunner(
        env,
        runs_dir=files.runs,
        access=replace(files.access, team_editor=editor),
        started_by=job.owner or ANONYMOUS_CALLER,
    )


def team_editor(settings: Settings, owner: str | None) -> str | None:
    """Who a task of ``owner`` changes the team's shared files as (the learned payer names,
    ``FileAccess.edit_team_file``): an approver or admin as themselves, anyone on a server
    without keys (one person's, on loopback) as the anonymous caller; None for the others."""
    users = load_users(settings)
    if not users:
        return ANONYMOUS_CALLER
    user = users.by_name(owner)
    return user.name if user is not None and user.role in ("approver", "admin") else None


def _run_plan(
    env: PlanEnv, vars: Mapping[str, Any], path: Path, answers: Mapping[str, Any], job: Job
) -> JobResult:
    from keiri_agent.plan import load_source

    _save_answers(job.directory, answers, durable=job.settings.keiri_run_log_fsync)
    job.stage("interpret", "start")
    source = load_source(path)
    progress = _PlanProgress(job, _graph_size(source.raw))
    with _runner(job, env) as runner:
        _note_names(source.raw, env, job)
        result = runner.run(
            source, vars=vars, answers=answers, on_event=progress.relay, cancel=job.cancel
        )
    return _outcome(result, source.raw, progress, job, env)


def _resume_plan(
    env: PlanEnv | None, run_id: str, answers: Mapping[str, Any], job: Job
) -> JobResult:
    from keiri_agent.plan import OutputStore, PlanEnv, load_source

    _save_answers(job.directory, answers, durable=job.settings.keiri_run_log_fsync)
    job.stage("interpret", "start")
    job.log(f"実行 {run_id} を再開します（終わったノードは再利用します）。")
    progress = _PlanProgress(job, 0)
    env = env if env is not None else PlanEnv.of(settings=job.settings)
    with _runner(job, env) as runner:
        result = runner.resume(run_id, answers=answers, on_event=progress.relay, cancel=job.cancel)
    assert result.log_path is not None
    snapshot = OutputStore(result.log_path).dir / "plan.yaml"
    raw = load_source(snapshot).raw if snapshot.is_file() else {}
    progress.total = max(_graph_size(raw), 1)
    return _outcome(result, raw, progress, job, env)


def _outcome(result: Any, raw: Any, progress: _PlanProgress, job: Job, env: PlanEnv) -> JobResult:
    """What the task shows of the run: its texts name files as the user sees them, never the
    server's folders (``TaskFiles.hide``)."""
    from keiri_agent.plan import OutputStore

    work = OutputStore(result.log_path).dir / "work" if result.log_path is not None else None
    outcome = _run_outcome(result, raw, progress, job, env)
    files = task_files(job.directory, job.settings)
    outcome.answer = files.hide(outcome.answer, work)
    outcome.error = files.hide(outcome.error, work)
    outcome.details = files.hide(outcome.details, work)
    return outcome


def _run_outcome(
    result: Any, raw: Any, progress: _PlanProgress, job: Job, env: PlanEnv
) -> JobResult:
    from keiri_agent.plan import OutputStore, Plan

    details: dict[str, Any] = {
        "plan_id": result.plan_id,
        "run_id": result.run_id,
        "plan_status": result.status,
    }
    if result.status == "cancelled":
        return JobResult("cancelled", error=cancelled_error().to_dict(), details=details)
    if result.status == "waiting_input":
        details["waiting"] = [
            {"node_id": str(w.get("node_id", "")), "request": w.get("request") or {}}
            for w in result.waiting
        ]
        nodes = ", ".join(w["node_id"] for w in details["waiting"])
        job.log(f"入力を待っています: {nodes}", level="warning")
        return JobResult("waiting_input", answer="", details=details)
    if result.status != "success":
        return JobResult("failed", error=_plan_error(result.status, result), details=details)
    if progress.step in ("interpret", "fetch"):  # nothing ran in the convert slot
        progress.advance("convert")
    progress.advance("finish")
    assert result.log_path is not None
    work = OutputStore(result.log_path).dir / "work"
    files = _copy_tree(work, job.files_dir) if work.is_dir() else []
    reports = _report_pages(files, job)
    files += [page for _, page in reports]
    details["reports"] = [
        {"title": md.stem, "markdown": _in_task(md, job), "html": _in_task(page, job)}
        for md, page in reports
    ]
    details["tables"] = _table_lines(result, raw, job, env)
    job.log(f"結果ファイル {len(files)} 件を保存しました。")
    texts = []
    if isinstance(raw, Mapping) and raw:
        for export in Plan.model_validate(raw).exports:
            node, _, port = export.from_.partition(".")
            value = result.outputs.get(node, {}).get(port)
            if isinstance(value, str) and value.strip():
                texts.append(value.strip())
    answer = "\n\n".join(texts) or f"Plan「{result.plan_id}」の実行が完了しました。"
    job.stage("finish", "done")
    return JobResult("success", answer=answer, files=files, details=details)


def _report_pages(files: list[Path], job: Job) -> list[tuple[Path, Path]]:
    """Each Markdown report among ``files`` and the HTML page written beside it, its charts
    inside (``documents.markdown_report``): what the progress page shows and people download."""
    from keiri_agent.documents.markdown_report import report_html
    from keiri_agent.workspace import atomic_path

    pages = []
    for md in (f for f in files if f.suffix.lower() == ".md"):
        page = md.with_suffix(".html")
        if page in files:  # the plan wrote one itself: it is not replaced
            continue
        # Not synced here: the task's result files are synced with their folders before its
        # record names them (tasklog.sync_results), this page with them.
        with atomic_path(page, durable=False) as tmp:
            tmp.write_text(report_html(md), encoding="utf-8")
        pages.append((md, page))
    return pages


def _in_task(path: Path, job: Job) -> str:
    """A file's path as the task's file list names it (relative to the task's folder)."""
    return path.resolve().relative_to(job.directory.resolve()).as_posix()


def _table_lines(result: Any, raw: Any, job: Job, env: PlanEnv) -> list[str]:
    """The run's result tables summarised as ``plan run`` prints them."""
    from pydantic import ValidationError

    from keiri_agent.documents.amount_format import AmountFormat
    from keiri_agent.plan import Plan, plan_names, result_tables, table_summary

    try:
        names = plan_names(Plan.model_validate(raw), env.registry)
    except (BlockError, ValidationError):
        names = None
    amounts = AmountFormat.of(job.settings)
    tables = result_tables(result.outputs, names)
    return [table_summary(t, amounts) for t in tables if not t.superseded]


def _plan_error(status: RunStatus, result: Any) -> dict[str, Any]:
    if result.error is not None:
        error: dict[str, Any] = result.error.to_dict()
        return error
    return BlockError(
        f"Plan の実行が完了しませんでした（{status}）。",
        code=ErrorCode.INTERNAL_ERROR,
        hint="実行ログ（events）で失敗したノードを確認してください。",
    ).to_dict()


def _copy_tree(source: Path, target: Path) -> list[Path]:
    """Copy the regular files under ``source`` (symlinks are skipped) into ``target``."""
    copied = []
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
        copied.append(destination)
    return copied
