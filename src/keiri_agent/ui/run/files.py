"""The files a run wrote, on the 実行 page: a Markdown report drawn with its charts, and
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
    downloads = (
        ("Markdown（.md）", path.read_bytes(), path.name, "text/markdown", "md"),
        (
            "HTML（グラフ入り、1 ファイル）",
            report_html(path).encode("utf-8"),
            f"{path.stem}.html",
            "text/html",
            "html",
        ),
        ("ZIP（.md とグラフ）", report_zip(path), f"{path.stem}.zip", "application/zip", "zip"),
    )
    for column, (label, data, name, mime, kind) in zip(
        st.columns(len(downloads)), downloads, strict=True
    ):
        with column:
            _download(label, data, name, mime, key=f"{key}_{kind}")
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
            _download(
                f"{path.name} をダウンロード",
                path.read_bytes(),
                path.name,
                mime,
                key=f"{key}_{index}_{path.name}",
            )


def _download(label: str, data: bytes, file_name: str, mime: str, *, key: str) -> None:
    """A download button that never reruns the script."""
    st.download_button(
        label,
        data=data,
        file_name=file_name,
        mime=mime,
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )
