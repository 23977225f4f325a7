"""The agents say what a cell they cannot use was to be: a rate, a date without a year.

A rate column (構成比 ``10%`` beside a bare ``0.2``: 20% or 0.2%?) is refused as a rate,
with a hint about percentages, not as an amount with a hint about ``△1,200``; a date column
written without years stays text and the notes say so (before, it was refused as an amount).
"""

from __future__ import annotations

import pytest

from keiri_agent.agents.ledger import read_ledger
from keiri_agent.errors import BlockError, ErrorCode


def test_a_doubtful_cell_of_a_rate_column_is_refused_as_a_rate() -> None:
    data = "部門,金額,構成比\n営業部,1000,10%\n総務部,2000,0.2\n管理部,3000,5%\n".encode()
    with pytest.raises(BlockError) as caught:
        read_ledger(data, name="構成.csv")
    error = caught.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.message.startswith(
        "構成.csv の 3 行目の列「構成比」 の '0.2' を率（百分率）の列の割合として読めません"
    )
    assert "金額" not in error.message  # a rate, not an amount
    assert ("% を付けて" in (error.hint or ""), "△1,200" in (error.hint or "")) == (True, False)


def test_an_amount_typo_is_still_refused_as_an_amount() -> None:
    with pytest.raises(BlockError) as caught:
        read_ledger("部門,金額\n営業部,1000\n総務部,1O00\n".encode(), name="a.csv")
    assert "'1O00' を金額として読めません" in caught.value.message
    assert "読み込みを止めました" in caught.value.message


def test_a_date_column_without_years_is_text_and_said_so() -> None:
    data = "日付,部門,金額\n2/3,営業部,1000\n2/4,総務部,2000\n".encode()
    table = read_ledger(data, name="r.csv")
    assert table.frame["金額"].sum() == 3000
    assert table.frame["日付"].tolist() == ["2/3", "2/4"]  # no year guessed
    note = next(n for n in table.notes if "列「日付」" in n)
    assert "年が書かれていない" in note
    assert "文字のまま" in note
    assert "2 行目（'2/3'）" in note


def test_carry_rows_are_told_as_carries_not_as_totals() -> None:
    data = (
        "日付,摘要,収入,支出,残高\n"
        ",前月繰越,50000,,50000\n"
        "2026/2/3,売上,12000,,62000\n"
        "2026/2/10,消耗品,,3000,59000\n"
        ",次月繰越,,59000,\n"
        ",合計,62000,62000,\n"
    ).encode()
    table = read_ledger(data, name="出納帳.csv")
    assert table.frame["収入"].sum() == 12000
    assert table.frame["支出"].sum() == 3000
    notes = "\n".join(table.notes)
    assert "繰越の行 2 行はデータから除いてあります" in notes, notes
    assert "前月繰越" in notes
    assert "次月繰越" in notes
    assert "合計・小計の行 1 行はデータから除いてあります" in notes, notes
