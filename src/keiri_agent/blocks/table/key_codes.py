"""Rows numbered by their key: how the table blocks compare key columns at scale.

A key column of a million rows holds far fewer distinct values (customers, codes, dates). The
blocks compare keys by a rule of text (:func:`~keiri_agent.blocks.table.normalize.normalize_key`:
``Ａ００１`` is ``a001``), so the rule is applied once per **distinct value** of a column
(``pd.factorize``) and spread back to the rows as integer codes. Codes are what the blocks then
join, block and group on, with numpy.

:func:`column_codes` numbers one key column of one or more tables (the two sides of a join) in
one shared numbering: equal keys get equal codes on every side, a blank key ``-1``.
:func:`combine` makes one code per row of several key columns (blank if any part is).
:func:`first_rows` gives where each code first appears. ``True`` and ``1`` hash alike in pandas;
they are kept apart, as the rule of text keeps them (``true`` / ``1``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.documents.table_value import Table

__all__ = ["KeyRule", "column_codes", "combine", "distinct_values", "first_rows", "key_column"]

# What a distinct cell compares by (a normalized text, a tagged value...), None when it is blank.
KeyRule = Callable[[Any], Hashable | None]


def _bool_alike(value: Any) -> bool:
    """Values pandas may merge with a bool: bools themselves, and numbers equal to 0 or 1."""
    if isinstance(value, bool | np.bool_):
        return True
    return isinstance(value, int | float | np.integer | np.floating) and value in (0, 1)


def _hashable(value: Any) -> Any:
    """``value``, or its text (``str``, as a record shows it) when it cannot be hashed."""
    try:
        hash(value)
    except TypeError:
        return str(value)
    return value


def key_column(table: Table, name: str) -> pd.Series:
    """The column ``name``; an empty table made from no records may lack it (all blank)."""
    if name in table.frame.columns:
        return table.frame[name]
    return pd.Series([None] * len(table), dtype=object)


def distinct_values(column: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """``(codes, values)``: each row's index into the column's distinct values (-1 for null,
    NaN, NA), in order of first appearance; bools stay apart from 0 and 1."""
    try:
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
    except TypeError:  # a list or a mapping in a record: compared by its text, as it shows
        column = column.map(_hashable)
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
    values = uniques.tolist()  # Python objects at once (iterating an Arrow array is slower)
    if column.dtype == object and any(_bool_alike(v) for v in values):
        # Only now look at every cell: does the column really mix bools and numbers?
        filled = column.notna().to_numpy()
        cells = column.to_numpy()[filled]
        if {bool, np.bool_} & set(map(type, cells)):
            tagged = np.empty(len(cells), dtype=object)
            tagged[:] = [(isinstance(v, bool | np.bool_), v) for v in cells]
            inner, pairs = pd.factorize(tagged)
            codes = np.full(len(column), -1, dtype=np.int64)
            codes[filled] = inner
            values = [pair[1] for pair in pairs]
    return np.asarray(codes, dtype=np.int64), values


def column_codes(
    sides: Sequence[pd.Series], rule: KeyRule
) -> tuple[list[np.ndarray], list[Hashable]]:
    """``(codes, keys)``: for each of ``sides`` (the same key column of several tables), every
    row's code in one numbering shared by all sides (-1 where ``rule`` finds the cell blank),
    and the key each code stands for. ``rule`` runs once per distinct value of all the sides
    together (a value on both sides of a join is normalized once)."""
    sizes = [len(column) for column in sides]
    if len(sides) == 1:
        joint = sides[0]
    else:
        parts = [column.reset_index(drop=True) for column in sides]
        joint = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    raw, values = distinct_values(joint)
    numbering: dict[Hashable, int] = {}
    keys: list[Hashable] = []
    mapped = np.full(len(values) + 1, -1, dtype=np.int64)  # the last slot serves raw -1
    for n, value in enumerate(values):
        key = rule(value)
        if key is None:
            continue
        code = numbering.get(key)
        if code is None:
            code = numbering[key] = len(keys)
            keys.append(key)
        mapped[n] = code
    return list(np.split(mapped[raw], np.cumsum(sizes)[:-1])), keys


def combine(columns: Sequence[Sequence[np.ndarray]]) -> tuple[list[np.ndarray], int]:
    """``(codes, count)``: one code per row (``0..count-1``) from several key columns' codes
    (``columns[c][side]``): equal when every part is, -1 when a part is; numbered in order of
    first appearance over the sides in turn."""
    sizes = [len(codes) for codes in columns[0]]
    if len(columns) == 1:  # column_codes numbers densely in first appearance already
        top = max((int(c.max()) for c in columns[0] if c.size), default=-1)
        return list(columns[0]), top + 1
    parts = [np.concatenate(list(sides)) for sides in columns]
    keep = np.ones(sum(sizes), dtype=bool)
    for part in parts:
        keep &= part >= 0
    code, _ = pd.factorize(parts[0][keep])
    for part in parts[1:]:
        values = part[keep]
        # Both factors are below the row count, so the product stays far inside int64.
        width = int(values.max()) + 1 if values.size else 1
        code, _ = pd.factorize(code * width + values)
    out = np.full(len(keep), -1, dtype=np.int64)
    out[keep] = code
    count = int(code.max()) + 1 if code.size else 0
    return list(np.split(out, np.cumsum(sizes)[:-1])), count


def first_rows(codes: np.ndarray, count: int) -> np.ndarray:
    """Where each of the codes ``0..count-1`` first appears in ``codes`` (-1 if nowhere)."""
    rows = np.flatnonzero(codes >= 0)
    first = np.full(count, len(codes), dtype=np.int64)
    np.minimum.at(first, codes[rows], rows)
    return np.where(first == len(codes), -1, first)
