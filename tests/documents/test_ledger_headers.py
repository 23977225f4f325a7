"""A header of two rows, groups over columns (``借方 | | 貸方 |`` over ``科目 | 金額 | 科目 |
金額``), reads as one header in every file form ``tests/support/ledger_headers`` draws: the
columns named ``借方_科目``, ``借方_金額``..., each with its own values.

Before this round only a workbook with the groups merged read so; the same ledger saved as CSV
(Excel writes a merged cell's value once and blanks after it) or typed without merging read
as ``列1``...``列6`` (both header rows set aside as titles), or, where the columns were
written in both rows, as ``科目``/``科目_2``: which one is 借方 was lost.
"""

from __future__ import annotations

import pytest

from keiri_agent.documents.tables import read_table
from tests.support.ledger_headers import FILES, Book, book_file, draw

SEEDS = 40  # books in each file form


def mismatch(book: Book, form: str) -> str | None:
    """What ``read_table`` got wrong in ``book`` written as ``form``, or None."""
    data, name = book_file(book, form)
    result = read_table(data, name=name)
    if list(result.df.columns) != book.names:
        return f"columns {list(result.df.columns)}"
    for j, column in enumerate(book.names):
        want = [row[j] for row in book.rows]
        if all(isinstance(v, int) for v in want) and result.df[column].tolist() != want:
            return f"{column}: {result.df[column].tolist()[:3]}"
    if not any("2 行にまたがっていた" in w for w in result.info.warnings):
        return "no note"
    return None


@pytest.mark.parametrize("form", FILES)
def test_a_header_of_groups_reads_as_one(form: str) -> None:
    found = {seed: mismatch(draw(seed), form) for seed in range(SEEDS)}
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
