"""Evaluating ``table.compute`` expressions: one tree node at a time over a whole column.

Each node yields a column of values of one kind: ``number`` (exact ``Decimal``, so 1000 * 1.1 is
1100, not 1100.0000000000002), ``text``, ``date``, ``bool``, or ``raw`` (cells as the table holds
them). Cells are read where an operator needs them: arithmetic reads amounts (``¥1,234``,
``1,234円``, ``▲500``), ``days`` reads dates (``2025/1/31``, ``令和7年1月31日``), ``&`` reads
text. A cell that cannot be read that way is an error naming the rows, the referenced column and
the position in the expression; nothing is guessed. Blank cells give blank results (``&`` reads
them as ""), comparisons with a blank are blank, and ``if`` with a blank condition is blank.

Division by zero follows ``zero_division``: ``error`` (stop, naming the rows and the position of
the ``/``) or ``null`` (a blank result, counted in :attr:`Evaluator.zero_divisions`).
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_UP, ROUND_UP, Decimal
from typing import Any, Final

from keiri_agent.blocks.table.cells import json_cell, parse_date
from keiri_agent.blocks.table.columns import unknown_column_error
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
from keiri_agent.documents.table_infer import parse_number
from keiri_agent.errors import BlockError

__all__ = ["ZERO_DIVISION", "Evaluator", "Values"]

ZERO_DIVISION: Final = ("error", "null")
MAX_LISTED: Final = 10  # rows spelled out in one error message
_ROUNDING: Final = {"round": ROUND_HALF_UP, "rounddown": ROUND_DOWN, "roundup": ROUND_UP}
_KIND_NAMES: Final = {
    "number": "数値",
    "text": "文字列",
    "date": "日付",
    "bool": "真偽値（比較の結果）",
    "raw": "列の値",
}
_ORDERING: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_ARITHMETIC: Final[dict[str, Callable[[Decimal, Decimal], Decimal]]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


@dataclass(frozen=True)
class Values:
    kind: str  # number, text, date, bool, raw
    cells: list[Any]

    def output(self) -> list[Any]:
        """The column as JSON cells (numbers as int/float, dates as ISO text)."""
        return [json_cell(c) for c in self.cells]


def _blank(cell: Any) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())


def _decimal(cell: Any) -> Decimal | None:
    if isinstance(cell, bool):
        return None
    if isinstance(cell, Decimal):
        return cell
    if isinstance(cell, int | float):
        return Decimal(repr(cell)) if isinstance(cell, float) else Decimal(cell)
    if isinstance(cell, str):
        number = parse_number(cell)
        return None if number is None else Decimal(repr(number))
    return None


@dataclass(frozen=True)
class _Reading:
    """How cells of other kinds are read as one kind (number, date, bool)."""

    what: str  # the kind in an unreadable-cell message
    wanted: str  # the kind in a wrong-kind message
    sources: tuple[str, ...]  # the kinds whose cells are read one by one
    read: Callable[[Any], Any]  # a cell → its value, None when unreadable


_READINGS: Final = {
    "number": _Reading("数値", "数値", ("raw", "text"), _decimal),
    "date": _Reading("日付", "日付", ("raw", "text"), parse_date),
    "bool": _Reading(
        "真偽値", "真偽値（比較の結果）", ("raw",), lambda c: c if isinstance(c, bool) else None
    ),
}


@dataclass(eq=False)
class Evaluator:
    """Evaluates trees over ``env`` (column name → values) of ``rows`` rows."""

    env: Mapping[str, Values]
    rows: int
    _: KW_ONLY
    text: str
    where: str
    zero_division: str = "error"
    # How row ``i`` (0-based) is named in errors: its file line when the table knows it.
    row_name: Callable[[int], str] = lambda i: f"{i + 1} 行目"
    zero_divisions: int = field(default=0, init=False)

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

    def unreadable(self, node: Node, cells: list[Any], bad: list[int], what: str) -> BlockError:
        listed = "、".join(f"{self.row_name(i)}（{cells[i]!r}）" for i in bad[:MAX_LISTED])
        more = f" ほか {len(bad) - MAX_LISTED} 件" if len(bad) > MAX_LISTED else ""
        return self.error(
            node,
            f"{what}として読めない値があります: {listed}{more}。",
            f"元の表の値を{what}に直すか空欄にしてください（空欄なら結果も空欄になります）。",
            rows=[i + 1 for i in bad[:1000]],
        )

    def wrong_kind(self, node: Node, values: Values, wanted: str) -> BlockError:
        return self.error(
            node,
            f"ここには{wanted}が必要ですが、{_KIND_NAMES[values.kind]}です。",
            "数値の計算には列か数値を、days には日付の列を、and / or / not / if の条件には比較"
            "（[金額] >= 50000 など）を書いてください。",
        )

    # --- reading cells as a kind ----------------------------------------------------------

    def _read(self, node: Node, values: Values, what: str, read: Callable[[Any], Any]) -> list[Any]:
        out: list[Any] = []
        bad: list[int] = []
        for i, cell in enumerate(values.cells):
            if _blank(cell):
                out.append(None)
                continue
            value = read(cell)
            if value is None:
                bad.append(i)
            out.append(value)
        if bad:
            raise self.unreadable(node, values.cells, bad, what)
        return out

    def cells_as(self, node: Node, kind: str) -> list[Any]:
        """The node's values as ``kind`` (number / date / bool), reading raw or text cells."""
        values = self.eval(node)
        if values.kind == kind:
            return values.cells
        reading = _READINGS[kind]
        if values.kind in reading.sources:
            return self._read(node, values, reading.what, reading.read)
        raise self.wrong_kind(node, values, reading.wanted)

    def numbers(self, node: Node) -> list[Decimal | None]:
        return self.cells_as(node, "number")

    def dates(self, node: Node) -> list[dt.date | None]:
        return self.cells_as(node, "date")

    def bools(self, node: Node) -> list[bool | None]:
        return self.cells_as(node, "bool")

    def texts(self, node: Node) -> list[str]:
        values = self.eval(node)
        out = []
        for cell in values.cells:
            cell = json_cell(cell)
            out.append(
                ""
                if cell is None
                else ("true" if cell is True else "false" if cell is False else str(cell))
            )
        return out

    # --- nodes ----------------------------------------------------------------------------

    def eval(self, node: Node) -> Values:
        if isinstance(node, Literal):
            kind = (
                "bool"
                if isinstance(node.value, bool)
                else "number"
                if isinstance(node.value, Decimal)
                else "text"
            )
            return Values(kind, [node.value] * self.rows)
        if isinstance(node, Column):
            if node.name not in self.env:
                raise unknown_column_error(
                    node.name,
                    self.env,
                    field="columns",
                    where=f"{self.where}式「{self.text}」の {node.pos} 文字目: ",
                )
            return self.env[node.name]
        if isinstance(node, Unary):
            if node.op == "not":
                return Values(
                    "bool", [None if b is None else not b for b in self.bools(node.operand)]
                )
            sign = -1 if node.op == "-" else 1
            return Values(
                "number", [None if n is None else sign * n for n in self.numbers(node.operand)]
            )
        if isinstance(node, Binary):
            return self.binary(node)
        return self.call(node)

    def binary(self, node: Binary) -> Values:
        if node.op == "&":
            texts = zip(self.texts(node.left), self.texts(node.right), strict=True)
            return Values("text", [a + b for a, b in texts])
        if node.op in ("and", "or"):
            lb, rb = self.bools(node.left), self.bools(node.right)
            both = node.op == "and"
            return Values(
                "bool",
                [
                    None if a is None or b is None else (a and b) if both else (a or b)
                    for a, b in zip(lb, rb, strict=True)
                ],
            )
        if node.op in _ORDERING:
            return self.compare(node)
        left, right = self.numbers(node.left), self.numbers(node.right)
        out: list[Decimal | None] = []
        zero: list[int] = []
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            if a is None or b is None:
                out.append(None)
            elif node.op == "/" and b == 0:
                zero.append(i)
                out.append(None)
            else:
                out.append(_ARITHMETIC[node.op](a, b))
        if zero and self.zero_division == "error":
            listed = "、".join(self.row_name(i) for i in zero[:MAX_LISTED])
            raise self.error(
                node,
                f"「/」で 0 で割っています: {listed}{' ほか' if len(zero) > MAX_LISTED else ''}。",
                "割る数が 0 の行を table.filter で除くか、if([割る数] = 0, 0, [割られる数] / [割る数]) のように"
                "書くか、0 で割った結果を空欄にするなら zero_division: null を指定してください。",
                rows=[i + 1 for i in zero[:1000]],
            )
        self.zero_divisions += len(zero)
        return Values("number", out)

    def compare(self, node: Binary) -> Values:
        left, right = self.eval(node.left), self.eval(node.right)
        kinds = {self._literal_kind(node.left, left), self._literal_kind(node.right, right)}
        if "number" in kinds:
            mode = "number"
        elif "date" in kinds:
            mode = "date"
        elif "bool" in kinds:
            mode = "bool"
        elif "text" in kinds:
            mode = "text"
        else:  # two columns: as numbers if both read as numbers, else dates, else text
            cells = [c for c in left.cells + right.cells if not _blank(c)]
            if all(_decimal(c) is not None for c in cells):
                mode = "number"
            elif all(parse_date(c) is not None for c in cells):
                mode = "date"
            else:
                mode = "text"
        if mode == "text" and node.op not in ("==", "!="):
            raise self.error(
                node,
                f"文字列は大小（{node.op}）を比べられません。",
                '大小の比較は数値か日付の列で行います。日付は "2025-04-01" のように書きます。',
            )
        readers: dict[str, Callable[[Node], list[Any]]] = {
            "number": self.numbers,
            "date": self.dates,
            "bool": self.bools,
        }
        read = readers.get(mode)
        if read is not None:
            a_cells: list[Any] = read(node.left)
            b_cells: list[Any] = read(node.right)
        else:
            a_cells = [
                None if _blank(c) else normalize_key(c, keep_spaces=True) for c in left.cells
            ]
            b_cells = [
                None if _blank(c) else normalize_key(c, keep_spaces=True) for c in right.cells
            ]
        test = _ORDERING[node.op]
        return Values(
            "bool",
            [
                None if a is None or b is None else bool(test(a, b))
                for a, b in zip(a_cells, b_cells, strict=True)
            ],
        )

    @staticmethod
    def _literal_kind(node: Node, values: Values) -> str:
        """A text literal that reads as an amount or a date is compared as one ("2025-04-01")."""
        if isinstance(node, Literal) and isinstance(node.value, str):
            if _decimal(node.value) is not None:
                return "number"
            if parse_date(node.value) is not None:
                return "date"
        return values.kind

    def call(self, node: Call) -> Values:
        name, args = node.name, node.args
        if name in _ROUNDING:
            digits = (round_digits(args[1]) or 0) if len(args) == 2 else 0
            step = Decimal(1).scaleb(-digits)
            return Values(
                "number",
                [
                    None if n is None else n.quantize(step, rounding=_ROUNDING[name])
                    for n in self.numbers(args[0])
                ],
            )
        if name == "abs":
            return Values("number", [None if n is None else abs(n) for n in self.numbers(args[0])])
        if name in ("min", "max"):
            columns = [self.numbers(a) for a in args]
            pick = min if name == "min" else max
            return Values(
                "number",
                [
                    None if any(v is None for v in row) else pick(row)
                    for row in zip(*columns, strict=True)
                ],
            )
        if name == "days":
            end, start = self.dates(args[0]), self.dates(args[1])
            return Values(
                "number",
                [
                    None if a is None or b is None else Decimal((a - b).days)
                    for a, b in zip(end, start, strict=True)
                ],
            )
        condition = self.bools(args[0])
        then, other = self.eval(args[1]), self.eval(args[2])
        kind = then.kind if then.kind == other.kind else "raw"
        return Values(
            kind,
            [
                None if c is None else (a if c else b)
                for c, a, b in zip(condition, then.cells, other.cells, strict=True)
            ],
        )
