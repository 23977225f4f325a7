"""`keiri-agent extract`: text out of PDF, Word, Excel, PowerPoint and text files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from keiri_agent.cli.common import JsonFlag, app, console, err_console
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError


def _not_a_folder(path: Path) -> None:
    if path.is_dir():
        raise FileProcessingError(
            str(path),
            f"「{path}」はフォルダです。extract にはファイルを指定してください。",
            code=ErrorCode.FILE_UNREADABLE,
            hint=f"フォルダの中のファイルを指定してください（例: keiri-agent extract {path}/*.pdf）。",
            details={"kind": "folder"},
        )


@app.command()
def extract(
    files: Annotated[list[Path], typer.Argument(help="テキストを取り出すファイル（複数可）。")],
    as_json: JsonFlag = False,
) -> None:
    """PDF・Word・Excel・PowerPoint・テキスト/CSV からテキストを取り出します（失敗したファイルがあれば終了コード 1）。"""
    from keiri_agent.documents import extract_text

    results: list[dict[str, Any]] = []
    for path in files:
        entry: dict[str, Any] = {"file": str(path)}
        try:
            _not_a_folder(path)
            doc = extract_text(path)
        except BlockError as exc:
            entry.update(chars=0, truncated=False, pages_or_sheets=0, warnings=[])
            entry["error"] = exc.to_dict()
            if not as_json:
                err_console.print(
                    Text.assemble((f"✗ {path}", "bold red"), f" [{exc.code}] {exc.message}"),
                    soft_wrap=True,
                )
                if exc.hint:
                    err_console.print(f"  ヒント: {exc.hint}", markup=False, soft_wrap=True)
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
                # One header line the terminal wraps: a rule would cut a long path with "…".
                header = f"── {path}（{doc.format}、{doc.chars:,} 文字）"
                console.print(header, style="bold", markup=False, highlight=False, soft_wrap=True)
                typer.echo(doc.text)
                for warning in doc.warnings:
                    err_console.print(f"注意: {warning}", markup=False, soft_wrap=True)
        results.append(entry)
    if as_json:
        typer.echo(json.dumps(results, ensure_ascii=False, indent=2))
    if any(entry["error"] for entry in results):
        raise typer.Exit(code=1)
