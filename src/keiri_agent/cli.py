"""The ``keiri-agent`` command line: one Typer app over every part of the product."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from keiri_agent import __version__
from keiri_agent.config import load_settings
from keiri_agent.doctor import DoctorReport, collect_report, ping_models
from keiri_agent.errors import BlockError

__all__ = ["app"]

app = typer.Typer(
    name="keiri-agent",
    help="keiri-agent: 経理などバックオフィス業務のための LLM ワークベンチ。",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)
EXIT_USER_ERROR = 2


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a BlockError as its Japanese message and hint (no traceback) and exit non-zero."""
    try:
        yield
    except BlockError as exc:
        err_console.print(f"[bold red]エラー[/bold red] [{exc.code}] {exc.message}", markup=True)
        if exc.hint:
            err_console.print(f"ヒント: {exc.hint}")
        raise typer.Exit(code=EXIT_USER_ERROR) from None


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"keiri-agent {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="バージョンを表示して終了します。",
        ),
    ] = False,
) -> None:
    """keiri-agent: 経理などバックオフィス業務のための LLM ワークベンチ。"""


def _mark(ok: bool) -> str:
    return "[green]✓[/green]" if ok else "[red]✗[/red]"


def _render(report: DoctorReport) -> None:
    console.print(
        f"[bold]keiri-agent {report.version}[/bold]  Python {report.python}  {report.platform}"
    )

    providers = Table(title="LLM プロバイダー")
    providers.add_column("プロバイダー")
    providers.add_column("利用可")
    providers.add_column("不足している設定")
    for name, info in report.providers.items():
        note = ", ".join(info["missing"]) or info.get("endpoint", "")
        providers.add_row(name, _mark(info["usable"]), note)
    console.print(providers)

    roles = Table(title="役割ごとのモデル")
    roles.add_column("役割")
    roles.add_column("モデル")
    roles.add_column("利用可")
    roles.add_column("備考")
    for role, info in report.roles.items():
        note = "個別設定" if info["overridden"] else ""
        if info["model"] is None:
            note = "未設定（埋め込みを使わず BM25 のみで検索）"
        elif info["missing"]:
            note = "不足: " + ", ".join(info["missing"])
        roles.add_row(role, info["model"] or "-", _mark(info["usable"]), note)
    console.print(roles)

    settings = Table(title="有効な設定（秘密情報はマスク）")
    settings.add_column("変数")
    settings.add_column("値")
    for key, value in report.settings.items():
        settings.add_row(key, value)
    for key, value in report.paths.items():
        settings.add_row(f"({key})", value)
    console.print(settings)

    for model, result in report.pings.items():
        status = "OK" if result["ok"] else f"失敗: {result['error']}"
        console.print(f"接続確認 {model}: {status}")
    if report.problems:
        console.print("[yellow]注意:[/yellow]")
        for line in report.problems:
            console.print(f"  - {line}")
    else:
        console.print("[green]設定に問題は見つかりませんでした。[/green]")


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="JSON で出力します。")] = False,
    ping: Annotated[
        bool, typer.Option("--ping", help="各モデルに短いリクエストを送り接続を確認します。")
    ] = False,
) -> None:
    """有効な設定（秘密情報はマスク）、使える LLM プロバイダー、役割ごとのモデルを表示します。"""
    with user_errors():
        settings = load_settings()
        report = collect_report(settings)
        if ping:
            ping_models(report, settings)
    if as_json:
        typer.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
    else:
        _render(report)
    if ping and any(not result["ok"] for result in report.pings.values()):
        raise typer.Exit(code=1)


@app.command()
def extract(
    files: Annotated[list[Path], typer.Argument(help="テキストを取り出すファイル（複数可）。")],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="ファイルごとの結果（文字数・警告・エラー）を JSON で出力します。"
        ),
    ] = False,
) -> None:
    """PDF・Word・Excel・PowerPoint・テキスト/CSV からテキストを取り出します（失敗したファイルがあれば終了コード 1）。"""
    from keiri_agent.documents import extract_text

    results: list[dict[str, Any]] = []
    for path in files:
        entry: dict[str, Any] = {"file": str(path)}
        try:
            doc = extract_text(path)
        except BlockError as exc:
            entry.update(chars=0, truncated=False, pages_or_sheets=0, warnings=[])
            entry["error"] = exc.to_dict()
            if not as_json:
                err_console.print(f"[bold red]✗ {path}[/bold red] [{exc.code}] {exc.message}")
                if exc.hint:
                    err_console.print(f"  ヒント: {exc.hint}")
        else:
            entry.update(
                format=doc.format,
                chars=doc.chars,
                truncated=doc.truncated,
                pages_or_sheets=doc.units_read,
                unit=doc.unit,
                warnings=doc.warnings,
                error=None,
            )
            if not as_json:
                console.rule(f"{path}（{doc.format}, {doc.chars} 文字）")
                typer.echo(doc.text)
                for warning in doc.warnings:
                    err_console.print(f"[yellow]注意:[/yellow] {warning}")
        results.append(entry)
    if as_json:
        typer.echo(json.dumps(results, ensure_ascii=False, indent=2))
    if any(entry["error"] for entry in results):
        raise typer.Exit(code=1)
