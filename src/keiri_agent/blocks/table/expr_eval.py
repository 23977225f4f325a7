"""Evaluating ``table.compute`` expressions: one tree node at a time over whole columns.

Each node yields a column of one kind (:data:`Operand`): :class:`Decimals` (exact decimals and
fractions, :mod:`keiri_agent.blocks.table.expr_numbers`, so 1000 * 1.1 is 1100, not
1100.0000000000002, and [金額] / 3 * 3 is [金額]), :class:`Texts`, :class:`Truths` (comparison results) or :class:`Raw` (a
column as the table holds it). Cells are read where an operator needs them, by the shared column
readers (:mod:`keiri_agent.blocks.table.column_values`): arithmetic reads amounts (``¥1,234``,
``1,234円``, ``▲500``, ``(1,200)``), ``days`` and date comparisons read dates (``2025/1/31``,
``令和7年1月31日``), ``&`` reads text. A cell that cannot be read that way is an error naming
its rows as the user finds them (file line, sheet row), the referenced column and the position in
the expression; nothing is guessed. Blank cells give blank results (``&`` reads them as ""),
comparisons with a blank are blank, and ``if`` with a blank condition is blank.

``if`` computes each branch only for the rows that take it, as a spreadsheet does:
``if([前年] = 0, 0, [売上] / [前年])`` never divides by zero, and a cell that only the other
branch would read is not an error.

Division by zero follows ``zero_division``: ``error`` (stop, naming the rows and the position of
the ``/``) or ``null`` (a blank result, counted in :attr:`Evaluator.zero_divisions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from decimal import Decimal
from typing import Any, Final

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.cells import json_cell, parse_amount, parse_date
from keiri_agent.blocks.table.column_values import blank_mask, read_amounts, read_dates
from keiri_agent.blocks.table.columns import unknown_column_error
from keiri_agent.blocks.table.expr_numbers import (
    ORDER,
    Decimals,
    choose,
    compare,
    divide,
    extreme,
    plus,
    repeated,
    times,
    with_nones,
)
from keiri_agent.blocks.table.expr_parse import (
    Binary,
    Call,
    Column,
    Literal,
    Node,
    Unary,
    round_digits,
)
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import input_error
from keiri_agent.errors import BlockError

__all__ = [
    "MAX_LISTED",
    "ZERO_DIVISION",
    "Columns",
    "Evaluator",
    "Operand",
    "Raw",
    "Texts",
    "Truths",
    "as_column",
]

ZERO_DIVISION: Final = ("error", "null")
MAX_LISTED: Final = 10  # rows spelled out in one error message
MAX_ROWS_IN_DETAILS: Final = 1000  # row numbers carried in an error's details
_KIND_NAMES: Final = {
    "number": "数値",
    "text": "文字列",
    "bool": "真偽値（比較の結果）",
    "raw": "列の値",
}
_EPOCH_DAY: Final = np.datetime64("1970-01-01", "D")


@dataclass(frozen=True)
class Texts:
    values: np.ndarray  # object: str (anything where blank)
    blank: np.ndarray


@dataclass(frozen=True)
class Truths:
    values: np.ndarray  # bool (anything where blank)
    blank: np.ndarray


@dataclass(frozen=True)
class Raw:
    """A column as the table holds it; its readings as numbers / days are made once. The
    result of an ``if`` whose branches differ in kind keeps them (``branches``: the rows that
    took the first, the two results, the rows without a condition), so that reading it as
    numbers reads the exact numbers of a branch, not the floats of ``series``."""

    series: pd.Series
    branches: tuple[np.ndarray, Operand, Operand, np.ndarray] | None = None
    readings: dict[str, tuple[Decimals, np.ndarray]] = field(default_factory=dict, compare=False)


Operand = Decimals | Texts | Truths | Raw


def kind_of(value: Operand) -> str:
    if isinstance(value, Decimals):
        return "number"
    if isinstance(value, Texts):
        return "text"
    return "bool" if isinstance(value, Truths) else "raw"


def as_column(value: Operand) -> pd.Series:
    """The operand as a table column (its records hold what the expression gave)."""
    if isinstance(value, Decimals):
        return value.output()
    if isinstance(value, Raw):
        return value.series.reset_index(drop=True)
    if isinstance(value, Truths):
        if value.blank.any():
            return pd.Series(pd.arrays.BooleanArray(value.values.astype(bool), value.blank.copy()))
        return pd.Series(value.values.astype(bool))
    return with_nones(value.values, value.blank)


class Columns(Mapping[str, Operand]):
    """The columns an expression can name: the table's (wrapped when first named) and those
    computed by earlier entries of ``columns`` (which replace a table column of their name)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.made: dict[str, Operand] = {}

    def __getitem__(self, name: str) -> Operand:
        if name not in self.made:
            if name not in self.frame.columns:
                raise KeyError(name)
            self.made[name] = Raw(self.frame[name])
        return self.made[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.frame.columns
        yield from (name for name in self.made if name not in self.frame.columns)

    def __len__(self) -> int:
        return len(self.frame.columns) + sum(1 for n in self.made if n not in self.frame.columns)

    def set(self, name: str, value: Operand) -> None:
        self.made[name] = value


@dataclass(eq=False)
class Evaluator:
    """Evaluates trees over ``columns`` (name → column) of ``rows`` rows."""

    columns: Mapping[str, Operand]
    rows: int
    _: KW_ONLY
    text: str
    where: str
    zero_division: str = "error"
    # How row ``i`` (0-based) is named in errors: its file line when the table knows it.
    row_name: Callable[[int], str] = lambda i: f"{i + 1} 行目"
    zero_divisions: int = field(default=0, init=False)

    def evaluate(self, node: Node) -> Operand:
        """The column ``node`` computes, for every row."""
        return self.eval(node, np.ones(self.rows, dtype=bool))

    # --- errors ---------------------------------------------------------------------------

    def error(self, node: Node, problem: str, hint: str, **details: Any) -> BlockError:
        what = f"（[{node.name}]）" if isinstance(node, Column) else ""
        return input_error(
            f"{self.where}式「{self.text}」の {node.pos} 文字目{what}: {problem}",
            hint,
            field="columns",
            expression=self.text,
            position=node.pos,
            **details,
        )

    def unreadable(self, node: Node, value: Operand, bad: np.ndarray, what: str) -> BlockError:
        rows = np.flatnonzero(bad)
        listed = "、".join(
            f"{self.row_name(int(i))}（{_cell(value, int(i))!r}）" for i in rows[:MAX_LISTED]
        )
        more = f" ほか {len(rows) - MAX_LISTED} 件" if len(rows) > MAX_LISTED else ""
        return self.error(
            node,
            f"{what}として読めない値があります: {listed}{more}。",
            f"元の表の値を{what}に直すか空欄にしてください（空欄なら結果も空欄になります）。",
            rows=[int(i) + 1 for i in rows[:MAX_ROWS_IN_DETAILS]],
        )

    def wrong_kind(self, node: Node, value: Operand, wanted: str) -> BlockError:
        return self.error(
            node,
            f"ここには{wanted}が必要ですが、{_KIND_NAMES[kind_of(value)]}です。",
            "数値の計算には列か数値を、days には日付の列を、and / or / not / if の条件には比較"
            "（[金額] >= 50000 など）を書いてください。",
        )

    # --- reading a column as a kind --------------------------------------------------------

    def as_number(self, node: Node, value: Operand, active: np.ndarray) -> Decimals:
        if isinstance(value, Decimals):
            return value
        if isinstance(node, Literal) and isinstance(node.value, str):
            number = parse_amount(node.value)
            if number is not None:
                return Decimals.constant(Decimal(repr(number)), self.rows)
        if isinstance(value, Raw | Texts):
            numbers, bad = _reading(value, "number")
            if (bad & active).any():
                raise self.unreadable(node, value, bad & active, "数値")
            return numbers
        raise self.wrong_kind(node, value, "数値")

    def as_days(self, node: Node, value: Operand, active: np.ndarray) -> Decimals:
        """Dates as day numbers (whole days since 1970-01-01)."""
        if isinstance(node, Literal) and isinstance(node.value, str):
            day = parse_date(node.value)
            if day is not None:
                number = int((np.datetime64(day, "D") - _EPOCH_DAY).astype(np.int64))
                return Decimals.constant(Decimal(number), self.rows)
        if isinstance(value, Raw | Texts):
            days, bad = _reading(value, "date")
            if (bad & active).any():
                raise self.unreadable(node, value, bad & active, "日付")
            return days
        raise self.wrong_kind(node, value, "日付")

    def as_truth(self, node: Node, value: Operand, active: np.ndarray) -> Truths:
        if isinstance(value, Truths):
            return value
        if isinstance(value, Raw):
            truths, bad = _truth_reading(value)
            if (bad & active).any():
                raise self.unreadable(node, value, bad & active, "真偽値")
            return truths
        raise self.wrong_kind(node, value, "真偽値（比較の結果）")

    def numbers(self, node: Node, active: np.ndarray) -> Decimals:
        return self.as_number(node, self.eval(node, active), active)

    def truths(self, node: Node, active: np.ndarray) -> Truths:
        return self.as_truth(node, self.eval(node, active), active)

    def days(self, node: Node, active: np.ndarray) -> Decimals:
        return self.as_days(node, self.eval(node, active), active)

    # --- nodes ----------------------------------------------------------------------------

    def eval(self, node: Node, active: np.ndarray) -> Operand:
        """``node``'s column; only the ``active`` rows count (others may hold anything)."""
        if isinstance(node, Literal):
            return self.literal(node.value)
        if isinstance(node, Column):
            if node.name not in self.columns:
                raise unknown_column_error(
                    node.name,
                    self.columns,
                    field="columns",
                    where=f"{self.where}式「{self.text}」の {node.pos} 文字目: ",
                )
            return self.columns[node.name]
        if isinstance(node, Unary):
            if node.op == "not":
                truths = self.truths(node.operand, active)
                return Truths(~truths.values, truths.blank)
            number = self.numbers(node.operand, active)
            return number.negated() if node.op == "-" else number
        if isinstance(node, Binary):
            return self.binary(node, active)
        return self.call(node, active)

    def literal(self, value: Decimal | str | bool) -> Operand:
        none = repeated(False, self.rows, bool)
        if isinstance(value, bool):
            return Truths(repeated(value, self.rows, bool), none)
        if isinstance(value, Decimal):
            return Decimals.constant(value, self.rows)
        return Texts(repeated(value, self.rows, object), none)

    def binary(self, node: Binary, active: np.ndarray) -> Operand:
        if node.op == "&":
            left, right = self.eval(node.left, active), self.eval(node.right, active)
            joined = _texts(left) + _texts(right)
            return Texts(joined, np.zeros(self.rows, dtype=bool))
        if node.op in ("and", "or"):
            a, b = self.truths(node.left, active), self.truths(node.right, active)
            values = a.values & b.values if node.op == "and" else a.values | b.values
            return Truths(values, a.blank | b.blank)
        if node.op in ORDER:
            return self.compare(node, active)
        left, right = self.numbers(node.left, active), self.numbers(node.right, active)
        if node.op in ("+", "-"):
            return plus(left, right, minus=node.op == "-")
        if node.op == "*":
            return times(left, right)
        quotient, zero = divide(left, right)
        zero = np.flatnonzero(zero & active)
        if zero.size and self.zero_division == "error":
            listed = "、".join(self.row_name(int(i)) for i in zero[:MAX_LISTED])
            raise self.error(
                node,
                f"「/」で 0 で割っています: {listed}{' ほか' if zero.size > MAX_LISTED else ''}。",
                "割る数が 0 の行を table.filter で除くか、if([割る数] = 0, 0, [割られる数] / [割る数]) のように"
                "書くか、0 で割った結果を空欄にするなら zero_division: null を指定してください。",
                rows=[int(i) + 1 for i in zero[:MAX_ROWS_IN_DETAILS]],
            )
        self.zero_divisions += int(zero.size)
        return quotient

    def compare(self, node: Binary, active: np.ndarray) -> Truths:
        left, right = self.eval(node.left, active), self.eval(node.right, active)
        kinds = {_literal_kind(node.left, left), _literal_kind(node.right, right)}
        mode = next((k for k in ("number", "date", "bool", "text") if k in kinds), None)
        if mode is None:  # two columns: as numbers if both read as numbers, else dates, else text
            assert isinstance(left, Raw)
            assert isinstance(right, Raw)
            mode = next(
                (
                    k
                    for k in ("number", "date")
                    if not (_reading(left, k)[1] & active).any()
                    and not (_reading(right, k)[1] & active).any()
                ),
                "text",
            )
        if mode == "text":
            if node.op not in ("==", "!="):
                raise self.error(
                    node,
                    f"文字列は大小（{node.op}）を比べられません。",
                    '大小の比較は数値か日付の列で行います。日付は "2025-04-01" のように書きます。',
                )
            (a, a_blank), (b, b_blank) = _keys(node.left, left), _keys(node.right, right)
            return Truths(np.asarray(ORDER[node.op](a, b), dtype=bool), a_blank | b_blank)
        if mode == "bool":
            ta, tb = (
                self.as_truth(node.left, left, active),
                self.as_truth(node.right, right, active),
            )
            values = ORDER[node.op](ta.values, tb.values)
            return Truths(np.asarray(values, dtype=bool), ta.blank | tb.blank)
        read = self.as_number if mode == "number" else self.as_days
        a_num, b_num = read(node.left, left, active), read(node.right, right, active)
        return Truths(compare(a_num, b_num, node.op), a_num.blank | b_num.blank)

    def call(self, node: Call, active: np.ndarray) -> Operand:
        name, args = node.name, node.args
        if name.startswith("round"):
            digits = (round_digits(args[1]) or 0) if len(args) == 2 else 0
            return self.numbers(args[0], active).rounded(digits, name)
        if name == "abs":
            return self.numbers(args[0], active).absolute()
        if name in ("min", "max"):
            return extreme([self.numbers(a, active) for a in args], largest=name == "max")
        if name == "days":
            end, start = self.days(args[0], active), self.days(args[1], active)
            return plus(end, start, minus=True)
        condition = self.truths(args[0], active)
        chosen = condition.values & ~condition.blank
        then = self.eval(args[1], active & chosen)
        other = self.eval(args[2], active & ~chosen & ~condition.blank)
        return _either(chosen, then, other, condition.blank)


def _literal_kind(node: Node, value: Operand) -> str:
    """A text literal that reads as an amount or a date is compared as one ("2025-04-01")."""
    if isinstance(node, Literal) and isinstance(node.value, str):
        if parse_amount(node.value) is not None:
            return "number"
        if parse_date(node.value) is not None:
            return "date"
    return kind_of(value)


# --- readings of text and raw columns ------------------------------------------------------------


def _series(value: Raw | Texts) -> pd.Series:
    if isinstance(value, Raw):
        return value.series
    return with_nones(value.values, value.blank)


def _reading(value: Raw | Texts, kind: str) -> tuple[Decimals, np.ndarray]:
    """``(column, unreadable)``: the cells as numbers or as day numbers, and the non-blank
    cells that are not; made once per raw column."""
    cache = value.readings if isinstance(value, Raw) else {}
    if kind not in cache:
        if isinstance(value, Raw) and value.branches is not None:
            chosen, then, other, blank = value.branches
            (a, a_bad), (b, b_bad) = _read_any(then, kind), _read_any(other, kind)
            bad = np.where(chosen, a_bad, b_bad) & ~blank
            cache[kind] = (_blanked(choose(chosen, a, b), blank), bad)
        else:
            cache[kind] = _read_series(_series(value), kind)
    return cache[kind]


def _read_any(value: Operand, kind: str) -> tuple[Decimals, np.ndarray]:
    """Any operand read as numbers or day numbers: a truth value is neither, a number is no
    date."""
    if isinstance(value, Raw | Texts):
        return _reading(value, kind)
    if isinstance(value, Decimals) and kind == "number":
        return value, np.zeros(len(value.blank), dtype=bool)
    blank = np.ones(len(value.blank), dtype=bool)
    return Decimals(np.zeros(len(blank), dtype=np.int64), 0, blank), ~value.blank


def _read_series(series: pd.Series, kind: str) -> tuple[Decimals, np.ndarray]:
    if kind == "number" and pd.api.types.is_signed_integer_dtype(series.dtype):
        blank = series.isna().to_numpy(dtype=bool)
        ints = series.to_numpy(dtype=np.int64, na_value=0)
        return Decimals.from_ints(ints, blank), np.zeros(len(series), dtype=bool)
    if kind == "number":
        floats, bad = read_amounts(series)
        values = floats.to_numpy(dtype=np.float64, copy=True)
        bad = bad | np.isinf(values)
        values[bad] = np.nan
        return Decimals.from_floats(values), bad
    read, bad = read_dates(series)
    days = read.to_numpy(dtype="datetime64[D]")
    blank = np.isnat(days)
    numbers = np.where(blank, 0, (days - _EPOCH_DAY).astype(np.int64))
    return Decimals.from_ints(numbers, blank), bad


def _truth_reading(value: Operand) -> tuple[Truths, np.ndarray]:
    """The cells as truth values (True / False; blank as blank), and the cells that are not."""
    if isinstance(value, Truths):
        return value, np.zeros(len(value.blank), dtype=bool)
    if isinstance(value, Raw) and value.branches is not None:
        chosen, then, other, blank = value.branches
        (a, a_bad), (b, b_bad) = _truth_reading(then), _truth_reading(other)
        values = np.where(chosen, a.values, b.values)
        picked = Truths(values, blank | np.where(chosen, a.blank, b.blank))
        return picked, np.where(chosen, a_bad, b_bad) & ~blank
    series = value.series if isinstance(value, Raw) else as_column(value)
    blank = blank_mask(series)
    if isinstance(value, Raw) and pd.api.types.is_bool_dtype(series.dtype):
        values = series.fillna(False).to_numpy(dtype=bool)
        return Truths(values, blank), np.zeros(len(series), dtype=bool)
    if not isinstance(value, Raw) or series.dtype != object:
        return Truths(np.zeros(len(series), dtype=bool), blank), ~blank
    cells = series.tolist()
    truth = np.fromiter((isinstance(c, bool | np.bool_) for c in cells), bool, len(cells))
    values = np.fromiter((c is True or c is np.True_ for c in cells), bool, len(cells))
    return Truths(values, blank), ~blank & ~truth


def _blanked(column: Decimals, blank: np.ndarray) -> Decimals:
    """``column`` with the ``blank`` rows blank too."""
    if not blank.any():
        return column
    den = None if column.den is None else np.where(blank, 1, column.den)
    return Decimals(np.where(blank, 0, column.ints), column.scale, column.blank | blank, den)


def _per_cell(series: pd.Series, convert: Callable[[Any], Any]) -> np.ndarray:
    """``convert`` of each cell (object array), called once per distinct cell; in an object
    column True and 1 stay apart (they hash alike)."""
    if series.dtype != object:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        converted = np.array([convert(u) for u in uniques] + [convert(None)], dtype=object)
        return converted[codes]  # code -1 (blank) takes the last
    seen: dict[tuple[type, Any], Any] = {}
    out = np.empty(len(series), dtype=object)
    for i, cell in enumerate(series.tolist()):
        try:
            key = (cell.__class__, cell)
            out[i] = seen[key] if key in seen else seen.setdefault(key, convert(cell))
        except TypeError:  # unhashable (a list or mapping in a record)
            out[i] = convert(cell)
    return out


def _text_of(cell: Any) -> str:
    cell = json_cell(cell)
    if cell is None:
        return ""
    return "true" if cell is True else "false" if cell is False else str(cell)


def _texts(value: Operand) -> np.ndarray:
    """The operand as text (object array): "" for blanks, true / false, numbers as JSON."""
    if isinstance(value, Texts):
        return np.where(value.blank, "", value.values).astype(object)
    if isinstance(value, Truths):
        words = np.where(value.values, "true", "false")
        return np.where(value.blank, "", words).astype(object)
    series = value.output() if isinstance(value, Decimals) else value.series
    return _per_cell(series, _text_of)


def _keys(node: Node, value: Operand) -> tuple[np.ndarray, np.ndarray]:
    """Text as compared by ``=`` / ``!=`` (NFKC, spaces collapsed, casefolded) and blanks."""
    rows = len(value.series) if isinstance(value, Raw) else len(value.blank)
    if isinstance(node, Literal) and isinstance(node.value, str):  # one text: its key once
        key = normalize_key(node.value, keep_spaces=True)
        return repeated(key, rows, object), repeated(not node.value.strip(), rows, bool)
    series = _series(value) if isinstance(value, Raw | Texts) else as_column(value)
    blank = blank_mask(series)
    return _per_cell(series, lambda c: normalize_key(c, keep_spaces=True)), blank


def _cell(value: Operand, row: int) -> Any:
    """Row ``row``'s cell as the records show it (for error messages)."""
    if isinstance(value, Raw):
        return json_cell(value.series.iloc[row])
    if isinstance(value, Texts):
        return None if value.blank[row] else value.values[row]
    return json_cell(as_column(value).iloc[row])


def _either(chosen: np.ndarray, then: Operand, other: Operand, blank: np.ndarray) -> Operand:
    """``then`` where ``chosen``, else ``other``; blank where ``blank`` (no condition)."""
    if isinstance(then, Decimals) and isinstance(other, Decimals):
        return _blanked(choose(chosen, then, other), blank)
    if isinstance(then, Texts) and isinstance(other, Texts):
        values = np.where(chosen, then.values, other.values)
        return Texts(values, blank | np.where(chosen, then.blank, other.blank))
    if isinstance(then, Truths) and isinstance(other, Truths):
        values = np.where(chosen, then.values, other.values)
        return Truths(values, blank | np.where(chosen, then.blank, other.blank))
    a_column, b_column = as_column(then), as_column(other)
    mixed = a_column.astype(object) if a_column.dtype != b_column.dtype else a_column
    picked = mixed.where(chosen, b_column)
    series = picked.mask(blank) if blank.any() else picked
    return Raw(series, branches=(chosen, then, other, blank))
