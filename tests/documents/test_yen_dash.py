"""The dash after a yen amount (``￥12,000-``): the end mark of receipts, 領収書 and 請求書, or
the trailing minus of a system's export. A generator writes receipt and invoice columns (the
dash on every yen amount: read positive, with a note), ledger exports (minus signs after the
digits of plain amounts beside unsigned ones: the dash is that sign) and columns that cannot
say (some yen amounts with the dash, others without: listed), in every dash (``-`` ``−``
``－`` ``‐`` ``ー``) after ``¥``/``￥``/``\\`` and after ``円``, as CSV and workbook. No cell
may come out with a wrong value: read right, or listed at its row with why."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from keiri_agent.documents.cell_forms import (
    DASH_END,
    DASH_MINUS,
    YEN_DASH_PROBLEM,
    amount_problem,
    dash_form,
    read_amount,
)
from keiri_agent.documents.tables import read_table
from tests.documents.test_table_footer import xlsx_bytes

DASHES = ["-", "\u2212", "－", "\u2010", "ー", "ｰ"]
# The marks before an amount whose dash may be the end mark: the yen marks and 金, and $ (a
# column of dollar receipts: dollars beside yen are listed, test_dollar_cells).
YEN_MARKS = ["¥", "￥", "\\", "¥ ", "￥ ", "金", "金 "]
DOLLAR_MARKS = ["$", "＄", "$ "]
_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")
# Generated columns per convention (each one table, CSV and workbook): well under 30 s.
COLUMNS = 60


def utf8_csv(rows: list[list[str]]) -> bytes:
    """``rows`` as a UTF-8 CSV (``¥`` has no CP932 code)."""
    lines = [",".join(f'"{c}"' if "," in c else c for c in row) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


READERS: dict[str, Callable[[list[list[str]]], bytes]] = {"csv": utf8_csv, "xlsx": xlsx_bytes}


def column_rows(amounts: list[str]) -> list[list[str]]:
    """A file's rows: a header and one dated line per amount, in column 金額."""
    return [["日付", "摘要", "金額"]] + [
        ["2026/02/03", f"品目{k}", text] for k, text in enumerate(amounts)
    ]


def size(rng: random.Random, value: int) -> str:
    text = rng.choice([f"{abs(value):,}", str(abs(value))])
    return text.translate(_FULL_WIDTH) if rng.random() < 0.2 else text


def end_marked(rng: random.Random, value: int, marks: list[str] = YEN_MARKS) -> str:
    """A positive amount as a receipt writes it (in yen, or after ``marks``), closed by a dash."""
    dash = rng.choice(DASHES)
    if marks is YEN_MARKS and rng.random() < 0.2:
        return f"{size(rng, value)}円{dash}"
    return f"{rng.choice(marks)}{size(rng, value)}{rng.choice(['', ' '])}{dash}"


def receipt_column(rng: random.Random) -> list[tuple[str, int | None]]:
    """A 領収書/請求書 list in yen or in dollars: every amount closed by the dash (some
    refunds with ▲)."""
    marks = rng.choice([YEN_MARKS, YEN_MARKS, DOLLAR_MARKS])
    refund = "▲$" if marks is DOLLAR_MARKS else "▲"
    cells: list[tuple[str, int | None]] = []
    for _ in range(rng.randint(1, 12)):
        value = rng.randint(1, 3_000_000)
        if rng.random() < 0.1:
            cells.append((f"{refund}{value:,}", -value))
        else:
            cells.append((end_marked(rng, value, marks), value))
    return cells


def ledger_column(rng: random.Random) -> list[tuple[str, int | None]]:
    """A system's export: minus after the digits of plain amounts beside unsigned ones; some
    amounts with a yen mark, negatives among them written with the same trailing minus."""
    values = [rng.randint(1, 3_000_000) for _ in range(rng.randint(3, 14))]
    cells: list[tuple[str, int | None]] = [(f"{values[0]:,}", values[0])]
    cells.append((f"{values[1]:,}{rng.choice(['-', '－', chr(0x2212)])}", -values[1]))
    for value in values[2:]:
        if rng.random() < 0.4:
            mark = rng.choice(["\\", "￥", "¥"])
            cells.append((f"{mark}{value:,}{rng.choice(['-', '－'])}", -value))
        elif rng.random() < 0.5:
            cells.append((f"{value:,}-", -value))
        else:
            cells.append((rng.choice([f"{value:,}", f"￥{value:,}", f"{value:,}円"]), value))
    rng.shuffle(cells)
    return cells


def doubtful_column(rng: random.Random) -> list[tuple[str, int | None]]:
    """Yen amounts, some closed by the dash and some not, no other sign after digits: the
    dashed ones cannot be told (None: must be listed)."""
    values = [rng.randint(1, 3_000_000) for _ in range(rng.randint(2, 12))]
    cells: list[tuple[str, int | None]] = [(f"￥{values[0]:,}", values[0])]
    cells.append((end_marked(rng, values[1]), None))
    for value in values[2:]:
        if rng.random() < 0.5:
            cells.append((end_marked(rng, value), None))
        else:
            cells.append((rng.choice([f"¥{value:,}", f"{value:,}円", f"{value:,}"]), value))
    rng.shuffle(cells)
    return cells


GENERATORS = {"receipt": receipt_column, "ledger": ledger_column, "doubtful": doubtful_column}


def wrong_cells(fmt: str, cells: list[tuple[str, int | None]]) -> list[tuple[str, Any]]:
    """The cells read to a value that is not the one written (a listed cell is never wrong;
    an expected value of None must be listed)."""
    result = read_table(READERS[fmt](column_rows([t for t, _ in cells])), name=f"一覧.{fmt}")
    listed = {u["value"] for u in result.info.unreadable if u["column"] == "金額"}
    wrong = []
    for (text, expected), got in zip(cells, result.df["金額"].tolist(), strict=True):
        if text.strip() in listed:
            continue
        number = got if isinstance(got, int | float) else read_amount(str(got))
        if expected is None or number != expected:
            wrong.append((text, got))
    return wrong


@pytest.mark.parametrize("fmt", list(READERS))
@pytest.mark.parametrize("convention", list(GENERATORS))
def test_no_generated_column_reads_a_wrong_sign(convention: str, fmt: str) -> None:
    rng = random.Random(f"{convention}-{fmt}")
    wrong = []
    for _ in range(COLUMNS):
        wrong += wrong_cells(fmt, GENERATORS[convention](rng))
    assert wrong == []


def test_a_receipt_column_reads_positive_with_a_note() -> None:
    amounts = ["￥12,000-", "¥3,300－", "\\1,200ー", "5,500円-"]
    result = read_table(utf8_csv(column_rows(amounts)), name="領収書一覧.csv")

    assert result.df["金額"].tolist() == [12000, 3300, 1200, 5500]
    assert result.info.unreadable == []
    note = next(w for w in result.info.warnings if "金額" in w)
    assert "止め" in note
    assert "4 個" in note


def test_a_column_that_cannot_say_lists_each_dashed_cell_at_its_line() -> None:
    amounts = ["￥12,000", "￥3,300-", "￥1,200"]
    result = read_table(utf8_csv(column_rows(amounts)), name="経費.csv")

    assert "金額" not in result.info.converted
    [cell] = [u for u in result.info.unreadable if u["column"] == "金額"]
    assert cell["position"] == 3
    assert cell["value"] == "￥3,300-"
    assert "止め" in cell["reason"]
    assert "マイナス" in cell["reason"]


@pytest.mark.parametrize(
    "written",
    ["¥1,200-", "￥12,000－", "\\3,300-", "¥1,200\u2212", "￥1,200ー", "¥ 1,200 -", "$1,200-"],
)
def test_a_lone_yen_amount_with_the_dash_is_never_given_a_sign(written: str) -> None:
    assert read_amount(written) is None
    assert amount_problem(written) == YEN_DASH_PROBLEM
    assert dash_form(written) == "yen_dash"
    # The reader of a column that can say passes its reading.
    assert read_amount(written, DASH_END) == -read_amount(written.replace("ー", "-"), DASH_MINUS)


def test_a_dash_after_yen_is_never_a_minus() -> None:
    assert read_amount("1,200円-", DASH_MINUS) is None
    assert read_amount("1,200円-", DASH_END) == 1200
    assert read_amount("￥1,200ー", DASH_MINUS) is None  # the long-vowel mark is no minus sign
    assert read_amount("1,200ー") is None


@pytest.mark.parametrize(
    ("amounts", "total", "differs"),
    [
        (["￥12,000-", "￥3,000-"], "￥15,000-", False),
        (["￥12,000-", "￥3,000-"], "￥16,000-", True),
        (["12,000", "1,000-", "\\3,000-"], "\\8,000", False),
        (["12,000", "1,000-", "\\3,000-"], "\\8,000-", True),
    ],
)
def test_a_total_row_is_read_as_its_column_reads_the_dash(
    amounts: list[str], total: str, differs: bool
) -> None:
    rows = [*column_rows(amounts), ["合計", "", total]]
    result = read_table(utf8_csv(rows), name="一覧.csv")

    assert [d.column for d in result.total_differences] == (["金額"] if differs else [])


def test_a_dollar_amount_and_an_amount_after_kin_with_the_dash_are_read_by_the_column() -> None:
    # One cell cannot say (a $ amount's dash was read as a minus, 金12,000- not at all).
    assert read_amount("$1,200-") is None
    assert amount_problem("$1,200-") == YEN_DASH_PROBLEM
    assert read_amount("金12,000-", DASH_END) == 12000
    assert read_amount("金12,000-", DASH_MINUS) is None  # 金 is never written before a minus
    dollars = read_table(utf8_csv(column_rows(["$1,200-", "＄35-", "$ 80 -"])), name="出張.csv")
    assert dollars.df["金額"].tolist() == [1200, 35, 80]
    yen = read_table(utf8_csv(column_rows(["金12,000-", "￥3,300-"])), name="領収書.csv")
    assert yen.df["金額"].tolist() == [12000, 3300]
