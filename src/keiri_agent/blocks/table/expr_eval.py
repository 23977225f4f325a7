"""Evaluating ``table.compute`` expressions: one tree node at a time over whole columns.

Each node yields a column of one kind (:mod:`keiri_agent.blocks.table.expr_operands`): exact
numbers (:mod:`keiri_agent.blocks.table.expr_numbers`: 1000 * 1.1 is 1100, not
1100.0000000000002, and [金額] / 3 * 3 is [金額]), text, truth values, or a column as the table
holds it. Cells are read where an operator needs them, by the shared column readers: arithmetic
reads amounts (``¥1,234``, ``1,234円``, ``▲500``, ``(1,200)``), ``days`` and date comparisons
read dates (``2025/1/31``, ``令和7年1月31日``), ``&`` reads text. A cell that cannot be read that
way is an error naming its rows as the user finds them (file line, sheet row), the referenced
column and the position in the expression; nothing is guessed. Blank cells give blank results
(``&`` reads them as ""), comparisons with a blank are blank, and ``if`` with a blank condition
is blank.

``if`` computes each branch only for the rows that take it, as a spreadsheet does:
``if([前年] = 0, 0, [売上] / [前年])`` never divides by zero, and a cell that only the other
branch would read is not an error.

Division by zero follows ``zero_division``: ``error`` (stop, naming the rows and the position of
the ``/``) or ``null`` (a blank result, counted in :attr:`Evaluator.zero_divisions`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from decimal import Decimal
from typing import Any, Final

import numpy as np

from keiri_agent.blocks.table.cells import parse_amount, parse_date
from keiri_agent.blocks.table.columns import unknown_column_error
from keiri_agent.blocks.table.expr_numbers import (
    ORDER,
    ROUNDINGS,
    Decimals,
    compare,
    divide,
    extreme,
    plus,
    repeated,
    times,
)
from keiri_agent.blocks.table.expr_operands import (
    EPOCH_DAY,
    Operand,
    Raw,
    Texts,
    Truths,
    cell_at,
    either,
    kind_of,
    reading,
    text_keys,
    texts,
    truth_reading,
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
from keiri_agent.errors import BlockError, input_error

__all__ = ["MAX_LISTED", "MAX_ROWS_IN_DETAILS", "ZERO_DIVISION", "Evaluator"]

ZERO_DIVISION: Final = ("error", "null")
MAX_LISTED: Final = 10  # rows spelled out in one error message
MAX_ROWS_IN_DETAILS: Final = 1000  # row numbers carried in an error's details
_KIND_NAMES: Final = {
    "number": "数値",
    "text": "文字列",
    "bool": "真偽値（比較の結果）",
    "raw": "列の値",
}


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
    # Where a time with a UTC offset is on its day (the block's KEIRI_TIMEZONE).
    zone: dt.tzinfo | None = None
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
            f"{self.row_name(int(i))}（{cell_at(value, int(i))!r}）" for i in rows[:MAX_LISTED]
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
        return self.cells_as(node, value, active, "number", "数値")

    def as_days(self, node: Node, value: Operand, active: np.ndarray) -> Decimals:
        """Dates as day numbers (whole days since 1970-01-01)."""
        if isinstance(node, Literal) and isinstance(node.value, str):
            day = parse_date(node.value, self.zone)
            if day is not None:
                number = int((np.datetime64(day, "D") - EPOCH_DAY).astype(np.int64))
                return Decimals.constant(Decimal(number), self.rows)
        return self.cells_as(node, value, active, "date", "日付")

    def cells_as(
        self, node: Node, value: Operand, active: np.ndarray, kind: str, what: str
    ) -> Decimals:
        """A column's cells read as ``kind`` (number, date); an ``active`` cell that is not
        one is refused, as is a value that is not a column of cells."""
        if not isinstance(value, Raw | Texts):
            raise self.wrong_kind(node, value, what)
        read, bad = reading(value, kind, self.zone)
        if (bad & active).any():
            raise self.unreadable(node, value, bad & active, what)
        return read

    def as_truth(self, node: Node, value: Operand, active: np.ndarray) -> Truths:
        if isinstance(value, Truths):
            return value
        if isinstance(value, Raw):
            truths, bad = truth_reading(value)
            if (bad & active).any():
                raise self.unreadable(node, value, bad & active, "真偽値")
            return truths
        raise self.wrong_kind(node, value, "真偽値（比較の結果）")

    def keys(self, node: Node, value: Operand) -> tuple[np.ndarray, np.ndarray]:
        """The keys ``=`` compares by (:func:`text_keys`); a written text's is made once."""
        if isinstance(node, Literal) and isinstance(node.value, str):
            key = normalize_key(node.value, keep_spaces=True)
            blank = not node.value.strip()
            return repeated(key, self.rows, object), repeated(blank, self.rows, bool)
        return text_keys(value)

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
            joined = texts(left) + texts(right)
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
                    if not (reading(left, k, self.zone)[1] & active).any()
                    and not (reading(right, k, self.zone)[1] & active).any()
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
            (a, a_blank), (b, b_blank) = self.keys(node.left, left), self.keys(node.right, right)
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
        if name in ROUNDINGS:
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
        return either(chosen, then, other, condition.blank)


def _literal_kind(node: Node, value: Operand) -> str:
    """A text literal that reads as an amount or a date is compared as one ("2025-04-01")."""
    if isinstance(node, Literal) and isinstance(node.value, str):
        if parse_amount(node.value) is not None:
            return "number"
        if parse_date(node.value) is not None:
            return "date"
    return kind_of(value)


# --- readings of text and raw columns ------------------------------------------------------------
