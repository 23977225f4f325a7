"""`keiri-agent extract`: text out of PDF, Word, Excel, PowerPoint and text files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from keiri_agent.cli.common import app, console, err_console
from keiri_agent.errors import BlockError


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
