"""What people call a block: the one rule of every place that names one.

A block is named by its ``label`` (``表の集計``); a block without one (a custom block) by its
description's first sentence, when short enough to be a name (``指定秒数待ってから返す``,
:func:`description_name`), else by its category as people call it (``表の処理のブロック``,
:data:`CATEGORY_WORDS`; ``ブロック`` for a category without a word), never by its YAML id.
``BlockSpec.shown_name`` says it, for ``blocks list/show``, the catalog and docs/blocks.md, the
app's pages, the checks' messages, the dry run, and a plan's node with no description of its own
(``plan/_graph/names``). Below ``spec``, it imports nothing of the package.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["CATEGORY_WORDS", "MAX_NAME_CHARS", "category_word", "description_name", "shown_block"]

MAX_NAME_CHARS: Final = 30  # a longer description is a sentence, not a name
_SENTENCE_END: Final = re.compile(r"[。\n]")
# A block's category as people call it (the block specs' ``category``, a YAML name).
CATEGORY_WORDS: Final = {
    "ai": "AI", "data": "データ変換", "excel": "Excel", "file": "ファイル",
    "report": "レポート", "table": "表の処理", "text": "テキスト", "ui": "入力フォーム",
}  # fmt: skip


def description_name(description: str | None) -> str | None:
    """A description's first sentence, when short enough to be a name."""
    text = (description or "").strip()
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip()
    return first if first and len(first) <= MAX_NAME_CHARS else None


def category_word(category: str) -> str:
    """A category as people call it (the category itself when it has no word)."""
    return CATEGORY_WORDS.get(category, category)


def shown_block(label: str | None, description: str, category: str) -> str:
    """The name of a block of this ``label``, ``description`` and ``category`` (see the module
    docstring)."""
    if label:
        return label
    own = description_name(description)
    if own is not None:
        return own
    word = CATEGORY_WORDS.get(category)
    return f"{word}のブロック" if word is not None else "ブロック"
