"""`keiri-agent plan validate|dry-run|migrate` and what every `plan` command shares.

Each command wraps one engine entry point (validator, dry run, migration) and renders its result
for people (Japanese text) or, with ``--json``, as the engine's own ``to_dict()``. Exit codes: 0
when the checked plan is fine, 1 when it is not (invalid plan, failed dry run), 2 for user errors
such as a missing file or a malformed ``--var``. Running plans is in ``plan_run`` (run, resume,
rerun) and listing runs in ``plan_runs``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
import yaml
from rich.markup import escape

from keiri_agent.cli.common import (
    EXIT_FAILED,
    JsonFlag,
    WrappingTable,
    command_group,
    console,
    echo_json,
    err_console,
    option_form_error,
    user_errors,
)
from keiri_agent.cli.paths import Wants, path_argument, path_option
from keiri_agent.errors import BlockError, ErrorCode, UserFile, input_error
from keiri_agent.shell_words import typed

if TYPE_CHECKING:
    from keiri_agent.blocks.registry import BlockRegistry
    from keiri_agent.plan import PlanNames

__all__ = [
    "AnswersOption",
    "JsonFlag",
    "PlanFile",
    "PlanId",
    "VarOptions",
    "VarsFileOption",
    "issues_json",
    "parse_vars",
    "plan_app",
    "plan_invalid",
    "plan_names_at",
    "print_issues",
]

plan_app = command_group(
    "plan", "Plan（YAML で書いたワークフロー）の検証・ドライラン・実行・再開・再実行・移行。"
)

PlanId = Annotated[
    str, typer.Argument(metavar="PLAN_ID", help="Plan の id（例: keiri/invoice_check）。")
]
PlanFile = Annotated[
    Path,
    path_argument(
        "Plan のファイル",
        Wants.FILE,
        help="Plan の YAML ファイル。",
        metavar="FILE",
        show_default=False,
    ),
]
VarOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--var",
        metavar="KEY=VALUE",
        help="Plan の vars を上書きします（複数可）。値は YAML として読みます（3 は数値、true は"
        "真偽値、[1, 2] はリスト、{a: 1} はマッピング、それ以外は文字列）。",
    ),
]
VarsFileOption = Annotated[
    Path | None,
    path_option(
        "--vars",
        "vars のファイル",
        Wants.FILE,
        help="Plan の vars を YAML/JSON ファイル（vars の名前 → 値 のマッピング）で上書きします。"
        "--var はこのファイルより優先します。",
        metavar="FILE",
        empty_ok=True,
    ),
]
AnswersOption = Annotated[
    Path | None,
    path_option(
        "--answers",
        "回答ファイル",
        Wants.FILE,
        help="UI ノードへの回答 YAML（ノードID → {項目ID: 値}）。入力待ちの実行が例を表示します。",
        about="例: confirm: {approved: true}（入力待ちの実行が、答える項目の例を表示します）。",
    ),
]


# --- helpers shared by the commands -----------------------------------------------------------


def parse_vars(specs: Sequence[str], file: Path | None = None) -> dict[str, Any]:
    """``--vars FILE`` then each ``--var KEY=VALUE`` (later wins): ``["n=3", "ids=[1, 2]"]`` →
    ``{"n": 3, "ids": [1, 2]}``. BlockError for a malformed spec or an unreadable value/file."""
    values: dict[str, Any] = _vars_file(file) if file is not None else {}
    for spec in specs:
        key, sep, text = spec.partition("=")
        if not sep or not key.strip():
            raise option_form_error(
                "--var",
                spec,
                "KEY=VALUE",
                "例: --var month=2024-01 --var count=3 --var ids='[1, 2]'"
                "（= の左が vars の名前、右が値です）。",
            )
        values[key.strip()] = _var_value(key.strip(), text)
    return values


def _var_value(key: str, text: str) -> Any:
    """A YAML value: scalars (``3`` → int, ``true`` → bool, ``null`` → None), flow lists and
    mappings (``[1, 2]``, ``{a: 1}``, JSON included). Text that starts like a list or mapping
    must read as one (BlockError otherwise); any other text that is not a plain YAML scalar
    (dates, ``a: b``, bad syntax) stays the string the user typed (empty → "")."""
    from keiri_agent.plan import load_yaml
    from keiri_agent.yaml_words import yaml_problem

    collection = text.lstrip().startswith(("[", "{"))
    try:
        value = load_yaml(text) if text else ""
    except yaml.YAMLError as exc:
        if not collection:
            return text
        raise input_error(
            f"--var {key} の値をリストやマッピングとして読めません: {yaml_problem(exc)}",
            "YAML か JSON の書き方にしてください。例: --var ids='[1, 2, 3]' "
            '--var opts=\'{"mode": "fast"}\'（シェルでは値全体を引用符で囲みます）。'
            "大きな値は --vars FILE で渡せます。",
            var=key,
            value=text[:200],
        ) from None
    if collection and isinstance(value, list | dict):
        return value
    return value if value is None or isinstance(value, bool | int | float | str) else text


_VARS_HINT = "vars の名前 → 値 のマッピングを書いた YAML か JSON のファイルを指定してください。例:\nmonth: 2024-01\nids: [1, 2, 3]"
VARS_FILE = UserFile(
    "--vars のファイル {file} が見つかりません。",
    hint=_VARS_HINT,
    unreadable="--vars のファイル {file} を読めません",
    unreadable_hint="UTF-8 のテキストファイルを指定してください。" + _VARS_HINT,
    unreadable_code=ErrorCode.INPUT_VALIDATION_FAILED,
)


def _vars_file(file: Path) -> dict[str, Any]:
    """The mapping of a ``--vars`` YAML/JSON file (BlockError naming the file otherwise)."""
    from keiri_agent.plan import load_yaml
    from keiri_agent.yaml_words import yaml_problem

    text = VARS_FILE.read_text(file)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise input_error(
            f"--vars のファイル {file} を YAML/JSON として読めません: {yaml_problem(exc)}",
            _VARS_HINT,
            file=str(file),
        ) from None
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise input_error(
            f"--vars のファイル {file} はマッピング（vars の名前 → 値）ではありません。",
            _VARS_HINT,
            file=str(file),
            type=type(data).__name__,
        )
    return data


def plan_names_at(source: Path | None, registry: BlockRegistry) -> PlanNames | None:
    """The names of the plan at ``source`` (a plan file or a run's snapshot); None when it
    does not load (the command then reports why, and lines name nodes by id)."""
    from pydantic import ValidationError

    from keiri_agent.plan import Plan, load_source, plan_names

    if source is None or not source.is_file():
        return None
    try:
        return plan_names(Plan.model_validate(load_source(source).raw), registry)
    except (BlockError, ValidationError):
        return None


def issues_json(report: Mapping[str, Any], file: str) -> dict[str, Any]:
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


def plan_invalid(
    exc: BlockError,
    file: Path | None,
    *,
    not_done: str,
    as_json: bool,
    names: PlanNames | None = None,
) -> NoReturn:
    """End a command whose plan did not validate (``exc``: its ``PLAN_INVALID`` error, whose
    details are the report) with exit code 1: the JSON document (``status: invalid``), or
    ``Plan に検証エラーがあるため、{not_done}。`` (実行しませんでした, 版として登録しませんでした)
    and the issues of ``file`` (None: a plan given as its text), a node by the name ``names``
    gives it."""
    report = issues_json(exc.details, str(file)) if file is not None else dict(exc.details)
    if as_json:
        echo_json({"status": "invalid", "error": {**exc.to_dict(), "details": report}})
    else:
        err_console.print(
            f"Plan に検証エラーがあるため、{not_done}。", markup=False, style="bold red"
        )
        print_issues(report, str(file) if file is not None else "Plan", names=names)
    raise typer.Exit(code=EXIT_FAILED)


def print_issues(
    report: Mapping[str, Any], file: str, *, summary: bool = True, names: PlanNames | None = None
) -> None:
    """``FILE:LINE:COL [node] CODE message`` and the hint, errors first, then a summary; a node
    by the name ``names`` gives it (its id in ``--json``)."""
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
            node_id = issue.get("node_id")
            node = f" [{names.node(node_id) if names else node_id}]" if node_id else ""
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
    from keiri_agent.plan import PlanEnv, validate_file

    with user_errors():
        env = PlanEnv.of()
        report = validate_file(file, env).to_dict()
    if as_json:
        echo_json(issues_json(report, str(file)))
    else:
        print_issues(report, str(file), names=plan_names_at(file, env.registry))
    if not report["valid"]:
        raise typer.Exit(code=EXIT_FAILED)


@plan_app.command("dry-run")
def dry_run(
    file: PlanFile,
    var_specs: VarOptions = None,
    vars_file: VarsFileOption = None,
    as_json: JsonFlag = False,
) -> None:
    """ブロックを実行せず、サンプル値で Plan を最後までたどって問題を探します（問題があれば終了コード 1）。"""
    from keiri_agent.file_access import FileAccess
    from keiri_agent.plan import PlanEnv, dry_run_source, load_source

    with user_errors():
        overrides = parse_vars(var_specs or [], vars_file)
        source = load_source(file)
        env = PlanEnv.of()
        report = dry_run_source(source, env, vars_override=overrides or None, files=FileAccess())
    if as_json:
        echo_json(report.to_dict())
    else:
        labels = {"ok": "[green]OK[/green]", "skipped": "スキップ", "failed": "[red]失敗[/red]"}
        names, registry = plan_names_at(file, env.registry), env.registry
        table = WrappingTable(
            "手順", "ブロック", "状態", "備考", title=f"ドライラン: {escape(str(file))}"
        )
        for node in report.nodes:
            spec = registry.find(node.block) if node.kind == "block" and node.block else None
            block = spec.shown_name if spec else "サブフロー"
            if node.kind == "loop":
                block = "繰り返し"
            name = names.node(node.node_id) if names else node.node_id
            row = (escape(name), escape(block))
            status = labels.get(node.status, node.status)
            table.add_row(*row, status, escape("；".join(node.notes)))
        if report.nodes:  # none when the plan is invalid: the findings say why
            console.print(table)
        print_issues(
            {"errors": [f.model_dump() for f in report.findings]},
            str(file),
            summary=False,
            names=names,
        )
        if report.ok:
            typer.echo(
                f"✓ ドライラン成功（{len(report.nodes)} ノード、{report.duration_ms:.0f} ms）"
            )
        else:
            typer.echo(f"✗ ドライランで {len(report.findings)} 件の問題が見つかりました。")
    if not report.ok:
        raise typer.Exit(code=EXIT_FAILED)


# --- migrate ----------------------------------------------------------------------------------


@plan_app.command("migrate")
def migrate(
    file: PlanFile,
    output: Annotated[
        Path | None,
        path_option(
            ("--output", "-o"), "書き出すファイル", Wants.NEW_FILE, "既定: 元の名前.migrated.yaml"
        ),
    ] = None,
    in_place: Annotated[
        bool,
        typer.Option(
            "--in-place", help="元のファイルを書き換えます（元の内容は .bak に残します）。"
        ),
    ] = False,
) -> None:
    """旧 UI ブロック（ui.file_uploader.* / ui.confirmation.*）を ui.interactive_input に移行します。"""
    from keiri_agent.plan import migrate_file

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
    typer.echo(f"確認: keiri-agent plan validate {typed(str(result.written))}")
