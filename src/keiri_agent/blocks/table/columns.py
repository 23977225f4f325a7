"""Column names a plan refers to: the closest existing name when one is missing.

An LLM or a person writes ``売上金額`` for a table whose column is ``売上 金額`` or ``売上額``;
the error should say which column was probably meant. Names are compared after the table
blocks' normalization (NFKC, whitespace removed, casefold), then by similarity (difflib).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from keiri_agent.blocks.inputs import item_error
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.errors import BlockError, input_error

__all__ = ["SIMILARITY_CUTOFF", "closest_column", "item_column", "unknown_column_error"]

SIMILARITY_CUTOFF = 0.5  # difflib ratio below which no name is suggested


def closest_column(name: str, available: Sequence[str]) -> str | None:
    """The existing column ``name`` most likely means, or None when nothing is close."""
    wanted = normalize_key(name)
    for column in available:
        if normalize_key(column) == wanted:
            return column
    keys = {normalize_key(c): c for c in available}
    found = difflib.get_close_matches(wanted, list(keys), n=1, cutoff=SIMILARITY_CUTOFF)
    return keys[found[0]] if found else None


def item_column(
    item: Any, number: int, field: str, keys: tuple[str, ...], hint: str, *, not_mapping: str
) -> str:
    """The ``column`` of the ``number``-th entry of the list input ``field``, a non-blank string
    (as written: callers strip it). The entry must be a mapping (``not_mapping``: the error's
    problem when it is not) whose keys are among ``keys``."""
    if not isinstance(item, Mapping):
        raise item_error(field, number, not_mapping, hint)
    column = item.get("column")
    unknown = sorted(str(k) for k in item if k not in keys)
    if not isinstance(column, str) or not column.strip() or unknown:
        raise item_error(
            field,
            number,
            f"に列名（column）がないか、使えないキー（{', '.join(unknown) or 'なし'}）があります。",
            hint,
        )
    return column


def unknown_column_error(
    name: str, available: Iterable[str], *, field: str, where: str = ""
) -> BlockError:
    """INPUT_VALIDATION_FAILED naming the missing column, the closest one and all columns."""
    columns = list(available)
    close = closest_column(name, columns)
    guess = f"「{close}」のことではありませんか。" if close else ""
    return input_error(
        f"{where}列「{name}」が表にありません。{guess}",
        f"{field} には表にある列名をそのまま書いてください。使える列: {', '.join(columns) or 'なし'}",
        field=field,
        column=name,
        closest=close,
        available=columns,
    )
