"""``table.sort``: order a table by one or more columns, optionally keeping the first N rows.

Each key is ``{column, order: asc|desc, as: auto|number|date|text}``. With ``as: auto`` (the
default) a column whose every non-blank cell reads as an amount (``¥1,234``, ``1,234円``, ``▲500``)
is sorted by value, else one whose every non-blank cell reads as a date (``2025/1/31``,
``令和7年1月31日``) by date, else as text (NFKC, casefold, the table blocks' normalization). A
column mostly of amounts with some other text (``未定``) is not guessed: the error names the
rows and says to write ``as: text`` or fix the cells (codes such as ``010`` are not amounts, so
a code column sorts as text). ``as: number`` / ``as: date`` force the reading
and report every cell that cannot be read. Blank cells go last (``nulls: first`` puts them
first), whatever the order. The sort is stable: rows with equal keys keep their input order,
so ``limit`` (top N, e.g. 売上上位 10 社) is reproducible.

Keys are read by columns (:class:`~keiri_agent.blocks.table.readings.ColumnReading`) and the
rows ordered at once by ``np.lexsort``; the sorted rows keep their file positions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import choice, item_error, positive_int
from keiri_agent.blocks.table.columns import item_column, unknown_column_error
from keiri_agent.blocks.table.readings import ColumnReading
from keiri_agent.blocks.table.records import Table, table_from
from keiri_agent.errors import BlockError, input_error

__all__ = ["KEY_TYPES", "ORDERS", "TableSortBlock"]

ORDERS = ("asc", "desc")
KEY_TYPES = ("auto", "number", "date", "text")
NULLS = ("last", "first")
MAX_LISTED = 10  # cells spelled out in one error message
MAX_DETAILS = 1000  # rows kept in the error's details

_HINT = (
    "by は {column: 列名, order: asc（昇順）| desc（降順）} のリストです（先頭が優先）。"
    '例: [{column: 売上金額, order: desc}, {column: 取引先}]。1 列なら by: "売上金額" でも書けます。'
)


@dataclass(frozen=True)
class SortKey:
    number: int  # 1-based position in ``by``
    column: str
    order: str
    kind: str  # as written: auto / number / date / text

    @property
    def where(self) -> str:
        return f"by の {self.number} 番目（列「{self.column}」）"


class TableSortBlock(ProcessingBlock):
    """Returns ``table`` sorted by ``by`` (stable), cut to ``limit`` rows when given."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _keys(inputs.get("by"))
        _limit(inputs.get("limit"))
        choice(inputs, "nulls", NULLS)
        table_from(inputs.get("table"), field="table")

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        keys = _keys(inputs.get("by"))
        limit = _limit(inputs.get("limit"))
        nulls_first = choice(inputs, "nulls", NULLS) == "first"
        table = table_from(inputs.get("table"), field="table")
        size = len(table)
        for key in keys:
            if size and key.column not in table.columns:
                raise unknown_column_error(
                    key.column, table.columns, field="by", where=f"{key.where}: "
                )
        used: list[dict[str, str]] = []
        ranks: list[np.ndarray] = []  # per key, most significant first: blanks, then values
        zone = ctx.zone
        for key in keys:
            kind, values, blank = _sort_values(table, key, zone)
            used.append({"column": key.column, "order": key.order, "as": kind})
            # Blanks after every value (before them with nulls: first), whichever the order.
            ranks += [~blank if nulls_first else blank, -values if key.order == "desc" else values]
            ctx.check_cancelled()
        # np.lexsort sorts by its last array first and keeps ties in input order (stable).
        order = np.lexsort(ranks[::-1])
        kept = order[:limit] if limit is not None else order
        rows = table.take(kept)
        ctx.log(
            f"表 {size} 行を {'、'.join(_describe(u) for u in used)} で並べ替え、"
            f"{len(rows)} 行を出力しました"
        )
        return {
            "rows": rows,
            "summary": {
                "input_rows": size,
                "output_rows": len(rows),
                "keys": used,
            },
        }


def _describe(used: Mapping[str, str]) -> str:
    order = "降順" if used["order"] == "desc" else "昇順"
    kind = {"number": "数値", "date": "日付", "text": "文字列"}[used["as"]]
    return f"「{used['column']}」の{order}（{kind}）"


# --- inputs ----------------------------------------------------------------------------------


def _keys(value: Any) -> list[SortKey]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise input_error("by（並べ替えの列）が指定されていません。", _HINT, field="by")
    return [_key(number, item) for number, item in enumerate(items, start=1)]


def _key(number: int, item: Any) -> SortKey:
    if isinstance(item, str):
        item = {"column": item}
    problem = f"が列名でも {{column, order}} でもありません（{item!r}）。"
    keys = ("column", "order", "as")
    column = item_column(item, number, "by", keys, _HINT, not_mapping=problem)
    order = item.get("order") or "asc"
    kind = item.get("as") or "auto"
    if order not in ORDERS or kind not in KEY_TYPES:
        raise item_error(
            "by",
            number,
            f"（列「{column}」）の order {order!r} または as {kind!r} は使えません。",
            "order は asc（昇順・小さい順）か desc（降順・大きい順）、"
            "as は auto / number / date / text のいずれかです。",
        )
    return SortKey(number, column.strip(), str(order), str(kind))


def _limit(value: Any) -> int | None:
    if value is None:
        return None
    return positive_int(value, "limit", "残す行数（上位 N 件の N）")


# --- values ----------------------------------------------------------------------------------


def _sort_values(table: Table, key: SortKey, zone: dt.tzinfo) -> tuple[str, np.ndarray, np.ndarray]:
    """The key's reading (number / date / text), one sortable value per row (0 for blanks) and
    the blank cells."""
    frame = table.frame
    column = frame[key.column] if key.column in frame else pd.Series([], dtype=object)
    reading = ColumnReading(column, zone)
    blank = reading.blank
    filled = ~blank
    kind = key.kind
    if kind == "auto":
        if reading.all_amounts():
            kind = "number"
        elif reading.all_dates():
            kind = "date"
        elif reading.mostly_amounts():
            not_amounts = filled & np.isnan(reading.amounts)
            raise _unreadable(key, reading, not_amounts, "数値", table, mixed=True)
        else:
            kind = "text"
    if kind in ("number", "date"):
        values = reading.amounts if kind == "number" else reading.days
        bad = filled & np.isnan(values)
        if bad.any():
            raise _unreadable(key, reading, bad, "数値" if kind == "number" else "日付", table)
        return kind, np.where(blank, 0.0, values), blank
    slots, texts = reading.texts(normalize=True)
    # Equal texts share a rank (Ａ社 and a社 tie and keep their input order).
    ranks = np.unique(texts, return_inverse=True)[1].reshape(-1)
    return kind, np.where(blank, 0, ranks[slots]), blank


def _unreadable(
    key: SortKey,
    reading: ColumnReading,
    bad: np.ndarray,
    what: str,
    table: Table,
    *,
    mixed: bool = False,
) -> BlockError:
    rows = np.flatnonzero(bad)
    listed = "、".join(
        f"{table.where(i)}（{reading.cell(i)!r}）" for i in rows[:MAX_LISTED].tolist()
    )
    more = f" ほか {len(rows) - MAX_LISTED} 件" if len(rows) > MAX_LISTED else ""
    if mixed:
        message = (
            f"{key.where}: 数値の列に数値として読めない値があります: {listed}{more}。"
            "数値として並べるか文字列として並べるかを推測しません。"
        )
        hint = (
            "値を数値（例 110000）に直すか空欄にしてください。"
            "文字列の順（1, 10, 2 の順）で並べてよければ by に as: text を書きます。"
        )
    else:
        message = f"{key.where}: {what}として読めない値があります: {listed}{more}。"
        hint = f"値を{what}に直すか空欄にするか、as を auto / text にしてください。"
    shown = rows[:MAX_DETAILS].tolist()
    return input_error(
        message,
        hint,
        field="by",
        column=key.column,
        rows=[i + 1 for i in shown],
        positions=[table.position(i) for i in shown],
    )
