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
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import choice, item_error, positive_int
from keiri_agent.blocks.table.cells import json_cell, parse_amount, parse_date
from keiri_agent.blocks.table.columns import item_column, unknown_column_error
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import Table, columns_of, input_error, table_from
from keiri_agent.errors import BlockError

__all__ = ["KEY_TYPES", "ORDERS", "TableSortBlock"]

ORDERS = ("asc", "desc")
KEY_TYPES = ("auto", "number", "date", "text")
NULLS = ("last", "first")
MAX_LISTED = 10  # cells spelled out in one error message

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
        records = table.records()
        available = columns_of(records)
        for key in keys:
            if records and key.column not in available:
                raise unknown_column_error(
                    key.column, available, field="by", where=f"{key.where}: "
                )
        order = list(range(len(records)))
        used: list[dict[str, str]] = []
        # Stable multi-key sort: sort by the least significant key first.
        sort_values = [_sort_values(records, key, table) for key in keys]
        for key, (kind, values) in reversed(list(zip(keys, sort_values, strict=True))):
            descending = key.order == "desc"
            # Blanks rank after every value in the final order (before them with nulls: first),
            # whichever way the values themselves are ordered.
            blank_rank = (0 if nulls_first else 1) ^ (1 if descending else 0)

            def rank(i: int, values: list[Any] = values, blank_rank: int = blank_rank) -> Any:
                value = values[i]
                return (blank_rank, 0) if value is None else (1 - blank_rank, value)

            order.sort(key=rank, reverse=descending)
            used.insert(0, {"column": key.column, "order": key.order, "as": kind})
        kept = order[:limit] if limit is not None else order
        rows = table.take(kept)
        ctx.log(
            f"表 {len(records)} 行を {'、'.join(_describe(u) for u in used)} で並べ替え、"
            f"{len(rows)} 行を出力しました"
        )
        return {
            "rows": rows,
            "summary": {
                "input_rows": len(records),
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


def _blank(cell: Any) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip()) or json_cell(cell) is None


def _sort_values(
    records: list[dict[str, Any]], key: SortKey, table: Table
) -> tuple[str, list[Any]]:
    """The key's reading (number / date / text) and one sortable value per row (None: blank)."""
    cells = [record.get(key.column) for record in records]
    amounts = [None if _blank(c) else parse_amount(c) for c in cells]
    dates = [None if _blank(c) else parse_date(c) for c in cells]
    filled = [i for i, c in enumerate(cells) if not _blank(c)]
    kind = key.kind
    if kind == "auto":
        if all(amounts[i] is not None for i in filled):
            kind = "number"
        elif all(dates[i] is not None for i in filled):
            kind = "date"
        elif 2 * sum(amounts[i] is not None for i in filled) > len(filled):
            bad = [i for i in filled if amounts[i] is None]
            raise _unreadable(key, cells, bad, "数値", table, mixed=True)
        else:
            kind = "text"
    if kind == "number":
        bad = [i for i in filled if amounts[i] is None]
        if bad:
            raise _unreadable(key, cells, bad, "数値", table)
        return kind, amounts
    if kind == "date":
        bad = [i for i in filled if dates[i] is None]
        if bad:
            raise _unreadable(key, cells, bad, "日付", table)
        return kind, [d.toordinal() if isinstance(d, dt.date) else None for d in dates]
    return kind, [None if _blank(c) else normalize_key(c, keep_spaces=True) for c in cells]


def _unreadable(
    key: SortKey, cells: list[Any], bad: list[int], what: str, table: Table, *, mixed: bool = False
) -> BlockError:
    listed = "、".join(f"{table.where(i)}（{cells[i]!r}）" for i in bad[:MAX_LISTED])
    more = f" ほか {len(bad) - MAX_LISTED} 件" if len(bad) > MAX_LISTED else ""
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
    return input_error(
        message,
        hint,
        field="by",
        column=key.column,
        rows=[i + 1 for i in bad[:1000]],
        positions=[table.position(i) for i in bad[:1000]],
    )
