"""Total rows in a ledger: found like title rows, kept out of the data, kept for checking.

Exports and hand-kept ledgers end with a total line, and some put a subtotal under each
group. Summed again, they double the figures. A row is a total row when

* one of its first two non-blank cells is a total label: 合計, 小計, 総計, 総合計, 累計, 中計,
  月計, 日計, 計 (alone, or after a space: ``営業部 計``, or Excel's 小計 and pivot tables'
  ``営業部 集計``), a name ending in 合計 / 小計 / 総計
  (``4月合計``, ``営業部小計``), or a group's total: a grouping word before 計 (部門計,
  科目計, 取引先計, 営業1部計, 4月計, a printout's page total 頁計 / ページ計); brackets
  and spaces inside the label do not matter
  (``【合 計】``), nor what a printout writes around it: marks (``*** 合計 ***``, ``■小計``),
  a count (``合計 12件``), a note in brackets (``合計（税込）``, ``小計(8%対象)``), 金額 after
  it (``合計金額``); or
* its total label stands further right, after the group's keys written again: every filled
  cell before it repeats the cell above it or stands in a date column (``001 | 営業部 | 小計``
  under 営業部's entries, ``2026/2/28 | 山田商事 | 【得意先計】``); or
* it is the last row, has no text beside its numbers, leaves blank a column that every row
  above fills (where a label, a date or a name would be), and each of its amounts equals the
  sum of that column over the rows above it (a total written without a label).

Words that merely end in 計 (会計, 統計, 設計, 時計, 温度計) are not labels.

Carried balances: a 出納帳 or 元帳 closed as bookkeepers close it writes the month's closing
balance as 次月繰越 in the 支出 (貸方) column, so that both columns' 合計 agree, and opens the
next month with 前月繰越 in the 収入 (借方) column; a printed book carries its columns' sums
from page to page (次頁へ繰越 / 前頁より繰越). Such a row moves no money: summed with the
rows it would count the balance as an income or a payment. A row is set aside with the
totals when one of its first two non-blank cells is a carry label (``is_carry_label``: 前月繰越,
次期繰越, 前頁より繰越, 前年度繰越金, 前期からの繰越, 繰越…, with the marks and notes a total's
label may have around it: ``*** 前月繰越 ***``, ``前月繰越（2月分）``) and it writes a nonzero amount in a column that is not a
balance (残高, 残額), a date or an identifier. A carry row with its balance alone (an export's
前月繰越 under 残高) changes no sum and stays a row of the data, as written.

A file's grand total checks the reading (``total_differences``): when exactly one total row is
labelled as the whole table's (合計, 総計, 総合計), each amount it states in a column read as
numbers must equal that column's sum over the data rows; where it does not, a row or a cell
was lost or misread (or the file's total is wrong), and a warning says so. A 合計 closing a
book with its carries (前月繰越 + 収入 = 支出 + 次月繰越) is also right when it equals the data's
sum with the carry rows above it. In a column written
in 千円 or 百万円 each row and the total are rounded on their own, so a difference of less than
one unit a row (``within_rounding``) is rounding, and said as such. Only an amount column must
add up (``must_add_up``): not a rate, a unit price or a balance, whose 合計 cell is no sum;
the reader finds the differences once (``TableResult.total_differences``) and
``TableResult.amount_differences`` is the check every caller that refuses a table uses (the
analysis agent, conversion, the ``file.read_table`` block). One sentence says a difference
wherever it is told (``mismatch_said``: the reader's warning, the agents' refusal and the
block's): the total's cell, both sums, which side is larger and what can cause it; each caller
adds only what it does (goes on, stops).

Footer lines: exports end with notes after the data (``※ 金額は税込です``, ``以上``,
``出力日: 2026/02/03``, ``担当: 経理部``, a page number). The last rows of a table are footer
lines (``total_rows`` says how many) when

* each fills at most ``MAX_FOOTER_CELLS`` cells and holds no amount in an amount column (one
  whose header names an amount, or whose cells in the table's last rows are mostly amounts),
  so a data row -- whatever its 摘要 says (``以上``) -- is never one; and
* they follow a total row (labelled, or the label-less sum of the rows above), or a blank line
  of the file under a row with amounts, or the first of them is a note (its first cell begins
  with ``※`` or ``注``: ``※ 金額は税抜です``, ``(注1)``); any other line written right under
  the data is data.

At most ``MAX_FOOTER_ROWS`` rows are looked at; a table with no amount column has no footer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pandas as pd

from keiri_agent.documents.cell_forms import is_dash, read_amount_unit, read_percent
from keiri_agent.documents.table_types import is_amount_header, is_date_header, is_id_header

__all__ = [
    "MAX_FOOTER_CELLS",
    "MAX_FOOTER_ROWS",
    "MIN_ROWS_ABOVE_SUM",
    "STOPPED_SAID",
    "TotalDifference",
    "figure",
    "is_carry_label",
    "is_total_label",
    "mismatch_said",
    "must_add_up",
    "total_differences",
    "total_rows",
    "within_rounding",
]

# Rows above a label-less last row needed before it may be taken for their total.
MIN_ROWS_ABOVE_SUM = 2
# Footer lines looked for at the end of a table (notes, dates, names, page numbers: a few).
MAX_FOOTER_ROWS = 20
# Cells a footer line fills at most (a note, or a label and its value or two); a longer row is
# data, and only the table's short last rows are looked at closely (a wide table stays cheap).
MAX_FOOTER_CELLS = 4
# The last rows whose cells decide which columns hold amounts (footer lines among them), and
# the cells read for it at most (fewer rows for a wide table).
_AMOUNT_SAMPLE_ROWS = 200
_AMOUNT_SAMPLE_CELLS = 20_000
# A column is an amount column when at least this share of its filled sampled cells are
# amounts (a few footer notes in it do not hide it).
_AMOUNT_COLUMN_SHARE = 0.5

# Words a group's total puts before 計 (部門計, 取引先計, 営業1部計, 4月計): a department, an
# account, a partner, a period. Other words ending in 計 (会計, 統計, 時計) are not totals.
_GROUP_WORDS = (
    "部門|科目|補助科目|取引先|得意先|仕入先|支払先|担当者?|社員|部|課|室|店|支店|営業所|"
    "事業所|拠点|月|日|週|期|年度?|区分|品目|商品|口座|伝票|別|頁|ページ"
)
_LABEL = re.compile(
    rf"(?:総合計|合計額?|小計|総計|累計|中計|月計|日計|計|.+(?:合計|小計|総計)|.*(?:{_GROUP_WORDS})計)"
)
# A note's mark at the start of its first cell (※, 注, 注1:, (注)).
_NOTE_MARK = re.compile(r"\s*(?:※|[(（]?注[0-9０-９]*[)）:：\s])")
# The labels of a whole table's total (not a group's or a page's, not a running 累計).
_GRAND_LABELS = frozenset({"合計", "総計", "総合計", "合計額"})
# Words in the header of an amount column whose cell in a 合計 row is not its sum (a rate, a
# ratio, a unit price, the closing balance of a 出納帳's 残高): left out of the check.
_NOT_SUMMED = ("率", "比", "%", "単価", "残高")
_STRIP = re.compile(r"[\s【】\[\]［］()（）<>＜＞《》「」:：・]+")
# What printouts write around a total's label (NFKC): runs of marks before or after it
# (``*** 合計 ***``, ``■小計``, ``―合計―``), a count after it (``合計 12件``) or a note in
# brackets after it (``合計（税込）``, ``小計(8%対象)``), and 金額 after it (合計金額).
_DECORATION = re.compile(
    r"^[\s*#=~\-―—–‐■□◆◇●○◎★☆▼▽▶►]+|[\s*#=~\-―—–‐■□◆◇●○◎★☆▼▽◀◄]+$"
    r"|(?<=\S)\s*[0-9]+\s*(?:件|枚|口|行|名)$|(?<=\S)\s*\([^()]*\)$|(?<=計)金?額$"
)
# The group's keys (cells repeating the row above: a code, a name, a date) a total row may
# write before its label (``001 | 営業部 | 小計``).
_MAX_KEYS = 4
# A carried balance's label: 繰越 (繰り越し), after the period it comes from or goes to (前月,
# 次期, 前頁より, 前期からの, 次ページへ), maybe before 高/額/金 (繰越高, 前期繰越額, 前年度繰越金,
# as 出納帳 and 収支報告書 write it). 繰越利益剰余金 is an account.
_CARRY = re.compile(
    r"(?:[前次](?:月|期|年度?|週|日|頁|ページ)?(?:から|より|へ)?の?)?繰り?越し?"
    r"(?:高|額|金額?|残高)?"
)
# Headers of the columns a carry row may fill without moving money: the balance it carries.
_BALANCE_WORDS = ("残高", "残額")


def _label_core(value: str) -> str:
    """A label cell without what a report writes around the label (``_DECORATION``, a count,
    a bracketed note at its end): ``*** 小計 ***``, ``合計 12件``, ``合計（税込）`` → 合計."""
    text = unicodedata.normalize("NFKC", value).strip()
    core = _DECORATION.sub("", text)
    while core != text:
        text, core = core, _DECORATION.sub("", core)
    return core


def is_total_label(value: object) -> bool:
    """Whether a cell names a total (合計, 小計, 営業部 計, 営業部 集計, 合計（税込）...)."""
    if not isinstance(value, str) or "計" not in value:
        return False
    text = _label_core(value)
    if not text or len(text) > 30:
        return False
    if re.fullmatch(r".+\s+集?計", text):
        return True
    return bool(_LABEL.fullmatch(_STRIP.sub("", text)))


def is_carry_label(value: object) -> bool:
    """Whether a cell names a carried balance (前月繰越, 次期繰越, 前頁より繰越...)."""
    if not isinstance(value, str) or "越" not in value:
        return False
    text = _label_core(value)  # as a total's: ``*** 前月繰越 ***``, ``前月繰越（2月分）``
    return len(text) <= 30 and bool(_CARRY.fullmatch(_STRIP.sub("", text)))


@dataclass(frozen=True)
class TotalDifference:
    """A grand total's amount that is not the sum of its column's data rows. ``rounding``:
    the column is in a unit coarser than the yen (千円, 百万円…), where each row and the total
    are rounded on their own, and the difference is within what that rounding can make
    (``within_rounding``); otherwise a row or a cell was lost or added (an unlabelled 小計)."""

    column: str
    stated: Decimal
    summed: Decimal
    rounding: bool
    unit: str | None = None  # the unit the column is in (千円...), None for yen

    @property
    def difference(self) -> Decimal:
        return self.summed - self.stated


def figure(value: Decimal) -> str:
    """An amount as a person writes it: ``1,234`` (no ``.0`` for a whole amount), ``1,234.5``."""
    return f"{int(value):,}" if value == value.to_integral_value() else f"{value:,}"


# What a reader that refuses the table says after why (the agents, the ``file.read_table`` block).
STOPPED_SAID = "このまま集計すると合計が実際と合わなくなるため、読み込みを止めました。"


def mismatch_said(found: TotalDifference, where: str, more: str = "") -> str:
    """The one wording of a grand total that is not its rows' sum (module docstring):
    ``where`` names the total's cell as the user finds it (``TableReadInfo.where``), ``more``
    follows the figures (other columns that differ). No final stop: callers go on."""
    side = "多い" if found.difference > 0 else "少ない"
    said = (
        f"{where}の合計 {figure(found.stated)} が、明細の行の合計 {figure(found.summed)} と"
        f"一致しません（明細の方が {figure(abs(found.difference))} {side}）{more}"
    )
    if found.rounding:
        return f"{said}。{found.unit}未満の端数処理の差の範囲です"
    return (
        f"{said}。見出しのない小計の行が明細に混ざっているとその金額が二重に集計され、"
        "行が抜けたり金額が読めなかったりすると足りなくなります"
    )


def within_rounding(stated: Decimal, summed: Decimal, rows: int, step: Decimal) -> bool:
    """Whether ``summed`` (of ``rows`` amounts written to ``step``, e.g. whole 千円) may differ
    from ``stated`` by rounding alone: each amount and the total are off by less than one
    ``step``, rounded or cut (千円未満切り捨て leaves every row short, so the difference grows
    with the rows), so together by less than ``(rows + 1) * step``. A doubled group (an
    unlabelled 小計) is its group's sum, far more than that in any report kept in 千円."""
    return abs(summed - stated) < (rows + 1) * step


def total_differences(
    totals: pd.DataFrame,
    data: pd.DataFrame,
    units: Mapping[str, str] | None = None,
    dashes: Mapping[str, str] | None = None,
) -> tuple[int, list[TotalDifference]]:
    """``(row, differences)``: the one grand-total row of ``totals`` (raw cells) and its
    amounts that differ from the sum of ``data``'s number column of that name (module
    docstring); no differences (row -1) when there is no such row, or two (a report's
    sections). ``units``: column → the unit its values are in; a unit other than 円 allows
    for rounding (``TotalDifference.rounding``). ``dashes``: column → how it reads a dash
    after a yen amount (``￥15,000-``: ``cell_forms.DASH_END`` or ``DASH_MINUS``)."""
    grand = [
        i
        for i, row in enumerate(totals.itertuples(index=False))
        if any(
            isinstance(v, str)
            and is_total_label(v)
            and _STRIP.sub("", _label_core(v)) in _GRAND_LABELS
            for v in row
        )
    ]
    if len(grand) != 1:
        return -1, []
    carries = totals.iloc[: grand[0]][_labelled(totals.iloc[: grand[0]], is_carry_label, "越")]
    found = []
    for column, value in totals.iloc[grand[0]].items():
        stated = _amount(value, (dashes or {}).get(str(column)))
        numbers = data.get(str(column))
        if stated is None or numbers is None or not pd.api.types.is_numeric_dtype(numbers):
            continue
        amounts = [Decimal(repr(v)) for v in numbers.dropna().tolist()]
        summed = sum(amounts, Decimal(0))
        carried = [_amount(v) for v in carries[column].tolist()]
        if stated in (summed, summed + sum((a for a in carried if a is not None), Decimal(0))):
            continue
        unit = (units or {}).get(str(column))
        # the last digit written: 1 for whole 千円, 0.1 for 百万円 to one decimal
        step = Decimal(1).scaleb(min(int(a.as_tuple().exponent) for a in [stated, *amounts]))
        rounded = unit is not None and unit != "円"
        found.append(
            TotalDifference(
                str(column),
                stated,
                summed,
                rounded and within_rounding(stated, summed, len(amounts), step),
                unit if rounded else None,
            )
        )
    return grand[0], found


def must_add_up(column: str, numbers: pd.Series, units: Mapping[str, str]) -> bool:
    """Whether a 合計 row's cell in ``column`` must be the sum of its ``numbers``: an amount
    column (by its header, or a unit named for it in ``units``) read as numbers, and not a
    rate, a unit price or a balance (``_NOT_SUMMED``)."""
    name = unicodedata.normalize("NFKC", column)
    return (
        pd.api.types.is_numeric_dtype(numbers)
        and (is_amount_header(name) or column in units)
        and not any(word in name for word in _NOT_SUMMED)
    )


def _labelled(
    frame: pd.DataFrame, is_label: Callable[[object], bool] = is_total_label, mark: str = "計"
) -> np.ndarray:
    """Rows whose first two non-blank cells hold a label (``is_label``: a total's by default),
    wherever they stand (a 請求明細 writes 合計 under 商品名, its fifth column). Blank cells are
    None/NaN (both readers).

    Each row's first two filled cells are gathered column by column (a few columns hold them
    all), and only those containing ``mark`` (計, 越) are looked at closely."""
    rows, width = frame.shape
    found = np.zeros(rows, dtype=bool)
    if rows == 0 or width == 0:
        return found
    filled = frame.notna().to_numpy(bool)
    first = filled.argmax(axis=1)
    rest = filled.copy()
    rest[np.arange(rows), first] = False
    second = rest.argmax(axis=1)
    for picks, present in ((first, filled.any(axis=1)), (second, rest.any(axis=1))):
        for j in np.unique(picks[present]).tolist():
            at = np.flatnonzero(present & (picks == j))
            cells = frame.iloc[at, j]
            # Plain Python over at most two cells a row: an Arrow string kernel here would
            # make pyarrow reserve its allocator's first GiB inside the workbook reader's
            # memory-bounded child (``bounded``), which then fails as too large.
            mask = np.fromiter(
                (isinstance(v, str) and mark in v for v in cells.tolist()), bool, len(cells)
            )
            if mask.any():
                hit = cells[mask].map(is_label).to_numpy(bool)
                found[at[mask][hit]] = True
    return found


def _after_keys(frame: pd.DataFrame, found: np.ndarray) -> np.ndarray:
    """Rows not ``found`` whose total label stands after the group's keys written again (module
    docstring): their first two filled cells and each one before the label repeat the cell
    above them or stand in a date column, and the first other filled cell (at most
    ``_MAX_KEYS`` cells on) is a total label (``001 | 営業部 | 小計``,
    ``2026/2/28 | 山田商事 | 【得意先計】``).

    The rows' filled cells are taken one place at a time, column by column as ``_labelled``
    takes them; a row leaves the search at its first cell that is not a key."""
    rows, width = frame.shape
    hits = np.zeros(rows, dtype=bool)
    if rows < 2 or width < 3:
        return hits
    dates = [is_date_header(unicodedata.normalize("NFKC", str(n))) for n in frame.columns]
    left = frame.notna().to_numpy(bool, copy=True)  # the filled cells not yet taken
    searched = ~found & (left.sum(axis=1) >= 3)
    searched[0] = False
    for place in range(_MAX_KEYS + 1):
        at_place = np.flatnonzero(searched)
        if not len(at_place):
            break
        picks = left[at_place].argmax(axis=1)
        left[at_place, picks] = False
        for j in np.unique(picks).tolist():
            at = at_place[picks == j]
            if dates[j]:
                continue
            cells = frame.iloc[at, j].to_numpy(dtype=object)
            key = np.asarray(cells == frame.iloc[at - 1, j].to_numpy(dtype=object), dtype=bool)
            searched[at[~key]] = False
            if place >= 2:
                labels = cells[~key].tolist()
                hits[at[~key]] = [
                    isinstance(c, str) and "計" in c and is_total_label(c) for c in labels
                ]
    return hits


def _carried(frame: pd.DataFrame) -> np.ndarray:
    """Rows carrying a balance in a column of money moved (module docstring): a carry label
    among the first two filled cells, a nonzero amount outside the balance, date and
    identifier columns."""
    found = _labelled(frame, is_carry_label, "越")
    if not found.any():
        return found
    names = [unicodedata.normalize("NFKC", str(name)) for name in frame.columns]
    moved = [
        j
        for j, name in enumerate(names)
        if not (
            is_date_header(name) or is_id_header(name) or any(w in name for w in _BALANCE_WORDS)
        )
    ]
    for i in np.flatnonzero(found).tolist():
        cells = frame.iloc[i, moved].tolist()
        found[i] = any((a := _amount(v)) is not None and a != 0 for v in cells)
    return found


def _is_blank(value: object) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float):
        return value != value
    return isinstance(value, str) and not value.strip()


def _amount(value: object, dash: str | None = None) -> Decimal | None:
    if _is_blank(value) or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(repr(value))
    text = str(value)
    # A percentage (a workbook's ``0%`` cell is read as the ``75%`` it shows) adds up too; an
    # amount with its unit (``1,200千円``) as written, as its column's cells are read.
    read = read_amount_unit(text, dash)
    number = None if read is None else read[0]
    if number is None:
        number = read_percent(text)
    return None if number is None else Decimal(repr(number))


def _column_total(column: pd.Series) -> Decimal | None:
    """The exact sum of a column's amounts (blanks skipped); None if a cell is not an amount."""
    texts = column.map(lambda v: None if _is_blank(v) else v).dropna()
    plain = pd.to_numeric(texts.map(str).str.replace(",", "", regex=False), errors="coerce")
    if plain.notna().all() and (plain % 1 == 0).all():
        return Decimal(int(plain.astype("int64").sum()))
    total = Decimal(0)
    for value in texts.tolist():
        amount = _amount(value)
        if amount is None:
            return None
        total += amount
    return total


def _sums_above(frame: pd.DataFrame, labelled: np.ndarray) -> bool:
    """Whether the last row is the column sums of the rows above it (not already totals)."""
    above = frame.iloc[:-1][~labelled[:-1]]
    if len(above) < MIN_ROWS_ABOVE_SUM:
        return False
    last = frame.iloc[-1].tolist()
    amounts = {j: _amount(cell) for j, cell in enumerate(last) if not _is_blank(cell)}
    if not amounts or any(amount is None for amount in amounts.values()):
        return False  # text beside the numbers: a data row
    # Blank where every row above has a value (the label's, a date's or a name's place); the
    # readers give blank cells as None/NaN, so ``notna`` is enough here.
    if not any(j not in amounts and bool(above.iloc[:, j].notna().all()) for j in range(len(last))):
        return False  # filled wherever the rows are (No 3 under 1 and 2): a data row
    matched = 0
    for j, amount in amounts.items():
        if _column_total(above.iloc[:, j]) != amount:
            return False
        matched += amount != 0
    return matched > 0


def total_rows(frame: pd.DataFrame, positions: np.ndarray | None) -> tuple[np.ndarray, int]:
    """``(totals, footer)`` for ``frame`` (raw cells, before typing, blank rows dropped;
    ``positions`` the file line or sheet row of each row, None when unknown): the mask of its
    total rows (carry rows among them), and how many of its last rows are footer lines
    (outside that mask)."""
    labelled = _labelled(frame)
    labelled |= _after_keys(frame, labelled) | _carried(frame)
    footer = _footer_rows(frame, positions, labelled)
    body = len(frame) - footer
    totals = labelled.copy()
    totals[body:] = False
    if body and not totals[body - 1] and _sums_above(frame.iloc[:body], labelled[:body]):
        totals[body - 1] = True
    return totals, footer


def _amount_cells(tail: pd.DataFrame) -> np.ndarray:
    """Which cells of ``tail`` (the table's last rows, columns named) are amounts (a lone dash,
    zero in accounting formats, included) in an amount column: one whose header names an
    amount, or whose filled cells here are mostly amounts."""
    rows = tail.itertuples(index=False)
    cells = [[_amount(v) is not None or is_dash(str(v)) for v in row] for row in rows]
    amounts = np.array(cells, dtype=bool).reshape(tail.shape)
    filled = tail.notna().to_numpy(bool)
    named = np.array([is_amount_header(str(name)) for name in tail.columns], dtype=bool)
    mostly = amounts.sum(axis=0) >= _AMOUNT_COLUMN_SHARE * filled.sum(axis=0)
    found: np.ndarray = amounts & (named | mostly)
    return found


def _short_rows(frame: pd.DataFrame, labelled: np.ndarray) -> int:
    """How many of the last rows of ``frame`` fill at most ``MAX_FOOTER_CELLS`` cells and are
    not total rows (the candidates for footer lines; at most ``MAX_FOOTER_ROWS``)."""
    last = min(len(frame) - 1, MAX_FOOTER_ROWS)
    if last <= 0:
        return 0
    filled = frame.iloc[len(frame) - last :].notna().to_numpy(bool).sum(axis=1)
    short = (filled <= MAX_FOOTER_CELLS) & ~labelled[len(frame) - last :]
    run = 0
    while run < last and short[last - 1 - run]:
        run += 1
    return run


def _footer_rows(frame: pd.DataFrame, positions: np.ndarray | None, labelled: np.ndarray) -> int:
    """How many of the last rows of ``frame`` are footer lines (module docstring)."""
    run = _short_rows(frame, labelled)
    if not run:
        return 0
    # Only the columns the candidates and the row above them fill can tell.
    near = frame.iloc[len(frame) - run - 1 :].notna().to_numpy(bool).any(axis=0)
    columns = np.flatnonzero(near)
    rows = max(run + 1, min(_AMOUNT_SAMPLE_ROWS, _AMOUNT_SAMPLE_CELLS // len(columns)))
    amounts = _amount_cells(frame.iloc[-rows:, columns])
    if not amounts.any():
        return 0  # no amount column: nothing tells data from notes
    without = np.logical_not(amounts.any(axis=1))
    count = 0
    while count < run and without[len(without) - 1 - count]:
        count += 1
    n = len(frame)
    if count and _sums_above(frame.iloc[: n - count], labelled[: n - count]):
        return count  # under a total without a label
    # Under a labelled total or a blank line; else a shorter run may be (a note under a gap).
    while count:
        anchor = n - count - 1
        if (
            labelled[anchor]
            or _is_note(frame.iloc[anchor + 1].tolist())
            or (amounts[len(amounts) - count - 1].any() and _follows_gap(frame, positions, anchor))
        ):
            return count
        count -= 1
    return 0


def _is_note(cells: list[object]) -> bool:
    """Whether a row's first filled cell begins with a note's mark (``_NOTE_MARK``)."""
    first = next((v for v in cells if not _is_blank(v)), None)
    return isinstance(first, str) and bool(_NOTE_MARK.match(first))


def _follows_gap(frame: pd.DataFrame, positions: np.ndarray | None, anchor: int) -> bool:
    """Whether a blank line of the file stands between row ``anchor`` and the next (a CSV
    record spans one line more for each line break inside its quoted cells)."""
    if positions is None:
        return False
    breaks = sum(v.count("\n") for v in frame.iloc[anchor].tolist() if isinstance(v, str))
    return int(positions[anchor + 1]) - int(positions[anchor]) > 1 + breaks
