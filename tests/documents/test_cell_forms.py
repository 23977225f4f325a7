"""The forms of amounts, dates and months that ledgers use are read, in a cell and in a file,
and the forms that must not be read (two-digit years, codes, misplaced commas, words) are not:
such a cell is listed where it is, with why."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from openpyxl import Workbook

from keiri_agent.documents.cell_forms import (
    YearMonth,
    amount_problem,
    date_problem,
    read_amount,
    read_date,
    read_month,
)
from keiri_agent.documents.table_value import json_cell
from keiri_agent.documents.tables import read_table

AMOUNT_FORMS: list[tuple[str, int | float]] = [
    ("1234", 1234),
    ("1,234", 1234),
    ("12,345,678", 12345678),
    ("¥1,234", 1234),
    ("￥1,234", 1234),
    ("\\1,234", 1234),  # the yen of a CP932 file read as ASCII
    ("¥ 1,234", 1234),
    ("1,234円", 1234),
    ("1,234 円", 1234),
    ("(1,200)", -1200),
    ("（１，２００）", -1200),
    ("(¥1,200)", -1200),
    ("△1,200", -1200),
    ("▲1,200", -1200),
    ("▲ 1,200", -1200),
    ("-1,200", -1200),
    ("－1,200", -1200),
    ("−1,200", -1200),  # U+2212 MINUS SIGN
    ("¥-1,200", -1200),
    ("-¥1,200", -1200),
    ("+500", 500),
    ("１２３", 123),
    ("１，２３４", 1234),
    ("  1,234  ", 1234),
    ("0", 0),
    ("1,234.5", 1234.5),
    ("0.25", 0.25),
]

NOT_AMOUNTS: list[tuple[str, str]] = [
    ("1,23", "カンマの位置"),
    ("1,2345", "カンマの位置"),
    ("12,34,567", "カンマの位置"),
    ("0123", "番号（コード）"),
    ("00456", "番号（コード）"),
    ("(1,200", "括弧が閉じていません"),
    ("1,200)", "括弧が閉じていません"),
    ("(-1,200)", "重なっています"),
    ("▲-500", "重なっています"),
    ("1.2.3", "小数点が 2 つ以上"),
    ("千二百円", "数字以外の文字"),
    ("未定", "数字以外の文字"),
    ("12a", "数字以外の文字"),
    ("1 234", "数字の間に空白"),  # one amount or two numbers: not read
    # A number written as one symbol is a list marker (NFKC would make the digits of it).
    ("①", "番号の記号（①）は金額として読みません"),
    ("⑳", "番号の記号（⑳）"),
    ("㉑", "番号の記号（㉑）"),
    ("⑴", "番号の記号（⑴）"),
    ("⒈", "番号の記号（⒈）"),
    ("１²", "番号の記号（²）"),
    ("①1,000", "番号の記号（①）"),
]

DATE_FORMS: list[tuple[str, dt.date | dt.datetime]] = [
    ("2026-02-03", dt.date(2026, 2, 3)),
    ("2026/2/3", dt.date(2026, 2, 3)),
    ("2026/02/03", dt.date(2026, 2, 3)),
    ("2026.2.3", dt.date(2026, 2, 3)),
    ("2026年2月3日", dt.date(2026, 2, 3)),
    ("2026年 2月 3日", dt.date(2026, 2, 3)),
    ("2026/2/3(火)", dt.date(2026, 2, 3)),
    ("2026年2月3日（火）", dt.date(2026, 2, 3)),
    ("２０２６／２／３", dt.date(2026, 2, 3)),
    ("20260203", dt.date(2026, 2, 3)),
    ("令和8年2月3日", dt.date(2026, 2, 3)),
    ("令和８年２月３日（火）", dt.date(2026, 2, 3)),
    ("R8.2.3", dt.date(2026, 2, 3)),
    ("R8/2/3", dt.date(2026, 2, 3)),
    ("R08/02/03", dt.date(2026, 2, 3)),
    ("R.08/02/03", dt.date(2026, 2, 3)),  # 弥生's export
    ("r8.2.3", dt.date(2026, 2, 3)),
    ("令和元年5月1日", dt.date(2019, 5, 1)),
    ("平成31年4月30日", dt.date(2019, 4, 30)),
    ("H31.4.30", dt.date(2019, 4, 30)),
    ("H.30/07/01", dt.date(2018, 7, 1)),
    ("昭和64年1月7日", dt.date(1989, 1, 7)),
    ("2026/2/3 10:15", dt.datetime(2026, 2, 3, 10, 15)),
    ("2026/02/03 10:15:30", dt.datetime(2026, 2, 3, 10, 15, 30)),
    ("2026-02-03T10:15:30", dt.datetime(2026, 2, 3, 10, 15, 30)),
    ("2026年2月3日 10時15分", dt.datetime(2026, 2, 3, 10, 15)),
]

NOT_DATES: list[tuple[str, str]] = [
    ("26/2/3", "年が 2 桁"),
    ("26.02.03", "年が 2 桁"),
    ("2026/2-3", "区切り"),
    ("R8/2-3", "区切り"),
    ("2026/2/30", "存在しない日付"),
    ("2026/13/1", "存在しない日付"),
    ("2026/2/3 25:00", "存在しない日付か時刻"),
    ("20261301", "8 桁の数字"),
    ("令和0年5月1日", "日付の書き方"),
    ("未定", "日付の書き方"),
    ("2月3日", "年が書かれていない"),
]

MONTH_FORMS: list[tuple[str, YearMonth]] = [
    ("2026年2月", YearMonth(2026, 2)),
    ("2026年 2月", YearMonth(2026, 2)),
    ("2026/02", YearMonth(2026, 2)),
    ("2026/2", YearMonth(2026, 2)),
    ("2026-02", YearMonth(2026, 2)),
    ("令和8年2月", YearMonth(2026, 2)),
    ("R8.2", YearMonth(2026, 2)),
    ("R.08/02", YearMonth(2026, 2)),
    ("２０２６年２月", YearMonth(2026, 2)),
]


def _ids(forms: list[tuple[str, object]]) -> list[str]:
    return [f"{n}" for n in range(len(forms))]


@pytest.mark.parametrize(("written", "value"), AMOUNT_FORMS, ids=_ids(AMOUNT_FORMS))
def test_amount_forms_are_read(written: str, value: int | float) -> None:
    read = read_amount(written)

    assert read == value
    assert type(read) is type(value)


@pytest.mark.parametrize(("written", "reason"), NOT_AMOUNTS, ids=_ids(NOT_AMOUNTS))
def test_forms_that_are_not_amounts_are_refused_with_why(written: str, reason: str) -> None:
    assert read_amount(written) is None
    assert reason in amount_problem(written)


@pytest.mark.parametrize(("written", "value"), DATE_FORMS, ids=_ids(DATE_FORMS))
def test_date_forms_are_read(written: str, value: dt.date) -> None:
    read = read_date(written)

    assert read == value
    assert type(read) is type(value)


@pytest.mark.parametrize(("written", "reason"), NOT_DATES, ids=_ids(NOT_DATES))
def test_forms_that_are_not_dates_are_refused_with_why(written: str, reason: str) -> None:
    assert read_date(written) is None
    assert reason in date_problem(written)


@pytest.mark.parametrize(("written", "value"), MONTH_FORMS, ids=_ids(MONTH_FORMS))
def test_month_forms_are_read(written: str, value: YearMonth) -> None:
    assert read_month(written) == value
    assert read_date(written) is None


# --- the same forms in files -----------------------------------------------------------------


def _csv(header: list[str], rows: list[list[str]], *, title: str = "") -> bytes:
    lines = ([title] if title else []) + [",".join(header)]
    lines += [",".join(f'"{cell}"' if cell else "" for cell in row) for row in rows]
    return ("\r\n".join(lines) + "\r\n").encode("utf-8-sig")


def _xlsx(header: list[str], rows: list[list[object]]) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def test_every_amount_form_in_one_column_of_a_csv_and_a_workbook() -> None:
    rows = [[written, f"形式{n}"] for n, (written, _v) in enumerate(AMOUNT_FORMS)]
    expected = [value for _w, value in AMOUNT_FORMS]
    for data, name in (
        (_csv(["金額", "摘要"], rows), "a.csv"),
        (_xlsx(["金額", "摘要"], rows), "a.xlsx"),
    ):
        result = read_table(data, name=name)

        assert result.info.converted == {"金額": "number"}, name
        assert result.df["金額"].tolist() == expected, name
        assert result.info.unreadable == []


def test_every_date_form_in_one_column_of_a_csv_and_a_workbook() -> None:
    rows = [[written, f"形式{n}"] for n, (written, _v) in enumerate(DATE_FORMS)]
    expected = [json_cell(value) for _w, value in DATE_FORMS]
    for data, name in (
        (_csv(["日付", "摘要"], rows), "a.csv"),
        (_xlsx(["日付", "摘要"], rows), "a.xlsx"),
    ):
        result = read_table(data, name=name)

        assert result.info.converted == {"日付": "datetime"}, name  # some have a time
        assert [r["日付"] for r in result.table().records()] == expected, name


def test_month_forms_make_a_month_column() -> None:
    rows = [[written, "1,000"] for written, _v in MONTH_FORMS]
    result = read_table(_csv(["計上月", "金額"], rows), name="a.csv")

    assert result.info.converted == {"計上月": "month", "金額": "number"}
    assert [r["計上月"] for r in result.table().records()] == ["2026-02"] * len(MONTH_FORMS)


def test_workbook_date_cells_serials_and_compact_numbers_are_dates() -> None:
    rows: list[list[object]] = [
        [dt.datetime(2026, 2, 3), "日付セル"],
        [46057, "シリアル値"],
        [20260205, "8 桁の数値"],
        ["2026/2/6", "文字"],
    ]
    result = read_table(_xlsx(["伝票日付", "摘要"], rows), name="a.xlsx")

    assert result.info.converted == {"伝票日付": "date"}
    assert [r["伝票日付"] for r in result.table().records()] == [
        "2026-02-03",
        "2026-02-04",
        "2026-02-05",
        "2026-02-06",
    ]


def test_a_csv_saved_from_excel_keeps_serial_numbers_in_a_date_column() -> None:
    rows = [["2026/2/3", "a"], ["46057", "b"], ["20260205", "c"]]
    result = read_table(_csv(["日付", "摘要"], rows), name="a.csv")

    assert result.info.converted == {"日付": "date"}
    assert [r["日付"] for r in result.table().records()] == [
        "2026-02-03",
        "2026-02-04",
        "2026-02-05",
    ]
    assert result.info.unreadable == []


GOOD_AMOUNTS = ["1,000", "(200)", "▲300"]


@pytest.mark.parametrize(("written", "reason"), NOT_AMOUNTS, ids=_ids(NOT_AMOUNTS))
def test_an_unreadable_amount_is_listed_at_its_line(written: str, reason: str) -> None:
    rows = [[f"摘要{n}", amount] for n, amount in enumerate(GOOD_AMOUNTS)] + [["摘要x", written]]
    result = read_table(_csv(["摘要", "支払金額"], rows, title="支払一覧"), name="支払.csv")

    assert result.info.unreadable == [
        {
            "column": "支払金額",
            "position": 6,
            "cell": None,
            "value": written,
            "reason": amount_problem(written),
            "kind": "amount",
        }
    ]
    assert reason in result.info.unreadable[0]["reason"]
    assert "支払金額" not in result.info.converted  # left as written, never a silent blank
    assert result.df["支払金額"].tolist() == [*GOOD_AMOUNTS, written]
    assert any("支払.csv の 6 行目の列「支払金額」" in w for w in result.info.warnings)


GOOD_DATES = ["2026/2/3", "令和8年2月4日", "20260205"]


@pytest.mark.parametrize(("written", "reason"), NOT_DATES, ids=_ids(NOT_DATES))
def test_an_unreadable_date_is_listed_at_its_cell(written: str, reason: str) -> None:
    rows: list[list[object]] = [[d, f"摘要{n}"] for n, d in enumerate(GOOD_DATES)]
    rows.append([written, "摘要x"])
    result = read_table(_xlsx(["取引日", "摘要"], rows), name="取引.xlsx")

    assert [
        {k: cell[k] for k in ("column", "position", "cell", "value")}
        for cell in result.info.unreadable
    ] == [{"column": "取引日", "position": 5, "cell": "A5", "value": written}]
    assert reason in result.info.unreadable[0]["reason"]
    assert result.info.converted == {"取引日": "date"}
    assert [r["取引日"] for r in result.table().records()][3] is None


def test_codes_with_leading_zeros_stay_text_and_are_not_reported() -> None:
    codes = [f"{n:04d}" for n in range(95, 110)]  # 0095 ... 0099, then 0100 ... 0109
    wide = [
        f"{n:05d}"
        for n in (1001, 12345, 23456, 34567, 45678, 56789, 67890, 78901, 89012, 90123, 98765)
    ]
    rows = [[a, b, f"得意先{n}"] for n, (a, b) in enumerate(zip(codes, wide, strict=False))]
    result = read_table(_csv(["科目コード", "得意先コード", "得意先"], rows), name="a.csv")

    assert result.df["科目コード"].tolist() == codes[: len(wide)]
    assert result.df["得意先コード"].tolist() == wide
    assert result.info.converted == {}
    assert result.info.unreadable == []


def test_a_unit_in_a_title_row_does_not_turn_dates_or_codes_into_amounts() -> None:
    rows = [["20260203", "1001", "100"], ["20260204", "0102", "200"], ["20260205", "1003", "300"]]
    result = read_table(
        _csv(["日付", "コード", "金額"], rows, title="（単位：千円）"), name="a.csv"
    )

    assert result.info.converted == {"日付": "date", "金額": "number"}
    assert result.df["コード"].tolist() == ["1001", "0102", "1003"]
    assert result.info.units == {"金額": "千円"}
    assert result.info.unreadable == []
