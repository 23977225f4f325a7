"""Ledgers, bank statements and accounting-software exports as accounting teams have them.

Each :class:`Ledger` is written once, cell by cell, with what every cell means; the writers
turn it into the files people send -- CSV (CP932 or UTF-8 with BOM, CRLF, as Excel and the
Japanese banks save it) and .xlsx (openpyxl: real date cells, number formats, a merged title)
-- and say where each row landed (the CSV line, counting a quoted line break, or the sheet
row). :meth:`Ledger.expected` is what ``read_table`` must give back for a file written so.

Nothing here is checked in as a binary: the tests build the files when they run.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from openpyxl import Workbook
from openpyxl.utils import get_column_letter

from keiri_agent.documents.cell_forms import YearMonth
from keiri_agent.documents.table_value import json_cell

__all__ = [
    "FORMATS",
    "LEDGERS",
    "Cell",
    "Column",
    "Expected",
    "Format",
    "Ledger",
    "Row",
    "Written",
    "amount",
    "bad",
    "blank",
    "day",
    "excel_date",
    "excel_serial",
    "month",
    "stamp",
    "text",
]

Format = Literal["csv-cp932", "csv-utf8-bom", "xlsx"]
FORMATS: tuple[Format, ...] = ("csv-cp932", "csv-utf8-bom", "xlsx")
Kind = Literal["number", "date", "datetime", "month"] | None

_SAME: Any = object()  # "the workbook holds what the CSV shows"


@dataclass(frozen=True)
class Cell:
    """One cell: ``csv`` as a CSV shows it, ``xlsx`` as a workbook stores it (None: no cell;
    default the CSV text), ``value`` what it means (None: blank or unreadable), ``fmt`` the
    number format of its workbook cell, ``bad`` when it must be listed as unreadable."""

    csv: str
    value: Any = None
    xlsx: Any = _SAME
    fmt: str | None = None
    bad: bool = False

    def stored(self) -> Any:
        if self.xlsx is not _SAME:
            return self.xlsx
        return self.csv if self.csv.strip() else None

    def written(self, fmt: Format) -> Any:
        """The cell as the file holds it (the raw value a text column keeps)."""
        return self.stored() if fmt == "xlsx" else (self.csv if self.csv.strip() else None)


def text(value: str) -> Cell:
    return Cell(value, value)


def blank() -> Cell:
    return Cell("", None, None)


def amount(written: str, value: int | float, *, xlsx: Any = _SAME, fmt: str | None = None) -> Cell:
    """An amount written as ``written`` in a CSV; in a workbook ``xlsx`` (a number with the
    number format ``fmt``, or by default the same text)."""
    return Cell(written, value, xlsx, fmt)


def day(written: str, value: dt.date, *, xlsx: Any = _SAME, fmt: str | None = None) -> Cell:
    return Cell(written, value, xlsx, fmt)


def stamp(written: str, value: dt.datetime, *, xlsx: Any = _SAME) -> Cell:
    return Cell(written, value, xlsx, "yyyy/m/d h:mm" if isinstance(xlsx, dt.datetime) else None)


def month(written: str, value: YearMonth) -> Cell:
    return Cell(written, value)


def bad(written: str) -> Cell:
    """A cell written so that it cannot be read as its column's type."""
    return Cell(written, None, bad=True)


def excel_date(value: dt.date) -> dt.datetime:
    return dt.datetime(value.year, value.month, value.day)


def excel_serial(value: dt.date) -> int:
    return (value - dt.date(1899, 12, 30)).days


@dataclass(frozen=True)
class Row:
    cells: Sequence[Cell]
    total: bool = False  # a total or subtotal row, set aside by read_table
    label: str | None = None  # the total label read_table reports (default: found in cells)


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind = None
    unit: str | None = None  # the unit read_table must report for it


@dataclass(frozen=True)
class Ledger:
    """A table as a team keeps it: title rows above the header (the first is a merged title in
    a workbook), the header, data rows and total rows in file order, then footer lines (notes
    an export writes under the table: ``※ 金額は税込です``, ``以上``), after a blank row when
    ``blank_before_footer``."""

    name: str
    slug: str  # the test id (ASCII)
    columns: Sequence[Column]
    rows: Sequence[Row]
    titles: Sequence[Sequence[str]] = ()
    blank_after_titles: bool = False
    sheet: str = "Sheet1"
    formats: tuple[Format, ...] = FORMATS
    footer: Sequence[Sequence[str]] = ()
    blank_before_footer: bool = False

    @property
    def header(self) -> list[str]:
        return [c.name for c in self.columns]

    def write(self, fmt: Format) -> Written:
        if fmt == "xlsx":
            return _write_xlsx(self)
        return _write_csv(self, "cp932" if fmt == "csv-cp932" else "utf-8-sig")

    def file_name(self, fmt: Format) -> str:
        return f"{self.name}.{'xlsx' if fmt == 'xlsx' else 'csv'}"

    def expected(self, fmt: Format, written: Written) -> Expected:
        """What ``read_table`` must give for this ledger written as ``fmt``."""
        data = [(r, p) for r, p in zip(self.rows, written.positions, strict=True) if not r.total]
        totals = [(r, p) for r, p in zip(self.rows, written.positions, strict=True) if r.total]
        records: list[dict[str, Any]] = [{} for _ in data]
        converted: dict[str, str] = {}
        unreadable: list[dict[str, Any]] = []
        for j, column in enumerate(self.columns):
            cells = [r.cells[j] for r, _p in data]
            broken = column.kind == "number" and any(c.bad for c in cells)
            if column.kind is not None and not broken:
                converted[column.name] = _kind_read(column.kind, cells)
            for k, cell in enumerate(cells):
                if column.kind is None or broken:
                    value = cell.written(fmt)
                else:
                    value = cell.value
                    if column.kind == "datetime" and type(value) is dt.date:
                        value = excel_date(value)
                records[k][column.name] = json_cell(
                    value.isoformat() if isinstance(value, YearMonth) else value
                )
            for cell, (_row, position) in zip(cells, data, strict=True):
                if cell.bad:
                    letter = get_column_letter(j + 1) if fmt == "xlsx" else None
                    unreadable.append(
                        {
                            "column": column.name,
                            "position": position,
                            "cell": f"{letter}{position}" if letter else None,
                            "value": cell.csv,
                        }
                    )
        return Expected(
            records=records,
            positions=[p for _r, p in data],
            converted=converted,
            units={c.name: c.unit for c in self.columns if c.unit is not None},
            unreadable=unreadable,
            total_positions=[p for _r, p in totals],
            total_labels=[r.label or _label_of(r) for r, _p in totals],
            footer=[
                {"position": p, "text": " ".join(c.strip() for c in line if c.strip())}
                for line, p in zip(self.footer, written.footer_positions, strict=True)
            ],
        )


def _label_of(row: Row) -> str:
    return next(c.csv.strip() for c in row.cells if c.csv.strip())


@dataclass(frozen=True)
class Written:
    data: bytes
    positions: list[int]  # file line (CSV) or sheet row (xlsx) of each of ``Ledger.rows``
    footer_positions: list[int] = field(default_factory=list)  # of each ``Ledger.footer`` line


def _kind_read(kind: str, cells: list[Cell]) -> str:
    """The kind a reader gives a column of ``kind``: a column of datetimes whose every time is
    midnight (``2000/01/01 0:00:00``, as Excel saves a date) is a column of dates."""
    values = [c.value for c in cells if c.value is not None and not c.bad]
    midnights = all(not isinstance(v, dt.datetime) or v.time() == dt.time(0) for v in values)
    return "date" if kind == "datetime" and midnights else kind


@dataclass(frozen=True)
class Expected:
    records: list[dict[str, Any]]
    positions: list[int]
    converted: dict[str, str]
    units: dict[str, str]
    unreadable: list[dict[str, Any]]  # {column, position, cell, value}, in column order
    total_positions: list[int]
    total_labels: list[str] = field(default_factory=list)
    footer: list[dict[str, Any]] = field(default_factory=list)  # {position, text}


def _write_csv(ledger: Ledger, encoding: str) -> Written:
    """CRLF between records (as Excel and the banks write), a bare LF inside a quoted cell."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    width = len(ledger.columns)
    for title in ledger.titles:
        writer.writerow(list(title) + [""] * (width - len(title)))
    if ledger.blank_after_titles:
        writer.writerow([""] * width)
    writer.writerow(ledger.header)
    positions = []
    for row in ledger.rows:
        positions.append(out.getvalue().count("\n") + 1)
        writer.writerow([c.csv for c in row.cells])
    if ledger.blank_before_footer:
        writer.writerow([""] * width)
    footer_positions = []
    for line in ledger.footer:
        footer_positions.append(out.getvalue().count("\n") + 1)
        writer.writerow(list(line) + [""] * (width - len(line)))
    return Written(out.getvalue().encode(encoding), positions, footer_positions)


def _write_xlsx(ledger: Ledger) -> Written:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = ledger.sheet
    width = len(ledger.columns)
    at = 1
    for title in ledger.titles:
        for j, value in enumerate(title, start=1):
            sheet.cell(row=at, column=j, value=value)
        if len(title) == 1 and width > 1:
            sheet.merge_cells(start_row=at, start_column=1, end_row=at, end_column=width)
        at += 1
    at += 1 if ledger.blank_after_titles else 0
    header_row = at
    for j, name in enumerate(ledger.header, start=1):
        sheet.cell(row=header_row, column=j, value=name)
    positions = []
    for n, row in enumerate(ledger.rows):
        at = header_row + 1 + n
        positions.append(at)
        for j, cell in enumerate(row.cells, start=1):
            value = cell.stored()
            if value is None:
                continue
            target = sheet.cell(row=at, column=j, value=value)
            if isinstance(value, str):
                target.data_type = "s"  # "0012" and "=..." stay the text the user typed
            if cell.fmt is not None:
                target.number_format = cell.fmt
    at = header_row + len(ledger.rows) + (2 if ledger.blank_before_footer else 1)
    footer_positions = []
    for n, line in enumerate(ledger.footer):
        footer_positions.append(at + n)
        for j, value in enumerate(line, start=1):
            if value.strip():
                sheet.cell(row=at + n, column=j, value=value).data_type = "s"
    out = io.BytesIO()
    workbook.save(out)
    return Written(out.getvalue(), positions, footer_positions)


# --- the corpus ------------------------------------------------------------------------------

D = dt.date
ACCOUNTING = "#,##0;(#,##0)"  # Excel's accounting style: negatives in parentheses
TRIANGLE = '#,##0;"▲"#,##0'
YEN = '"¥"#,##0;"¥"-#,##0'


def _journal() -> Ledger:
    """仕訳帳 as 弥生 exports it: 和暦 dates (R.08/02/03), 伝票No, debit and credit sides."""
    cols = [
        Column("伝票No", "number"),
        Column("取引日付", "date"),
        Column("借方勘定科目"),
        Column("借方補助科目"),
        Column("借方金額", "number"),
        Column("貸方勘定科目"),
        Column("貸方補助科目"),
        Column("貸方金額", "number"),
        Column("摘要"),
    ]
    rows = [
        Row(
            [
                amount("1", 1, xlsx=1),
                day("R.08/02/02", D(2026, 2, 2)),
                text("普通預金"),
                text("みずほ銀行"),
                amount("1,100,000", 1100000, xlsx=1100000, fmt="#,##0"),
                text("売掛金"),
                text("㈱山田商事"),
                amount("1,100,000", 1100000, xlsx=1100000, fmt="#,##0"),
                text("1月分売上 入金"),
            ]
        ),
        Row(
            [
                amount("2", 2, xlsx=2),
                day("R08/2/3", D(2026, 2, 3)),
                text("旅費交通費"),
                blank(),
                amount("12,800", 12800, xlsx=12800, fmt="#,##0"),
                text("現金"),
                blank(),
                amount("12,800", 12800, xlsx=12800, fmt="#,##0"),
                text("新幹線 東京-大阪\n（往復・出張）"),
            ]
        ),
        Row(
            [
                amount("3", 3, xlsx=3),
                day("2026/02/04", D(2026, 2, 4), xlsx=excel_date(D(2026, 2, 4)), fmt="yyyy/mm/dd"),
                text("消耗品費"),
                blank(),
                amount("3,300", 3300, xlsx=3300),
                text("未払金"),
                text("ｱｽｸﾙ"),
                amount("3,300", 3300, xlsx=3300),
                text("コピー用紙 A4"),
            ]
        ),
        Row(
            [
                amount("4", 4, xlsx=4),
                day("20260205", D(2026, 2, 5), xlsx=20260205),
                text("売上高"),
                blank(),
                amount("(5,500)", -5500, xlsx=-5500, fmt=ACCOUNTING),
                text("売掛金"),
                text("㈱佐藤工業"),
                amount("(5,500)", -5500, xlsx=-5500, fmt=ACCOUNTING),
                text("返品 赤伝"),
            ]
        ),
    ]
    return Ledger(
        "仕訳帳",
        "journal-yayoi",
        cols,
        rows,
        titles=[["仕訳帳"], ["期間", "令和8年2月1日～令和8年2月28日"]],
        sheet="仕訳日記帳",
    )


def _general_ledger() -> Ledger:
    """総勘定元帳 of one account: 前月繰越, daily rows, 月計 and 累計 rows at the end."""
    cols = [
        Column("日付", "date"),
        Column("相手勘定科目"),
        Column("摘要"),
        Column("借方金額", "number"),
        Column("貸方金額", "number"),
        Column("残高", "number"),
    ]
    rows = [
        Row(
            [
                blank(),
                blank(),
                text("前月繰越"),
                blank(),
                blank(),
                amount("2,000,000", 2000000, xlsx=2000000, fmt="#,##0"),
            ]
        ),
        Row(
            [
                day("2026/2/2", D(2026, 2, 2), xlsx=excel_date(D(2026, 2, 2)), fmt="m/d"),
                text("売掛金"),
                text("ﾌﾘｺﾐ ﾔﾏﾀﾞｼｮｳｼﾞ"),
                amount("1,100,000", 1100000, xlsx=1100000),
                blank(),
                amount("3,100,000", 3100000, xlsx=3100000),
            ]
        ),
        Row(
            [
                day("2026/2/10", D(2026, 2, 10), xlsx=excel_serial(D(2026, 2, 10))),
                text("買掛金"),
                text("ｿｳｷﾝ ｶ)ｽｽﾞｷ"),
                blank(),
                amount("880,000", 880000, xlsx=880000),
                amount("2,220,000", 2220000, xlsx=2220000),
            ]
        ),
        Row(
            [
                day(str(excel_serial(D(2026, 2, 25))), D(2026, 2, 25), xlsx="2026/2/25"),
                text("給料手当"),
                text("2月分給与"),
                blank(),
                amount("1,450,000", 1450000, xlsx=1450000),
                amount("770,000", 770000, xlsx=770000),
            ]
        ),
        Row(
            [
                blank(),
                blank(),
                text("月計"),
                amount("1,100,000", 1100000, xlsx=1100000),
                amount("2,330,000", 2330000, xlsx=2330000),
                blank(),
            ],
            total=True,
        ),
        Row(
            [
                blank(),
                blank(),
                text("累計"),
                amount("5,300,000", 5300000, xlsx=5300000),
                amount("6,530,000", 6530000, xlsx=6530000),
                blank(),
            ],
            total=True,
        ),
    ]
    return Ledger(
        "総勘定元帳_普通預金",
        "general-ledger",
        cols,
        rows,
        titles=[["総勘定元帳"], ["勘定科目", "普通預金"]],
        blank_after_titles=True,
        sheet="普通預金",
    )


def _sales_by_department() -> Ledger:
    """売上明細 by 部門 in 千円, with 部門計 after each department and a 合計 at the end."""
    cols = [
        Column("売上日", "date"),
        Column("部門"),
        Column("得意先コード"),
        Column("得意先"),
        Column("売上金額", "number", unit="千円"),
        Column("消費税", "number", unit="千円"),
    ]
    rows = [
        Row(
            [
                day("2026/2/3", D(2026, 2, 3), xlsx=excel_date(D(2026, 2, 3)), fmt="yyyy/m/d"),
                text("営業1部"),
                text("00123"),
                text("㈱山田商事"),
                amount("1,200", 1200, xlsx=1200, fmt="#,##0"),
                amount("120", 120, xlsx=120),
            ]
        ),
        Row(
            [
                day("2026年2月10日", D(2026, 2, 10)),
                text("営業1部"),
                text("00456"),
                text("髙橋工業㈱"),
                amount("△300", -300, xlsx=-300, fmt=TRIANGLE),
                amount("△30", -30, xlsx="△30"),
            ]
        ),
        Row(
            [
                blank(),
                text("部門計"),
                blank(),
                blank(),
                amount("900", 900, xlsx=900),
                amount("90", 90, xlsx=90),
            ],
            total=True,
        ),
        Row(
            [
                day("令和8年2月12日", D(2026, 2, 12)),
                text("営業2部"),
                text("01001"),
                text("ｶ)ﾀﾅｶ"),
                amount("１，５００", 1500),
                amount("150", 150, xlsx=150),
            ]
        ),
        Row(
            [
                day("2026/02/27", D(2026, 2, 27), xlsx=excel_serial(D(2026, 2, 27))),
                text("営業2部"),
                text("00789"),
                text("佐藤商店"),
                blank(),
                blank(),
            ]
        ),
        Row(
            [
                blank(),
                text("営業2部 計"),
                blank(),
                blank(),
                amount("1,500", 1500, xlsx=1500),
                amount("150", 150, xlsx=150),
            ],
            total=True,
        ),
        Row(
            [
                blank(),
                text("合　計"),
                blank(),
                blank(),
                amount("2,400", 2400, xlsx=2400),
                amount("240", 240, xlsx=240),
            ],
            total=True,
        ),
    ]
    return Ledger(
        "売上明細_部門別",
        "sales-by-department",
        cols,
        rows,
        titles=[["2026年2月 売上明細"], ["（単位：千円）"]],
        sheet="売上明細",
    )


def _bank_statement() -> Ledger:
    """入出金明細 from a bank's web service: 8-digit dates, half-width kana, blank sides."""
    cols = [
        Column("日付", "date"),
        Column("摘要"),
        Column("お支払金額", "number"),
        Column("お預り金額", "number"),
        Column("残高", "number"),
    ]
    rows = [
        Row(
            [
                day("20260202", D(2026, 2, 2), xlsx=20260202),
                text("ﾌﾘｺﾐ ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ"),
                blank(),
                amount("1,100,000", 1100000, xlsx=1100000),
                amount("3,100,000", 3100000, xlsx=3100000),
            ]
        ),
        Row(
            [
                day("20260205", D(2026, 2, 5), xlsx="20260205"),
                text("ﾃｽｳﾘｮｳ"),
                amount("440", 440, xlsx=440),
                blank(),
                amount("3,099,560", 3099560, xlsx=3099560),
            ]
        ),
        Row(
            [
                day("20260210", D(2026, 2, 10), xlsx=20260210),
                text("ｿｳｷﾝ ｶ)ｽｽﾞｷｾｲｻｸｼﾖ"),
                amount("880,000", 880000, xlsx=880000),
                blank(),
                amount("2,219,560", 2219560, xlsx=2219560),
            ]
        ),
        Row(
            [
                day("20260225", D(2026, 2, 25), xlsx=20260225),
                text("ｷﾕｳﾖ ﾌﾘｺﾐ"),
                amount("1,450,000", 1450000, xlsx=1450000),
                blank(),
                amount("769,560", 769560, xlsx=769560),
            ]
        ),
    ]
    return Ledger("入出金明細_20260228", "bank-compact-dates", cols, rows, sheet="入出金明細")


def _bank_statement_slashes() -> Ledger:
    """Another bank: 2026/02/03 dates, ¥ amounts with 円, an ATM line with a weekday."""
    cols = [
        Column("年月日", "date"),
        Column("お取扱内容"),
        Column("お引出し", "number"),
        Column("お預入れ", "number"),
        Column("差引残高", "number"),
        Column("メモ"),
    ]
    rows = [
        Row(
            [
                day("2026/02/03", D(2026, 2, 3)),
                text("ATM"),
                amount("￥30,000", 30000),
                blank(),
                amount("￥470,000", 470000),
                blank(),
            ]
        ),
        Row(
            [
                day("2026/02/04(水)", D(2026, 2, 4)),
                text("ｶｰﾄﾞ ｱﾏｿﾞﾝ"),
                amount("3,980円", 3980),
                blank(),
                amount("466,020円", 466020),
                text("備品"),
            ]
        ),
        Row(
            [
                day("2026/02/06", D(2026, 2, 6)),
                text("ﾘｿｸ"),
                blank(),
                amount("12", 12),
                amount("466,032", 466032),
                blank(),
            ]
        ),
    ]
    return Ledger(
        "普通預金_入出金明細",
        "bank-slashed-dates",
        cols,
        rows,
        titles=[["普通預金 入出金明細"], ["口座番号", "店番 123 口座 0012345"]],
    )


def _freee_deals() -> Ledger:
    """freee's 取引 export: 発生日/決済期日, 税区分, 品目, 部門, 決済金額 sometimes blank."""
    cols = [
        Column("収支区分"),
        Column("管理番号"),
        Column("発生日", "date"),
        Column("決済期日", "date"),
        Column("取引先"),
        Column("勘定科目"),
        Column("税区分"),
        Column("金額", "number"),
        Column("税額", "number"),
        Column("備考"),
        Column("部門"),
        Column("決済金額", "number"),
    ]
    rows = [
        Row(
            [
                text("収入"),
                text("INV-0001"),
                day("2026-02-03", D(2026, 2, 3)),
                day("2026-03-31", D(2026, 3, 31)),
                text("株式会社山田商事"),
                text("売上高"),
                text("課税売上10%"),
                amount("110000", 110000),
                amount("10000", 10000),
                text("2月分 保守料\r\n（請求書 No.123）"),
                text("営業部"),
                blank(),
            ]
        ),
        Row(
            [
                text("支出"),
                blank(),
                day("2026-02-05", D(2026, 2, 5)),
                blank(),
                text("アスクル株式会社"),
                text("消耗品費"),
                text("課対仕入10%"),
                amount("3300", 3300),
                amount("300", 300),
                blank(),
                text("管理部"),
                amount("3300", 3300),
            ]
        ),
        Row(
            [
                text("支出"),
                text("0002"),
                day("2026-02-06", D(2026, 2, 6)),
                day("2026-02-28", D(2026, 2, 28)),
                text("東京電力"),
                text("水道光熱費"),
                text("課対仕入10%"),
                amount("-1100", -1100),
                amount("-100", -100),
                text("過請求分の戻り"),
                text("管理部"),
                amount("-1100", -1100),
            ]
        ),
    ]
    return Ledger("freee_取引", "freee-deals", cols, rows)


def _moneyforward_journal() -> Ledger:
    """マネーフォワード クラウド会計's 仕訳帳 export: 金額(円) headers, 作成日時 stamps."""
    cols = [
        Column("取引No", "number"),
        Column("取引日", "date"),
        Column("借方勘定科目"),
        Column("借方部門"),
        Column("借方税区分"),
        Column("借方金額(円)", "number", unit="円"),
        Column("貸方勘定科目"),
        Column("貸方金額(円)", "number", unit="円"),
        Column("摘要"),
        Column("作成日時", "datetime"),
    ]
    rows = [
        Row(
            [
                amount("101", 101),
                day("2026/02/03", D(2026, 2, 3)),
                text("旅費交通費"),
                text("営業部"),
                text("課税仕入 10%"),
                amount("12,800", 12800),
                text("未払金"),
                amount("12,800", 12800),
                text("出張 大阪"),
                stamp("2026/02/05 10:15:30", dt.datetime(2026, 2, 5, 10, 15, 30)),
            ]
        ),
        Row(
            [
                amount("102", 102),
                day("2026/02/04", D(2026, 2, 4)),
                text("会議費"),
                blank(),
                text("課税仕入 10%"),
                amount("4,400", 4400),
                text("現金"),
                amount("4,400", 4400),
                text("打合せ 喫茶"),
                stamp("2026/02/05 10:16:02", dt.datetime(2026, 2, 5, 10, 16, 2)),
            ]
        ),
    ]
    return Ledger("仕訳帳_MF", "moneyforward-journal", cols, rows)


def _expense_claims() -> Ledger:
    """経費精算: refunds in parentheses, ▲, full-width digits, a 計上月 column, a code with
    leading zeros, and a trailing 合計 row."""
    cols = [
        Column("社員番号"),
        Column("氏名"),
        Column("計上月", "month"),
        Column("利用日", "date"),
        Column("内容"),
        Column("金額", "number"),
    ]
    rows = [
        Row(
            [
                text("000123"),
                text("渡辺 一郎"),
                month("2026年2月", YearMonth(2026, 2)),
                day("2026/2/3", D(2026, 2, 3), xlsx=excel_date(D(2026, 2, 3)), fmt="yyyy/m/d"),
                text("タクシー代"),
                amount("1,200", 1200, xlsx=1200, fmt="#,##0"),
            ]
        ),
        Row(
            [
                text("000123"),
                text("渡辺 一郎"),
                month("2026/02", YearMonth(2026, 2)),
                day("2026/2/4", D(2026, 2, 4), xlsx=excel_date(D(2026, 2, 4)), fmt="yyyy/m/d"),
                text("タクシー代 取消"),
                amount("(1,200)", -1200, xlsx=-1200, fmt=ACCOUNTING),
            ]
        ),
        Row(
            [
                text("004567"),
                text("佐藤 花子"),
                month("令和8年2月", YearMonth(2026, 2)),
                day("R8.2.10", D(2026, 2, 10)),
                text("書籍"),
                amount("３，３００", 3300),
            ]
        ),
        Row(
            [
                text("004567"),
                text("佐藤 花子"),
                month("2026年3月", YearMonth(2026, 3)),
                day("2026-03-02", D(2026, 3, 2)),
                text("仮払金の戻し"),
                amount("▲5,000", -5000, xlsx=-5000, fmt=TRIANGLE),
            ]
        ),
        Row(
            [
                text("008910"),
                text("鈴木 次郎"),
                month("2026年3月", YearMonth(2026, 3)),
                day("2026/3/5", D(2026, 3, 5)),
                text("切手"),
                amount("￥ 840", 840, xlsx=840, fmt=YEN),
            ]
        ),
        Row(
            [
                blank(),
                text("【合計】"),
                blank(),
                blank(),
                blank(),
                amount("(860)", -860, xlsx=-860, fmt=ACCOUNTING),
            ],
            total=True,
            label="【合計】",
        ),
    ]
    return Ledger("経費精算_2026年2-3月", "expense-claims", cols, rows, titles=[["経費精算一覧"]])


def _unreadable_cells() -> Ledger:
    """A register with cells no one can read as amounts or dates: each is listed at its place."""
    cols = [
        Column("支払日", "date"),
        Column("支払先"),
        Column("支払金額", "number"),
        Column("メモ"),
    ]
    rows = [
        Row([day("2026/2/3", D(2026, 2, 3)), text("㈱A"), amount("10,000", 10000), blank()]),
        Row([bad("26/2/4"), text("㈱B"), amount("2,000", 2000), text("年が 2 桁")]),
        Row([day("2026/2/5", D(2026, 2, 5)), text("㈱C"), bad("1,23"), text("カンマ違い")]),
        Row([day("2026/2/6", D(2026, 2, 6)), text("㈱D"), amount("500", 500), blank()]),
        Row([bad("未定"), text("㈱E"), bad("(700"), text("括弧が片方")]),
        Row([day("2026/2/9", D(2026, 2, 9)), text("㈱F"), amount("800", 800), blank()]),
    ]
    return Ledger("支払予定", "unreadable-cells", cols, rows, titles=[["支払予定表"]])


def _monthly_by_department() -> Ledger:
    """部門別の月次推移 with the unit in each header, 小計 rows, a dash for zero, 総合計; a
    前年比 of percentages with a dash where there is no last year (no rate: blank)."""
    cols = [
        Column("部門"),
        Column("年月", "month"),
        Column("売上高（千円）", "number", unit="千円"),
        Column("売上原価（千円）", "number", unit="千円"),
        Column("前年比", "number"),
    ]
    rows = [
        Row(
            [
                text("東京"),
                month("2026年1月", YearMonth(2026, 1)),
                amount("12,500", 12500, xlsx=12500, fmt="#,##0"),
                amount("8,200", 8200, xlsx=8200, fmt="#,##0"),
                Cell("105%", 1.05),
            ]
        ),
        Row(
            [
                text("東京"),
                month("2026年2月", YearMonth(2026, 2)),
                amount("11,800", 11800, xlsx=11800, fmt="#,##0"),
                amount("7,900", 7900, xlsx=7900, fmt="#,##0"),
                Cell("98%", 0.98),
            ]
        ),
        Row(
            [
                text("東京 小計"),
                blank(),
                amount("24,300", 24300, xlsx=24300),
                amount("16,100", 16100, xlsx=16100),
                blank(),
            ],
            total=True,
        ),
        Row(
            [
                text("大阪"),
                month("R8.1", YearMonth(2026, 1)),
                amount("6,000", 6000),
                amount("-", 0),
                Cell("―", None),
            ]
        ),
        Row(
            [
                text("大阪"),
                month("2026/02", YearMonth(2026, 2)),
                amount("▲200", -200),
                amount("150", 150),
                blank(),
            ]
        ),
        Row(
            [text("大阪 小計"), blank(), amount("5,800", 5800), amount("150", 150), blank()],
            total=True,
        ),
        Row(
            [text("総合計"), blank(), amount("30,100", 30100), amount("16,250", 16250), blank()],
            total=True,
        ),
    ]
    return Ledger(
        "部門別月次推移",
        "monthly-by-department",
        cols,
        rows,
        titles=[["部門別 月次推移表（2026年1月～2月）"]],
        blank_after_titles=True,
        sheet="月次推移",
    )


LEDGERS: tuple[Ledger, ...] = (
    _journal(),
    _general_ledger(),
    _sales_by_department(),
    _bank_statement(),
    _bank_statement_slashes(),
    _freee_deals(),
    _moneyforward_journal(),
    _expense_claims(),
    _unreadable_cells(),
    _monthly_by_department(),
)
