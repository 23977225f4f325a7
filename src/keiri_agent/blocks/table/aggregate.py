"""``table.aggregate``: group a table and compute totals, counts, means... per group (集計).

``group_by`` names the key columns (none: one grand-total row); ``period`` derives a period
column (日 / 月 / 四半期 / 年, with a fiscal-year start month) from a date column, usable in
``group_by``. Each aggregation is ``{column, func, as}``:

- sum / mean read amounts the way people write them (``¥1,234``, ``1,234円``, ``▲500``); a value
  that is not an amount is an error naming its row and column. Sums are exact (decimal).
- min / max need a column of amounts or a column of dates (dates come back as ISO text).
- count without a column counts rows; with one, non-blank cells. nunique counts distinct
  non-blank values; first / last give the first / last non-blank value in table order.

Blank cells (null, "") are skipped by every function; blank group keys form one group (null).
Rows come out sorted by ``sort_by`` (default: the group keys ascending; numbers before text,
blanks last), with the optional 合計 row last.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeGuard

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import flag, item_error, unique_names
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import (
    amount_problem,
    date_problem,
    json_cell,
    parse_amount,
    parse_date,
)
from keiri_agent.blocks.table.records import (
    column_list,
    input_error,
    optional_columns,
    require_columns,
)
from keiri_agent.errors import BlockError

__all__ = ["FUNCS", "TOTAL_LABEL", "UNITS", "TableAggregateBlock"]

FUNCS = ("sum", "count", "mean", "min", "max", "nunique", "first", "last")
UNITS = ("day", "month", "quarter", "year")
DEFAULT_PERIOD_NAMES = {"day": "日", "month": "月", "quarter": "四半期", "year": "年度"}
# Functions whose result is in the unit of their column (a sum of 千円 is 千円; a count is not).
UNIT_KEEPING = frozenset({"sum", "mean", "min", "max", "first", "last"})
COUNT_NAME = "件数"  # the default name of a count without a column
TOTAL_LABEL = "合計"


@dataclass(frozen=True)
class Aggregation:
    column: str | None
    func: str
    name: str


@dataclass(frozen=True)
class Period:
    column: str
    unit: str
    name: str
    start_month: int


@dataclass(frozen=True)
class Config:
    group_by: list[str]
    aggregations: list[Aggregation]
    period: Period | None
    sort_by: list[tuple[str, bool]]  # (column, descending)
    totals: bool


class TableAggregateBlock(TableBlock[Config]):
    """Returns one row per group of ``table`` with the requested aggregations."""

    def configure(self, inputs: Mapping[str, Any]) -> Config:
        group_by = optional_columns(inputs, "group_by")
        aggregations = _aggregations(inputs.get("aggregations"))
        period = _period(inputs.get("period"))
        names = [*group_by, *(a.name for a in aggregations)]
        unique_names(
            names,
            "aggregations",
            "集計結果の列名 {names} が重複しています。",
            "aggregations の as で別の列名を付けてください（group_by の列名とも重ならないように）。",
        )
        totals = flag(inputs, "totals", False, "true にすると最後に合計行を加えます。")
        return Config(
            group_by, aggregations, period, _sort_by(inputs.get("sort_by"), names), totals
        )

    def compute(self, cfg: Config, tables: list[Table], ctx: BlockContext) -> dict[str, Any]:
        table = tables[0]
        records = table.records()
        if cfg.period is not None:
            require_columns(records, [cfg.period.column], field="period.column", table="table")
            records = _with_period(records, cfg.period, table)
        used = [*cfg.group_by, *(a.column for a in cfg.aggregations if a.column)]
        require_columns(records, used, field="group_by / aggregations", table="table")
        ctx.check_cancelled()
        readers = [_reader(records, a, table) for a in cfg.aggregations]
        groups: dict[tuple[Any, ...], list[int]] = {}
        for index, record in enumerate(records):
            key = tuple(_key(record.get(c)) for c in cfg.group_by)
            groups.setdefault(key, []).append(index)
        if not cfg.group_by and not groups:
            groups[()] = []  # a grand total of an empty table: sums 0, counts 0
        rows = []
        for key, indexes in groups.items():
            row = {c: value for c, (_, value) in zip(cfg.group_by, key, strict=True)}
            for aggregation, read in zip(cfg.aggregations, readers, strict=True):
                row[aggregation.name] = read(indexes)
            rows.append(row)
        rows = _sorted(rows, cfg.sort_by or [(c, False) for c in cfg.group_by])
        if cfg.totals and cfg.group_by:
            total: dict[str, Any] = {c: None for c in cfg.group_by}
            total[cfg.group_by[0]] = TOTAL_LABEL
            everything = list(range(len(records)))
            for aggregation, read in zip(cfg.aggregations, readers, strict=True):
                total[aggregation.name] = read(everything)
            rows.append(total)
        by = "・".join(cfg.group_by) + " ごと" if cfg.group_by else "全体"
        ctx.log(f"{len(records)} 行を{by}に集計し、{len(groups)} 行にしました")
        units = {
            a.name: table.units[a.column]
            for a in cfg.aggregations
            if a.column in table.units and a.func in UNIT_KEEPING
        }
        out = Table.from_records(rows, columns=[*cfg.group_by, *(a.name for a in cfg.aggregations)])
        out = Table(out.frame, units=units)
        return {"rows": out, "summary": {"input_rows": len(records), "groups": len(groups)}}


# --- configuration ---------------------------------------------------------------------------


def _aggregations(value: Any) -> list[Aggregation]:
    hint = (
        "aggregations は {column: 列名, func: 関数, as: 出力の列名} のリストです。"
        f"func に使えるもの: {', '.join(FUNCS)}（count は column を省略すると行数）。"
        "例: [{column: 金額, func: sum, as: 合計金額}, {func: count, as: 件数}]"
    )
    if not isinstance(value, list) or not value:
        raise input_error(
            "aggregations（集計のしかた）が指定されていません。", hint, field="aggregations"
        )
    out = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, Mapping) or set(item) - {"column", "func", "as"}:
            raise item_error(
                "aggregations",
                number,
                f"（{item!r}）の形が正しくありません。",
                hint,
            )
        column, func, name = item.get("column"), item.get("func"), item.get("as")
        if func not in FUNCS:
            raise item_error(
                "aggregations",
                number,
                f"の関数 {func!r} は使えません。",
                hint,
            )
        if (column is None and func != "count") or (column is not None and not _name(column)):
            raise item_error(
                "aggregations",
                number,
                f"（func: {func}）に集計する列（column）がありません。",
                hint,
            )
        if name is not None and not _name(name):
            raise item_error(
                "aggregations",
                number,
                f"の as {name!r} は列名になりません。",
                hint,
            )
        column = column.strip() if column is not None else None
        default = f"{column}_{func}" if column else COUNT_NAME
        out.append(Aggregation(column, str(func), name.strip() if name else default))
    return out


def _period(value: Any) -> Period | None:
    if value is None:
        return None
    hint = (
        "period は {column: 日付の列, unit: day / month / quarter / year, as: 出力の列名,"
        " start_month: 年度の開始月} の形です。例: {column: 売上日, unit: month, as: 月}"
    )
    if not isinstance(value, Mapping) or set(value) - {"column", "unit", "as", "start_month"}:
        raise input_error(f"period の形が正しくありません（{value!r}）。", hint, field="period")
    column, unit, start = value.get("column"), value.get("unit"), value.get("start_month", 1)
    name = value.get("as") or DEFAULT_PERIOD_NAMES.get(str(unit), "")
    if not _name(column) or unit not in UNITS or not _name(name):
        raise input_error(
            f"period の column / unit / as を確認してください（{value!r}）。", hint, field="period"
        )
    if isinstance(start, bool) or not isinstance(start, int) or not 1 <= start <= 12:
        raise input_error(
            f"period.start_month {start!r} は 1〜12 の月ではありません。",
            "4 月始まりの年度なら start_month: 4 です（quarter と year に効きます）。",
            field="period.start_month",
        )
    return Period(column.strip(), str(unit), name.strip(), start)


def _sort_by(value: Any, columns: list[str]) -> list[tuple[str, bool]]:
    if value in (None, []):
        return []
    out = []
    for item in column_list(value, field="sort_by"):
        desc = item.startswith("-")
        name = item[1:].strip() if desc else item
        if name not in columns:
            raise input_error(
                f"sort_by の列「{name}」は集計結果にありません。",
                f"並べ替えに使える列: {', '.join(columns)}（降順は先頭に - を付けます。例: -合計金額）",
                field="sort_by",
                column=name,
            )
        out.append((name, desc))
    return out


def _name(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


# --- reading values --------------------------------------------------------------------------


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _key(value: Any) -> tuple[bool, Any]:
    """A group key part: blanks are one group (None); True and 1 stay apart."""
    cell = None if _blank(value) else json_cell(value)
    return (isinstance(cell, bool), cell)


def _with_period(
    records: list[dict[str, Any]], period: Period, table: Table
) -> list[dict[str, Any]]:
    existing = {k for r in records for k in r}
    if period.name in existing and period.name != period.column:
        raise input_error(
            f"period の出力列「{period.name}」は表に既にあります。",
            "period.as に表にない列名（例: 売上月）を指定してください。",
            field="period.as",
        )
    out = []
    for index, record in enumerate(records):
        day = parse_date(record.get(period.column))
        if day is None:
            cell = record.get(period.column)
            why = "空欄" if _blank(cell) else f"値 {cell!r}、{date_problem(str(cell))}"
            raise input_error(
                f"{table.where(index, period.column)}（{why}）を日付として読めないため、"
                "期間を決められません。",
                "日付は 2025-01-31、2025/1/31、2025年1月31日、令和7年1月31日、20250131 のように"
                "書かれている必要があります。日付のない行は table.filter（not_null）で除いてから"
                "集計してください。",
                field="period.column",
                row=index + 1,
                position=table.position(index),
                column=period.column,
            )
        out.append({**record, period.name: _period_label(day, period)})
    return out


def _period_label(day: dt.date, period: Period) -> str:
    if period.unit == "day":
        return day.isoformat()
    if period.unit == "month":
        return f"{day.year:04d}-{day.month:02d}"
    # Fiscal year named after the calendar year it starts in (2025年度 = 2025-04..2026-03).
    shifted = day.month - period.start_month
    year = day.year + (shifted // 12 if shifted < 0 else 0)
    if period.unit == "year":
        return f"{year:04d}"
    return f"{year:04d}-Q{(shifted % 12) // 3 + 1}"


def _reader(
    records: list[dict[str, Any]], aggregation: Aggregation, table: Table
) -> Callable[[list[int]], Any]:
    """The function computing ``aggregation`` over a group's row indexes (values read once)."""
    column, func = aggregation.column, aggregation.func
    if column is None:
        return len
    cells = [None if _blank(r.get(column)) else r.get(column) for r in records]
    if func == "count":
        return lambda rows: sum(cells[i] is not None for i in rows)
    if func in ("first", "last"):
        step = 1 if func == "first" else -1
        return lambda rows: next(
            (json_cell(cells[i]) for i in rows[::step] if cells[i] is not None), None
        )
    if func == "nunique":
        return lambda rows: len({_key(cells[i]) for i in rows if cells[i] is not None})
    if func in ("sum", "mean"):
        amounts = [_amount(cell, index, column, func, table) for index, cell in enumerate(cells)]
        return lambda rows: _sum_or_mean([amounts[i] for i in rows], func)
    values, dates = _orderable(cells, column, func, table)
    pick = min if func == "min" else max

    def extreme(rows: list[int]) -> Any:
        present = [v for i in rows if (v := values[i]) is not None]
        if not present:
            return None
        found = pick(present)
        return dt.date.fromordinal(int(found)).isoformat() if dates else json_cell(found)

    return extreme


def _amount(cell: Any, index: int, column: str, func: str, table: Table) -> Decimal | None:
    if cell is None:
        return None
    amount = parse_amount(cell)
    if amount is None:
        raise _not_a(table, index, column, cell, func, "金額（数値）")
    return Decimal(repr(amount))


def _sum_or_mean(values: list[Decimal | None], func: str) -> Any:
    present = [v for v in values if v is not None]
    total = sum(present, Decimal(0))
    if func == "sum":
        return json_cell(total)
    return json_cell(float(total / len(present))) if present else None


def _orderable(
    cells: list[Any], column: str, func: str, table: Table
) -> tuple[list[float | None], bool]:
    """min/max values as numbers (dates as ordinals), and whether they are dates.

    Every non-blank cell must be an amount, or every one a date (as the first one is).
    """
    first = next(((i, c) for i, c in enumerate(cells) if c is not None), None)
    if first is None:
        return [None] * len(cells), False
    dates = parse_amount(first[1]) is None
    if dates and parse_date(first[1]) is None:
        raise _not_a(table, first[0], column, first[1], func, "金額か日付")
    out: list[float | None] = []
    for index, cell in enumerate(cells):
        value = None if cell is None else _ordinal(cell) if dates else parse_amount(cell)
        if cell is not None and value is None:
            raise _not_a(table, index, column, cell, func, "日付" if dates else "金額")
        out.append(value)
    return out, dates


def _ordinal(cell: Any) -> float | None:
    day = parse_date(cell)
    return None if day is None else float(day.toordinal())


def _not_a(table: Table, index: int, column: str, cell: Any, func: str, kind: str) -> BlockError:
    text = str(cell)
    why = date_problem(text) if kind == "日付" else amount_problem(text)
    return input_error(
        f"{table.where(index, column)}の値 {cell!r} を{kind}として読めないため（{why}）、"
        f"{func} を計算できません。",
        "元の表の値を直すか、table.filter で対象外の行を除いてから集計してください"
        "（文字列の列には count / nunique / first / last を使います）。",
        field="aggregations",
        row=index + 1,
        position=table.position(index),
        column=column,
        value=repr(cell)[:100],
    )


# --- ordering --------------------------------------------------------------------------------


def _sorted(rows: list[dict[str, Any]], order: list[tuple[str, bool]]) -> list[dict[str, Any]]:
    """Stable multi-column sort: numbers before text, blanks last in either direction."""
    out = list(rows)
    for column, desc in reversed(order):
        out.sort(key=_rank_of(column, desc), reverse=desc)
    return out


def _rank_of(column: str, desc: bool) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    return lambda row: _rank(row.get(column), desc)


def _rank(value: Any, desc: bool) -> tuple[Any, ...]:
    if value is None:
        return (-1,) if desc else (3,)
    if isinstance(value, int | float):
        return (0, value)
    return (1, str(value))
