"""Rendering a ``ReportOutput`` to Markdown and saving it in the workspace, one file per turn:
``report.md`` for the first report of a session, then ``report-2.md``, ``report-3.md``... so a
download of an older turn's report still serves that report.

Images are linked by file name (the report sits beside the charts); tables are rendered from
their JSON records. A section that points at a missing image or holds a table that is not JSON
records is shown with a visible note, never dropped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from keiri_agent.agents.analysis.models import ReportOutput, ReportSection
from keiri_agent.workspace import atomic_path

__all__ = ["REPORT_FILE", "markdown_table", "next_report_path", "render_markdown", "save_report"]

REPORT_FILE = "report.md"
REPORT_MODE = 0o644  # as any file the user saves (the temporary file is made 0600)
MAX_TABLE_ROWS = 50


def _escape(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(records: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of JSON records (columns in first-seen order, at most 50 rows)."""
    columns: dict[str, None] = {}
    for record in records:
        for key in record:
            columns.setdefault(str(key), None)
    names = list(columns)
    lines = ["| " + " | ".join(_escape(n) for n in names) + " |", "|" + "---|" * len(names)]
    for record in records[:MAX_TABLE_ROWS]:
        lines.append("| " + " | ".join(_escape(record.get(n)) for n in names) + " |")
    if len(records) > MAX_TABLE_ROWS:
        lines.append(f"\n（ほか {len(records) - MAX_TABLE_ROWS} 行）")
    return "\n".join(lines)


def table_records(content: str) -> list[dict[str, Any]] | None:
    """The records of a table section, or None when its content is not JSON records."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict):  # {"column": [values]} or {"column": {index: value}}
        try:
            import pandas as pd

            data = pd.DataFrame(data).to_dict(orient="records")
        except ValueError:
            return None
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        return data
    return None


def _section(section: ReportSection, workspace: Path) -> str:
    caption = section.description or ""
    if section.section_type == "text":
        return section.content
    if section.section_type == "image":
        name = Path(section.content).name
        if not (workspace / name).is_file():
            return f"> （図 {name} は作業ディレクトリにありません）{caption}"
        return f"![{_escape(caption) or name}]({name})" + (f"\n\n*{caption}*" if caption else "")
    records = table_records(section.content)
    if records is None:
        return f"> （表を読み取れませんでした）{caption}\n\n```\n{section.content}\n```"
    return (f"**{caption}**\n\n" if caption else "") + markdown_table(records)


def render_markdown(
    report: ReportOutput,
    workspace: Path,
    assumptions: Sequence[str],
    notes: Sequence[str] = (),
) -> str:
    parts = [f"# {report.title}", *(f"> **{note}**" for note in notes)]
    parts += ["## 結論", report.conclusion, "## 根拠"]
    parts.append("\n".join(f"- {item}" for item in report.evidence))
    if report.sections:
        parts.append("## 詳細")
        parts.extend(_section(section, workspace) for section in report.sections)
    if assumptions:
        parts.append("## 前提・仮定")
        parts.append("\n".join(f"- {a}" for a in assumptions))
    if report.suggestions:
        parts.append("## 追加の分析案")
        parts.append("\n".join(f"- {s}" for s in report.suggestions))
    return "\n\n".join(parts) + "\n"


def next_report_path(workspace: Path) -> Path:
    """``report.md``, or ``report-N.md`` with the first N not taken yet."""
    path, n = workspace / REPORT_FILE, 2
    stem, suffix = Path(REPORT_FILE).stem, Path(REPORT_FILE).suffix
    while path.exists():
        path, n = workspace / f"{stem}-{n}{suffix}", n + 1
    return path


def save_report(
    report: ReportOutput,
    workspace: Path,
    assumptions: Sequence[str],
    *,
    notes: Sequence[str] = (),
) -> Path:
    """Write the report to a new file (never over an older turn's report)."""
    path = next_report_path(workspace)
    with atomic_path(path, suffix=".md.tmp") as tmp:  # whole or absent, no temporary file left
        tmp.write_text(render_markdown(report, workspace, assumptions, notes), encoding="utf-8")
        tmp.chmod(REPORT_MODE)
    return path
