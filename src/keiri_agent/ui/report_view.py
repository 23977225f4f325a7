"""Rendering what an analysis turn produced: the report as the seed's ``render_report`` does it,
the generated code and its output per execution, and downloads of report.md and the charts.

Images and tables come from the session's workspace only: a file name from the report is
confined to the workspace before it is read, and a missing file is said, not skipped.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from keiri_agent.agents.analysis import REPORT_FILE, ExecutionResult, ReportOutput
from keiri_agent.agents.analysis.report import table_records
from keiri_agent.errors import BlockError
from keiri_agent.ui.screen_words import shown_table
from keiri_agent.workspace import confine

__all__ = ["chart_files", "render_downloads", "render_executions", "render_report"]

MAX_LABEL_CHARS = 60


def _workspace_file(workspace: Path, name: str) -> Path | None:
    """``name`` inside ``workspace`` when it is a file there, else None."""
    try:
        path = confine(workspace, Path(name).name)
    except BlockError:
        return None
    return path if path.is_file() else None


def _bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def render_report(
    report: ReportOutput,
    workspace: Path,
    *,
    assumptions: Sequence[str] = (),
    forced: bool = False,
) -> None:
    """The seed's render_report, with the conclusion and evidence the report always carries."""
    st.header(report.title)
    if forced:
        st.warning("分析のループが上限に達したため、途中までの結果をまとめたレポートです。")
    st.subheader("結論")
    st.markdown(report.conclusion)
    st.subheader("根拠")
    st.markdown(_bullets(report.evidence))
    for section in report.sections:
        if section.section_type == "text":
            st.markdown(section.content)
        elif section.section_type == "image":
            path = _workspace_file(workspace, section.content)
            if path is None:
                st.warning(f"図 {Path(section.content).name} が作業ディレクトリにありません。")
            else:
                st.image(str(path), caption=section.description)
        else:
            records = table_records(section.content)
            if section.description:
                st.caption(section.description)
            if records is None:
                st.warning("表を読み取れませんでした（JSON のレコード形式ではありません）。")
                st.code(section.content, language="json")
            else:
                st.dataframe(shown_table(pd.DataFrame(records)), hide_index=True)
    if assumptions:
        st.subheader("前提・仮定")
        st.markdown(_bullets(assumptions))
    if report.suggestions:
        st.subheader("追加の分析案")
        for suggestion in report.suggestions:
            st.markdown(f"- {suggestion}")


def _cut(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_executions(results: Sequence[ExecutionResult]) -> None:
    """One expander per execution: the generated code, its stdout, and its error if any."""
    for number, result in enumerate(results, 1):
        mark = "✅" if result.success else "⚠️"
        label = f"{mark} 実行 {number}: {_cut(result.instruction or '生成されたコード')}"
        with st.expander(label):
            st.code(result.code, language="python")
            if result.stdout:
                st.caption("標準出力")
                st.code(result.stdout, language="text")
            if result.error:
                st.caption("エラー（次の判断に渡されました）")
                st.code(result.error, language="text")
            if result.files_created:
                st.caption("作成されたファイル: " + "、".join(result.files_created))


def chart_files(
    report: ReportOutput | None, results: Sequence[ExecutionResult], workspace: Path
) -> list[Path]:
    """The charts of a turn that exist in the workspace: report images first, then figures."""
    names = [s.content for s in report.sections if s.section_type == "image"] if report else []
    for result in results:
        names += [o.file_name for o in result.outputs if o.output_type == "figure"]
    found: dict[str, Path] = {}
    for name in names:
        path = _workspace_file(workspace, name)
        if path is not None:
            found.setdefault(path.name, path)
    return list(found.values())


def render_downloads(report_path: Path | None, charts: Sequence[Path], *, key: str) -> None:
    """Download buttons for report.md and each chart (they never rerun the script)."""
    files = ([report_path] if report_path is not None and report_path.is_file() else []) + list(
        charts
    )
    if not files:
        return
    columns = st.columns(min(len(files), 4))
    for index, path in enumerate(files):
        mime = "text/markdown" if path.name == REPORT_FILE else mimetypes.guess_type(path.name)[0]
        with columns[index % len(columns)]:
            st.download_button(
                f"{path.name} をダウンロード",
                data=path.read_bytes(),
                file_name=path.name,
                mime=mime or "application/octet-stream",
                key=f"{key}_{index}_{path.name}",
                on_click="ignore",
                icon=":material/download:",
            )
