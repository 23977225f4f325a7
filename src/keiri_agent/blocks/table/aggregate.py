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
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import flag, item_error, unique_names
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import amount_problem, column_date_problem, json_cell
from keiri_agent.blocks.table.grouping import (
    Groups,
    Unreadable,
    aggregate_column,
    group_codes,
    period_labels,
)
from keiri_agent.blocks.table.records import (
    column_list,
    optional_columns,
    optional_mapping,
    require_columns,
)
from keiri_agent.documents.table_types import rate_cells
from keiri_agent.errors import BlockError, input_error

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
        frame = table.frame
        zone = ctx.zone
        extra: dict[str, pd.Series] = {}  # the period column, beside the table (no copy)
        if cfg.period is not None:
            require_columns(table, [cfg.period.column], field="period.column", table="table")
            extra[cfg.period.name] = _period_column(table, cfg.period, zone)
        used = [*cfg.group_by, *(a.column for a in cfg.aggregations if a.column)]
        _require(table, extra, used)
        ctx.check_cancelled()

        def column(name: str) -> pd.Series:
            if name in extra:
                return extra[name]
            if name not in frame and not len(frame):  # an empty table has no columns
                return pd.Series([], dtype=object)
            return frame[name]

        keys = pd.DataFrame({c: column(c) for c in cfg.group_by}, index=frame.index)
        groups = group_codes(keys, cfg.group_by)
        rows = [dict(zip(cfg.group_by, key, strict=True)) for key in groups.keys]
        for aggregation in cfg.aggregations:
            values = _aggregate(table, column, aggregation, groups, zone)
            for row, value in zip(rows, values, strict=True):
                row[aggregation.name] = value
        if not len(table) and cfg.group_by:
            rows = []  # no rows, no groups (a grand total of nothing is still one row)
        rows = _sorted(rows, cfg.sort_by or [(c, False) for c in cfg.group_by])
        if cfg.totals and cfg.group_by:
            total: dict[str, Any] = {c: None for c in cfg.group_by}
            total[cfg.group_by[0]] = TOTAL_LABEL
            everything = Groups(np.zeros(len(table), dtype=np.int64), [()])
            for aggregation in cfg.aggregations:
                (value,) = _aggregate(table, column, aggregation, everything, zone)
                total[aggregation.name] = value
            rows.append(total)
        count = len(rows) - (1 if cfg.totals and cfg.group_by else 0)
        by = "・".join(cfg.group_by) + " ごと" if cfg.group_by else "全体"
        ctx.log(f"{len(table):,} 行を{by}に集計し、{count:,} 行にしました")
        units = {
            a.name: table.units[a.column]
            for a in cfg.aggregations
            if a.column in table.units and a.func in UNIT_KEEPING
        }
        out = Table.from_records(rows, columns=[*cfg.group_by, *(a.name for a in cfg.aggregations)])
        return {
            "rows": Table(out.frame, units=units),
            "summary": {"input_rows": len(table), "groups": count},
        }


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


def _period(given: Any) -> Period | None:
    hint = (
        "period は {column: 日付の列, unit: day / month / quarter / year, as: 出力の列名,"
        " start_month: 年度の開始月} の形です。例: {column: 売上日, unit: month, as: 月}"
    )
    keys = {"column", "unit", "as", "start_month"}
    value = optional_mapping(given, field="period", keys=keys, hint=hint)
    if value is None:
        return None
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


def _require(table: Table, extra: Mapping[str, pd.Series], used: list[str]) -> None:
    if not len(table):
        return
    available = [*table.columns, *extra]
    missing = [c for c in used if c not in available]
    if missing:
        raise input_error(
            f"table に列 {', '.join(missing)} がありません（group_by / aggregations）。",
            "group_by / aggregations には table にある列名を指定してください。"
            f"使える列: {', '.join(available) or 'なし'}",
            field="group_by / aggregations",
            missing=missing,
            available=available,
        )


def _period_column(table: Table, period: Period, zone: dt.tzinfo) -> pd.Series:
    if period.name in table.columns and period.name != period.column:
        raise input_error(
            f"period の出力列「{period.name}」は表に既にあります。",
            "period.as に表にない列名（例: 売上月）を指定してください。",
            field="period.as",
        )
    cells = table.frame[period.column]
    labels, bad = period_labels(cells, period.unit, period.start_month, zone)
    if bad is None:
        return labels
    cell = json_cell(cells.iloc[bad])
    blank = cell is None or (isinstance(cell, str) and not cell.strip())
    why = "空欄" if blank else f"値 {cell!r}、{column_date_problem(cell, cells)}"
    raise input_error(
        f"{table.where(bad, period.column)}（{why}）を日付として読めないため、期間を決められません。",
        "日付は 2025-01-31、2025/1/31、2025年1月31日、令和7年1月31日、20250131 のように"
        "書かれている必要があります。日付のない行は table.filter（not_null）で除いてから"
        "集計してください。",
        field="period.column",
        row=bad + 1,
        position=table.position(bad),
        column=period.column,
    )


def _aggregate(
    table: Table,
    column: Callable[[str], pd.Series],
    aggregation: Aggregation,
    groups: Groups,
    zone: dt.tzinfo,
) -> list[Any]:
    name = aggregation.column
    try:
        cells = None if name is None else column(name)
        return aggregate_column(cells, aggregation.func, groups, zone)
    except Unreadable as exc:
        assert name is not None
        cell = json_cell(column(name).iloc[exc.row])
        rate = None if exc.kind == "日付" else _rate_cell(column(name))
        if rate is not None:
            raise _not_a(table, rate[0], name, rate[1], aggregation.func, rate[2]) from None
        read = column(name)
        why = column_date_problem(cell, read) if exc.kind == "日付" else amount_problem(str(cell))
        said = f"{exc.kind}として読めないため（{why}）"
        raise _not_a(table, exc.row, name, cell, aggregation.func, said) from None


def _rate_cell(cells: pd.Series) -> tuple[int, Any, str] | None:
    """In a rate column (``rate_cells``, as ``file.read_table`` decides it: such a column with
    a cell that is no rate is kept as written), the first such cell, as (row, cell, what is
    said of it); the first percentage when every cell is one. None for any other column."""
    texts = pd.Series([json_cell(v) for v in cells.tolist()], dtype=object)
    filled = texts[texts.map(lambda t: t is not None and bool(str(t).strip())).astype(bool)]
    rates = rate_cells(filled)
    if rates is None:
        return None  # an amount column with a stray percentage: said as an amount
    if rates.doubts:
        row, _, why = rates.doubts[0]
        return int(row), texts[row], f"率（百分率）の列の割合として読めないため（{why}）"
    example = int(rates.example)
    return example, texts[example], "金額として読めないため（率（百分率）の列の値です）"


def _not_a(table: Table, index: int, column: str, cell: Any, func: str, said: str) -> BlockError:
    """The error for the cell ``cell`` of ``column`` that ``func`` cannot read (``said``:
    what the cell is not, and why)."""
    return input_error(
        f"{table.where(index, column)}の値 {cell!r} を{said}、{func} を計算できません。",
        "元の表の値を直すか（率は 10% のように % を付けて）、table.filter で対象外の行を除いて"
        "から集計してください（文字列の列には count / nunique / first / last を使います）。",
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
