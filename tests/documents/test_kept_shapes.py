"""One test per shape ``kept_ledgers`` found read wrong: paged printouts, a unit under the
table, a note right under the data, page totals, a grand total that does not add up, 和暦
dates outside their era, one-kanji eras, and rate columns mixing formatted numbers, text
``10%`` and plain numbers."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.cell_forms import (
    amount_problem,
    date_problem,
    era_outside,
    read_amount,
    read_date,
)
from keiri_agent.documents.tables import TableResult, read_table
from keiri_agent.errors import BlockError
from tests.documents.conftest import run_block
from tests.documents.test_table_footer import WRITERS, csv_bytes, xlsx_bytes

HEADER = ["日付", "部門", "金額"]


def read(rows: list[list[str]], fmt: str) -> TableResult:
    return read_table(WRITERS[fmt](rows), name=f"t.{fmt}")


@pytest.mark.parametrize(
    ("written", "day"),
    [
        ("令8.2.3", dt.date(2026, 2, 3)),
        ("平31.4.30", dt.date(2019, 4, 30)),
        ("昭64.1.7", dt.date(1989, 1, 7)),
    ],
)
def test_an_era_written_as_one_kanji_is_read(written: str, day: dt.date) -> None:
    assert read_date(written) == day
    assert era_outside(written) is None


@pytest.mark.parametrize(
    ("written", "day", "span"),
    [
        ("平成31年5月1日", dt.date(2019, 5, 1), "平成は 1989/01/08〜2019/04/30"),
        ("H31.5.7", dt.date(2019, 5, 7), "平成は"),
        ("令和元年4月1日", dt.date(2019, 4, 1), "令和は 2019/05/01〜"),
        ("昭和64年1月8日", dt.date(1989, 1, 8), "昭和は"),
    ],
)
def test_a_date_outside_its_era_is_the_day_its_year_names_with_a_note(
    written: str, day: dt.date, span: str
) -> None:
    assert read_date(written) == day
    assert span in (era_outside(written) or "")
    result = read_table(csv_bytes([["日付", "金額"], [written, "100"], ["2019/4/30", "200"]]))
    assert result.table().records()[0]["日付"] == day.isoformat()
    note = next(w for w in result.info.warnings if "元号の期間外" in w)
    assert f"{written} → {day:%Y/%m/%d}" in note


@pytest.mark.parametrize("written", ["平成31年4月30日", "H31.4.30", "R1.5.1", "令和元年5月1日"])
def test_dates_inside_their_era_get_no_note(written: str) -> None:
    assert era_outside(written) is None


@pytest.mark.parametrize("written", ["元年5月1日", "31年5月1日"])
def test_a_year_without_its_era_is_refused_saying_so(written: str) -> None:
    assert read_date(written) is None
    assert "元号" in date_problem(written)


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_the_header_and_titles_repeated_on_each_page_are_set_aside(fmt: str) -> None:
    rows = [
        ["売上明細表"],
        ["期間：2026年2月1日～2026年2月28日"],
        HEADER,
        ["2026/2/3", "営業部", "1,200"],
        ["2026/2/4", "管理部", "(300)"],
        ["頁計", "", "900"],
        ["- 1 -"],
        ["売上明細表"],
        ["期間：2026年2月1日～2026年2月28日"],
        [" 日付", "部門 ", "金額"],
        ["2026/2/5", "営業部", "500"],
        ["合計", "", "1,400"],
        ["- 2 -"],
    ]
    result = read(rows, fmt)
    assert result.table().records() == [
        {"日付": "2026-02-03", "部門": "営業部", "金額": 1200},
        {"日付": "2026-02-04", "部門": "管理部", "金額": -300},
        {"日付": "2026-02-05", "部門": "営業部", "金額": 500},
    ]
    assert [(x["position"], x["text"]) for x in result.info.layout] == [
        (7, "- 1 -"),
        (8, "売上明細表"),
        (9, "期間：2026年2月1日～2026年2月28日"),
        (10, "日付 部門 金額"),
    ]
    assert [t["label"] for t in result.info.totals] == ["頁計", "合計"]
    assert [f["text"] for f in result.info.footer] == ["- 2 -"]
    assert result.info.unreadable == []


@pytest.mark.parametrize("fmt", list(WRITERS))
@pytest.mark.parametrize("unit_line", ["（単位：千円）", "単位:千円", "[単位:千円]"])
def test_a_unit_line_right_under_the_data_names_the_unit(fmt: str, unit_line: str) -> None:
    rows = [HEADER, ["2026/2/3", "営業部", "1,200"], ["2026/2/4", "管理部", "300"], [unit_line]]
    result = read(rows, fmt)
    assert result.info.units == {"金額": "千円"}
    assert len(result.df) == 2
    assert result.info.unreadable == []


def test_units_above_and_below_that_disagree_give_none_with_a_warning() -> None:
    rows = [["（単位：千円）"], HEADER, ["2026/2/3", "営業部", "1,200"], ["合計", "", "1,200"]]
    result = read([*rows, ["（単位：円）"]], "csv")
    assert result.info.units == {}
    assert any("違う単位（千円・円）" in w for w in result.info.warnings)


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_note_right_under_the_data_is_a_footer_line(fmt: str) -> None:
    rows = [HEADER, ["2026/2/3", "営業部", "1,200"], ["2026/2/4", "管理部", "300"]]
    result = read([*rows, ["※ 金額は税抜です"], ["(注1) 返品を含みます"]], fmt)
    assert len(result.df) == 2
    assert [f["text"] for f in result.info.footer] == ["※ 金額は税抜です", "(注1) 返品を含みます"]
    assert result.info.unreadable == []


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_grand_total_that_does_not_add_up_is_warned_at_its_cell(fmt: str) -> None:
    rows = [HEADER, ["2026/2/3", "営業部", "1,200"], ["2026/2/4", "管理部", "300"]]
    result = read([*rows, ["合計", "", "1,600"]], fmt)
    warning = next(w for w in result.info.warnings if "一致しません" in w)
    assert "4 行目" in warning
    assert "1,600 が、明細の行の合計 1,500" in warning
    assert not [w for w in read([*rows, ["合計", "", "1,500"]], fmt).info.warnings if "一致" in w]


def _rates_book(cells: list[object]) -> bytes:
    """A workbook of 科目 / 税率 rows; a float is a number under ``0%``, a tuple (value,
    format) a number under that format, a string a text cell."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["科目", "税率"])
    for r, cell in enumerate(cells, start=2):
        sheet.cell(row=r, column=1, value=f"科目{r}")
        value, fmt = cell if isinstance(cell, tuple) else (cell, "0%")
        target = sheet.cell(row=r, column=2, value=value)
        if isinstance(value, str):
            target.data_type = "s"
        else:
            target.number_format = fmt
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_a_rate_column_mixing_formatted_numbers_and_text_percentages_is_one_column() -> None:
    result = read_table(_rates_book([0.1, "8%", 0.08, "１０％", (0.125, "0.0%")]), name="r.xlsx")
    assert [r["税率"] for r in result.table().records()] == [0.1, 0.08, 0.08, 0.1, 0.125]
    assert result.info.converted["税率"] == "number"
    assert result.info.unreadable == []


@pytest.mark.parametrize(("plain", "shown"), [((0.1, "General"), "0.1"), ((10, "General"), "10")])
def test_a_plain_number_among_percentages_keeps_the_column_as_written_and_is_listed(
    plain: tuple[float, str], shown: str
) -> None:
    """Not a blank a sum would skip: the column stays as the cells show it, the cell listed."""
    result = read_table(_rates_book([0.1, "8%", plain, (0, "General")]), name="r.xlsx")
    assert "税率" not in result.info.converted
    assert [r["税率"] for r in result.table().records()] == ["10%", "8%", plain[0], 0]
    [cell] = result.info.unreadable
    assert (cell["cell"], cell["value"]) == ("B4", shown)
    assert "決められません" in cell["reason"]
    assert "% を付けて" in cell["reason"]


@pytest.mark.parametrize(
    ("expr", "block"),
    [("[金額] * [税率]", "table.compute"), ("sum", "table.aggregate")],
)
def test_a_block_computing_on_a_doubtful_rate_column_stops_naming_it(
    registry: BlockRegistry, tmp_path: Path, expr: str, block: str
) -> None:
    rows = [
        ["科目", "金額", "税率"],
        ["a", "1000", "10%"],
        ["b", "2000", "８％"],
        ["c", "500", "0.1"],
    ]
    result = read_table(csv_bytes(rows))
    assert [r["税率"] for r in result.table().records()] == ["10%", "８％", "0.1"]
    assert [(u["position"], u["value"]) for u in result.info.unreadable] == [(4, "0.1")]
    inputs: dict[str, Any] = (
        {"columns": [{"name": "税額", "expr": expr}]}
        if block == "table.compute"
        else {"aggregations": [{"column": "税率", "func": "sum", "as": "計"}]}
    )
    with pytest.raises(BlockError) as stopped:
        run_block(registry, block, tmp_path, table=result.table(), **inputs)
    assert "税率" in stopped.value.message
    assert "行目" in stopped.value.message


def test_a_dash_among_percentages_is_no_rate_with_a_note() -> None:
    result = read_table(csv_bytes([["部門", "前年比"], ["東京", "105%"], ["大阪", "―"]]))
    assert [r["前年比"] for r in result.table().records()] == [1.05, None]
    assert any("割合なしとして空欄" in w for w in result.info.warnings)
    assert result.info.unreadable == []


def test_a_percentage_in_an_amount_column_is_named_as_one() -> None:
    assert "百分率" in amount_problem("50%")


@pytest.mark.parametrize(
    "written", ["令和8年2月3日（火曜日）", "2026/2/3(火曜)", "2026年2月3日 火曜日", "R8.2.3 火曜"]
)
def test_a_weekday_written_as_a_word_is_read_and_checked(written: str) -> None:
    assert read_date(written) == dt.date(2026, 2, 3)
    wrong = written.replace("火", "水")
    assert read_date(wrong) is None
    assert "火曜日です" in date_problem(wrong)


@pytest.mark.parametrize("written", ["￥▲1,200", "¥△1,200", "¥ ▲ 1,200"])
def test_a_minus_after_the_yen_mark_is_read(written: str) -> None:
    assert read_amount(written) == -1200


def test_a_total_without_a_label_adds_up_its_percent_column_too() -> None:
    """Percent cells read as the percentages they show still add up to the last row's 100%,
    so that row is found as the total it is (a guard: the percent reading must not hide it)."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in (
        ["部門", "売上", "構成比"],
        ["営業", 750, 0.75],
        ["管理", 250, 0.25],
        [None, 1000, 1],
    ):
        sheet.append(row)
    for r in range(2, 5):
        sheet.cell(row=r, column=3).number_format = "0%"
    out = io.BytesIO()
    book.save(out)
    result = read_table(out.getvalue(), name="p.xlsx")
    assert [t["position"] for t in result.info.totals] == [4]
    assert [r["構成比"] for r in result.table().records()] == [0.75, 0.25]


def _two_row_journal() -> bytes:
    """A workbook 仕訳帳 printed in pages: a header of two rows (借方 / 貸方 merged over 科目
    and 金額, 日付 in the lower row only), repeated with the title and a page number."""
    rows = [
        ["仕訳帳"],
        ["", "借方", "", "貸方", ""],
        ["日付", "科目", "金額", "科目", "金額"],
        ["2026/2/3", "旅費", "1,000", "現金", "1,000"],
        ["2026/2/4", "通信費", "2,000", "現金", "2,000"],
        ["- 1 -"],
        ["仕訳帳"],
        ["", "借方", "", "貸方", ""],
        ["日付", "科目", "金額", "科目", "金額"],
        ["2026/2/5", "会議費", "500", "現金", "500"],
        ["合計", "", "3,500", "", "3,500"],
    ]
    return xlsx_bytes(
        rows, merges=[f"{a}{top}:{b}{top}" for top in (2, 8) for a, b in ("BC", "DE")]
    )


def test_a_two_row_header_repeated_on_each_page_is_set_aside() -> None:
    result = read_table(_two_row_journal(), name="仕訳帳.xlsx")
    assert result.info.columns == ["日付", "借方_科目", "借方_金額", "貸方_科目", "貸方_金額"]
    assert [r["借方_金額"] for r in result.table().records()] == [1000, 2000, 500]
    assert [x["position"] for x in result.info.layout] == [6, 7, 8, 9]
    assert result.info.unreadable == []
    assert not [w for w in result.info.warnings if "一致しません" in w]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_dash_in_a_date_column_is_no_date(fmt: str) -> None:
    rows = [["請求日", "支払日", "金額"], ["2026/2/3", "2026/2/10", "100"]]
    rows += [["2026/2/4", "-", "200"], ["2026/2/5", "―", "300"]]
    result = read(rows, fmt)
    assert result.info.converted["支払日"] == "date"
    assert [r["支払日"] for r in result.table().records()] == ["2026-02-10", None, None]
    assert any("日付なしとして空欄" in w for w in result.info.warnings)
