"""``table.filter``: keep the rows of a table that meet conditions ``{column, op, value}``.

Values are compared the way a person reads them: when the cell and the value both read as
amounts (``¥1,234`` = 1234) they are compared as numbers, else when both read as dates
(``2025/1/31`` = ``2025-01-31``) as dates, else as text (eq / ne / in / not_in). With
``normalize`` (the default) text is compared after NFKC and casefold, so ``Ａ社`` = ``a社``.
Ordering operators (gt, ge, lt, le, between) need a number or a date on both sides: a cell that
is neither (blank, ``未定``) is an error naming its row and column, unless the plan says
``on_incomparable: skip`` (the condition is then simply not met). Kept rows stay in their
original order, with their file positions.

Conditions are evaluated on columns, each read once per distinct value
(:class:`~keiri_agent.blocks.table.readings.ColumnReading`), never row by row.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import choice, flag, item_error
from keiri_agent.blocks.table.cells import parse_amount, parse_date, two_readings
from keiri_agent.blocks.table.columns import item_column
from keiri_agent.blocks.table.readings import ColumnReading, cell_text
from keiri_agent.blocks.table.records import Table, require_columns, table_from
from keiri_agent.errors import BlockError, input_error, reason_of

__all__ = ["MATCH_MODES", "OPS", "TableFilterBlock"]

OPS = (
    "eq",
    "ne",
    "gt",
    "ge",
    "lt",
    "le",
    "in",
    "not_in",
    "contains",
    "not_contains",
    "startswith",
    "regex",
    "is_null",
    "not_null",
    "between",
)
ORDER_OPS = frozenset({"gt", "ge", "lt", "le", "between"})
LIST_OPS = frozenset({"in", "not_in"})
TEXT_OPS = frozenset({"contains", "not_contains", "startswith", "regex"})
NULL_OPS = frozenset({"is_null", "not_null"})
MATCH_MODES = ("all", "any")
ON_INCOMPARABLE = ("error", "skip")
MAX_LISTED = 10  # rows spelled out in one error message
MAX_DETAILS = 1000  # problems kept in the error's details

# A value as compared: ("amount", 1234.0), ("date", date(2025, 1, 31)) or None (text only).
Typed = tuple[str, float | dt.date]


@dataclass(frozen=True)
class Condition:
    number: int  # 1-based position in ``conditions``
    column: str
    op: str
    value: Any
    texts: tuple[str, ...]  # the value(s) as text, for eq/ne/in/not_in/contains/startswith
    typed: tuple[Typed | None, ...]  # the value(s) as amount or date
    pattern: re.Pattern[str] | None

    @property
    def where(self) -> str:
        return f"conditions の {self.number} 番目（列「{self.column}」、op: {self.op}）"


class TableFilterBlock(ProcessingBlock):
    """Returns the rows of ``table`` that meet ``conditions`` (all or any of them)."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _conditions(inputs.get("conditions"), flag(inputs, "normalize", True))
        choice(inputs, "match", MATCH_MODES)
        choice(inputs, "on_incomparable", ON_INCOMPARABLE)
        table_from(inputs.get("table"), field="table")

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        normalize = flag(inputs, "normalize", True)
        conditions = _conditions(inputs.get("conditions"), normalize, ctx.zone)
        match = choice(inputs, "match", MATCH_MODES)
        on_incomparable = choice(inputs, "on_incomparable", ON_INCOMPARABLE)
        table = table_from(inputs.get("table"), field="table")
        require_columns(table, [c.column for c in conditions], field="conditions", table="table")
        size = len(table)
        keep, flagged = _select(table, conditions, match, normalize, ctx)
        incomparable = np.zeros(size, dtype=bool)
        for _, _, cells in flagged:
            incomparable |= cells
        incomparable_rows = int(incomparable.sum())
        if flagged and on_incomparable == "error":
            raise _incomparable_error(_problems(table, flagged), incomparable_rows)
        kept = np.flatnonzero(keep)
        ctx.log(
            f"表 {size} 行のうち {len(kept)} 行が条件に合いました"
            f"（除外 {size - len(kept)} 行、比較できない値のある行 {incomparable_rows} 行）"
        )
        return {
            "rows": table.take(kept),
            "summary": {
                "input_rows": size,
                "output_rows": len(kept),
                "excluded_rows": size - len(kept),
                "incomparable_rows": incomparable_rows,
            },
        }


# --- conditions ------------------------------------------------------------------------------

_HINT = (
    "conditions は {column: 列名, op: 演算子, value: 値} のリストです。"
    f"op に使えるもの: {', '.join(OPS)}。"
    "例: [{column: 金額, op: ge, value: 100000}, {column: 取引先, op: contains, value: 商事}]"
)


def _conditions(value: Any, normalize: bool, zone: dt.tzinfo | None = None) -> list[Condition]:
    """The checked conditions; a date value with a UTC offset is on its day in ``zone``."""
    if not isinstance(value, list) or not value:
        raise input_error(
            "conditions（絞り込み条件）が指定されていません。", _HINT, field="conditions"
        )
    return [_condition(number, item, normalize, zone) for number, item in enumerate(value, start=1)]


def _condition(number: int, item: Any, normalize: bool, zone: dt.tzinfo | None) -> Condition:
    problem = f"がオブジェクトではありません（{item!r}）。"
    keys = ("column", "op", "value")
    column = item_column(item, number, "conditions", keys, _HINT, not_mapping=problem)
    op, value = item.get("op"), item.get("value")
    if op not in OPS:
        raise item_error(
            "conditions",
            number,
            f"（列「{column}」）の演算子 {op!r} は使えません。",
            f"op には {', '.join(OPS)} のいずれかを指定してください"
            "（= は eq、>= は ge、< は lt のように書きます）。",
            op=repr(op),
        )
    base = Condition(number, column.strip(), str(op), value, (), (), None)
    values = _values(base)
    pattern = _pattern(base, normalize) if op == "regex" else None
    typed = tuple(_typed(v, zone) for v in values)
    if op in ORDER_OPS:
        _check_order(base, values, typed)
    texts = tuple(cell_text(v, normalize) for v in values)
    return Condition(number, base.column, base.op, value, texts, typed, pattern)


def _values(c: Condition) -> list[Any]:
    """The condition's value(s) as a list, after checking their shape for the operator."""
    scalar = (str, int, float, bool, type(None))
    if c.op in NULL_OPS:
        if c.value is not None:
            raise _bad_value(c, f"{c.op} は値を取りません（value を削除してください）。")
        return []
    if c.op in LIST_OPS or c.op == "between":
        size_ok = len(c.value) == 2 if c.op == "between" and isinstance(c.value, list) else True
        if (
            not isinstance(c.value, list)
            or not c.value
            or not size_ok
            or not all(isinstance(v, scalar) for v in c.value)
        ):
            shape = (
                "[下限, 上限]（両端を含む）"
                if c.op == "between"
                else "値のリスト（例: [A社, B社]）"
            )
            raise _bad_value(c, f"{c.op} の value は {shape} で指定してください。")
        return list(c.value)
    if (
        c.value is None
        or not isinstance(c.value, scalar)
        or (c.op in TEXT_OPS and isinstance(c.value, bool))
    ):
        raise _bad_value(c, f"{c.op} の value には文字列か数値を 1 つ指定してください。")
    return [c.value]


def _check_order(c: Condition, values: list[Any], typed: tuple[Typed | None, ...]) -> None:
    if any(t is None for t in typed):
        # 02/03/2026: a date in two orders, which the value alone cannot tell.
        said = [two_readings(v) for v, t in zip(values, typed, strict=True) if t is None]
        why = next((f"（{w}）" for w in said if w is not None), "")
        raise _bad_value(
            c,
            f"{c.op} で比べる value {values!r} が数値でも日付でもありません{why}。",
            "大小の比較には 100000 や 2025-01-31 のような数値か日付を指定してください。"
            "文字列で絞り込むには eq、contains、startswith、regex を使います。",
        )
    if c.op == "between":
        low, high = typed
        assert low is not None
        assert high is not None
        if low[0] != high[0]:
            raise _bad_value(
                c, "between の下限と上限は、両方とも数値か、両方とも日付にしてください。"
            )
        if _order(low) > _order(high):
            raise _bad_value(
                c, f"between の下限 {values[0]!r} が上限 {values[1]!r} より大きくなっています。"
            )


def _pattern(c: Condition, normalize: bool) -> re.Pattern[str]:
    try:
        return re.compile(str(c.value), re.IGNORECASE if normalize else 0)
    except re.error as exc:
        raise _bad_value(c, f"正規表現 {c.value!r} が不正です（{reason_of(exc)}）。") from exc


def _bad_value(c: Condition, problem: str, hint: str | None = None) -> BlockError:
    return input_error(
        f"{c.where}: {problem}",
        hint or _HINT,
        field="conditions",
        index=c.number,
        column=c.column,
        op=c.op,
    )


# --- evaluation ------------------------------------------------------------------------------

# A condition with the cells it could not compare (ordering operators), one flag per row.
Flagged = tuple[Condition, ColumnReading, np.ndarray]


def _select(
    table: Table, conditions: list[Condition], match: str, normalize: bool, ctx: BlockContext
) -> tuple[np.ndarray, list[Flagged]]:
    """The rows to keep (one flag per row) and the conditions that met incomparable cells.
    Each column is read once, whatever the number of conditions on it."""
    size = len(table)
    if not size:  # an empty table may lack the columns
        return np.zeros(0, dtype=bool), []
    readings: dict[str, ColumnReading] = {}
    zone = ctx.zone
    results: list[np.ndarray] = []
    flagged: list[Flagged] = []
    for condition in conditions:
        reading = readings.get(condition.column)
        if reading is None:
            column = table.frame[condition.column]
            reading = readings[condition.column] = ColumnReading(column, zone)
        met, incomparable = _evaluate(reading, condition, normalize)
        results.append(met)
        if incomparable is not None and incomparable.any():
            flagged.append((condition, reading, incomparable))
        ctx.check_cancelled()
    combine = np.logical_and if match == "all" else np.logical_or
    return combine.reduce(results), flagged


def _evaluate(
    reading: ColumnReading, c: Condition, normalize: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """Which rows meet ``c``, and (ordering operators) which cells cannot be compared."""
    if c.op in NULL_OPS:
        return (reading.blank if c.op == "is_null" else ~reading.blank), None
    if c.op in ORDER_OPS:
        typed = c.typed[0]
        assert typed is not None  # checked with the conditions
        values = _values_of_kind(reading, typed[0])
        comparable = ~np.isnan(values)
        return comparable & _ordered(np.where(comparable, values, 0.0), c), ~comparable
    if c.op in LIST_OPS or c.op in ("eq", "ne"):
        found = np.zeros(len(reading.column), dtype=bool)
        for text, typed in zip(c.texts, c.typed, strict=True):
            found |= _equal(reading, text, typed, normalize)
        return (found if c.op in ("eq", "in") else ~found), None
    if c.op == "regex":
        pattern = c.pattern
        assert pattern is not None
        return reading.text_test(normalize, lambda t: pattern.search(t) is not None), None
    wanted = c.texts[0]
    if c.op == "startswith":
        return reading.text_test(normalize, lambda t: t.startswith(wanted)), None
    contained = reading.text_test(normalize, lambda t: wanted in t)
    return (contained if c.op == "contains" else ~contained), None


def _values_of_kind(reading: ColumnReading, kind: str) -> np.ndarray:
    """Each cell's value when it reads as ``kind`` (a cell is an amount before it is a date:
    ``20250131`` is the amount), NaN where it does not."""
    if kind == "amount":
        return reading.amounts
    return np.where(np.isnan(reading.amounts), reading.days, np.nan)


def _ordered(values: np.ndarray, c: Condition) -> np.ndarray:
    bounds = [_order(t) for t in c.typed if t is not None]
    if c.op == "between":
        return (values >= bounds[0]) & (values <= bounds[1])
    target = bounds[0]
    compare = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal}
    return np.asarray(compare[c.op](values, target), dtype=bool)


def _equal(reading: ColumnReading, text: str, typed: Typed | None, normalize: bool) -> np.ndarray:
    """Cells equal to one value: as values where both read as the same kind, else as text."""
    if typed is None:
        return reading.text_test(normalize, lambda t: t == text)
    values = _values_of_kind(reading, typed[0])
    same_kind = ~np.isnan(values)
    by_text = reading.text_test(normalize, lambda t: t == text, rows=~same_kind)
    return np.where(same_kind, values == _order(typed), by_text)


def _typed(value: Any, zone: dt.tzinfo | None) -> Typed | None:
    amount = parse_amount(value)
    if amount is not None:
        return ("amount", amount)
    day = parse_date(value, zone)
    return ("date", day) if day is not None else None


def _order(typed: Typed) -> float:
    value = typed[1]
    return float(value.toordinal()) if isinstance(value, dt.date) else value


def _problems(table: Table, flagged: list[Flagged]) -> list[dict[str, Any]]:
    """The first MAX_DETAILS incomparable cells, row by row (conditions in order in a row)."""
    cells = [
        (int(row), c.number, c, reading)
        for c, reading, incomparable in flagged
        for row in np.flatnonzero(incomparable)[:MAX_DETAILS]
    ]
    cells.sort(key=lambda cell: cell[:2])
    return [
        _problem(table, row, c, reading.cell(row)) for row, _, c, reading in cells[:MAX_DETAILS]
    ]


def _problem(table: Table, index: int, c: Condition, cell: Any) -> dict[str, Any]:
    blank = cell is None or (isinstance(cell, str) and not cell.strip())
    return {
        "row": index + 1,
        "position": table.position(index),
        "where": table.where(index, c.column),
        "column": c.column,
        "condition": c.number,
        "op": c.op,
        "value": "空欄" if blank else repr(cell)[:100],
        "expected": "数値" if c.typed and c.typed[0] and c.typed[0][0] == "amount" else "日付",
    }


def _incomparable_error(problems: list[dict[str, Any]], rows: int) -> BlockError:
    listed = "、".join(
        f"{p['where']}（値: {p['value']}、{p['expected']}として比較）"
        for p in problems[:MAX_LISTED]
    )
    more = "、ほか" if len(problems) > MAX_LISTED else ""
    return input_error(
        f"{rows} 行に大小を比較できない値があります: {listed}{more}",
        "元の表の値を数値（例 110000）や日付（例 2025-01-31）に直してください。"
        "空欄などの行を条件に合わないものとして除くなら on_incomparable: skip を指定します。",
        problems=problems,
    )


# --- options ---------------------------------------------------------------------------------
