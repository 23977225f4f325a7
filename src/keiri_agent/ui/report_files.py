"""A plan's reports and files on the 実行 page: a Markdown report drawn with its charts, and
downloads of every file (a report also as one HTML page with its images inside, and as a ZIP
of the .md and its images: ``documents.markdown_report``)."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import streamlit as st

from keiri_agent.documents.markdown_report import (
    IMAGE_SUFFIXES,
    ReportImage,
    report_html,
    report_parts,
    report_zip,
)

__all__ = ["IMAGE_SUFFIXES", "render_file_downloads", "render_report"]

DOWNLOAD_COLUMNS: Final = 3


def render_report(path: Path, *, key: str) -> set[Path]:
    """Draw the report at ``path`` with its images, and its three downloads; returns the
    images it showed (resolved)."""
    shown: set[Path] = set()
    st.subheader(f"報告書: {path.stem}")
    with st.container(border=True):
        for part in report_parts(path):
            if isinstance(part, ReportImage):
                st.image(str(part.path), caption=part.target)
                shown.add(part.path)
            else:
                st.markdown(part)
    left, middle, right = st.columns(3)
    with left:
        st.download_button(
            "Markdown（.md）",
            data=path.read_bytes(),
            file_name=path.name,
            mime="text/markdown",
            key=f"{key}_md",
            on_click="ignore",
            icon=":material/download:",
        )
    with middle:
        st.download_button(
            "HTML（グラフ入り、1 ファイル）",
            data=report_html(path).encode("utf-8"),
            file_name=f"{path.stem}.html",
            mime="text/html",
            key=f"{key}_html",
            on_click="ignore",
            icon=":material/download:",
        )
    with right:
        st.download_button(
            "ZIP（.md とグラフ）",
            data=report_zip(path),
            file_name=f"{path.stem}.zip",
            mime="application/zip",
            key=f"{key}_zip",
            on_click="ignore",
            icon=":material/download:",
        )
    return shown


def render_file_downloads(files: Sequence[Path], *, key: str) -> None:
    """One download button per file (they never rerun the script); a copy of a file already
    offered (a chart beside its report) is offered once."""
    unique: dict[tuple[str, int], Path] = {}
    for path in files:
        unique.setdefault((path.name, path.stat().st_size), path)
    columns = st.columns(min(len(unique), DOWNLOAD_COLUMNS))
    for index, path in enumerate(unique.values()):
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        with columns[index % len(columns)]:
            st.download_button(
                f"{path.name} をダウンロード",
                data=path.read_bytes(),
                file_name=path.name,
                mime=mime,
                key=f"{key}_{index}_{path.name}",
                on_click="ignore",
                icon=":material/download:",
            )
