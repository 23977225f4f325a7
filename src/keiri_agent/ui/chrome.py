"""Streamlit's own chrome in Japanese, where Streamlit allows it, and nothing from the internet.

Streamlit writes a few texts itself, in English, with no setting to change them: the file
uploader's button ("Upload") and its line "200MB per file • CSV", the "Press Enter to apply"
under a text box, the "Running... Stop" widget of the toolbar. The app hides the English ones
with a style sheet and says the same in Japanese: the button reads ファイルを選ぶ, each file field
says its formats and size limit itself (:func:`upload_note`) and refuses another format in
Japanese (:func:`file_uploader`), and the pages show their own progress. The toolbar has no Deploy button (``client.toolbarMode = "minimal"``, set by
``.streamlit/config.toml`` and by ``keiri-agent ui``). The page icon is a file of the package,
the one the progress page uses (``server/static/icon.png``, found by path: the app does not
import the server); a Material icon would be fetched from a font server, and the app works with
no internet access.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

__all__ = ["ICON_PATH", "STYLE", "apply_chrome", "file_uploader", "monospace", "upload_note"]

ICON_PATH: Final = Path(__file__).resolve().parents[1] / "server" / "static" / "icon.png"
UPLOAD_BUTTON: Final = "ファイルを選ぶ"
# The English texts Streamlit writes itself, hidden; the uploader's button relabelled.
STYLE: Final = f"""
[data-testid="stFileUploaderDropzoneInstructions"] {{ display: none; }}
[data-testid="stFileUploaderDropzone"] button [data-testid="stMarkdownContainer"] p {{
  font-size: 0;
  visibility: hidden;
}}
[data-testid="stFileUploaderDropzone"] button [data-testid="stMarkdownContainer"] p::after {{
  content: "{UPLOAD_BUTTON}";
  font-size: 0.875rem;
  visibility: visible;
}}
[data-testid="InputInstructions"] {{ display: none; }}
[data-testid="stStatusWidget"] {{ display: none; }}
"""


def apply_chrome() -> None:
    """Put the style sheet on the page (it takes no space)."""
    st.html(f"<style>{STYLE}</style>")


def monospace(key: str) -> None:
    """Show the text box of widget ``key`` in a fixed-width font (the YAML editor)."""
    st.html(
        f"<style>.st-key-{key} textarea {{ font-family: 'Source Code Pro', monospace; }}</style>"
    )


def _extension(name: str) -> str:
    return Path(name).suffix.lower()


def _formats(accept: Sequence[str]) -> str:
    return "・".join(a.lstrip(".").upper() for a in accept)


def file_uploader(
    label: str, accept: Sequence[str], *, multiple: bool = False, **kwargs: Any
) -> list[UploadedFile]:
    """A file field that says its formats and refuses another format in Japanese.

    Streamlit, told the formats (``type=``), refuses another one itself and in English: the
    browser with "… files are not allowed.", the server with an exception ("Invalid file
    extension") shown in place of the page. So Streamlit is told none: the field takes any file,
    says its formats and size limit under it (:func:`upload_note`), and a file of another
    format is named in a Japanese error and left out. The files kept are returned as a list
    (one at most unless ``multiple``); ``kwargs`` go to ``st.file_uploader``.
    """
    got = st.file_uploader(label, type=None, accept_multiple_files=multiple, **kwargs)
    st.caption(upload_note(accept))
    files = list(got) if isinstance(got, list) else [got] if got is not None else []
    allowed = {"." + a.lstrip(".").lower() for a in accept}
    refused = [f for f in files if allowed and _extension(f.name) not in allowed]
    for upload in refused:
        st.error(
            f"「{upload.name}」はこの欄で使えない形式です。{_formats(accept)} ファイルを選んでください。",
            icon="❌",
        )
    return [f for f in files if f not in refused]


def upload_note(accept: Sequence[str]) -> str:
    """What the uploader says in English, in Japanese: the formats and the size limit."""
    limit = int(st.get_option("server.maxUploadSize"))
    kinds = _formats(accept)
    formats = f"{kinds} ファイル、" if kinds else ""
    return f"{formats}1 ファイル {limit:,} MB まで。ここにドラッグしても選べます。"
