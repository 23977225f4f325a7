"""A header of two rows, groups over columns (``借方 | | 貸方 |`` over ``科目 | 金額 | 科目 |
金額``), reads as one header in every file form ``tests/support/ledger_headers`` draws: the
columns named ``借方_科目``, ``借方_金額``..., each with its own values; so does such a header
over rows of text alone (a table of journal patterns: dates and words, no amount), and a
header of three rows (``借方`` over ``科目 | 金額`` over ``勘定 | 補助``: ``借方_科目_勘定``).

Before round 20 only a workbook with the groups merged read so; the same ledger saved as CSV
(Excel writes a merged cell's value once and blanks after it) or typed without merging read
as ``列1``...``列6`` (both header rows set aside as titles), or, where the columns were
written in both rows, as ``科目``/``科目_2``: which one is 借方 was lost. Before round 21 a
header over rows of text, and every unmerged header of three rows (and a third of the merged
ones), still read so.
"""

from __future__ import annotations

import pandas as pd
import pytest

from keiri_agent.documents.tables import read_table
from tests.support.ledger_headers import FILES, SHAPES, Book, book_file, draw

SEEDS = {"two": 12, "text": 6, "three": 6}  # books of each shape in each file form


def mismatch(book: Book, form: str) -> str | None:
    """What ``read_table`` got wrong in ``book`` written as ``form``, or None."""
    data, name = book_file(book, form)
    result = read_table(data, name=name)
    if list(result.df.columns) != book.names:
        return f"columns {list(result.df.columns)}"
    for j, column in enumerate(book.names):
        if "日付" in column:
            continue
        want = [row[j] for row in book.rows]
        got = [None if v is None or v is pd.NA or v != v else v for v in result.df[column]]
        if got != want:
            return f"{column}: {got[:3]}"
    if not any(f"{len(book.head)} 行にまたがっていた" in w for w in result.info.warnings):
        return "no note"
    return None


@pytest.mark.parametrize("form", FILES)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_header_of_groups_reads_as_one(shape: str, form: str) -> None:
    found = {seed: mismatch(draw(seed, shape=shape), form) for seed in range(SEEDS[shape])}
    bad = {seed: why for seed, why in found.items() if why is not None}
    assert bad == {}, list(bad.items())[:3]


def test_a_title_or_a_key_value_row_is_not_a_group() -> None:
    body = "".join(f"2026/02/{d:02d},交通費,{d * 100},営業部\r\n" for d in range(1, 13))
    titled = read_table(f"売上明細,,,\r\n日付,摘要,金額,部門\r\n{body}".encode(), name="a.csv")
    assert list(titled.df.columns) == ["日付", "摘要", "金額", "部門"]
    keyed = read_table(
        f"会社名,山田商事,,期間\r\n日付,摘要,金額,部門\r\n{body}".encode(), name="a.csv"
    )
    assert list(keyed.df.columns) == ["日付", "摘要", "金額", "部門"]


def test_a_table_of_text_under_one_header_is_not_a_group() -> None:
    body = "".join(f"パターン{n},地代家賃,事務所,普通預金,\r\n" for n in range(1, 9))
    csv = f"仕訳パターン一覧,,,,\r\nパターン名,借方科目,,貸方科目,摘要\r\n{body}"
    result = read_table(csv.encode(), name="a.csv")
    assert list(result.df.columns) == ["パターン名", "借方科目", "列3", "貸方科目", "摘要"]
