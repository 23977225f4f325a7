"""read_table on detail tables whose group totals are labelled as printouts and Excel label
them (``ledger_groups``): ``営業部 集計``, ``*** 小計 ***``, ``小計 3件``, ``合計（税込）``, or
``小計`` after the group's code and name written again.

Each drawn table (300: 100 seeds in a CP932 CSV, a UTF-8 CSV and a workbook) must read back
with its entries alone, every total row set aside with its label at its line, each amount
column summing to its entries, no cell unreadable and the grand total found consistent.
"""

from __future__ import annotations

import functools

import pytest

from keiri_agent.documents.table_totals import is_total_label
from keiri_agent.documents.tables import TableResult, read_table
from tests.support.ledger_groups import FORMATS, Grouped, grouped

SEEDS = range(100)


@functools.cache
def _read(seed: int, fmt: str) -> tuple[Grouped, TableResult]:
    drawn = grouped(seed, fmt)  # type: ignore[arg-type]
    return drawn, read_table(drawn.drawn.data(), name=drawn.drawn.name)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_group_totals_are_set_aside_however_labelled(seed: int, fmt: str) -> None:
    drawn, result = _read(seed, fmt)
    expected = drawn.drawn
    assert result.info.columns == expected.columns
    assert result.table().records() == expected.records
    assert result.positions is not None
    assert result.positions.tolist() == expected.positions()
    assert [t["label"] for t in result.info.totals] == expected.totals
    assert result.info.unreadable == []
    assert result.amount_differences() == []
    for column, total in drawn.sums.items():
        assert sum(result.df[column].dropna().tolist()) == total, column


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
