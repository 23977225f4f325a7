"""What a workbook's number formats change in reading it.

A column that shows yen as 千円 by its number format (``#,##0,``) under a 千円 header: the cells
hold yen, so the values read are yen and the unit reported is 円, with a warning saying the
screen shows them divided by 1,000 -- never 1,234,567 reported as 千円. A month header typed
as a date (2025/4/1) and shown as 4月 by its format names the month, 2025年4月."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from openpyxl import Workbook

from keiri_agent.documents.table_xlsx import display_scale
from keiri_agent.documents.tables import read_table


def _book(
    header: list[Any],
    rows: list[list[Any]],
    formats: list[str | None],
    title: str = "",
    header_format: str | None = None,
) -> bytes:
    """A sheet: maybe a title row, the header (its date cells under ``header_format``), rows
    whose cells take ``formats`` column by column."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    if title:
        sheet.append([title])
    sheet.append(header)
    for cell in sheet[sheet.max_row]:
        if isinstance(cell.value, dt.datetime) and header_format is not None:
            cell.number_format = header_format
    for row in rows:
        sheet.append(row)
        for cell, number_format in zip(sheet[sheet.max_row], formats, strict=False):
            if number_format is not None:
                cell.number_format = number_format
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


ROWS = [["売上高", 1_234_567], ["売上原価", 734_000]]


# (header, the format of its cells) -> the unit of the values the cells hold
SHOWN_IN_THOUSANDS = {
    ("金額（千円）", "#,##0,"): "円",
    ("金額（千円）", '#,##0,;[Red]"△"#,##0,'): "円",
    ("金額（百万円）", "#,##0,,"): "円",
    ("金額（百万円）", "#,##0,"): "千円",
    ("金額（千円）", '#,##0,"千円"'): "円",
}


@pytest.mark.parametrize(
    ("header", "number_format", "unit"),
    [(*shown, unit) for shown, unit in SHOWN_IN_THOUSANDS.items()],
)
def test_the_unit_of_a_column_shown_in_thousands_is_the_cells_own(
    header: str, number_format: str, unit: str
) -> None:
    result = read_table(_book(["科目", header], ROWS, [None, number_format]), name="pl.xlsx")

    assert [r[header] for r in result.table().records()] == [1_234_567, 734_000]
    assert result.info.units == {header: unit}
    assert result.table().units == {header: unit}
    warning = next(w for w in result.info.warnings if w.startswith(f"列「{header}」"))
    assert "表示ではなくセルに入っている数値" in warning
    assert f"（{unit}）" in warning


def test_a_title_unit_over_a_column_shown_in_thousands_is_corrected_too() -> None:
    data = _book(["科目", "当期"], ROWS, [None, "#,##0,"], title="損益計算書（単位：千円）")
    result = read_table(data, name="pl.xlsx")

    assert result.info.units == {"当期": "円"}


def test_a_column_shown_in_thousands_without_a_unit_gets_a_warning_and_no_unit() -> None:
    result = read_table(_book(["科目", "金額"], ROWS, [None, "#,##0,"]), name="pl.xlsx")

    assert result.info.units == {}
    warning = next(w for w in result.info.warnings if w.startswith("列「金額」"))
    assert "1,000 で割って表示" in warning
    assert "1,000 倍" in warning


@pytest.mark.parametrize("number_format", ["#,##0", "General", '"¥"#,##0;[Red]"¥"-#,##0', "0.0%"])
def test_columns_shown_as_held_keep_their_header_unit(number_format: str) -> None:
    result = read_table(
        _book(["科目", "金額（千円）"], ROWS, [None, number_format]), name="pl.xlsx"
    )

    assert result.info.units == {"金額（千円）": "千円"}
    assert not any("で割って表示" in w for w in result.info.warnings)


SCALES = {
    "#,##0,": 1,
    '#,##0,,"百万円"': 2,
    "0.0,": 1,
    "#,##0,;[Red]-#,##0,": 1,
    "#,##0": 0,
    '_(¥* #,##0_);[Red]_(¥* (#,##0);_(¥* "-"_);_(@_)': 0,
    '#,##0"円, 税込"': 0,
    "General": 0,
}


@pytest.mark.parametrize(("number_format", "scale"), SCALES.items())
def test_display_scale_counts_the_commas_after_the_last_digit(
    number_format: str, scale: int
) -> None:
    assert display_scale(number_format) == scale


@pytest.mark.parametrize(
    "number_format", ['m"月"', 'yyyy"年"m"月"', '[$-ja-JP]ggge"年"m"月"', "yyyy/mm", "mmm"]
)
def test_month_headers_typed_as_dates_name_their_month(number_format: str) -> None:
    header = ["科目", dt.datetime(2025, 4, 1), dt.datetime(2026, 3, 1), "合計"]
    title = "月次推移表（単位：千円）"
    data = _book(header, [["売上高", 100, 300, 400]], [], title, number_format)

    result = read_table(data, name="推移.xlsx")

    assert result.info.columns == ["科目", "2025年4月", "2026年3月", "合計"]
    assert result.table().records() == [
        {"科目": "売上高", "2025年4月": 100, "2026年3月": 300, "合計": 400}
    ]
    assert result.info.units == dict.fromkeys(["2025年4月", "2026年3月", "合計"], "千円")


@pytest.mark.parametrize("number_format", ["yyyy/m/d", 'm"月"d"日"', "yyyy/m/d h:mm"])
def test_day_headers_typed_as_dates_keep_their_day(number_format: str) -> None:
    data = _book(["科目", dt.datetime(2025, 4, 1)], [["売上高", 100]], [], "", number_format)

    assert read_table(data, name="日次.xlsx").info.columns == ["科目", "2025-04-01"]
