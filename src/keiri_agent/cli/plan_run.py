"""`keiri-agent plan run|resume|rerun`: run a plan, continue a stopped run, rerun from a node.

Progress goes to stderr, beginning with the run id (and, without ``--json``, when the run
started, in ``KEIRI_TIMEZONE``), each node named as the plan names it. The result goes to stdout:
with ``--json`` the runner's ``RunResult.to_dict()``; otherwise what the person wants from the
run, in this order: the outcome, the files written (absolute paths, one per line), the result
tables summarised (name, rows × columns, their total row with amounts shown as everywhere else),
and, when the run waits, the answers file to fill and the command that resumes it. Exit codes:
0 success or waiting for input, 1 failed or invalid plan, 2 user errors (a missing file, a
malformed ``--var``), 130 cancelled (Ctrl-C).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from keiri_agent.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    echo_json,
    err_console,
    progress_printer,
    show_error,
    user_errors,
)
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.cli.plan import (
    AnswersOption,
    JsonFlag,
    PlanFile,
    VarOptions,
    VarsFileOption,
    parse_vars,
    plan_app,
    plan_invalid,
    plan_names_at,
)
from keiri_agent.errors import BlockError, ErrorCode

if TYPE_CHECKING:
    from keiri_agent.events.models import RunEvent
    from keiri_agent.plan import PlanEnv, PlanNames, PlanRunner, PlanSource, RunResult

__all__ = ["answers_example", "answers_yaml", "execute_source", "resume_command", "version_text"]
_PLAIN_KEY_RE = re.compile(r"[^\W\d][\w\-]*")


def _requirements(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The fields a waiting request asks for (``ui.interactive_input``'s request shape)."""
    found = (item.get("request") or {}).get("requirements") or []
    return [r for r in found if isinstance(r, Mapping) and "id" in r]


def answers_example(waiting: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """An answers mapping (node → requirement id → value) for every waiting request."""
    from keiri_agent.blocks.ui.samples import example_value

    example: dict[str, dict[str, Any]] = {}
    for item in waiting:
        request = item.get("request") or {}
        answers = {str(r["id"]): example_value(r) for r in _requirements(item)}
        if request.get("mode") in ("confirm", "mixed"):
            answers["approved"] = True
        if request.get("mode") == "inquire":
            answers["response"] = "（回答を入力）"
        example[str(item["node_id"])] = answers
    return example


def _yaml_key(key: str) -> str:
    from keiri_agent.plan import load_yaml

    plain = _PLAIN_KEY_RE.fullmatch(key) and load_yaml(key) == key
    return key if plain else json.dumps(key, ensure_ascii=False)


def answers_yaml(waiting: Sequence[Mapping[str, Any]]) -> str:
    """:func:`answers_example` as YAML, each answer with a comment naming its field."""
    example = answers_example(waiting)
    lines: list[str] = []
    for item in waiting:
        node = str(item["node_id"])
        labels = {
            str(r["id"]): f"{r.get('label') or r['id']}（{r.get('type')}"
            + ("、必須）" if r.get("required", True) else "、任意）")
            for r in _requirements(item)
        }
        labels.update(approved="承認するなら true、却下するなら false", response="自由記述の回答")
        lines.append(f"{_yaml_key(node)}:")
        for key, value in example[node].items():
            lines.append(f"  # {labels.get(key, key)}")
            lines.append(
                f"  {_yaml_key(key)}: {json.dumps(value, ensure_ascii=False, default=str)}"
            )
    return "\n".join(lines) + "\n"


def version_text(event: RunEvent) -> str:
    """``版: 1a2b3c4d5e6f（承認: suzuki）``: the version a run's ``plan_start`` names."""
    data = event.model_dump()
    version = str(data.get("plan_hash") or "")[:12] or "不明"
    approval = data.get("approval") or {}
    by = approval.get("by")
    state = (
        f"承認: {by}" + ("・自己承認" if approval.get("self_approved") else "") if by else "未承認"
    )
    return f"版: {version}（{state}）"


def resume_command(run_id: str) -> str:
    return f"keiri-agent plan resume {run_id} --answers answers.yaml"


def _snapshot(result: RunResult) -> Path | None:
    from keiri_agent.plan import load_run

    if result.log_path is None:
        return None
    try:
        return load_run(result.log_path).plan_file
    except BlockError:
        return None


def _print_result(
    result: RunResult, env: PlanEnv, *, as_json: bool, names: PlanNames | None
) -> None:
    from keiri_agent.documents.amount_format import AmountFormat
    from keiri_agent.plan import STATUS_LABELS, result_tables, table_summary, written_files

    if as_json:
        data = result.to_dict()
        if result.status == "waiting_input":
            data["answers_example"] = answers_example(result.waiting)
            data["resume_command"] = resume_command(result.run_id)
        echo_json(data)
        return
    settings = env.settings
    names = names or plan_names_at(_snapshot(result), env.registry)
    typer.echo(
        f"結果: {STATUS_LABELS.get(result.status, result.status)}"
        f"（{result.duration_ms / 1000:.1f} 秒）"
    )
    files = written_files(result.log_path, result.outputs, settings.keiri_runs_dir, names)
    if files:
        typer.echo("作成したファイル:")
        for path in files:
            typer.echo(str(path))
    tables = result_tables(result.outputs, names)
    standing = [table for table in tables if not table.superseded]
    if standing:
        amounts = AmountFormat.of(settings)
        typer.echo("結果の表:")
        for table in standing:
            typer.echo(f"  {table_summary(table, amounts)}")
    if len(standing) < len(tables):
        typer.echo(
            f"途中の表 {len(tables) - len(standing)} 件（後の手順の表に置き換わったもの）は"
            "省略しました（--json ですべての出力）。"
        )
    if result.status == "waiting_input":
        typer.echo("入力を待っています:")
        for item in result.waiting:
            node = str(item["node_id"])
            message = (item.get("request") or {}).get("message") or ""
            typer.echo(f"  {names.node(node) if names else node}: {message}".rstrip())
        typer.echo("回答ファイルの例（answers.yaml に保存して値を書き換えてください）:")
        typer.echo(answers_yaml(result.waiting), nl=False)
        typer.echo("次のコマンドで再開します:")
        typer.echo(f"  {resume_command(result.run_id)}")
    if result.error is not None:
        failed = str(result.error.details.get("node_id") or "")
        show_error(result.error, names.node if names else None)
        if failed and result.error.recoverable:
            typer.echo("直してから、失敗したノードから実行し直すには:")
            typer.echo(f"  keiri-agent plan rerun {result.run_id} --from {failed}")
    typer.echo(f"実行 ID: {result.run_id}")
    typer.echo(f"実行ログ: {result.log_path}")


Start = Callable[["PlanRunner", "Callable[[RunEvent], None]"], "RunResult"]


def _names_of_run(run: str, env: PlanEnv) -> PlanNames | None:
    """The names of the plan the run ``run`` executed (its snapshot), for a resume or a rerun
    to name nodes as the first run did; None when the run is not found (the runner says so)."""
    from keiri_agent.plan import find_run, load_run

    try:
        return plan_names_at(
            load_run(find_run(run, env.settings.keiri_runs_dir)).plan_file, env.registry
        )
    except BlockError:
        return None


def _execute(
    start: Start,
    *,
    as_json: bool,
    file: Path | None = None,
    run: str | None = None,
    saved: PlanSource | None = None,
) -> None:
    """Run ``start`` on a fresh runner and render its result (shared by run/resume/rerun: the
    plan at ``file``, else that of the earlier run ``run``, names the nodes).

    The run id is printed on stderr as soon as the run starts, before any progress, so a run
    that is interrupted or crashes can still be resumed. Ctrl-C ends the run as cancelled
    (exit code 130) with the command that continues it.
    """
    from keiri_agent.cli.identity import acting_name
    from keiri_agent.config import load_settings
    from keiri_agent.localtime import shown_time
    from keiri_agent.plan import PlanEnv, PlanRunner, cancelled_error, describe_event

    with user_errors():
        settings = load_settings()
        zone, started_by = settings.keiri_timezone, acting_name(settings)
        env = PlanEnv.of(settings=settings)  # the command's: names, validation and the run
        env = env.saved_subflows(saved) if saved is not None else env
    started: list[str] = []
    names = None
    if not as_json:
        names = (
            _names_of_run(run, env) if file is None and run else plan_names_at(file, env.registry)
        )
    progress = (
        None
        if as_json
        else progress_printer(
            lambda event: describe_event(event, names), names.node if names else None
        )
    )

    def on_event(event: RunEvent) -> None:
        if event.event == "plan_start" and not started:
            started.append(event.run_id)
            err_console.print(f"実行 ID: {event.run_id}", markup=False, highlight=False)
            if progress is not None:
                when = shown_time(event.timestamp, zone)
                err_console.print(f"開始: {when}", markup=False, highlight=False)
                err_console.print(version_text(event), markup=False, highlight=False)
        if progress is not None:
            progress(event)

    def stopped() -> BlockError | None:  # the runner logged the cancel: resumable by its id
        return cancelled_error(started[0]) if started else None

    with (
        user_errors(on_ctrl_c=stopped),
        PlanRunner(env, started_by=started_by) as runner,
    ):
        try:
            result = start(runner, on_event)
        except BlockError as exc:
            if exc.code != ErrorCode.PLAN_INVALID:
                raise
            plan_invalid(exc, file, not_done="実行しませんでした", as_json=as_json, names=names)
    _print_result(result, env, as_json=as_json, names=names)
    if result.status == "cancelled":
        raise typer.Exit(code=EXIT_INTERRUPTED)
    if result.status not in ("success", "waiting_input"):
        raise typer.Exit(code=EXIT_FAILED)


def execute_source(
    source: PlanSource, *, vars: Mapping[str, Any], as_json: bool, saved: bool = False
) -> None:
    """Run a plan given as its text (a saved version: ``schedule run-now``) as ``plan run``
    runs a file: same progress, result and exit codes; ``saved``: its subflows are saved
    versions, as a schedule's run calls them (``PlanEnv.saved_subflows``)."""
    _execute(
        lambda runner, on_event: runner.run(source, vars=vars, on_event=on_event),
        as_json=as_json,
        saved=source if saved else None,
    )


@plan_app.command("run")
def run(
    file: PlanFile,
    var_specs: VarOptions = None,
    vars_file: VarsFileOption = None,
    answers: AnswersOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Plan を実行します（進捗は標準エラー出力に表示します）。

    入力待ちになると、回答ファイルの例と再開コマンドを表示します。
    終了コード: 0 成功・入力待ち、1 失敗・検証エラー、2 入力の誤り。
    """
    with user_errors():
        overrides = parse_vars(var_specs or [], vars_file)
    _execute(
        lambda runner, on_event: runner.run(
            file, vars=overrides, answers=answers, on_event=on_event
        ),
        as_json=as_json,
        file=file,
    )


@plan_app.command("resume")
def resume(
    run_id: Annotated[str, typer.Argument(help="再開する実行の ID（またはログ .jsonl のパス）。")],
    answers: AnswersOption = None,
    as_json: JsonFlag = False,
) -> None:
    """入力待ち・失敗で止まった実行を、終わったノードを再利用して続けます（新しい実行 ID になります）。"""
    _execute(
        lambda runner, on_event: runner.resume(run_id, answers=answers, on_event=on_event),
        as_json=as_json,
        run=run_id,
    )


@plan_app.command("rerun")
def rerun(
    run_id: Annotated[str, typer.Argument(help="元の実行の ID（またはログ .jsonl のパス）。")],
    from_node: Annotated[
        str, typer.Option("--from", help="ここから実行し直すノード ID（上流は再利用します）。")
    ],
    answers: AnswersOption = None,
    plan: Annotated[
        Path | None,
        path_option(
            "--plan",
            "Plan のファイル",
            Wants.FILE,
            help="修正した Plan ファイル（省略時は元の実行のスナップショット）。",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """指定したノードとその下流だけを実行し直します（上流のノードは元の実行の結果を再利用します）。"""
    _execute(
        lambda runner, on_event: runner.rerun(
            run_id, from_node, answers=answers, plan=plan, on_event=on_event
        ),
        as_json=as_json,
        file=plan,
        run=run_id,
    )
