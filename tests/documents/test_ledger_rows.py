"""Reading a long ledger a column at once gives exactly what reading every cell one by one gives.

``read_table`` reads the commonest forms of a long column together (marked amounts
``¥1,234`` / ``△1,234`` / ``(1,234)`` / ``1,234円``, dates ``2026年2月3日``; the column's
reading of a dash after a yen amount from the cells that end in a dash; each distinct text of
a column once). Property: the result is the same, to the last value, note and listed cell, as
the reading cell by cell that it replaces (below: every cell through ``read_amount_unit``,
``dash_form`` and ``_date_value``, each cell even where its text repeats), on ledgers drawn by ``tests/support/ledger_rows`` in each
style of the dash after an amount, as CSV and as a workbook. The speed itself is measured by
``benchmarks/table_read.py`` (no timed test here).
"""

from __future__ import annotations

import csv
import random
import re
import unicodedata
from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.documents import table_cells, table_types
from keiri_agent.documents.cell_forms import (
    DASH_END,
    DASH_MINUS,
    PLAIN_NUMBER,
    dash_form,
    ends_in_dash,
    normalize_cell_text,
    read_amount_unit,
)
from keiri_agent.documents.table_cells import marked_amounts
from keiri_agent.documents.tables import read_table
from tests.documents import cell_shapes, system_forms
from tests.documents.test_table_footer import xlsx_bytes
from tests.support.ledger_rows import STYLES, _amount, digest, ledger_csv

ROWS = 1200  # rows of each drawn ledger: more than the 200 cells a column's type is probed on
SEEDS = 2


def _yen_dash_cell_by_cell(values: pd.Series) -> tuple[str | None, list[Any]]:
    """The column's reading of a dash after a yen amount as its docstring states it, every
    non-plain cell classed by ``dash_form``."""
    plain = values.map(lambda v: isinstance(v, str) and re.fullmatch(PLAIN_NUMBER, v) is not None)
    forms: dict[str | None, list[Any]] = {}
    for label, value in values[~plain.to_numpy(dtype=bool)].items():
        if isinstance(value, str):
            forms.setdefault(dash_form(value), []).append(label)
    numbers = values.map(
        lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
    )
    unsigned = (
        any("-" not in v for v in values[plain.to_numpy(dtype=bool)])
        or bool(numbers.fillna(False).astype(bool).any())
        or bool(forms.get("unsigned") or forms.get("yen"))
    )
    marked = forms.get("yen_dash", [])
    if not marked:
        return None, []
    if not forms.get("yen") and not forms.get("trailing"):
        return DASH_END, marked
    return (DASH_MINUS if forms.get("trailing") and unsigned else None), marked


def _nothing_at_once(texts: pd.Series) -> tuple[pd.Series, Any, list[str | None]]:
    return pd.Series(False, index=texts.index), [], []


@pytest.fixture
def cell_by_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_table`` with every column-at-once reading replaced by reading every cell."""
    monkeypatch.setattr(table_types, "_yen_dash", _yen_dash_cell_by_cell)
    monkeypatch.setattr(table_types, "marked_amounts", _nothing_at_once)
    monkeypatch.setattr(table_types, "each_once", lambda read, cells: [read(c) for c in cells])
    monkeypatch.setattr(  # every cell read, even where its text repeats
        table_types, "distinct", lambda cells: (np.arange(len(cells)), list(cells))
    )
    monkeypatch.setattr(table_types, "_VECTOR_DATES", table_types._VECTOR_DATES[:2])


def _files() -> list[tuple[str, bytes]]:
    files = []
    for style in STYLES:
        for seed in range(SEEDS):
            files.append((f"{style}-{seed}.csv", ledger_csv(ROWS, seed, style)))
        text = ledger_csv(300, SEEDS, style).decode("utf-8-sig")
        rows = [line.split(",") for line in text.splitlines() if '"' not in line]
        files.append((f"{style}.xlsx", xlsx_bytes(rows)))
    return files


FILES = _files()


def _digests() -> dict[str, str]:
    return {name: digest(read_table(data, name=name)) for name, data in FILES}


def test_column_at_once_reads_as_cell_by_cell(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = _digests()  # columns this short are asked with Python's regex
    monkeypatch.setattr(table_cells, "AT_ONCE_CELLS", 0)  # and with Arrow's, as 10万 rows are
    arrow = _digests()
    monkeypatch.undo()
    request.getfixturevalue("cell_by_cell")
    by_cell = _digests()
    different = [name for name in by_cell if not short[name] == arrow[name] == by_cell[name]]
    assert different == [], different


def test_the_drawn_ledgers_exercise_every_reading_of_the_dash() -> None:
    readings = set()
    for name, data in FILES:
        if name.endswith(".csv"):
            lines = data.decode("utf-8-sig").splitlines()[2:]
            amounts = pd.Series([next(csv.reader([line]))[5] for line in lines])
            readings.add(_yen_dash_cell_by_cell(amounts)[0])
    assert readings == {None, DASH_END, DASH_MINUS}


def _drawn_amounts() -> list[str]:
    rng = random.Random("marked-amounts")
    texts = [cell_shapes.amount_cell(rng).text for _ in range(3000)]
    texts += [system_forms.amount_cell(rng).text for _ in range(1000)]
    texts += [_amount(rng, rng.randrange(-(10**7), 10**7), rng.choice(STYLES)) for _ in range(3000)]
    return [*texts, "¥0", "▲0", "(0)", "¥01,234", "¥1234567890123456", "(▲1,234)", "▲(1,234)"]


def test_marked_amounts_read_as_read_amount_unit() -> None:
    texts = pd.Series(_drawn_amounts(), dtype="str")
    mask, numbers, units = marked_amounts(texts)
    taken = texts[mask.to_numpy()].tolist()
    assert len(taken) > 1000  # the common forms are taken at once
    one_by_one = [read_amount_unit(t) for t in taken]
    assert one_by_one == list(zip(numbers.tolist(), units, strict=True))


def test_ends_in_dash_is_the_normal_form_ending_in_a_dash() -> None:
    tails = [chr(c) for c in range(0x20, 0x10000) if not 0xD800 <= c < 0xE000]
    texts = [f"1,200{c}" for c in tails] + [f"¥1,200{c} " for c in tails] + _drawn_amounts()
    texts += [unicodedata.normalize("NFD", "1,200ガ"), "ｶﾞ", "1,200-\u0301", "\u3000-\u3000"]
    wrong = [t for t in texts if ends_in_dash(t) != normalize_cell_text(t).endswith(("-", "ー"))]
    assert wrong == []
