"""Streamlit's own chrome in Japanese, where Streamlit allows it, and nothing from the internet.

Streamlit writes a few texts itself, in English, with no setting to change them (streamlit 1.67:
none of its widgets takes a locale or its texts): the file uploader's button ("Upload"), its line
"200MB per file • CSV", "Drag and drop a file here" while a file is dragged over it, the tooltip
of a file it refused ("File must be 200.0MB or smaller."), the "Press Enter to apply" under a
text box, the "Running... Stop" widget of the toolbar. One table (:data:`REWORDED`) names the
element showing each and what it says in Japanese instead; one style sheet (:func:`style`) hides
the English and writes the Japanese in its place (what a style sheet cannot reach, a table's
tooltips, the attributes a screen reader reads, the dialog of a server that stopped answering:
:mod:`keiri_agent.ui.chrome_words`). Each file field also says its formats and size
limit itself (:func:`upload_note`) and refuses another format in Japanese
(:func:`file_uploader`), and the pages show their own progress. The toolbar has no Deploy button
(``client.toolbarMode = "minimal"``, set by ``.streamlit/config.toml`` and by ``keiri-agent
ui``). The page icon is a file of the package, the one the progress page uses
(``server/static/icon.png``, found by path: the app does not import the server); a Material
icon would be fetched from a font server, and the app works with no internet access.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from keiri_agent.ui.chrome_words import SAID, SCRIPT_ID, script

__all__ = [
    "ICON_PATH",
    "REWORDED",
    "apply_chrome",
    "file_uploader",
    "monospace",
    "style",
    "upload_note",
]

ICON_PATH: Final = Path(__file__).resolve().parents[1] / "server" / "static" / "icon.png"
# The button's text is the one its screen-reader name says ("file upload", chrome_words).
UPLOAD_BUTTON: Final = SAID["file upload"]
# Texts Streamlit's file uploader writes itself (streamlit 1.67, FileUploader and its file
# chips), in English; none can be set by the app (streamlit/streamlit#13500 asks for it, open):
# each element showing one, and what it says instead ("" hides it). {limit} is the size limit.
REWORDED: Final[dict[str, str]] = {
    # "Upload"
    '[data-testid="stFileUploaderDropzone"] button [data-testid="stMarkdownContainer"] p': (
        UPLOAD_BUTTON
    ),
    # "200MB per file • CSV": each field says its formats and limit under it (upload_note)
    '[data-testid="stFileUploaderDropzoneInstructions"]': "",
    # "Drag and drop a file here" / "... files here", over the field while a file is dragged
    '[data-testid="stFileUploaderDropzone"] > div > span': "ここにファイルを放してください",
    # On a refused file's chip: "File must be 200.0MB or smaller.", "Only one file is allowed.",
    # "Upload failed", "Unexpected error. Please try again."
    '[data-testid="stTooltipErrorContent"]': (
        "このファイルは受け取れませんでした（1 ファイル {limit:,} MB まで、"
        "1 ファイルだけの欄には 1 つずつ）。× で外してから選び直してください。"
    ),
    # "Press Enter to apply" under a text box
    '[data-testid="InputInstructions"]': "",
    # "Running... Stop" in the toolbar: the pages show their own progress
    '[data-testid="stStatusWidget"]': "",
}


# Elements among them that paint a box around their text (a tooltip): hidden, the box would go
# with the English; the others are hidden (``visibility``) and only the Japanese is shown.
BOXES: Final = frozenset({'[data-testid="stTooltipErrorContent"]'})


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def style(limit_mb: int) -> str:
    """The style sheet saying :data:`REWORDED` (``limit_mb``: Streamlit's upload limit)."""
    rules = []
    for selector, text in REWORDED.items():
        if not text:
            rules.append(f"{selector} {{ display: none; }}")
            continue
        content = _css_string(text.format(limit=limit_mb))
        hidden = "" if selector in BOXES else " visibility: hidden;"
        rules.append(f"{selector} {{ font-size: 0;{hidden} }}")  # its English takes no space
        rules.append(
            f"{selector}::after {{ content: {content}; font-size: 0.875rem; visibility: visible; }}"
        )
    return "\n".join(rules)


def _upload_limit_mb() -> int:
    return int(st.get_option("server.maxUploadSize"))


def apply_chrome() -> None:
    """Put the style sheet on the page, and the script saying what it cannot reach
    (:mod:`keiri_agent.ui.chrome_words`); neither takes space."""
    hide_script = f'[data-testid="stElementContainer"]:has(#{SCRIPT_ID}) {{ display: none; }}'
    st.html(f"<style>{style(_upload_limit_mb())}\n{hide_script}</style>")
    st.html(script(), unsafe_allow_javascript=True)


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
    limit = _upload_limit_mb()
    kinds = _formats(accept)
    formats = f"{kinds} ファイル、" if kinds else ""
    return f"{formats}1 ファイル {limit:,} MB まで。ここにドラッグしても選べます。"
