"""`keiri-agent plan runs`: the plan runs in the runs folder, with what to do next for each.

Runs are read from their JSONL logs under ``KEIRI_RUNS_DIR`` (newest first): the run id, the
plan, when it started (in ``KEIRI_TIMEZONE``, labelled: ``2026-12-06 12:15:00 JST``; ``--json``
keeps the stored UTC time), the plan version that ran with its approval and who started it,
how it ended (``incomplete`` when the log has no end: still running, or the process died; a
failed node named as the run's plan names it) and the command that continues it (``plan
resume``) or runs it again from its first node (``plan rerun``). A log that cannot be read is listed with the
reason, not skipped; so is a run whose plan's version record cannot be read (its version line
says 記録を読めません, the store's error is said once at the end with its hint). Either ends
the listing, complete, with exit code 1 (as ``helpdesk ingest`` lists what it could not read);
``--json`` names them in ``unreadable`` and ``version_errors``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import typer

from keiri_agent.cli.common import (
    EXIT_FAILED,
    console,
    count_option,
    echo_json,
    err_console,
    node_shown,
    show_error,
    user_errors,
)
from keiri_agent.cli.plan import JsonFlag, plan_app, plan_names_at
from keiri_agent.errors import BlockError

if TYPE_CHECKING:
    from keiri_agent.blocks.registry import BlockRegistry
    from keiri_agent.config import Settings
    from keiri_agent.plan import RunSummary
    from keiri_agent.versions import Version, VersionStore

__all__ = ["next_command", "runs"]

DEFAULT_LIMIT = 20
INCOMPLETE_LABEL = "未完了（実行中か異常終了）"  # a run without its terminal event
UNREADABLE_VERSION = "記録を読めません"  # a run's version when its plan's record cannot be read


@dataclass
class RunVersions:
    """The saved version of each listed run, each plan's history read once; a plan whose
    history cannot be read is remembered with the store's error, not raised."""

    store: VersionStore
    histories: dict[str, list[Version] | BlockError] = field(default_factory=dict)

    def of(self, run: RunSummary) -> Version | BlockError | None:
        """The version that ran (None: not saved, or a log from before versions)."""
        if run.plan_hash is None:
            return None
        if run.plan_id not in self.histories:
            try:
                self.histories[run.plan_id] = self.store.versions(run.plan_id)
            except BlockError as exc:
                self.histories[run.plan_id] = exc
        history = self.histories[run.plan_id]
        if isinstance(history, BlockError):
            return history
        return next((v for v in history if v.id == run.plan_hash), None)

    def errors(self) -> list[BlockError]:
        """The histories that could not be read, in the order the listing met them."""
        return [h for h in self.histories.values() if isinstance(h, BlockError)]


def next_command(run: RunSummary) -> str | None:
    """The command to use next: resume a run that stopped, rerun one that finished."""
    if run.status == "waiting_input":
        return f"keiri-agent plan resume {run.run_id} --answers answers.yaml"
    if run.status in ("failed", "cancelled", "incomplete"):
        return f"keiri-agent plan resume {run.run_id}"
    if run.first_node is not None:  # success or partial: run again from the start
        return f"keiri-agent plan rerun {run.run_id} --from {run.first_node}"
    return None


def failed_node_name(run: RunSummary, registry: BlockRegistry) -> str | None:
    """The name the run's plan (its snapshot) gives its failed node (its id when it has none)."""
    from keiri_agent.plan import load_run

    if run.failed_node is None:
        return None
    try:
        names = plan_names_at(load_run(run.log_path).plan_file, registry)
    except BlockError:
        names = None
    return names.node(run.failed_node) if names else run.failed_node


def _run_json(run: RunSummary, registry: BlockRegistry, versions: RunVersions) -> dict[str, Any]:
    from keiri_agent.localtime import utc_text

    saved = versions.of(run)
    return {
        "run_id": run.run_id,
        "plan_id": run.plan_id,
        "started": utc_text(run.started),
        "status": run.status,
        "log_path": str(run.log_path),
        "failed_node": run.failed_node,
        "failed_node_name": failed_node_name(run, registry),
        "error": run.error,
        "resume_of": run.resume_of,
        "rerun_from": run.rerun_from,
        "plan_hash": run.plan_hash,
        "version_number": None if saved is None or isinstance(saved, BlockError) else saved.number,
        "version_unreadable": isinstance(saved, BlockError),
        "approval": run.approval,
        "started_by": run.started_by,
        "next_command": next_command(run),
    }


@plan_app.command("runs")
def runs(
    plan: Annotated[
        str | None, typer.Option("--plan", metavar="ID", help="この Plan の実行だけを表示します。")
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            "--status",
            metavar="S",
            help="この状態の実行だけを表示します: success / failed / waiting_input / cancelled"
            " / partial / incomplete（終わりの記録がない実行）。",
        ),
    ] = None,
    limit: Annotated[int, count_option("--limit", "表示する件数（新しい順）。")] = DEFAULT_LIMIT,
    as_json: JsonFlag = False,
) -> None:
    """実行の一覧（新しい順）: 実行 ID、Plan、開始時刻、状態と、再開・再実行のコマンド。

    読めないログや版の記録があっても一覧は最後まで表示し、終了コード 1 で知らせます。
    """
    from keiri_agent.blocks.registry import settings_registry
    from keiri_agent.config import load_settings
    from keiri_agent.plan import list_plan_runs
    from keiri_agent.versions import VersionStore

    with user_errors():
        settings = load_settings()
        runs_dir = settings.keiri_runs_dir
        found, unreadable = list_plan_runs(runs_dir, plan_id=plan, status=status)
        registry = settings_registry(settings)
        versions = RunVersions(VersionStore.of(settings))  # named as the versions page does
    shown = found[:limit]
    if as_json:
        listed = [_run_json(run, registry, versions) for run in shown]
        echo_json(
            {
                "runs_dir": str(runs_dir),
                "total": len(found),
                "runs": listed,
                "unreadable": [error.to_dict() for error in unreadable],
                "version_errors": [error.to_dict() for error in versions.errors()],
            }
        )
    else:
        for error in unreadable:
            err_console.print(f"読めないログ: {error.message}", markup=False, soft_wrap=True)
        _print_runs(found, shown, versions, registry, settings)
        for error in versions.errors():  # once for each plan, with what to do
            show_error(error)
    if unreadable or versions.errors():
        raise typer.Exit(code=EXIT_FAILED)


def _print_runs(
    found: list[RunSummary],
    shown: list[RunSummary],
    versions: RunVersions,
    registry: BlockRegistry,
    settings: Settings,
) -> None:
    from keiri_agent.localtime import shown_time
    from keiri_agent.plan import STATUS_LABELS

    if not found:
        runs_dir = settings.keiri_runs_dir
        console.print(f"該当する実行はありません（{runs_dir}）。", markup=False, soft_wrap=True)
        return
    labels = {**STATUS_LABELS, "incomplete": INCOMPLETE_LABEL}
    # Lines, not a table: a table would break the ids and commands people copy.
    console.print(f"Plan の実行（{len(found)} 件、新しい順）:", markup=False)
    for run in shown:
        label = labels.get(run.status, run.status)
        if run.failed_node:
            name = failed_node_name(run, registry) or run.failed_node
            label += f"（ノード {node_shown(run.failed_node, name)}）"
        started = shown_time(run.started, settings.keiri_timezone)
        console.print(
            f"{run.run_id}  {run.plan_id}  {started}  {label}", markup=False, soft_wrap=True
        )
        if run.plan_hash:
            console.print(
                f"  版 {_version_words(run, versions.of(run))}",
                markup=False,
                soft_wrap=True,
                highlight=False,
            )
        command = next_command(run)
        if command:
            console.print(f"  → {command}", markup=False, soft_wrap=True, highlight=False)
    if len(found) > len(shown):
        console.print(
            f"ほかに {len(found) - len(shown)} 件あります（--limit で表示件数を変えられます）。",
            markup=False,
        )


def _version_words(run: RunSummary, saved: Version | BlockError | None) -> str:
    """The version a run ran, its approval and who started it, as its second line says them."""
    from keiri_agent.versions import SHORT_CHARS

    hash_shown = (run.plan_hash or "")[:SHORT_CHARS]
    if isinstance(saved, BlockError):
        named = f"{hash_shown}（{UNREADABLE_VERSION}、"
    elif saved is not None:
        named = f"v{saved.number}（{saved.short}、"
    else:
        named = f"{hash_shown}（"
    by = (run.approval or {}).get("by")
    starter = f"・実行者 {run.started_by}" if run.started_by else ""
    return f"{named}{f'承認: {by}' if by else '未承認'}）{starter}"
