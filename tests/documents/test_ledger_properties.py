"""Property: a random ledger written as CSV (CP932 / UTF-8 with BOM) or .xlsx, each cell in a
random one of the forms ledgers use, reads back as the values that were written.

Columns of amounts, dates, datetimes, months, codes and text; random blanks; optional title
rows (one may name a unit), a unit in an amount header, a trailing total row (and under it
footer notes, maybe after a blank row), and at most one
cell per typed column written so it cannot be read. ``read_table`` must give back amounts
exactly (never multiplied by the unit), the same dates, null for blanks, text unchanged, the
total row and the footer lines set aside with their places, every row's true file line or sheet row, and exactly the
unreadable cells, each where it is.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keiri_agent.documents.cell_forms import YearMonth
from keiri_agent.documents.tables import read_table
from tests.documents.ledger_corpus import (
    Cell,
    Column,
    Format,
    Ledger,
    Row,
    blank,
    excel_date,
    excel_serial,
    text,
)

# Examples per test: enough to meet each form many times, few enough that the file runs in
# well under a minute on a loaded two-core machine (a workbook costs a write and a fork).
EXAMPLES_CSV = 60
EXAMPLES_XLSX = 30
MAX_ROWS = 12

AMOUNT_NAMES = ["金額", "借方金額", "貸方金額", "売上高", "残高", "税額", "お支払金額"]
DATE_NAMES = ["日付", "取引日", "計上日", "支払日", "売上日", "入金日"]
DATETIME_NAMES = ["作成日時", "更新日時", "入金日時", "登録日時", "承認日時"]
MONTH_NAMES = ["年月", "計上年月", "対象年月", "支払年月", "請求年月"]
CODE_NAMES = ["得意先コード", "科目コード", "社員番号", "部門コード", "取引先コード"]
TEXT_NAMES = ["摘要", "取引先", "勘定科目", "備考", "品目", "部門"]
NAMES = {
    "amount": AMOUNT_NAMES,
    "date": DATE_NAMES,
    "datetime": DATETIME_NAMES,
    "month": MONTH_NAMES,
    "code": CODE_NAMES,
    "text": TEXT_NAMES,
}
KIND = {"amount": "number", "date": "date", "datetime": "datetime", "month": "month"}

WORDS = [
    "ﾌﾘｺﾐ ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ",
    "ﾃｽｳﾘｮｳ",
    "交通費 新宿-横浜",
    "コピー用紙 A4",
    "㈱髙橋商店",
    "2月分 売上",
    "出張旅費\n（大阪・2泊）",
    "会議費, 弁当 5個",
    '見積 "至急"',
    "ｶｰﾄﾞ ｱﾏｿﾞﾝ",
    "家賃",
    "水道光熱費",
]
TITLES = ["2026年2月 売上明細", "株式会社サンプル 経理部", "期間：2026/02/01～2026/02/28"]
UNIT_TITLES = {"（単位：千円）": "千円", "単位：円": "円", "（単位：百万円）": "百万円"}
HEADER_UNITS = {"（千円）": "千円", "(円)": "円", "［万円］": "万円"}
TOTAL_LABELS = ["合計", "総合計", "【合計】", "合　計", "計"]
NUMBER_FORMATS = ["General", "#,##0", "#,##0;(#,##0)", '#,##0;"▲"#,##0', '"¥"#,##0']
DATE_FORMATS = ["yyyy/m/d", "yyyy/mm/dd", 'yyyy"年"m"月"d"日"', "m/d"]
BAD = {
    "amount": ["1,23", "12a", "(1,200", "1.2.3", "未定", "0123", "1,2345"],
    "date": ["26/2/3", "2026/13/45", "未定", "2026/2-3", "2月3日"],
    "datetime": ["2026/2/3 25:00", "未定", "26/2/3 10:00"],
    "month": ["2026年13月", "未定"],
}

# Footer lines written under the total row by exports and hand-kept ledgers.
FOOTERS = [
    ["※ 金額は税込です"],
    ["以上"],
    ["出力日: 2026/02/03"],
    ["出力日", "2026/02/03 10:15"],
    ["担当: 経理部 山田"],
    ["作成者", "経理部"],
    ["ページ 1/1"],
    ["＊消費税は10%で計算しています"],
    ["（注）", "▲はマイナスを表します"],
    ["印刷日時：令和8年2月3日 10時15分"],
]

_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")
_WEEKDAYS = "月火水木金土日"


def _era(day: dt.date) -> tuple[str, str, int]:
    """(era name, letter, year in the era) of ``day``."""
    if day >= dt.date(2019, 5, 1):
        return "令和", "R", day.year - 2018
    return "平成", "H", day.year - 1988


def amount_forms(value: int, fmt: Format) -> list[str]:
    """Every way a ledger writes ``value`` (the ``¥`` sign is not in CP932)."""
    if value == 0:
        return ["0", "-", "￥0"]
    size = abs(value)
    bodies = [str(size), f"{size:,}", f"{size:,}".translate(_FULL_WIDTH), f" {size:,} "]
    marks = ["", "￥", "\\"] + ([] if fmt == "csv-cp932" else ["¥", "¥ "])
    forms = []
    for body in bodies:
        for mark in marks:
            for yen in ("", "円"):
                core = f"{mark}{body}{yen}"
                if value > 0:
                    forms.append(core)
                else:
                    forms += [f"-{core}", f"▲{core}", f"△{core}", f"－{core}", f"({core})"]
                    # The minus after the digits, as many systems print it (after a yen mark
                    # its column decides it: test_yen_dash).
                    if not yen and not mark:
                        forms += [f"{core}-", f"{core}－"]
                        # U+2212 has no CP932 code of its own (written, it reads back as －).
                        forms += [] if fmt == "csv-cp932" else [f"{core}\u2212"]
    return forms


def date_forms(day: dt.date) -> list[str]:
    y, m, d = day.year, day.month, day.day
    era, letter, ey = _era(day)
    week = _WEEKDAYS[day.weekday()]
    return [
        day.isoformat(),
        f"{y}/{m}/{d}",
        f"{y}/{m:02d}/{d:02d}",
        f"{y}.{m}.{d}",
        f"{y}年{m}月{d}日",
        f"{y}年{m}月{d}日（{week}）",
        f"{y}/{m:02d}/{d:02d}({week})",
        f"{y}{m:02d}{d:02d}",
        f"{era}{'元' if ey == 1 else ey}年{m}月{d}日",
        f"{letter}{ey}.{m}.{d}",
        f"{letter}{ey:02d}/{m:02d}/{d:02d}",
        f"{letter}.{ey:02d}/{m:02d}/{d:02d}",
        f"{y}/{m}/{d}".translate(_FULL_WIDTH).replace("/", "／"),
        str(excel_serial(day)),  # a CSV saved from a sheet whose date cell lost its format
    ]


def datetime_forms(stamp: dt.datetime) -> list[str]:
    y, mo, d, h, mi, s = stamp.year, stamp.month, stamp.day, stamp.hour, stamp.minute, stamp.second
    forms = [
        f"{y}/{mo:02d}/{d:02d} {h}:{mi:02d}:{s:02d}",
        stamp.isoformat(),
        f"{y}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}",
    ]
    if s == 0:
        forms += [f"{y}/{mo}/{d} {h}:{mi:02d}", f"{y}年{mo}月{d}日 {h}時{mi:02d}分"]
    return forms


def month_forms(ym: YearMonth) -> list[str]:
    era, letter, ey = _era(ym.first_day())
    return [
        f"{ym.year}年{ym.month}月",
        f"{ym.year}/{ym.month:02d}",
        f"{ym.year}/{ym.month}",
        f"{ym.year}-{ym.month:02d}",
        f"{era}{'元' if ey == 1 else ey}年{ym.month}月",
        f"{letter}{ey}.{ym.month}",
    ]


@st.composite
def amount_cell(draw: st.DrawFn, fmt: Format) -> Cell:
    value = draw(st.integers(-(10**9), 10**9) | st.integers(-3000, 3000))
    written = draw(st.sampled_from(amount_forms(value, fmt)))
    if fmt == "xlsx" and written != "-" and draw(st.booleans()):
        return Cell(written, value, value, draw(st.sampled_from(NUMBER_FORMATS)))
    return Cell(written, value)


DAYS = st.dates(dt.date(2000, 1, 1), dt.date(2035, 12, 31))


@st.composite
def date_cell(draw: st.DrawFn, fmt: Format) -> Cell:
    day = draw(DAYS)
    written = draw(st.sampled_from(date_forms(day)))
    if fmt == "xlsx":
        stored = draw(
            st.sampled_from(
                ["text", "cell", "serial", "number"]  # Excel: a date cell, its serial, 20260203
            )
        )
        if stored == "cell":
            return Cell(written, day, excel_date(day), draw(st.sampled_from(DATE_FORMATS)))
        if stored == "serial":
            return Cell(written, day, excel_serial(day))
        if stored == "number":
            return Cell(written, day, int(day.strftime("%Y%m%d")))
    return Cell(written, day)


@st.composite
def datetime_cell(draw: st.DrawFn, fmt: Format) -> Cell:
    stamp = draw(st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2035, 12, 31)))
    stamp = stamp.replace(microsecond=0, second=draw(st.sampled_from([0, stamp.second])))
    written = draw(st.sampled_from(datetime_forms(stamp)))
    # A workbook's date-time cell at midnight is a date (how Excel stores plain dates).
    if fmt == "xlsx" and stamp.time() != dt.time(0) and draw(st.booleans()):
        return Cell(written, stamp, stamp, "yyyy/m/d h:mm:ss")
    return Cell(written, stamp)


@st.composite
def month_cell(draw: st.DrawFn, fmt: Format) -> Cell:
    day = draw(DAYS)
    ym = YearMonth(day.year, day.month)
    return Cell(draw(st.sampled_from(month_forms(ym))), ym)


@st.composite
def code_cell(draw: st.DrawFn, fmt: Format) -> Cell:
    width = draw(st.integers(4, 6))
    return text(str(draw(st.integers(0, 10**width - 1))).zfill(width))


@st.composite
def text_cell(draw: st.DrawFn, fmt: Format) -> Cell:
    return text(draw(st.sampled_from(WORDS)))


CELLS = {
    "amount": amount_cell,
    "date": date_cell,
    "datetime": datetime_cell,
    "month": month_cell,
    "code": code_cell,
    "text": text_cell,
}


def _is_dash(cell: Cell) -> bool:
    return cell.csv.strip() == "-"


@st.composite
def ledgers(draw: st.DrawFn, fmt: Format) -> Ledger:
    kinds = draw(st.lists(st.sampled_from(list(CELLS)), min_size=1, max_size=5))
    anchor = draw(st.integers(0, len(kinds)))
    kinds.insert(anchor, "text")  # a text column filled on every row (a 摘要, a 取引先)
    nrows = draw(st.integers(1, MAX_ROWS))
    titles = draw(st.lists(st.sampled_from(TITLES + list(UNIT_TITLES)), max_size=2, unique=True))
    named = {UNIT_TITLES[t] for t in titles if t in UNIT_TITLES}
    # Title rows naming two units contradict each other: no unit, and a warning says so.
    title_unit = named.pop() if len(named) == 1 else None

    used: dict[str, int] = {}
    columns: list[Column] = []
    grid: list[list[Cell]] = [[] for _ in range(nrows)]
    for j, kind in enumerate(kinds):
        name = NAMES[kind][used.get(kind, 0)]
        used[kind] = used.get(kind, 0) + 1
        own_unit = None
        if kind == "amount" and draw(st.booleans()):
            suffix = draw(st.sampled_from(list(HEADER_UNITS)))
            name, own_unit = name + suffix, HEADER_UNITS[suffix]
        cells = [
            text(draw(st.sampled_from(WORDS)))
            if j == anchor
            else (blank() if draw(st.integers(0, 6)) == 0 else draw(CELLS[kind](fmt)))
            for _ in range(nrows)
        ]
        if kind == "code" and not any(c.csv.startswith("0") for c in cells if c.csv):
            cells[0] = text("0" + draw(st.sampled_from(["012", "0456", "00789"])))
        readable = [k for k, c in enumerate(cells) if c.csv and not _is_dash(c)]
        if kind in BAD and len(readable) >= 4 and draw(st.booleans()):
            spoilt = draw(st.sampled_from(readable))
            cells[spoilt] = Cell(draw(st.sampled_from(BAD[kind])), None, bad=True)
        kind_of = KIND.get(kind)
        filled = [c for c in cells if c.csv]
        if kind == "amount" and all(_is_dash(c) or c.bad for c in filled):
            kind_of = None  # nothing but dashes is no amount column
        if not filled:
            kind_of = None
        broken = kind == "amount" and any(c.bad for c in cells)
        unit = own_unit or (title_unit if kind == "amount" and kind_of and not broken else None)
        if kind == "amount":  # a unit a cell writes is its column's (円 beside 千円: doubtful)
            cells = [_in_unit(c, own_unit or title_unit) for c in cells]
        columns.append(Column(name, kind_of, unit))
        for k, cell in enumerate(cells):
            grid[k].append(cell)
    # A column of nothing but dashes and one bad cell lists nothing: the cell stays as written.
    for j, column in enumerate(columns):
        if column.kind is None and kinds[j] == "amount":
            for row in grid:
                if row[j].bad:
                    row[j] = Cell(row[j].csv, row[j].csv)
    rows = [Row(cells) for cells in grid]
    total = draw(st.booleans())
    if total:
        rows.append(_total_row(draw, columns, kinds, grid, fmt))
    # Notes under a total of amounts (a table with no amount column has no footer to tell).
    noted = total and any(
        kind == "amount" and isinstance(rows[-1].cells[j].value, int)
        for j, kind in enumerate(kinds)
    )
    footer = draw(st.lists(footer_line(len(columns)), max_size=3)) if noted else []
    return Ledger(
        "ランダム台帳",
        "random",
        columns,
        rows,
        titles=[[t] for t in titles],
        blank_after_titles=bool(titles) and draw(st.booleans()),
        sheet="明細",
        footer=footer,
        blank_before_footer=bool(footer) and draw(st.booleans()),
    )


def _in_unit(cell: Cell, unit: str | None) -> Cell:
    """``cell`` with the ``円`` it writes after its digits in ``unit`` (``1,200千円`` in a
    千円 column), as a cell that writes a unit writes its column's."""
    if unit is None or unit == "円" or "円" not in cell.csv:
        return cell
    head, _, tail = cell.csv.rpartition("円")
    written = f"{head}{unit}{tail}"
    stored = cell.stored()
    return replace(cell, csv=written, xlsx=written if isinstance(stored, str) else stored)


@st.composite
def footer_line(draw: st.DrawFn, width: int) -> list[str]:
    """A note an export writes under its total: one cell, or a label and its value."""
    line = draw(st.sampled_from(FOOTERS))
    return line[:width] if len(line) > width else line


def _total_row(
    draw: st.DrawFn, columns: list[Column], kinds: list[str], grid: list[list[Cell]], fmt: Format
) -> Row:
    """A 合計 row: the label in a column with at most one amount before it (the label is one
    of the row's first two filled cells), the sums under the amounts, the rest blank."""
    label = draw(st.sampled_from(TOTAL_LABELS))
    places = [j for j in range(len(columns)) if kinds[:j].count("amount") <= 1]
    at = draw(st.sampled_from(places))
    cells: list[Cell] = []
    for j in range(len(columns)):
        if j == at:
            cells.append(text(label))
        elif kinds[j] != "amount":
            cells.append(blank())
        else:
            total = sum(
                row[j].value for row in grid if isinstance(row[j].value, int) and not row[j].bad
            )
            written = draw(st.sampled_from(amount_forms(total, fmt)))
            cell = Cell(written, total, total if fmt == "xlsx" else written)
            cell = _in_unit(cell, columns[j].unit)
            cells.append(cell)
    return Row(cells, total=True, label=label)


def _check(ledger: Ledger, fmt: Format) -> None:
    written = ledger.write(fmt)
    result = read_table(written.data, name=ledger.file_name(fmt))
    expected = ledger.expected(fmt, written)
    info = result.info

    assert info.columns == ledger.header
    assert result.table().records() == expected.records
    assert info.converted == expected.converted
    assert info.units == expected.units
    assert result.positions is not None
    assert result.positions.tolist() == expected.positions
    assert [t["position"] for t in info.totals] == expected.total_positions
    assert [t["label"] for t in info.totals] == expected.total_labels
    assert len(result.totals_table()) == len(expected.total_positions)
    assert info.footer == expected.footer
    listed: list[dict[str, Any]] = [
        {k: cell[k] for k in ("column", "position", "cell", "value")} for cell in info.unreadable
    ]
    assert listed == expected.unreadable


@pytest.mark.parametrize("fmt", ["csv-cp932", "csv-utf8-bom"])
@settings(max_examples=EXAMPLES_CSV, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_csv_ledgers_read_back_as_written(fmt: Format, data: st.DataObject) -> None:
    _check(data.draw(ledgers(fmt), label="ledger"), fmt)


@settings(max_examples=EXAMPLES_XLSX, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_workbooks_read_back_as_written(data: st.DataObject) -> None:
    _check(data.draw(ledgers("xlsx"), label="ledger"), "xlsx")
