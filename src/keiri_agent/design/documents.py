"""Reference documents for plan generation (seed 004 §2): files → text, within the seed's limits.

Each file goes through the file layer's ``extract_text`` (``.txt/.md/.pdf/.docx/.xlsx`` and the
other supported types; PDFs from their first 20 pages, Excel from the first sheet's top-left
range); together they stop at ~100,000 characters, and what was cut is said in the text. The
engine later compresses them to ~4,000 characters for the prompt (``normalize_for_prompt``).
A file that cannot be read is an error naming it, never an empty document.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from keiri_agent.documents.extract import extract_text

__all__ = ["MAX_DOCUMENTS_CHARS", "MAX_DOCUMENT_PAGES", "read_documents"]

MAX_DOCUMENTS_CHARS = 100_000
MAX_DOCUMENT_PAGES = 20


def read_documents(paths: Sequence[Path | str]) -> list[str]:
    """The text of each file, headed by its name, within :data:`MAX_DOCUMENTS_CHARS` in all."""
    texts: list[str] = []
    left = MAX_DOCUMENTS_CHARS
    for path in paths:
        if left <= 0:
            texts.append(f"（{Path(path).name} 以降は文字数の上限のため読み込んでいません）")
            break
        extracted = extract_text(Path(path), max_chars=left, max_pages=MAX_DOCUMENT_PAGES)
        note = "（上限のため途中まで）" if extracted.truncated else ""
        texts.append(f"{extracted.file}{note}\n{extracted.text}")
        left -= len(extracted.text)
    return texts
