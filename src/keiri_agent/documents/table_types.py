"""Column types of a table read from a file: amounts, dates, months and datetimes, or text.

``type_column`` decides one column at a time, with the forms of ``cell_forms``:

* **amounts**: every non-blank cell reads as an amount (a lone dash, which accounting formats
  print for zero, reads as 0 with a note). A column that is mostly amounts -- its header names
  an amount or a unit (金額, 売上, 残高, 千円...), or a title row names a unit and the header
  is not a date's, and at least half its cells read, or at least
  ``MOSTLY_SHARE`` of at least ``MOSTLY_MIN_CELLS`` cells read -- keeps the text the user wrote
  (nothing is turned into a blank) and every cell that is not an amount is listed with why;
  a block that needs numbers then stops at the first of them.
* **dates** (tried first when the header names a date, or ends in one: 支払日, 売上日): every
  non-blank cell reads as a date (``2026/2/3``, ``令和8年2月3日``,
  ``20260203`` where the header names a date, Excel serial numbers where the header names a
  date, with their time as a fraction: ``46056.42708``...) becomes one datetime column; with a
  time other than midnight anywhere, datetimes (``_date_kind``: every time at midnight, as
  Excel saves a date ``2026/02/03 0:00`` and as a workbook's date cell holds it, is a date
  column, in a CSV as in a workbook). A column that is
  mostly dates (same rule as amounts, with date headers: 日付, 年月日, 計上日...) is converted
  too, its unreadable cells become blank and are listed (position and value).
* **percentages**: every non-blank cell a percentage (``10%``, ``８％``) → the fractions (0.1),
  a number column, as a workbook's ``0%`` cells hold them. A plain number or a word among
  them (``0.1``: 10% or 0.1%?) keeps the column as written, the cells listed, as an amount
  column's unreadable cells are (``rate_cells``, which ``table.aggregate`` asks too).
* **months**: every non-blank cell names a month (``2026年2月``, ``2026/02``) → a month column;
  so does a column headed 年月 (not 年月日) whose every cell is six digits ``202601``.
* leading-zero codes (``0123``) and digits more than a number keeps (a 16-20 digit 照会番号:
  ``cell_forms.is_code``) stay text, so codes keep their zeros and digits; a column holding
  such a code is a code column (not "mostly amounts") unless its header names an amount.
* identifier headers (取引先コード, 伝票番号, 口座番号, 社員No., 顧客ID: ``is_id_header``)
  change no type: plain codes (1001) stay numbers, so a plan comparing a code to 1001 works;
  the header tells the writers to show them as written (no separator: ``amount_format``),
  and a workbook to read a code shown with its leading zeros as shown (``table_xlsx``).

A unit written in the cells (``1,200千円``, ``3.5百万円``, ``￥1,200千``) is the column's unit
when the cells agree; cells in different units are converted exactly into one, with a note,
and a bare number among them with no unit declared is listed (``cell_units``).

Otherwise nothing is multiplied: a unit (千円, 百万円, 万円) written in the header or a title row is
reported beside the column (``TableReadInfo.units``; a title's unit beside amounts and a
report's period columns -- 4月, 前期, 予算 --, not beside counts such as 数量 or rates such as
増減率), the numbers stay as written. A date column written without years (``2/3``,
``2月3日``) is read in the period its title rows name (``2026年2月分``,
``期間：2026/4/1～2027/3/31``: ``cell_period``) when every cell is one day of it; otherwise
it stays text, every cell listed with why: the year is never guessed. In a column that
writes its years, a cell without one is listed as before (a slip to check).

An amount column with cells written the European way (``1.200,50``) lists them, and lists its
``1.200`` cells too (1,200 or 1.2: ``_dot_thousands``), as it does where its other cells write
no fraction and separate thousands with commas (``12,000``) or write two or more such cells; a
column with other fractions (``1,234.50``) reads ``1.200`` as 1.2.

A date column with its years last (``02/03/2026``, ``2/3/2026 0:00``) is read in the order its
cells show: day first where some cell's first number is above 12 (``13/02/2026``), month first
where some cell's second is, with a note; where no cell shows it, or cells show both, every such
cell is listed with why (``table_date_order``).

A column whose header names amounts or dates and whose cells mostly write one in a form no
reader takes (``1.200,50``, ``1 200``, ``02/03/2026``, ``26/2/3``) stays as written with every
such cell listed (``_refused``), never a text column without a word; a header ending in a date
word (支払日) means dates there. A column whose header names a sum of money (金額, 単価, 合計)
and whose cells are mostly words (``未定``, ``別途``, ``ー``) stays text with a note saying so
(``_words_for_amounts``).

A long column is read at once where its cells take the commonest forms (``table_cells``:
plain and marked amounts, ``2026/2/3`` and ``2026年2月3日``); the other cells of a date column
(和暦, weekdays, times, English months) are read each distinct text once and the column takes
the answers by their codes (``distinct``);
the result is the reading cell by cell (``tests/documents/test_ledger_rows.py``).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.documents.cell_forms import (
    AMOUNT_UNITS,
    CODE_DIGITS,
    DASH_END,
    DASH_MINUS,
    DASH_TEXTS,
    DAY_FIRST,
    DOLLAR_AMONG_YEN,
    DOT_THOUSANDS,
    YearMonth,
    amount_problem,
    dash_form,
    date_problem,
    day_order,
    era_outside,
    is_code,
    is_dash,
    is_dollar,
    is_european,
    is_month_day,
    is_spaced_comma,
    is_trailing_minus,
    local_time,
    local_zone,
    normalize_cell_text,
    read_amount,
    read_amount_unit,
    read_date,
    read_month,
    read_percent,
)
from keiri_agent.documents.cell_period import Period, day_in, day_problem
from keiri_agent.documents.cell_units import cell_units
from keiri_agent.documents.table_cells import (
    ASCII_NUMBER,
    MARKED_AMOUNT,
    TRAILING,
    YEN_DASHED,
    YEN_UNSIGNED,
    at_once,
    cell_text,
    column_digits,
    dash_ended,
    distinct,
    each_once,
    marked_amounts,
    matches,
    rows_of,
)
from keiri_agent.documents.table_date_order import (
    ColumnOrder,
    column_order,
    order_reason,
    starts_year_last,
)

__all__ = [
    "EXCEL_SERIAL_RANGE",
    "MOSTLY_MIN_CELLS",
    "MOSTLY_SHARE",
    "NAMED_SHARE",
    "ColumnTyping",
    "RateCells",
    "Unreadable",
    "column_unit",
    "dollar_cells",
    "is_amount_header",
    "is_date_header",
    "is_id_header",
    "rate_cells",
    "rate_problem",
    "type_column",
    "unit_in",
]

# A column "mostly" of one type: this share of its non-blank cells, and at least this many
# cells, so that a free-text column with a few numbers in it stays text.
MOSTLY_SHARE = 0.9
MOSTLY_MIN_CELLS = 10
# With a header that names the type, half the cells are enough.
NAMED_SHARE = 0.5
# Excel serial day numbers read as dates in a date-named column: 1954-10-01 .. 2119-01-08.
EXCEL_SERIAL_RANGE = (20_000, 80_000)
_EXCEL_EPOCH = dt.date(1899, 12, 30)
# A number a CSV saved from Excel writes in a date column: a serial number (46056, with its
# time 46056.42708) or eight digits (20260203).
_SAVED_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# How many values are read one by one before a whole column is decided (large columns).
_PROBE_VALUES = 200

# (日当・日給・手当・給与: money by the day or the month, though 日 stands in some.)
_AMOUNT_HEADER = re.compile(
    r"金額|額|円|売上|仕入|費|税|単価|価格|代金|残高|入金|出金|支払|請求|借方|貸方|数量|合計|"
    r"日当|日給|手当|給与|"
    r"amount|price|total|balance",
    re.IGNORECASE,
)
# The words of a date anywhere in a header (日付, 入金日時, 年月日, Date, 時刻); 日 and the
# other date words name a date only at its end (``_DATE_HEADER_END``: 計上日, 期日, 対象年月):
# 日 elsewhere (日割, 日額, 1日あたり, 日計, 日商, 平日料金) is money or a count by the day.
_DATE_HEADER = re.compile(r"日付|日時|年月日|date|time|時刻", re.IGNORECASE)
# Counts are numbers but not money: a title row's 千円 is not their unit.
_COUNT_HEADER = re.compile(
    r"数量|個数|件数|人数|枚数|本数|台数|回数|日数|count|qty|quantity", re.IGNORECASE
)
# Headers of the period and comparison columns of a report (4月, 2026年4月, 前期, 当期, 予算,
# 実績, 差異, 累計, Q1): amounts when a title row names the report's unit (``単位：千円``).
_PERIOD_HEADER = re.compile(
    r"^\s*(?:[0-9]{4}\s*年\s*)?[0-9]{1,2}\s*月(?:度|分)?\s*$|^\s*Q[1-4]\s*$|"
    r"前期|当期|今期|前年|当年|本年|予算|実績|見込|差異|差額|増減|累計|上期|下期|半期|四半期",
    re.IGNORECASE,
)
# Rates and ratios (増減率, 前年比, 構成比 %) are not amounts even under a unit.
_RATE_HEADER = re.compile(r"率|比|%")
# A header that ends in a date word names a date even beside an amount word (支払日, 売上日,
# 入金日時): its cells are read as dates first, so 20260203 or a serial stays a date.
_DATE_HEADER_END = re.compile(
    r"(?:日|日付|年月日|日時|年月|期日|期限|date|time)\s*(?:[(（][^)）]*[)）])?\s*$",
    re.IGNORECASE,
)
# Identifier headers (取引先コード, 伝票番号, 口座番号, 電話番号, 郵便番号, 社員No., 顧客ID, 得意先CD,
# 品番): the header ends in the word of a code or number (after NFKC: ＣＤ → CD, № → No, and
# with a bracketed note or a ``_2`` suffix taken off: ``_name_end``), unless it also names an
# amount or a quantity (``_AMOUNT_OVER_ID``: 金額, 数量, 単価 win).
_ID_HEADER_END = re.compile(
    r"(?:コード|番号|ナンバー|品番|型番|〒|電話|携帯|"
    r"(?<![A-Za-z])(?i:code|cd|no|id|number|num|tel|fax)|"
    r"(?<=[a-z])(?:ID|Id|No|CD|Cd|Code|Number)|#)\.?$"
)
_AMOUNT_OVER_ID = re.compile(
    r"金額|額|円|単価|価格|代金|残高|合計|数量|amount|price|total|balance", re.IGNORECASE
)
# A header that numbers the rows (No., №, #, 行番号, 連番, 番号 alone) is not an identifier.
_ROW_NUMBER_HEADER = re.compile(r"(?i:no|#|seq)\.?|行|行番号|行no\.?|連番|通番|項番|順番|番号")
_UNIT = re.compile(
    r"[（(\[［【]\s*(?:単位\s*[:：]?\s*)?(?P<u>百万円|千円|万円|円)\s*[)）\]］】]|単位\s*[:：]?\s*(?P<t>百万円|千円|万円|円)"
)
# What a cell that writes an amount or a date looks like whatever its form (after NFKC): digits
# with separators, signs and marks (``1.200,50``, ``1 200``, ``1.2E+06``, ``¥1,200-``), or
# three parts of a date (``02/03/2026``, ``26/2/3``, ``03-FEB-26``): ``_refused``.
_VALUE_SHAPES = {
    "amount": re.compile(
        r"[-+▲△(]?\s*[¥\\$]?\s*[-▲△]?[0-9][0-9,.\s]*(?:[eE][-+]?[0-9]+)?\s*円?\s*[)\-ー]?"
    ),
    "date": re.compile(
        r"[0-9]{1,4}\s*[-/.]\s*(?:[0-9]{1,2}|[A-Za-z]{3,9}\.?)\s*[-/.,]\s*[0-9]{1,4}(?:\s.*)?"
        r"|[A-Za-z]{3,9}\.?[- ]\s*[0-9]{1,2},?\s*[-/ ]?\s*[0-9]{2,4}(?:\s.*)?"
        # A weekday and a month's name first, a year after the time (``Tue Feb 3 10:15:00 CET
        # 2026``, JavaScript's ``Tue Feb 03 2026 10:15:00 GMT+0900 (日本標準時)``).
        r"|[A-Za-z]{3,9},?\s+[A-Za-z]{3,9}\.?\s+[0-9]{1,2}\s.*[0-9]{4}.*"
    ),
}
# Digits more than a number keeps (a 照会番号): a code (``is_code``), never read as a number.
_LONG_DIGITS = re.compile(rf" *[1-9][0-9]{{{CODE_DIGITS - 1},}} *")


@dataclass(frozen=True)
class Unreadable:
    """A cell of a typed column that could not be read as the column's type."""

    row: int  # 0-based index in the column as given
    value: str
    reason: str


@dataclass
class ColumnTyping:
    """What ``type_column`` decided for one column."""

    series: pd.Series
    kind: str | None  # "number" | "date" | "datetime" | "month" | None (text)
    unreadable: list[Unreadable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The type a column left as text was meant to have, for its unreadable cells' note.
    meant: str | None = None
    # The unit the numbers are in when the cells wrote it (``1,200千円``): ``cell_units``.
    unit: str | None = None
    # How the column reads a dash after a yen amount (``DASH_END``/``DASH_MINUS``: ``_yen_dash``),
    # for its total row's cell (``table_totals``).
    dash: str | None = None


def unit_in(text: str) -> str | None:
    """The amount unit written in a header or a title row (``金額（千円）``, ``単位：千円``)."""
    match = _UNIT.search(text)
    if match is None:
        return None
    unit = match["u"] or match["t"]
    return unit if unit in AMOUNT_UNITS else None


def is_amount_header(name: str) -> bool:
    return bool(_AMOUNT_HEADER.search(name)) or unit_in(name) is not None


def is_date_header(name: str) -> bool:
    """A header naming a date (日付, 計上日, 年月, Date), not a count of days (営業日数) nor an
    amount by the day (日割, 日額, 1日あたり): a date word anywhere (``_DATE_HEADER``), or 日,
    期日, 年月 as the header's last word (``_name_end``, a number after it taken off too:
    取引日2)."""
    plain = re.sub(r"[0-9]+$", "", _name_end(name))
    named = _DATE_HEADER.search(plain) or _DATE_HEADER_END.search(plain)
    return bool(named) and not _COUNT_HEADER.search(plain)


def _name_end(name: str) -> str:
    """A header as its last word reads: NFKC, no spaces, without a bracketed note at its end
    (``電話番号（携帯）``) or the ``_2`` a repeated header is given (``make_column_names``)."""
    plain = re.sub(r"\s+", "", unicodedata.normalize("NFKC", name))
    plain = re.sub(r"_[0-9]+$", "", plain)
    return re.sub(r"[(\[][^()\[\]]*[)\]]$", "", plain) or plain


def is_id_header(name: str) -> bool:
    """Whether the header ``name`` names an identifier (``_ID_HEADER_END``): a code, a number
    of a document, account or person, a telephone or postal number; not a row number
    (``_ROW_NUMBER_HEADER``) and not an amount or a quantity (金額, 数量, 単価 win)."""
    plain = _name_end(name)
    if _ROW_NUMBER_HEADER.fullmatch(plain) or not _ID_HEADER_END.search(plain):
        return False
    return not (
        _AMOUNT_OVER_ID.search(plain) or _COUNT_HEADER.search(plain) or unit_in(name) is not None
    )


def _finish_numbers(series: pd.Series, numbers: pd.Series) -> pd.Series:
    result = pd.to_numeric(numbers).reindex(series.index)
    if pd.api.types.is_float_dtype(result) and bool((result.dropna() % 1 == 0).all()):
        if result.isna().any():
            return result.astype("Int64")
        return result.astype("int64")
    return result


def _is_text(values: pd.Series) -> bool:
    """Whether ``values`` hold Python objects or strings (pandas' ``str`` dtype included)."""
    return values.dtype == object or isinstance(values.dtype, pd.StringDtype)


# --- amounts ---------------------------------------------------------------------------------


def _amounts(values: pd.Series, dash: str | None) -> tuple[pd.Series, pd.Series, pd.Series]:
    """``(numbers, failed, units)`` for non-blank ``values``: numbers (NaN where failed), a
    mask, and the unit each cell wrote (``1,200千円``: 千円; None where none).

    Plain numbers (``1234``, ``1,234``, ``-5.5``) are read in one vectorized pass; only the
    other cells (``¥1,234``, ``(1,200)``, ``１２３``, ``12万円``...) are read one by one;
    ``dash``: the column's reading of a dash after a yen amount (``_yen_dash``). Digits
    more than a number keeps (``_LONG_DIGITS``) fail: a code, as a leading zero is."""
    units = pd.Series(None, index=values.index, dtype=object)
    if values.dtype == object and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in values.iloc[:50]
    ):
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all():
            return numeric, pd.Series(False, index=values.index), units
    if at_once(values):  # a CSV's long column: Arrow's regex, at once
        texts = values
        plain = texts.str.fullmatch(ASCII_NUMBER.pattern).fillna(False).astype(bool)
    else:  # a workbook's or a short column: Python's regex (an Arrow kernel reserves 1 GiB of
        # address space, more than the bounded reader's child may take: documents.bounded)
        texts = pd.Series([cell_text(v) for v in values.tolist()], index=values.index, dtype=object)
        plain = texts.map(lambda t: ASCII_NUMBER.fullmatch(t) is not None).astype(bool)
    codes = matches(texts, _LONG_DIGITS)
    plain &= ~codes
    numbers = pd.Series(np.nan, index=values.index, dtype="float64")
    if plain.any():
        if texts.dtype == object:  # no Arrow in a workbook's child (above)
            digits = [float(t.replace(",", "")) for t in texts[plain].tolist()]
            numbers[plain] = np.array(digits, dtype="float64")
        else:
            numbers[plain] = pd.to_numeric(texts[plain].str.replace(",", "", regex=False))
    failed = pd.Series(False, index=values.index)
    rest = ~plain
    if texts.dtype != object and rest.any():
        marked, marked_numbers, marked_units = marked_amounts(texts[rest & ~codes])
        if marked.any():
            labels = marked.index[marked.to_numpy()]
            numbers[labels] = marked_numbers
            units[labels] = marked_units
            rest[labels] = False
    if rest.any():
        originals = values[rest].tolist()
        read = [
            (v, None) if isinstance(v, int | float) and not isinstance(v, bool) else r
            for v, r in zip(
                originals,
                each_once(lambda t: read_amount_unit(str(t), dash), texts[rest]),
                strict=True,
            )
        ]
        numbers.loc[rest] = np.array([np.nan if r is None else r[0] for r in read], dtype=float)
        failed.loc[rest] = np.array([r is None for r in read], dtype=bool)
        units.loc[rest] = [None if r is None else r[1] for r in read]
    numbers[codes] = np.nan
    failed |= codes
    return numbers, failed, units


def _dashes(values: pd.Series) -> pd.Series:
    """Cells that are a lone dash (accounting formats print zero so)."""
    if at_once(values):
        return values.str.strip().isin(DASH_TEXTS).fillna(False).astype(bool)
    return values.map(lambda v: isinstance(v, str) and is_dash(v))


def _yen_dash(values: pd.Series) -> tuple[str | None, list[Any]]:
    """How this column reads the dash after a yen amount (``¥1,200-``, ``1,200円-``), and the
    labels of the cells that write one.

    * ``DASH_END`` (the end mark of receipts and invoices, read with no sign) when every yen
      amount of the column ends with the dash and no amount writes a minus after its digits
      (``1,200-``): a mark written on every amount distinguishes no row, as a sign would;
    * ``DASH_MINUS`` when the column writes minus signs after the digits of plain amounts
      (``1,200-``) beside unsigned ones (``12,000``): the column's convention is the trailing
      sign, and a yen amount's dash is that sign (a system's export);
    * None otherwise (some yen amounts with the dash beside others without it, and no other
      sign after digits; or only dashed amounts): the cells stay unread and are listed.

    Only a cell that ends in a dash (``ends_in_dash``: one look at its last character) can
    write one after its digits, so only those are read to decide; of the others, only whether
    one is a yen amount or an unsigned one matters, and the reading stops at the first that
    answers (a text column of 10万 摘要 costs one pass of ``str.rstrip``)."""
    plain = matches(values, ASCII_NUMBER).to_numpy()
    ended = dash_ended(values)
    dashed = values[ended & ~plain]
    marked = matches(dashed, YEN_DASHED).to_numpy(dtype=bool, copy=True)
    trailing = matches(dashed, TRAILING).to_numpy(dtype=bool, copy=True)
    others = ~(marked | trailing)  # the other dashed cells: one by one
    forms = each_once(dash_form, dashed[others])
    marked[others] = [f == "yen_dash" for f in forms]
    trailing[others] = [f == "trailing" for f in forms]
    if not marked.any():
        return None, []
    labels = dashed.index[marked].tolist()
    undashed = values[~plain & ~ended]
    # A marked amount without a dash is a yen amount (``¥1,200``) or a signed one (``▲1,200``).
    common = matches(undashed, MARKED_AMOUNT).to_numpy(dtype=bool)
    texts = [v for v in undashed[~common].tolist() if isinstance(v, str)]
    yen = bool(matches(undashed[common], YEN_UNSIGNED).any()) or any(
        dash_form(v) == "yen" for v in texts
    )
    if not trailing.any():  # DASH_END unless a yen amount goes without the dash
        return (None if yen else DASH_END), labels
    if yen or _unsigned_number(values) or any(dash_form(v) == "unsigned" for v in texts):
        return DASH_MINUS, labels
    return None, labels


def _unsigned_number(values: pd.Series) -> bool:
    """Whether a plain number of ``values`` (``12,000``, or a number cell) has no sign."""
    plain = matches(values, ASCII_NUMBER).to_numpy()
    return bool(
        values[plain].map(lambda v: "-" not in v).any()
        or values.map(lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v >= 0)
        .fillna(False)
        .astype(bool)
        .any()
    )


_YEN_DASH_MIXED = (
    "この列の書き方からは、¥・円の付いた金額の末尾の「-」が領収書・請求書の止め（金額の終わり"
    "の印）かマイナスか決められません（¥ の金額の一部だけに付いています。マイナスなら ▲1,200 か"
    " -1,200 と書いてください）"
)


def _trailing_minus(values: pd.Series, numbers: pd.Series) -> int:
    """How many negative amounts of ``values`` write their minus after the digits (``1,200-``)."""
    negative = values[numbers.lt(0).to_numpy()]
    return sum(isinstance(v, str) and is_trailing_minus(v) for v in negative.tolist())


def _type_amounts(
    series: pd.Series, values: pd.Series, named: bool, header_named: bool, declared: str | None
) -> ColumnTyping | None:
    """``named``: the header or a title row's unit names amounts; ``header_named``: the
    header itself does (a title's unit does not make a column of codes a column of amounts);
    ``declared``: the unit the header or a title row names (``cell_units``)."""
    if values.dtype == object and values.map(lambda v: isinstance(v, bool)).any():
        return None
    probe = values.iloc[:_PROBE_VALUES]
    dashes = _dashes(probe)
    least = NAMED_SHARE if named else MOSTLY_SHARE
    # A yen amount's dash the column cannot decide is still an amount (listed below), so the
    # share does not hang on the column's reading of the dash: a column short of it (a long
    # text column) is left before that reading is decided on its every cell.
    if _share(probe, _amounts(probe, None)[1], dashes, _yen_dash(probe)[1]) < least:
        return None
    dash_reading, yen_dashes = _yen_dash(values)
    probed, probe_failed, probe_units = _amounts(probe, dash_reading)
    if _share(probe, probe_failed, dashes, yen_dashes) < least or not probed.notna().any():
        return None
    numbers, failed, units = (
        _amounts(values, dash_reading)
        if len(values) > len(probe)
        else (probed, probe_failed, probe_units)
    )
    dash = _dashes(values)
    numbers = numbers.where(~dash, 0)
    failed = failed & ~dash
    notes = []
    if dash.any():
        notes.append(f"「-」だけのセル {int(dash.sum()):,} 個を 0 と読みました")
    if dash_reading == DASH_END:
        notes.append(
            f"¥・円の付いた金額の末尾の「-」{len(yen_dashes):,} 個は、領収書・請求書の止め"
            "（金額の終わりの印）として読みました（￥12,000- → 12000。列のどの金額にも付いていて"
            "符号ではありません）"
        )
    trailing = _trailing_minus(values, numbers)
    if trailing:
        notes.append(
            f"末尾に「-」のある金額 {trailing:,} 個をマイナスとして読みました（1,200- → -1200）"
        )
    spaced = _spaced_commas(values, failed)
    if spaced:
        first = values[spaced[0]]
        notes.append(
            f"桁区切りのカンマの前後に空白のある金額 {len(spaced):,} 個を、空白を詰めて読みました"
            f"（{first.strip()} → {cell_text(numbers[spaced[0]])}）"
        )
    cells = cell_units(values, numbers, units, declared, cell_text)
    doubtful = {
        **cells.doubtful,
        **_dot_thousands(values, failed),
        **_dollars(values, numbers, failed),
    }
    if dash_reading is None:
        doubtful.update(dict.fromkeys(yen_dashes, _YEN_DASH_MIXED))
    if not failed.any() and not doubtful:
        typed = _finish_numbers(series, cells.numbers)
        return ColumnTyping(
            typed, "number", notes=notes + cells.notes, unit=cells.unit, dash=dash_reading
        )
    if not doubtful:
        if not (named or (failed.mean() <= 1 - MOSTLY_SHARE and len(values) >= MOSTLY_MIN_CELLS)):
            return None
        if (
            not header_named
            and values[failed.to_numpy()].map(lambda v: is_code(cell_text(v))).any()
        ):
            return None  # a column of codes, some with leading zeros: text, nothing to report
    # Kept as written: every cell that is not an amount, or whose unit is in doubt, listed.
    rows = rows_of(series)
    listed = (failed | values.index.isin(list(doubtful))).to_numpy()
    bad = [
        Unreadable(rows[i], cell_text(v), doubtful.get(i) or amount_problem(cell_text(v)))
        for i, v in values[listed].items()
    ]
    return ColumnTyping(series, None, bad, notes)


def _share(probe: pd.Series, failed: pd.Series, dashes: pd.Series, yen_dashes: list[Any]) -> float:
    """The share of the cells of ``probe`` read as amounts (its lone dashes and its yen amounts
    with a dash after them, ``yen_dashes``, counted as read)."""
    return 1 - float((failed & ~dashes & ~probe.index.isin(yen_dashes)).mean())


def _spaced_commas(values: pd.Series, failed: pd.Series) -> list[Any]:
    """The labels of the cells read whose thousands comma has a space typed beside it
    (``1, 200``, ``１，　２００``: ``is_spaced_comma``); a plain number has none, so only the
    cells read one by one are asked."""
    plain = matches(values, ASCII_NUMBER).to_numpy(dtype=bool)
    marked = matches(values, MARKED_AMOUNT).to_numpy(dtype=bool)  # no space in them
    asked = values[~plain & ~marked & ~failed.to_numpy(dtype=bool)]
    return [i for i, v in asked.items() if isinstance(v, str) and is_spaced_comma(v)]


_EUROPEAN_POINTS = (
    "この列には 1.200,50 のように点を桁区切りに使うセルがあり、この点が小数点か"
    "桁区切りか決められません（1,200 か 1.2 かを、カンマと小数点で書き分けてください）"
)
_COMMA_COLUMN_POINT = (
    "この列はほかの金額を 12,000 のようにカンマで区切り、小数のある金額はこの書き方のセルだけ"
    "のため、点が小数点（1.2）か、桁区切りのカンマの打ち間違い・点で桁を区切る書き方（1,200）か"
    "決められません（1,200 か 1.2 かを、カンマと小数点で書き分けてください）"
)
_POINTED_COLUMN = (
    "この列で小数のある金額は 1.200 のように点の後がちょうど 3 桁のセルだけで、点が小数点（1.2）"
    "か桁区切り（1,200）か決められません（1,200 か 1.2 かを、カンマと小数点で書き分けてください）"
)


def _dot_thousands(values: pd.Series, failed: pd.Series) -> dict[Any, str]:
    """The cells read with three decimals after one to three digits (``1.200``: 1.2, or
    1,200 written with a point) whose column does not show which: each is listed with why,
    never read as 1.2 (label → reason). The column decides by its other cells:

    * a cell written the European way (``1.200,50``): the point separates thousands there;
    * no other cell writes a fraction (the point is used for nothing else), and the column
      separates thousands with commas (``12,000``: ``1.200`` is a slip for ``1,200`` as much as
      1.2) or writes two or more such cells (``12.000``, ``1.500``: thousands by points);

    a column whose other cells write fractions (``1,234.50``, ``0.125``) reads them as
    decimals, as does a lone ``1.235`` among whole numbers (a unit price)."""
    read = values[~failed.to_numpy()]
    digits = column_digits(read)
    texts = np.array([isinstance(v, str) for v in read.tolist()], dtype=bool)
    dotted = digits.str.fullmatch(DOT_THOUSANDS).to_numpy(dtype=bool) & texts
    if not dotted.any():
        return {}
    if values[failed.to_numpy()].map(lambda v: is_european(cell_text(v))).any():
        reason = _EUROPEAN_POINTS
    else:
        fractions = digits.str.contains(".", regex=False).to_numpy(dtype=bool) & ~dotted
        if fractions.any():
            return {}
        if digits.str.contains(",", regex=False).any():
            reason = _COMMA_COLUMN_POINT
        elif dotted.sum() >= 2:
            reason = _POINTED_COLUMN
        else:
            return {}
    return dict.fromkeys(read.index[dotted].tolist(), reason)


def dollar_cells(cells: pd.Series, numbers: np.ndarray) -> np.ndarray:
    """The mask of the ``$`` amounts among the non-blank ``cells`` (``numbers``: each one's
    amount, NaN where not read) when the column's other amounts are yen or bare numbers (not
    only 0): dollars are never added to yen, so ``file.read_table`` lists them and the table
    blocks stop at the first (one rule for both). A column of ``$`` amounts only is read as
    its numbers (its header says the currency). Cells without the mark cost one pass."""
    if at_once(cells):  # a CSV's long column: one pass for the mark
        marked = cells.str.contains("[$＄]", regex=True).fillna(False).to_numpy(dtype=bool)
    else:  # no Arrow in a workbook's child (``_amounts``)
        marked = np.array(
            [isinstance(v, str) and ("$" in v or "＄" in v) for v in cells], dtype=bool
        )
    marked = np.asarray(marked & ~np.isnan(numbers), dtype=bool)
    if marked.any():
        found = np.flatnonzero(marked)
        marked[found] = [is_dollar(str(v)) for v in cells.iloc[found].tolist()]
    others = numbers[~marked & ~np.isnan(numbers)]
    if not marked.any() or not (others != 0).any():
        return np.zeros(len(cells), dtype=bool)  # beside 0 and dashes only: dollars
    return marked


def _dollars(values: pd.Series, numbers: pd.Series, failed: pd.Series) -> dict[Any, str]:
    """The ``$`` amounts among yen of an amount column (``dollar_cells``): label → why."""
    read = numbers.where(~failed.to_numpy()).to_numpy(dtype=float)
    mask = dollar_cells(values, read)
    return dict.fromkeys(values.index[mask].tolist(), DOLLAR_AMONG_YEN)


# --- dates -----------------------------------------------------------------------------------


def _date_value(
    value: Any, named: bool, order: str | None = None
) -> dt.date | dt.datetime | YearMonth | None:
    """A cell's date (``order``: the column's order of a date with its year last)."""
    if isinstance(value, str):  # first: every cell of a CSV
        text = value.strip()
        if not (named and _SAVED_NUMBER.fullmatch(text)):
            return _text_date(text, named, order)
        # A serial number (with its time: 46056.42708) or 20260203 saved as text (a CSV from
        # Excel), or a month (2026.2) or a date (2026.2.3) written with points.
        number = float(text) if "." in text else int(text)
        low, high = EXCEL_SERIAL_RANGE
        if "." in text and not low <= number <= high:
            return _text_date(text, named, order)
        value = number
    if isinstance(value, pd.Timestamp):
        value = None if pd.isna(value) else value.to_pydatetime()
    if isinstance(value, dt.datetime):
        # A workbook's date cell is a datetime at midnight: a date, as in a CSV.
        midnight = value.time() == dt.time(0) and value.tzinfo is None
        return value.date() if midnight else value
    if value is None or isinstance(value, dt.date):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        low, high = EXCEL_SERIAL_RANGE
        if named and low <= value <= high:
            return _serial_day(float(value))
        if named and 19000101 <= value <= 20991231 and float(value).is_integer():
            return read_date(str(int(value)))
        return None
    return _text_date(str(value).strip(), named, order)


def _serial_day(serial: float) -> dt.date | dt.datetime:
    """The day (and time, to the second: Excel's General format writes ten significant
    digits, 46056.42708) of an Excel serial number; a date where the time is midnight."""
    seconds = round(serial * 86_400)
    days, rest = divmod(seconds, 86_400)
    day = _EXCEL_EPOCH + dt.timedelta(days=days)
    if not rest:
        return day
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=rest)


def _text_date(
    text: str, named: bool, order: str | None = None
) -> dt.date | dt.datetime | YearMonth | None:
    day = read_date(text, order)
    if day is not None:
        if not named and text.isdigit():
            return None  # eight digits outside a date column: a number or a code
        return day
    return read_month(text)


# Date forms read a whole column at once (each cell must match the pattern whole); every other
# cell is read one by one (eras, weekdays, times in Japanese, months...).
_VECTOR_DATES: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"), "%Y-%m-%d", False),
    (re.compile(r"[0-9]{4}/[0-9]{1,2}/[0-9]{1,2}"), "%Y/%m/%d", False),
    (re.compile(r"[0-9]{4}\.[0-9]{1,2}\.[0-9]{1,2}"), "%Y.%m.%d", False),
    (re.compile(r"[0-9]{4}年[0-9]{1,2}月[0-9]{1,2}日"), "%Y年%m月%d日", False),
    (re.compile(r"(?:19|20)[0-9]{6}"), "%Y%m%d", True),  # only where the header names a date
)


def _vector_dates(values: pd.Series, named: bool) -> tuple[pd.Series, pd.Series]:
    """``(days, rest)``: the cells of a text column in a plain date form, read at once (NaT
    elsewhere), and the mask of the cells left to read one by one."""
    days = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    rest = pd.Series(True, index=values.index)
    if not at_once(values):  # a short column: every cell one by one
        return days, rest
    texts = values.str.strip()
    for pattern, fmt, needs_name in _VECTOR_DATES:
        if needs_name and not named:
            continue
        match = rest & texts.str.fullmatch(pattern.pattern).fillna(False).astype(bool)
        if match.any():
            parsed = pd.to_datetime(texts[match], format=fmt, errors="coerce")
            days[match] = parsed
            rest &= ~(match & parsed.notna().reindex(values.index, fill_value=False))
    return days, rest


# A header that names a month and no day (年月, 対象年月, 計上年月; not 年月日).
_MONTH_HEADER = re.compile(r"年月(?!日)")
# Six digits naming a month, as accounting software exports a period (202601).
_YYYYMM = re.compile(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])")


def _year_months(
    series: pd.Series, values: pd.Series, name: str, zone: tzinfo
) -> ColumnTyping | None:
    """A column headed 年月 (not 年月日) whose every cell is six digits naming a month
    (``202601``) as a month column, with a note; else None (one cell otherwise, and the
    column is typed as before: six digits under another header may be a code or YYMMDD)."""
    if not _MONTH_HEADER.search(name):
        return None
    texts = [v.strip() if isinstance(v, str) else cell_text(v) for v in values.tolist()]
    if not all(_YYYYMM.fullmatch(t) for t in texts):
        return None
    months = pd.Series([f"{t[:4]}/{t[4:]}" for t in texts], index=values.index, dtype=object)
    typed = _type_dates(series, months, named=True, zone=zone)
    if typed is not None:
        typed.notes.append(
            f"6 桁の年月 {len(texts):,} 個を年月として読みました（{texts[0]} → "
            f"{texts[0][:4]}-{texts[0][4:]}）"
        )
    return typed


def _year_last_dates(values: pd.Series) -> bool:
    """Whether nearly all cells of a text column (``MOSTLY_SHARE``) write a date with its year
    last (``02/03/2026``, ``13/02/2026``), whatever its header says (``メモ``, or ``列2`` of a
    file without one): a column of dates, its cells listed with why where it does not show
    its order (``column_order``), never kept as text without a word."""
    maybe = starts_year_last(values)
    if values.empty or maybe.sum() < MOSTLY_SHARE * len(values):
        return False
    shapes = each_once(day_order, values[maybe])
    return sum(shape is not None for shape in shapes) >= MOSTLY_SHARE * len(values)


def _type_dates(
    series: pd.Series, values: pd.Series, named: bool, zone: tzinfo
) -> ColumnTyping | None:
    year_last = column_order(values)
    order, shows = year_last.order, year_last.example
    probe = [_date_value(v, named, order) for v in values.iloc[:_PROBE_VALUES].tolist()]
    share = sum(p is not None for p in probe) / len(probe)
    if share < (NAMED_SHARE if named else MOSTLY_SHARE):
        return None
    days, rest = _vector_dates(values, named)
    # The cells no plain form took (for a short column: every cell), each distinct one read
    # once and the column given the answers by their codes (``distinct``).
    cells = values[rest]
    codes, uniques = distinct(cells)
    read = [_date_value(v, named, order) for v in uniques]
    unread = np.array([r is None for r in read], dtype=bool)[codes]
    is_month = np.array([isinstance(r, YearMonth) for r in read], dtype=bool)
    months = int(is_month[codes].sum())
    found = int((~unread).sum())
    failed = cells.index[unread].tolist()
    if failed and not (
        named or (len(failed) / len(values) <= 1 - MOSTLY_SHARE and len(values) >= MOSTLY_MIN_CELLS)
    ):
        return None
    stamped = np.array([isinstance(r, dt.datetime) for r in read], dtype=bool)
    stamps = [read[code] for code in codes[stamped[codes]].tolist()]
    if months and months == found and not (~rest).any():
        periods = [pd.NaT if r is None else pd.Period(r.isoformat(), freq="M") for r in read]
        taken = pd.Series(np.array(periods, dtype=object)[codes], index=cells.index)
        column, kind = taken.astype(pd.PeriodDtype("M")).reindex(series.index), "month"
    else:
        naive = [_naive(r.first_day() if isinstance(r, YearMonth) else r, zone) for r in read]
        if len(cells):
            each = pd.to_datetime(pd.Series(naive, dtype="object")).to_numpy()
            days.loc[cells.index] = each[codes]
        column = days.reindex(series.index)
        kind = _date_kind(column)
    rows = rows_of(series)
    bad = [
        Unreadable(rows[i], cell_text(values.at[i]), _date_reason(values.at[i], year_last))
        for i in failed
    ]
    notes = []
    vectorized = int((~rest).sum())  # cells a plain form took: full dates
    if months and (months != found or vectorized):
        notes.append(f"年月だけのセル {months:,} 個はその月の 1 日として読みました")
    notes.extend(_offset_note(stamps, zone))
    notes.extend(_era_note(values[rest]))
    if order is not None:
        said = "日/月/年" if order == DAY_FIRST else "月/日/年"
        notes.append(
            f"年が最後に書かれた日付を、この列の {shows} から {said} の並びとして読みました"
        )
    return ColumnTyping(column, kind, bad, notes)


def _era_note(values: pd.Series) -> list[str]:
    """The note for 和暦 dates outside their era's days (``平成31年5月1日``), read as the day
    the year names (2019-05-01): how many, the first and the era's span (``cell_forms``)."""
    spans = each_once(lambda v: era_outside(v) if isinstance(v, str) else None, values)
    outside = [(v, span) for v, span in zip(values.tolist(), spans, strict=True) if span]
    if not outside:
        return []
    first, span = outside[0]
    day = read_date(first)
    shown = f"{day:%Y/%m/%d}" if day is not None else ""
    return [
        f"元号の期間外の和暦の日付 {len(outside):,} 個を、書かれた年のとおり西暦に直して読みました"
        f"（最初は {first.strip()} → {shown}。{span}）。日付が正しいか確かめてください"
    ]


def _undated(
    series: pd.Series, values: pd.Series, named: bool, zone: tzinfo
) -> ColumnTyping | None:
    """``_type_dates`` with the lone dashes of a date column (``-``, ``―``: 支払日 of a bill
    not yet paid) read as no date: blank, with a note."""
    dashes = _dashes(values)
    if not dashes.any() or dashes.all():
        return _type_dates(series, values, named=named, zone=zone)
    typed = _type_dates(series, values[~dashes.to_numpy()], named=named, zone=zone)
    if typed is not None:
        typed.notes.append(
            f"「-」だけのセル {int(dashes.sum()):,} 個は日付なしとして空欄にしました"
        )
    return typed


def _type_percents(series: pd.Series, values: pd.Series) -> ColumnTyping | None:
    """A column of percentages (``10%``, ``８％``: every non-blank cell) as the fractions a
    workbook holds for them (0.1, 0.08), so a CSV and a workbook compute alike. A column of
    mostly percentages with plain numbers or words among them stays text, each such cell
    listed (``rate_cells``)."""
    if not _is_text(values):
        return None
    first = values.iloc[:_PROBE_VALUES]
    probe = first[~_dashes(first).to_numpy()].map(  # a dash is no rate: not counted
        lambda v: isinstance(v, str) and ("%" in v or "％" in v)
    )
    if probe.empty or probe.mean() < NAMED_SHARE:
        return None  # not a column of percentages: read no further (a long text column)
    cells = rate_cells(values)
    if cells is None:
        return None
    if cells.doubts:
        rows = rows_of(series)
        bad = [Unreadable(rows[label], text, why) for label, text, why in cells.doubts]
        return ColumnTyping(series, None, bad, meant="percent")
    notes = (
        [f"「-」だけのセル {cells.dashes:,} 個は割合なしとして空欄にしました"]
        if cells.dashes
        else []
    )
    return _percents_read(series, values, cells.fractions, notes)


def _percents_read(
    series: pd.Series, values: pd.Series, read: pd.Series, notes: Sequence[str] = ()
) -> ColumnTyping:
    """The number column of the fractions ``read`` (blank where NaN), with its notes."""
    shown = read.notna().to_numpy()
    first, fraction = values[shown].iloc[0], read[shown].iloc[0]
    note = f"百分率のセル {int(shown.sum()):,} 個を割合の数値として読みました（{first} → {fraction:g}）"
    numbers = pd.to_numeric(read)
    return ColumnTyping(
        numbers.reindex(series.index), "number", notes=[note, *notes], meant="percent"
    )


def rate_problem(text: str, number: float | None, example: str) -> str:
    """Why the cell ``text`` of a column of percentages (such as ``example``: ``12%``) is not
    read as a rate: a word, or a plain number (``number``, read as an amount) that may be the
    fraction or the percentage."""
    if number is None:
        return f"割合（{example} のような百分率）として読めません"
    return (
        f"百分率の列にある数値 {text} が、割合（{float(number) * 100:g}%）か百分率の数"
        f"（{text}%）か決められません（{example} のように % を付けて書くか、"
        "Excel ではセルの表示形式をパーセントにしてください）"
    )


@dataclass
class RateCells:
    """How the non-blank cells of a column of percentages read (``rate_cells``)."""

    # Each cell's fraction (a 0 as 0.0); NaN for a lone dash and for a doubtful cell.
    fractions: pd.Series
    # (label, text, why) of each cell that is no rate, in the column's order.
    doubts: list[tuple[Any, str, str]]
    dashes: int  # lone dashes (``―``: 前年比 without a last year): no rate, blank
    example: Any  # the label of the first percentage


def rate_cells(values: pd.Series) -> RateCells | None:
    """The non-blank cells ``values`` read as rates, when they are a column of percentages
    (at least ``NAMED_SHARE`` of them but dashes), else None: ``file.read_table`` types the
    column with it, and ``table.aggregate`` names the doubtful cell of a rate column it was
    given (one decision for both). 0 is 0 either way; a lone dash is no rate. A plain number
    (``0.12`` or ``12`` typed into a cell not formatted as a percentage, beside ``12%``) may
    be the fraction or the percentage: which cannot be known; a word is no rate. Each such
    cell is a doubt: the column stays as written and a block that computes on it stops
    instead of reading a rate 100 times too large or small (a blank would be skipped by a sum
    without a word)."""
    fractions = values.map(lambda v: read_percent(v) if isinstance(v, str) else None)
    shown = fractions.notna()
    dashes = _dashes(values).to_numpy()
    if not shown.any() or float(shown[~dashes].mean()) < NAMED_SHARE:
        return None
    example: Any = shown.idxmax()
    written = str(values.loc[example])
    doubts: list[tuple[Any, str, str]] = []
    others = values[~shown.to_numpy()]
    for label, value in zip(others.index.tolist(), others.tolist(), strict=True):
        if is_dash(str(value)):
            continue
        number = (
            value
            if isinstance(value, int | float) and not isinstance(value, bool)
            else read_amount(str(value))
        )
        if number == 0:
            fractions[label] = 0.0
            continue
        text = cell_text(value)
        doubts.append((label, text, rate_problem(text, number, written)))
    return RateCells(pd.to_numeric(fractions), doubts, int(dashes.sum()), example)


def _yearless(
    series: pd.Series, values: pd.Series, period: Period | None, zone: tzinfo
) -> ColumnTyping | None:
    """A date column written without years (``2/3``, ``2月3日``): read in the period the
    title rows name (``cell_period``) when every such cell is one day of it, else left as
    text, every such cell listed with why: the year is never guessed (the file's date or this
    year could each be wrong)."""
    if not _is_text(values):
        return None
    probe = values.iloc[:_PROBE_VALUES].map(lambda v: is_month_day(str(v)))
    if probe.mean() < NAMED_SHARE:
        return None
    if period is not None:
        read = values.map(lambda v: read_date(str(v)) or day_in(str(v), period))
        if read.notna().all():
            return _in_period(series, values, read, period, zone)
    rows = rows_of(series)
    bad = [
        Unreadable(rows[i], cell_text(v), _yearless_reason(v, period))
        for i, v in values.items()
        if read_date(str(v)) is None
    ]
    return ColumnTyping(series, None, bad, meant="date")


def _yearless_reason(value: Any, period: Period | None) -> str:
    """Why a cell of a column without years is not read: outside ``period`` (or no period
    named: ``date_problem``), or a day of it in a column with other cells outside it."""
    text = str(value)
    if period is None or not is_month_day(text):
        return _date_reason(value)
    if day_in(text, period) is not None:
        return (
            f"表題の期間（{period.said()}）の日ですが、同じ列に期間の日に当たらないセルが"
            "あるため、列を日付として読んでいません"
        )
    return day_problem(text, period) or _date_reason(value)


def _in_period(
    series: pd.Series, values: pd.Series, read: pd.Series, period: Period, zone: tzinfo
) -> ColumnTyping:
    """The date column of ``read`` (every cell a day), with the note of the year taken."""
    days = pd.to_datetime(pd.Series([_naive(d, zone) for d in read], index=read.index))
    yearless = values.map(lambda v: is_month_day(str(v))).to_numpy()
    first = int(yearless.argmax())
    note = (
        f"年のない日付 {int(yearless.sum()):,} 個を表題の期間（{period.said()}）の日として"
        f"読みました（{cell_text(values.iloc[first])} → {read.iloc[first]:%Y-%m-%d}）"
    )
    column = days.reindex(series.index)
    return ColumnTyping(column, _date_kind(column), notes=[note])


def _date_kind(column: pd.Series) -> str:
    """``"date"`` for a column of days (every time read is midnight: ``2026/02/03 0:00`` as
    Excel saves a date, a workbook's date cells), else ``"datetime"``: decided by the values
    read (local wall-clock times), the same for a CSV's text and a workbook's cells."""
    days = column.dropna()
    return "datetime" if bool((days != days.dt.normalize()).any()) else "date"


def _naive(value: dt.date | dt.datetime | None, zone: tzinfo) -> Any:
    """A cell's date or time as a naive datetime; one written with a UTC offset
    (``2026-02-03T10:00:00+09:00``, ``…Z``) is first turned into ``zone``'s wall-clock time,
    so the same moment reads the same whatever offset it was written with."""
    if value is None:
        return pd.NaT
    if isinstance(value, dt.datetime):
        return local_time(value, zone)
    return dt.datetime(value.year, value.month, value.day)


def _offset_note(stamps: Sequence[dt.datetime], zone: tzinfo) -> list[str]:
    """The note for the cells of a column written with a UTC offset (none when there are none):
    how many, in which zone they now read, and how many of them changed their clock time."""
    aware = [s for s in stamps if s.tzinfo is not None]
    if not aware:
        return []
    moved = sum(s.utcoffset() != s.astimezone(zone).utcoffset() for s in aware)
    name = getattr(zone, "key", None) or str(zone)
    shifted = f"（うち {moved:,} 個は時刻が変わりました）" if moved else "（時刻は変わりません）"
    return [
        f"時差（+09:00・Z など）の付いた日時 {len(aware):,} 個を {name} の時刻に直し、"
        f"時差の表示を外しました{shifted}"
    ]


def _date_reason(value: Any, year_last: ColumnOrder | None = None) -> str:
    """Why a cell of a date column is not read; ``year_last``: how the column writes its dates
    with the year last (``column_order``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "日付の列の数値ですが、Excel の日付のシリアル値の範囲にありません"
    if year_last is not None:
        return order_reason(str(value), year_last)
    return date_problem(str(value))


# --- one column ------------------------------------------------------------------------------


def type_column(
    series: pd.Series,
    name: str,
    *,
    unit: str | None = None,
    zone: tzinfo | None = None,
    period: Period | None = None,
) -> ColumnTyping:
    """Decide the type of one column (see the module docstring); ``unit`` from a title row;
    ``zone`` the local zone that times written with an offset are read in (default:
    ``config.DEFAULT_TIMEZONE``); ``period`` the one the title rows name (``cell_period``)."""
    zone = local_zone(zone)
    values = series.dropna()
    if isinstance(values.dtype, pd.StringDtype):
        values = values[values.str.strip().ne("").fillna(False).astype(bool)]
    elif values.dtype == object:
        values = values[~values.map(lambda v: isinstance(v, str) and not v.strip())]
    if values.empty:
        return ColumnTyping(series, None)
    if pd.api.types.is_bool_dtype(series):
        return ColumnTyping(series, None)
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        stamps = series.dropna().dt.to_pydatetime().tolist()
        local = series.dt.tz_convert(zone).dt.tz_localize(None)
        return ColumnTyping(local, _date_kind(local), notes=_offset_note(stamps, zone))
    if pd.api.types.is_datetime64_any_dtype(series):
        return ColumnTyping(series, _date_kind(series))
    date_named = is_date_header(name)
    header_named = is_amount_header(name)
    # A unit in a title row speaks for the amount columns, not for the dates beside them.
    amount_named = header_named or (unit is not None and not date_named)
    dates_first = date_named and (not header_named or bool(_DATE_HEADER_END.search(name)))
    if dates_first:
        typed = (
            _year_months(series, values, name, zone)
            or _undated(series, values, True, zone)
            or _yearless(series, values, period, zone)
        )
        if typed is not None:
            return typed
    if pd.api.types.is_numeric_dtype(series):
        return ColumnTyping(series, "number")
    declared = column_unit(name, unit)
    typed = _type_amounts(
        series, values, named=amount_named, header_named=header_named, declared=declared
    )
    if typed is not None and typed.kind is not None:
        return typed
    percents = _type_percents(series, values)
    if percents is not None:
        return percents
    dates = _undated(series, values, date_named, zone)
    if dates is not None:
        return dates
    if typed is not None:
        return typed
    # A header that ends in a date word (支払日) means dates, though it names an amount too.
    meant = "date" if dates_first else "amount" if header_named else "date" if date_named else None
    if meant is None and _year_last_dates(values):  # 02/03/2026 under メモ or 列2
        meant = "date"
    refused = None if meant is None or is_id_header(name) else _refused(series, values, meant)
    return refused or _words_for_amounts(series, values, name)


# A header that names a sum of money itself (金額, 税額, 単価, 合計, 残高), not a word about
# one (支払方法, 税区分, 仕入先, 費目, 請求先): ``_words_for_amounts``.
_MONEY_HEADER = re.compile(r"金額|額|円|単価|価格|代金|残高|合計|amount|price|total|balance", re.I)


def _words_for_amounts(series: pd.Series, values: pd.Series, name: str) -> ColumnTyping:
    """A column left as text: where its header names a sum of money (``_MONEY_HEADER``) and
    its cells are mostly words (``未定``, ``別途``, ``ー``, ``要見積``), with a note saying that
    the column is not read as amounts and how many of its cells would read as one, so a sum
    of it is not taken for a sum of nothing."""
    if not _MONEY_HEADER.search(unicodedata.normalize("NFKC", name)) or is_id_header(name):
        return ColumnTyping(series, None)
    texts = [cell_text(v) for v in values.tolist()]
    found = each_once(read_amount_unit, texts)
    read = sum(f is not None and not is_dash(t) for t, f in zip(texts, found, strict=True))
    words = "・".join(
        dict.fromkeys(t.strip() for t, f in zip(texts, found, strict=True) if f is None)
    )
    shown = words if len(words) <= 30 else words[:30] + "…"
    return ColumnTyping(
        series,
        None,
        notes=[
            f"金額の列名ですが、数値として読めないセル（{shown}）が多いため、文字の列として"
            f"読みました（金額として読めるセルは {len(texts):,} 個中 {read:,} 個）。"
            "合計などの計算には使えません。金額を書くか、未定・別途などは備考の列に分けてください"
        ],
    )


def _refused(series: pd.Series, values: pd.Series, meant: str) -> ColumnTyping | None:
    """A column whose header names amounts (``meant``: "amount") or dates ("date") and whose
    cells mostly write one (``_VALUE_SHAPES``: digits and separators, a month's name; not a
    code, ``0123``, nor under an identifier's header, 請求書番号) in forms no reader takes (``1.200,50``, ``1 200``, ``1.2E+06``, ``02/03/2026``, ``26/2/3``): kept as
    written, with every cell not read listed with why, never a text column without a word."""
    texts = [cell_text(v) for v in values.tolist()]
    shape = _VALUE_SHAPES[meant]
    shaped = each_once(
        lambda t: bool(shape.fullmatch(normalize_cell_text(t))) and not is_code(t), texts
    )
    if sum(shaped) < NAMED_SHARE * len(texts):
        return None
    rows = rows_of(series)
    if meant == "amount":
        unread = [
            (label, text)
            for label, text in zip(values.index, texts, strict=True)
            if read_amount_unit(text) is None and not is_dash(text)
        ]
        bad = [Unreadable(rows[label], text, amount_problem(text)) for label, text in unread]
    else:
        year_last = column_order(values)
        order = year_last.order
        cells = zip(values.index, values.tolist(), strict=True)
        unread = [(label, cell) for label, cell in cells if _date_value(cell, True, order) is None]
        bad = [
            Unreadable(rows[label], cell_text(cell), _date_reason(cell, year_last))
            for label, cell in unread
        ]
    return ColumnTyping(series, None, bad, meant=meant) if bad else None


def column_unit(name: str, common: str | None) -> str | None:
    """The unit of column ``name``: its header's own, else ``common`` (a title row's) for an
    amount column or a report's period column (4月, 前期, 予算: ``_PERIOD_HEADER``), not for a
    count (数量, 件数...) or a rate (増減率, 前年比)."""
    own = unit_in(name)
    if own is not None:
        return own
    plain = unicodedata.normalize("NFKC", name)
    if (
        common is not None
        and (is_amount_header(name) or _PERIOD_HEADER.search(plain))
        and not _COUNT_HEADER.search(plain)
        and not _RATE_HEADER.search(plain)
    ):
        return common
    return None


def units_of(names: Sequence[str], title_rows: Sequence[str]) -> dict[str, str]:
    """Each amount column's unit (``column_unit``), with the first unit a title row names."""
    common = next((u for u in map(unit_in, title_rows) if u is not None), None)
    return {name: unit for name in names if (unit := column_unit(name, common)) is not None}
