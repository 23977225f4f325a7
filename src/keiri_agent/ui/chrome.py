"""Streamlit's own chrome in Japanese, where Streamlit allows it, and nothing from the internet.

Streamlit writes a few texts itself, in English, with no setting to change them: the file
uploader's button ("Upload") and its line "200MB per file • CSV", the "Press Enter to apply"
under a text box, the "Running... Stop" widget of the toolbar. The app hides the English ones
with a style sheet and says the same in Japanese: the button reads ファイルを選ぶ, each file field
says its formats and size limit itself (:func:`upload_note`), and the pages show their own
progress. The toolbar has no Deploy button (``client.toolbarMode = "minimal"``, set by
``.streamlit/config.toml`` and by ``keiri-agent ui``). The page icon is a file of the package,
the one the progress page uses (``server/static/icon.png``, found by path: the app does not
import the server); a Material icon would be fetched from a font server, and the app works with
no internet access.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import streamlit as st

__all__ = ["ICON_PATH", "STYLE", "apply_chrome", "monospace", "upload_note"]

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


def upload_note(accept: Sequence[str]) -> str:
    """What the uploader says in English, in Japanese: the formats and the size limit."""
    limit = int(st.get_option("server.maxUploadSize"))
    kinds = "・".join(a.lstrip(".").upper() for a in accept)
    formats = f"{kinds} ファイル、" if kinds else ""
    return f"{formats}1 ファイル {limit:,} MB まで。ここにドラッグしても選べます。"
