"""read_table on cash books and ledgers closed as bookkeepers close them (``ledger_books``).

A 前月繰越 written in the 収入 column, a 次月繰越 in the 支出 column and a page's 次頁へ繰越
carry a balance; they are not money received or paid. Each drawn book (300: 100 seeds in a
CP932 CSV, a UTF-8 CSV and a workbook) must read back with every transaction and every
balance-only carry row in place, the carries written in the money columns set aside with the
totals (labelled, at their line), the money columns summing to the transactions alone, no cell
unreadable, and the file's own 合計 (which counts the carries) found consistent.
"""

from __future__ import annotations

import functools

import pytest

from keiri_agent.documents.tables import TableResult, read_table
from tests.support.ledger_books import FORMATS, STYLES, Book, book

SEEDS = range(100)


@functools.cache
def _read(seed: int, fmt: str) -> tuple[Book, TableResult]:
    drawn = book(seed, fmt)  # type: ignore[arg-type]
    return drawn, read_table(drawn.drawn.data(), name=drawn.drawn.name)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_carried_balances_are_not_read_as_money_moved(seed: int, fmt: str) -> None:
    drawn, result = _read(seed, fmt)
    expected = drawn.drawn
    assert result.info.columns == expected.columns
    assert result.table().records() == expected.records
    assert result.positions is not None
    assert result.positions.tolist() == expected.positions()
    assert [t["label"] for t in result.info.totals] == expected.totals
    assert result.info.unreadable == []
    assert result.amount_differences() == []
    for column, total in drawn.flows.items():
        assert sum(result.df[column].dropna().tolist()) == total, column
    if drawn.carried:
        said = next(w for w in result.info.warnings if w.startswith("繰越の行"))
        assert f"繰越の行 {drawn.carried} 行をデータから外しました" in said


def test_the_generator_draws_every_style_with_carries_in_money_columns() -> None:
    drawn = [book(seed, "csv-cp932") for seed in SEEDS]
    assert {b.style for b in drawn} == set(STYLES)
    assert sum(b.carried > 0 for b in drawn) >= 40
    assert all(b.carried == 0 for b in drawn if b.style == "export")


@pytest.mark.parametrize(
    ("cell", "carry"),
    [
        ("前月繰越", True),
        ("次期繰越", True),
        ("前頁より繰越", True),
        ("次ページへ繰越", True),
        ("【繰越】", True),
        ("前期繰越額", True),
        ("繰越利益剰余金", False),
        ("繰越商品", False),
        ("前月繰越分の入金", False),
    ],
)
def test_carry_labels_are_the_words_of_a_carried_balance(cell: str, carry: bool) -> None:
    text = f"日付,摘要,収入,支出,残高\r\n2026/2/1,{cell},1000,,1000\r\n2026/2/2,売上,500,,1500\r\n"
    result = read_table(text.encode("cp932"), name="出納帳.csv")
    assert [t["label"] for t in result.info.totals] == ([cell] if carry else [])
    assert result.df["収入"].sum() == (500 if carry else 1500)


def test_a_carry_with_its_balance_alone_stays_a_row_and_a_closed_book_adds_up() -> None:
    text = (
        "現金出納帳\r\n日付,摘要,収入,支出,残高\r\n"
        '2026/2/1,前月繰越,,,"10,000"\r\n'  # balance alone: a row, as written
        '2026/2/3,売上,"5,000",,"15,000"\r\n'
        '2026/2/9,切手代,,840,"14,160"\r\n'
        '2026/2/28,次月繰越,,"14,160",\r\n'  # in 支出: set aside
        '合計,,"5,000","15,000",\r\n'  # the rows plus the carry: consistent
    )
    result = read_table(text.encode("cp932"), name="出納帳.csv")
    assert result.df["摘要"].tolist() == ["前月繰越", "売上", "切手代"]
    assert result.df["支出"].sum() == 840
    assert [t["label"] for t in result.info.totals] == ["次月繰越", "合計"]
    assert result.total_differences == []
