"""`keiri-agent plan validate|dry-run|run|resume|rerun|migrate`: plan files from the terminal.

Each command wraps one engine entry point (validator, dry run, runner, migration) and renders
its result for people (Japanese text; progress on stderr) or, with ``--json``, as the engine's
own ``to_dict()``. Exit codes: 0 when the checked or run plan is fine (a run waiting for input
included), 1 when it is not (invalid plan, failed dry run or run), 2 for user errors such as a
missing file or a malformed ``--var``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from rich.markup import escape
from rich.table import Table

from keiri_agent.blocks.ui.samples import example_value
from keiri_agent.cli.common import EXIT_FAILED, app, console, err_console, user_errors
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan.loader import load_yaml
from keiri_agent.plan.progress import STATUS_LABELS, describe_event

if TYPE_CHECKING:
    from keiri_agent.events.models import RunEvent
    from keiri_agent.plan.runner import PlanRunner, RunResult

__all__ = [
    "answers_example",
    "answers_yaml",
    "parse_vars",
    "plan_app",
    "show_event",
]

plan_app = typer.Typer(
    help="Plan（YAML で書いたワークフロー）の検証・ドライラン・実行・再開・再実行・移行。",
    no_args_is_help=True,
)
app.add_typer(plan_app, name="plan")

MAX_OUTPUT_CHARS = 200  # one node's outputs, summarized, in the human-readable run result
EXIT_INTERRUPTED = 130
_PLAIN_KEY_RE = re.compile(r"[^\W\d][\w\-]*")

PlanFile = Annotated[
    Path, typer.Argument(metavar="FILE", help="Plan の YAML ファイル。", show_default=False)
]
JsonFlag = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]
VarOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--var",
        metavar="KEY=VALUE",
        help="Plan の vars を上書きします（複数可）。値は YAML のスカラーとして読みます"
        "（3 は数値、true は真偽値、それ以外は文字列）。",
    ),
]
AnswersOption = Annotated[
    Path | None,
    typer.Option(
        "--answers",
        help="UI ノードへの回答 YAML（ノードID → {項目ID: 値}）。入力待ちの実行が例を表示します。",
    ),
]


# --- helpers shared by the commands -----------------------------------------------------------


def parse_vars(specs: Sequence[str]) -> dict[str, Any]:
    """``["n=3", "name=abc"]`` → ``{"n": 3, "name": "abc"}`` (BlockError for a malformed one)."""
    values: dict[str, Any] = {}
    for spec in specs:
        key, sep, text = spec.partition("=")
        if not sep or not key.strip():
            raise BlockError(
                f"--var '{spec}' は KEY=VALUE の形ではありません。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="例: --var month=2024-01 --var count=3（= の左が vars の名前、右が値です）。",
                details={"var": spec},
            )
        values[key.strip()] = _var_value(text)
    return values


def _var_value(text: str) -> Any:
    """A YAML scalar (``3`` → int, ``true`` → bool, ``null`` → None); anything else, dates and
    text that is not valid YAML included, stays the string the user typed (empty → "")."""
    try:
        value = load_yaml(text) if text else ""
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, bool | int | float | str) else text


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _issues_json(report: Mapping[str, Any], file: str) -> dict[str, Any]:
    """``report.to_dict()`` with ``file`` kept only on issues of another file (a subflow)."""

    def item(issue: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(issue)
        if out.get("file") is None or Path(out["file"]).resolve() == Path(file).resolve():
            out.pop("file", None)
        return out

    return {
        "valid": bool(report.get("valid")),
        "errors": [item(i) for i in report.get("errors") or []],
        "warnings": [item(i) for i in report.get("warnings") or []],
    }


def _print_issues(report: Mapping[str, Any], file: str, *, summary: bool = True) -> None:
    """``FILE:LINE:COL [node] CODE message`` and the hint, errors first, then a summary."""
    errors, warnings = report.get("errors") or [], report.get("warnings") or []
    for title, issues in (("エラー", errors), ("警告", warnings)):
        if issues:
            typer.echo(f"{title}（{len(issues)} 件）:")
        for issue in issues:
            where = str(issue.get("file") or file)
            at = ""
            if issue.get("line"):
                where += f":{issue['line']}:{issue.get('column') or 1}"
            elif issue.get("path"):
                at = f"（{issue['path']}）"
            node = f" [{issue['node_id']}]" if issue.get("node_id") else ""
            typer.echo(f"{where}{node} {issue['code']} {issue['message']}{at}")
            if issue.get("hint"):
                typer.echo(f"    ヒント: {issue['hint']}")
    if not summary:
        return
    if errors:
        typer.echo(f"✗ {file}: エラー {len(errors)} 件、警告 {len(warnings)} 件")
    else:
        typer.echo(f"✓ {file}: 問題は見つかりませんでした（警告 {len(warnings)} 件）")


# --- validate and dry-run ---------------------------------------------------------------------


@plan_app.command("validate")
def validate(file: PlanFile, as_json: JsonFlag = False) -> None:
    """Plan を検証し、すべての問題を行・列つきで表示します（問題があれば終了コード 1）。"""
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.plan.validator import validate_file

    with user_errors():
        report = validate_file(file, default_registry()).to_dict()
    if as_json:
        _echo_json(_issues_json(report, str(file)))
    else:
        _print_issues(report, str(file))
    if not report["valid"]:
        raise typer.Exit(code=EXIT_FAILED)


@plan_app.command("dry-run")
def dry_run(file: PlanFile, var_specs: VarOptions = None, as_json: JsonFlag = False) -> None:
    """ブロックを実行せず、サンプル値で Plan を最後までたどって問題を探します（問題があれば終了コード 1）。"""
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.plan.dryrun import dry_run_source
    from keiri_agent.plan.loader import load_source

    with user_errors():
        overrides = parse_vars(var_specs or [])
        source = load_source(file)
        report = dry_run_source(source, default_registry(), vars_override=overrides or None)
    if as_json:
        _echo_json(report.to_dict())
    else:
        labels = {"ok": "[green]OK[/green]", "skipped": "スキップ", "failed": "[red]失敗[/red]"}
        table = Table(
            "ノード", "ブロック", "状態", "備考", title=f"ドライラン: {escape(str(file))}"
        )
        for node in report.nodes:
            row = (escape(node.node_id), escape(node.block or ""))
            status = labels.get(node.status, node.status)
            table.add_row(*row, status, escape("；".join(node.notes)))
        if report.nodes:  # none when the plan is invalid: the findings say why
            console.print(table)
        _print_issues(
            {"errors": [f.model_dump() for f in report.findings]}, str(file), summary=False
        )
        if report.ok:
            typer.echo(
                f"✓ ドライラン成功（{len(report.nodes)} ノード、{report.duration_ms:.0f} ms）"
            )
        else:
            typer.echo(f"✗ ドライランで {len(report.findings)} 件の問題が見つかりました。")
    if not report.ok:
        raise typer.Exit(code=EXIT_FAILED)


# --- run, resume, rerun -----------------------------------------------------------------------


def show_event(event: RunEvent) -> None:
    """One dim line on stderr per event a person would want to follow."""
    line = describe_event(event)
    if line is not None:
        err_console.print(line, markup=False, highlight=False, style="dim")


def _requirements(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The fields a waiting request asks for (``ui.interactive_input``'s request shape)."""
    found = (item.get("request") or {}).get("requirements") or []
    return [r for r in found if isinstance(r, Mapping) and "id" in r]


def answers_example(waiting: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """An answers mapping (node → requirement id → value) for every waiting request."""
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


def _resume_command(run_id: str) -> str:
    return f"keiri-agent plan resume {run_id} --answers answers.yaml"


def _print_error(error: BlockError) -> None:
    err_console.print(f"エラー [{error.code}] {error.message}", markup=False, style="bold red")
    if error.details.get("node_id"):
        err_console.print(f"ノード: {error.details['node_id']}", markup=False)
    if error.hint:
        err_console.print(f"ヒント: {error.hint}", markup=False)


def _print_result(result: RunResult, *, as_json: bool) -> None:
    from keiri_agent.events.models import summarize_value

    if as_json:
        data = result.to_dict()
        if result.status == "waiting_input":
            data["answers_example"] = answers_example(result.waiting)
            data["resume_command"] = _resume_command(result.run_id)
        _echo_json(data)
        return
    typer.echo(f"実行 ID: {result.run_id}")
    typer.echo(f"Plan: {result.plan_id}")
    typer.echo(f"状態: {STATUS_LABELS.get(result.status, result.status)}（{result.status}）")
    if result.outputs:
        typer.echo("出力:")
    for node, outputs in result.outputs.items():
        text = json.dumps(summarize_value(outputs), ensure_ascii=False)
        if len(text) > MAX_OUTPUT_CHARS:
            text = text[: MAX_OUTPUT_CHARS - 1] + "…"
        typer.echo(f"  {node}: {text}")
    typer.echo(f"ログ: {result.log_path}")
    if result.status == "waiting_input":
        typer.echo("入力待ちのノード:")
        for item in result.waiting:
            message = (item.get("request") or {}).get("message") or ""
            typer.echo(f"  {item['node_id']}: {message}".rstrip())
        typer.echo("回答ファイルの例（answers.yaml に保存して値を書き換えてください）:")
        typer.echo(answers_yaml(result.waiting), nl=False)
        typer.echo("次のコマンドで再開します:")
        typer.echo(f"  {_resume_command(result.run_id)}")
    if result.error is not None:
        _print_error(result.error)


Start = Callable[["PlanRunner", "Callable[[RunEvent], None] | None"], "RunResult"]


def _execute(start: Start, *, as_json: bool, file: Path | None = None) -> None:
    """Run ``start`` on a fresh runner and render its result (shared by run/resume/rerun)."""
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.plan.runner import PlanRunner

    try:
        with user_errors(), PlanRunner(default_registry()) as runner:
            try:
                result = start(runner, None if as_json else show_event)
            except BlockError as exc:
                if exc.code != ErrorCode.PLAN_INVALID:
                    raise
                _plan_invalid(exc, file, as_json=as_json)
                raise typer.Exit(code=EXIT_FAILED) from None
    except KeyboardInterrupt:
        err_console.print("中断しました。", markup=False)
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    _print_result(result, as_json=as_json)
    if result.status not in ("success", "waiting_input"):
        raise typer.Exit(code=EXIT_FAILED)


def _plan_invalid(exc: BlockError, file: Path | None, *, as_json: bool) -> None:
    """The validation errors that kept a plan from running (``details`` is the report)."""
    label = str(file) if file is not None else "Plan"
    report = _issues_json(exc.details, str(file)) if file is not None else dict(exc.details)
    if as_json:
        _echo_json({"status": "invalid", "error": {**exc.to_dict(), "details": report}})
        return
    err_console.print(
        "Plan に検証エラーがあるため実行しませんでした。", markup=False, style="bold red"
    )
    _print_issues(report, label)


@plan_app.command("run")
def run(
    file: PlanFile,
    var_specs: VarOptions = None,
    answers: AnswersOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Plan を実行します（進捗は標準エラー出力に表示します）。

    入力待ちになると、回答ファイルの例と再開コマンドを表示します。
    終了コード: 0 成功・入力待ち、1 失敗・検証エラー、2 入力の誤り。
    """
    with user_errors():
        overrides = parse_vars(var_specs or [])
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
        typer.Option(
            "--plan", help="修正した Plan ファイル（省略時は元の実行のスナップショット）。"
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
    )


# --- migrate ----------------------------------------------------------------------------------


@plan_app.command("migrate")
def migrate(
    file: PlanFile,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="書き出すファイル（既定: 元の名前.migrated.yaml）。"),
    ] = None,
    in_place: Annotated[
        bool,
        typer.Option(
            "--in-place", help="元のファイルを書き換えます（元の内容は .bak に残します）。"
        ),
    ] = False,
) -> None:
    """旧 UI ブロック（ui.file_uploader.* / ui.confirmation.*）を ui.interactive_input に移行します。"""
    from keiri_agent.plan.migrate import migrate_file

    with user_errors():
        try:
            result = migrate_file(file, output=output, in_place=in_place)
        except BlockError as exc:
            problems = exc.details.get("problems")
            if not problems:
                raise
            err_console.print(f"{file} を移行できません:", markup=False, style="bold red")
            for problem in problems:
                err_console.print(f"  - {problem}", markup=False)
            err_console.print(f"ヒント: {exc.hint}", markup=False)
            raise typer.Exit(code=EXIT_FAILED) from None
    if not result.changes:
        typer.echo(f"{file}: 移行の必要はありません。")
        return
    typer.echo(f"{file} の変更点（{len(result.changes)} 件）:")
    for change in result.changes:
        typer.echo(f"  - {change}")
    typer.echo(f"書き込み先: {result.written}")
    if result.backup is not None:
        typer.echo(f"元のファイルの控え: {result.backup}")
    typer.echo(f"確認: keiri-agent plan validate {result.written}")
