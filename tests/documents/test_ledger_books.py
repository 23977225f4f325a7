"""read_table on cash books closed as bookkeepers close them (``ledger_books``) and on detail
tables whose group totals are labelled as printouts and Excel label them (``ledger_groups``).

A 前月繰越 written in the 収入 column, a 次月繰越 in the 支出 column and a page's 次頁へ繰越
carry a balance; they are not money received or paid. Each drawn book (300: 100 seeds in a
CP932 CSV, a UTF-8 CSV and a workbook) must read back with every transaction and every
balance-only carry row in place, the carries written in the money columns set aside with the
totals (labelled, at their line), the money columns summing to the transactions alone, no cell
unreadable, and the file's own 合計 (which counts the carries) found consistent.

A group's total labelled ``営業部 集計``, ``*** 小計 ***``, ``小計 3件``, ``合計（税込）``, or
``小計`` after the group's code and name written again, is a total: each drawn grouped table
(300 likewise) must read back with its entries alone and every total row set aside.
"""

from __future__ import annotations

import functools

import pytest

from keiri_agent.documents.table_totals import is_total_label
from keiri_agent.documents.tables import TableResult, read_table
from tests.documents.fresh_ledgers import Drawn
from tests.support.ledger_books import FORMATS, STYLES, Book, book
from tests.support.ledger_groups import Grouped, grouped

SEEDS = range(100)


@functools.cache
def _read(seed: int, fmt: str) -> tuple[Book, TableResult]:
    drawn = book(seed, fmt)  # type: ignore[arg-type]
    return drawn, read_table(drawn.drawn.data(), name=drawn.drawn.name)


@functools.cache
def _read_grouped(seed: int, fmt: str) -> tuple[Grouped, TableResult]:
    drawn = grouped(seed, fmt)  # type: ignore[arg-type]
    return drawn, read_table(drawn.drawn.data(), name=drawn.drawn.name)


def _check(expected: Drawn, sums: dict[str, int], result: TableResult) -> None:
    """The entries, their lines, the rows set aside and the columns' sums as drawn."""
    assert result.info.columns == expected.columns
    assert result.table().records() == expected.records
    assert result.positions is not None
    assert result.positions.tolist() == expected.positions()
    assert [t["label"] for t in result.info.totals] == expected.totals
    assert result.info.unreadable == []
    assert result.amount_differences() == []
    for column, total in sums.items():
        assert sum(result.df[column].dropna().tolist()) == total, column


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_carried_balances_are_not_read_as_money_moved(seed: int, fmt: str) -> None:
    drawn, result = _read(seed, fmt)
    _check(drawn.drawn, drawn.flows, result)
    if drawn.carried:
        said = next(w for w in result.info.warnings if w.startswith("繰越の行"))
        assert f"繰越の行 {drawn.carried} 行をデータから外しました" in said


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_group_totals_are_set_aside_however_labelled(seed: int, fmt: str) -> None:
    drawn, result = _read_grouped(seed, fmt)
    _check(drawn.drawn, drawn.sums, result)


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


@pytest.mark.parametrize(
    "cell",
    [
        "営業部 集計",
        "*** 小計 ***",
        "＊＊合計＊＊",
        "■小計",
        "― 合計 ―",
        "合計 12件",
        "小計（3件）",
        "小計（10%対象）",
        "合計（税込）",
        "合計金額",
        "総合計額",
    ],
)
def test_a_label_with_marks_a_count_or_a_note_is_a_total(cell: str) -> None:
    assert is_total_label(cell)


@pytest.mark.parametrize("cell", ["会計(税込)", "設計 12件", "集計表", "月次集計", "*** 会計 ***"])
def test_words_ending_in_kei_stay_words_however_decorated(cell: str) -> None:
    assert not is_total_label(cell)


def test_a_row_whose_first_cells_differ_from_the_row_above_is_an_entry() -> None:
    text = (
        "部門コード,部門,科目,金額\r\n"
        '001,営業部,旅費交通費,"12,000"\r\n'
        '002,管理部,小計,"3,000"\r\n'  # not the group above: a 科目 named so is an entry
        '002,管理部,通信費,"5,000"\r\n'
    )
    result = read_table(text.encode("cp932"), name="部門別.csv")
    assert result.df["金額"].tolist() == [12000, 3000, 5000]
    assert result.info.totals == []
