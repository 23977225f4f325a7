"""`keiri-agent sandbox run|doctor`: run a Python file in the sandbox; show its layers."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from keiri_agent.cli.common import (
    EXIT_FAILED,
    JsonFlag,
    WrappingTable,
    command_group,
    console,
    err_console,
    option_form_error,
    user_errors,
)
from keiri_agent.cli.paths import Wants, path_argument, path_option
from keiri_agent.errors import UserFile

if TYPE_CHECKING:
    from keiri_agent.sandbox.outcome import ExecutionOutcome

sandbox_app = command_group("sandbox", "LLM が書いたコードを安全に実行するサンドボックス。")


def _parse_inputs(values: list[str]) -> dict[str, Path]:
    inputs: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise option_form_error(
                "--input",
                value,
                "NAME=PATH",
                "例: --input sales=data/売上.csv（NAME が変数名、PATH が CSV/Excel）。",
            )
        inputs[name] = Path(path)
    return inputs


# Any failure, a missing file included, is FILE_UNREADABLE with the OS's own words.
CODE_FILE = UserFile(
    "",
    hint="",
    unreadable="{file} を読み込めません",
    unreadable_hint="UTF-8 で保存した Python ファイルのパスを指定してください。",
)


@sandbox_app.command("run")
def run_file(
    file: Annotated[
        Path,
        path_argument(
            "実行する Python ファイル",
            Wants.FILE,
            empty_ok=True,
            code=CODE_FILE.unreadable_code,  # as when it cannot be read
        ),
    ],
    workdir: Annotated[
        Path,
        path_option("--workdir", "作業ディレクトリ", Wants.NEW_FOLDER, "ここだけに書き込めます"),
    ],
    profile: Annotated[
        str, typer.Option("--profile", help="制限プロファイル: analysis または codeact。")
    ] = "analysis",
    cpu_seconds: Annotated[
        int | None, typer.Option("--cpu-seconds", help="CPU 時間の上限（秒）。")
    ] = None,
    wall_seconds: Annotated[
        float | None, typer.Option("--wall-seconds", help="実行時間の上限（秒）。")
    ] = None,
    memory_mb: Annotated[
        int | None, typer.Option("--memory-mb", help="メモリの上限（MB）。")
    ] = None,
    input_specs: Annotated[
        list[str] | None,
        typer.Option(
            "--input",
            help="NAME=PATH: CSV/Excel を DataFrame として変数 NAME に渡します（複数可）。",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Python ファイルをサンドボックスで実行します（成功 0、失敗・強制停止 1、使い方の誤り 2）。"""
    from keiri_agent.documents import read_table
    from keiri_agent.sandbox import SandboxExecutor, get_profile

    with user_errors():
        inputs = _parse_inputs(input_specs or [])
        code = CODE_FILE.read_text(file)
        chosen = get_profile(profile).with_overrides(
            cpu_seconds=cpu_seconds, wall_seconds=wall_seconds, memory_mb=memory_mb
        )
        frames = {name: read_table(path).df for name, path in inputs.items()}
        executor = SandboxExecutor()
        try:
            outcome = executor.run(code, workdir=workdir, profile=chosen, inputs=frames)
        finally:
            executor.close()  # no process is left behind when the command returns
    if as_json:
        # ASCII escapes: one valid JSON document whatever the code put in its result or output.
        typer.echo(json.dumps(outcome.model_dump(mode="json"), ensure_ascii=True, indent=2))
    else:
        _print_outcome(outcome)
    if not outcome.success:
        raise typer.Exit(code=EXIT_FAILED)


def _print_outcome(outcome: ExecutionOutcome) -> None:
    """The outcome for a person: everything the code chose (output, names, error text) has its
    control characters made visible, so it cannot move the cursor, ring or rewrite the screen."""
    from keiri_agent.sandbox.failure_words import english_hidden, failure_said
    from keiri_agent.sandbox.untrusted import terminal_text

    if outcome.stdout:
        shown = terminal_text(outcome.stdout)
        typer.echo(shown, nl=not shown.endswith("\n"))
    if outcome.stderr:
        err_console.print(terminal_text(outcome.stderr), markup=False, highlight=False, end="")
    style = "green" if outcome.success else "red"
    # The summary says why in Japanese (failure_words: Python's English only in --json) after
    # 失敗, or the limit that stopped the code; a message of several lines (a syntax error and
    # its line of code) is shown line by line.
    said = failure_said(outcome.error) if outcome.error is not None else ""
    if outcome.success or outcome.killed_by is not None or outcome.error is None:
        summary, more = outcome.summary_ja(), said.split("\n") if said else []
    else:
        summary, *more = f"失敗: {said}".split("\n")
    err_console.print(f"[{style}]{escape(terminal_text(summary, single_line=True))}[/{style}]")
    for line in more:
        err_console.print(terminal_text(line, single_line=True), markup=False, highlight=False)
    if outcome.error is not None:
        for line in outcome.error.traceback:
            if line.strip() in said:
                continue  # the message quoted it already (a policy violation's line)
            shown_line = terminal_text(line, single_line=True)
            err_console.print(f"  {shown_line}", markup=False, highlight=False)
        if english_hidden(outcome.error):
            err_console.print("Python の元のメッセージは --json の error.message で確認できます。")
    for name in outcome.files_created:
        shown_name = terminal_text(name, single_line=True)
        err_console.print(f"作成: {shown_name}", markup=False, highlight=False)
    for warning in outcome.warnings:
        err_console.print(
            f"[yellow]注意:[/yellow] {escape(terminal_text(warning, single_line=True))}"
        )


def layers_table(title: str, layers: Iterable[tuple[str, bool, str]]) -> WrappingTable:
    """The sandbox's properties as a table: each by its words (``PROPERTY_LABELS``, not its
    id), whether it holds on this machine, and why (``layers``: name, active, detail)."""
    from keiri_agent.sandbox.layers import PROPERTY_LABELS

    table = WrappingTable(title=title)
    table.add_column("性質")
    table.add_column("有効")
    table.add_column("詳細")
    for name, active, detail in layers:
        mark = "[green]✓[/green]" if active else "[yellow]✗[/yellow]"
        table.add_row(escape(PROPERTY_LABELS.get(name, name)), mark, escape(detail))
    return table


@sandbox_app.command("doctor")
def sandbox_doctor(
    as_json: JsonFlag = False,
) -> None:
    """このマシンでサンドボックスの各性質（名前空間・読み取り専用バインド・ディスク上限・cgroup・seccomp・Landlock など）が有効かを、実際に 1 回実行して表示します。強制されない上限はその理由とともに示します。"""
    from keiri_agent.sandbox.layers import LIMIT_NAMES, PROPERTY_LABELS
    from keiri_agent.sandbox.probe import layer_rows, probe_layers, unenforced_limits

    layers = probe_layers()
    if as_json:
        typer.echo(json.dumps(layer_rows(layers), ensure_ascii=False, indent=2))
        return
    rows = [(status.name, status.active, status.detail) for status in layers]
    console.print(layers_table("サンドボックスの隔離レイヤー", rows))
    missing = [PROPERTY_LABELS.get(s.name, s.name) for s in layers if not s.active]
    if missing:
        console.print(
            f"[yellow]注意:[/yellow] 無効な性質: {', '.join(missing)}。"
            "bubblewrap がなければ実行は拒否されます（`apt-get install bubblewrap`）。"
        )
    for status in unenforced_limits(layers):
        console.print(
            f"[yellow]このマシンでは強制されない上限:[/yellow] {LIMIT_NAMES[status.name]}。"
            f"理由: {escape(status.detail)}。各実行結果の layers と警告にも示されます。"
        )
