"""`keiri-agent extract`: text out of PDF, Word, Excel, PowerPoint and text files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from keiri_agent.cli.common import JsonFlag, app, console, echo_json, err_console
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from keiri_agent.shell_words import typed

if TYPE_CHECKING:
    from keiri_agent.documents import ExtractedText


def _not_a_folder(path: Path) -> None:
    if path.is_dir():
        raise FileProcessingError(
            str(path),
            f"「{path}」はフォルダです。extract にはファイルを指定してください。",
            code=ErrorCode.FILE_UNREADABLE,
            hint=f"フォルダの中のファイルを指定してください（例: keiri-agent extract {typed(str(path))}/*.pdf）。",
            details={"kind": "folder"},
        )


def _entry(path: Path, doc: ExtractedText | None, error: BlockError | None) -> dict[str, Any]:
    """One file's ``--json`` entry: the same keys whether the file was read or not (a file that
    failed has no format or unit: null; no text: 0 characters, 0 pages or sheets)."""
    return {
        "file": str(path),
        "format": None if doc is None else doc.format,
        "chars": 0 if doc is None else doc.chars,
        "truncated": False if doc is None else doc.truncated,
        "pages_or_sheets": 0 if doc is None else doc.units_read,
        "unit": None if doc is None else doc.unit,
        "warnings": [] if doc is None else doc.warnings,
        "error": None if error is None else error.to_dict(),
    }


@app.command()
def extract(
    files: Annotated[list[Path], typer.Argument(help="テキストを取り出すファイル（複数可）。")],
    as_json: JsonFlag = False,
) -> None:
    """PDF・Word・Excel・PowerPoint・テキスト/CSV からテキストを取り出します（失敗したファイルがあれば終了コード 1）。"""
    from keiri_agent.documents import extract_text

    results: list[dict[str, Any]] = []
    for path in files:
        try:
            _not_a_folder(path)
            doc = extract_text(path)
        except BlockError as exc:
            results.append(_entry(path, None, exc))
            if not as_json:
                err_console.print(
                    Text.assemble((f"✗ {path}", "bold red"), f" [{exc.code}] {exc.message}"),
                    soft_wrap=True,
                )
                if exc.hint:
                    err_console.print(f"  ヒント: {exc.hint}", markup=False, soft_wrap=True)
        else:
            results.append(_entry(path, doc, None))
            if not as_json:
                # One header line the terminal wraps: a rule would cut a long path with "…".
                header = f"── {path}（{doc.format}、{doc.chars:,} 文字）"
                console.print(header, style="bold", markup=False, highlight=False, soft_wrap=True)
                typer.echo(doc.text)
                for warning in doc.warnings:
                    err_console.print(f"注意: {warning}", markup=False, soft_wrap=True)
    if as_json:
        echo_json(results)
    if any(entry["error"] for entry in results):
        raise typer.Exit(code=1)
