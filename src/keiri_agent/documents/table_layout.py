"""Rows of a printed or paged export that are layout, not data.

A ledger printed to PDF and saved back as CSV, or an export cut into pages, repeats on every
page what stood above the table: the header row, the title and period lines, and writes a
page number between pages; some put the unit line (``（単位：千円）``) under the table instead
of above it. Read as data, a repeated header is a row of text in the amount columns (the
column stays text, a block stops at 「金額」) and a unit under the table is lost. A row is a
layout row when, anywhere below the header,

* its filled cells each equal the header's cell in the same column (spaces and full-width
  forms aside) and they are at least ``MIN_HEADER_CELLS`` of them (or the whole header of a
  narrower table): the header repeated (for a header of several rows, any of its rows);
* it stands above a repeated header, fills at most ``MAX_LAYOUT_CELLS`` cells and its text
  is one of the title rows above the header (``仕訳日記帳``, ``期間：…``) or a page number
  (``1/3 ページ``, ``- 2 -``, ``P.2``, ``2頁``): the break between two pages;
* it fills at most ``MAX_LAYOUT_CELLS`` cells and its text is a unit statement alone
  (``（単位：千円）``, ``単位：円``, ``[単位:千円]``), wherever it stands.

Layout rows are set aside with their places (``TableReadInfo.layout``), and a unit statement
among them names the unit as a title row does. A row that holds anything else is data. Page
numbers and notes under the last page are left to the footer rule (``table_totals``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MAX_LAYOUT_CELLS", "MIN_HEADER_CELLS", "layout_rows", "row_text"]

# Cells of the header a repeated header row must repeat at least (a narrower table: all).
MIN_HEADER_CELLS = 2
# Cells a title, page-number or unit line fills at most (a title and its period, a number).
MAX_LAYOUT_CELLS = 2

_SPACES = re.compile(r"\s+")
_PAGE = re.compile(
    r"(?:第\s*)?[0-9]+\s*(?:/\s*[0-9]+\s*)?(?:ページ|頁)(?:目)?|"
    r"(?:ページ|頁|page|p\.?)\s*[:：]?\s*[0-9]+(?:\s*/\s*[0-9]+)?|"
    r"-\s*[0-9]+\s*-|\(\s*[0-9]+\s*/\s*[0-9]+\s*\)",
    re.IGNORECASE,
)
_UNIT_LINE = re.compile(
    r"[(\[【<]?\s*単位\s*[:：]?\s*(?:百万円|千円|万円|円)\s*[)\]】>]?|[(\[【]\s*(?:百万円|千円|万円|円)\s*[)\]】]"
)


def _key(value: Any) -> str:
    """A cell as compared here: NFKC, no spaces ("" for a blank)."""
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
        return ""
    return _SPACES.sub("", unicodedata.normalize("NFKC", str(value)))


def row_text(cells: Sequence[Any]) -> str:
    """A row's filled cells joined by a space, as title rows and notes are shown."""
    return " ".join(str(v).strip() for v in cells if _key(v))


def _repeated_header(frame: pd.DataFrame, header: Sequence[Any]) -> np.ndarray:
    """Rows that repeat the header (module docstring)."""
    found = np.zeros(len(frame), dtype=bool)
    names = [_key(v) for v in header] + [""] * (frame.shape[1] - len(header))
    named = [j for j, n in enumerate(names) if n]
    need = min(MIN_HEADER_CELLS, len(named))
    if not named:
        return found
    # Candidates: rows whose first named column holds that name, spaces around it aside.
    first = named[0]
    name = str(header[first]).strip()
    column = frame.iloc[:, first]
    if isinstance(column.dtype, pd.StringDtype):
        same = column.str.strip().eq(name).fillna(False).astype(bool)
    else:
        same = column.map(lambda v: isinstance(v, str) and v.strip() == name).astype(bool)
    candidates = np.flatnonzero(same.to_numpy(dtype=bool))
    for i in candidates.tolist():
        keys = [_key(v) for v in frame.iloc[i].tolist()]
        filled = [j for j, k in enumerate(keys) if k]
        if len(filled) >= need and all(keys[j] == names[j] for j in filled):
            found[i] = True
    return found


def layout_rows(
    frame: pd.DataFrame, headers: Sequence[Sequence[Any]], titles: Sequence[str]
) -> tuple[np.ndarray, list[str]]:
    """``(mask, units)`` for ``frame`` (raw cells under the header, blank rows dropped; its
    ``headers``: the column names, and each row of a header of several rows): its layout
    rows, and the unit lines among them (their text, for ``table_types.unit_in``)."""
    found = np.zeros(len(frame), dtype=bool)
    for header in headers:
        if len(header):
            found |= _repeated_header(frame, header)
    if frame.empty:
        return found, []
    repeats = np.flatnonzero(found)
    last_header = int(repeats[-1]) if len(repeats) else -1
    filled = frame.notna().to_numpy(dtype=bool)
    counts = filled.sum(axis=1)
    short = (counts > 0) & (counts <= MAX_LAYOUT_CELLS)
    # Only a page break's rows or a row naming 円 can be one (a narrow table stays cheap).
    maybe = short & (np.arange(len(frame)) < last_header)
    maybe[_naming_yen(frame, np.flatnonzero(short), filled)] = True
    title_keys = {_key(t) for t in titles}
    units: list[str] = []
    unit_rows = np.zeros(len(frame), dtype=bool)
    for i in np.flatnonzero(maybe).tolist():
        cells = frame.iloc[i].tolist()
        key = "".join(_key(v) for v in cells)
        if _UNIT_LINE.fullmatch(key):
            units.append(unicodedata.normalize("NFKC", row_text(cells)))
            unit_rows[i] = True
        elif i < last_header and (key in title_keys or _PAGE.fullmatch(key)):
            found[i] = True
    return found | unit_rows, units


def _naming_yen(frame: pd.DataFrame, rows: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """Those of ``rows`` whose first filled cell names 円 or 単位, column by column."""
    first = filled[rows].argmax(axis=1)
    hits = []
    for j in np.unique(first).tolist():
        at = rows[first == j]
        cells = frame.iloc[at, j]
        if isinstance(cells.dtype, pd.StringDtype):
            hit = cells.str.contains("円|単位", regex=True).fillna(False).to_numpy(dtype=bool)
        else:
            hit = np.fromiter(
                (isinstance(v, str) and ("円" in v or "単位" in v) for v in cells.tolist()),
                bool,
                len(at),
            )
        hits.append(at[hit])
    return np.concatenate(hits) if hits else np.zeros(0, dtype=np.int64)
