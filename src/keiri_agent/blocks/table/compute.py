"""``table.compute``: add columns computed from the others by expressions (税額, 差額率, 経過日数).

``columns`` is a list of ``{name, expr}``, computed in order, so a later expression may use an
earlier column. Expressions are the closed language of
:mod:`keiri_agent.blocks.table.expr_parse` (no Python, no eval), evaluated over whole columns by
:mod:`keiri_agent.blocks.table.expr_eval` with exact decimals. A ``name`` that already exists
replaces that column's values (listed in ``summary.replaced_columns``); new columns go at the end.
Every expression is parsed in ``check_inputs``, so a syntax error stops the plan before any
block runs; a column that does not exist is reported with the closest existing name.

The result is the input table with the computed columns set beside its own (which are not
copied): rows keep their order and their file positions, so a later block still names a cell by
its file line. Amount units (千円...) carry to a computed column as
:mod:`keiri_agent.blocks.table.expr_units` decides, and are dropped from a replaced column whose
new values have none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import pandas as pd

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import choice
from keiri_agent.blocks.table.expr_eval import ZERO_DIVISION, Evaluator
from keiri_agent.blocks.table.expr_operands import Columns, as_column
from keiri_agent.blocks.table.expr_parse import Node, parse_formula
from keiri_agent.blocks.table.expr_units import unit_of
from keiri_agent.blocks.table.records import Table, table_from
from keiri_agent.errors import input_error

__all__ = ["MAX_COMPUTED_COLUMNS", "TableComputeBlock"]

MAX_COMPUTED_COLUMNS: Final = 50


@dataclass(frozen=True)
class Formula:
    """One entry of ``columns``: the column it makes and its expression, parsed."""

    name: str
    text: str
    tree: Node
    where: str  # "columns の 2 番目（列「税額」）: ", the start of its error messages


class TableComputeBlock(ProcessingBlock):
    """Returns ``table`` with the ``columns`` computed and added (or replaced)."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _formulas(inputs.get("columns"))
        choice(inputs, "zero_division", ZERO_DIVISION)
        table_from(inputs.get("table"), field="table")

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        formulas = _formulas(inputs.get("columns"))
        zero_division = choice(inputs, "zero_division", ZERO_DIVISION)
        table = table_from(inputs.get("table"), field="table")
        existing = table.columns
        columns = Columns(table.frame)
        units = dict(table.units)
        notes: list[str] = []
        zero_divisions = 0
        zone = ctx.zone
        for formula in formulas:
            ctx.check_cancelled()
            if len(table):  # an empty table (records: no columns either) has nothing to read
                evaluator = Evaluator(
                    columns,
                    len(table),
                    text=formula.text,
                    where=formula.where,
                    zero_division=zero_division,
                    row_name=table.where,
                    zone=zone,
                )
                columns.set(formula.name, evaluator.evaluate(formula.tree))
                zero_divisions += evaluator.zero_divisions
            unit = unit_of(formula.tree, units)
            units.pop(formula.name, None)
            if unit.unit:
                units[formula.name] = unit.unit
            elif unit.dropped:
                notes.append(f"列「{formula.name}」には単位を付けません（{unit.dropped}）")
        names = list(dict.fromkeys(f.name for f in formulas))
        frame = table.frame.copy(deep=False)  # the table's own columns are shared, not copied
        for name in names:
            frame[name] = as_column(columns[name]) if len(table) else pd.Series([], dtype=object)
        rows = Table(frame, origin=table.origin, positions=table.positions, units=units)
        replaced = [n for n in names if n in existing]
        added = [n for n in names if n not in existing]
        ctx.log(
            f"表 {len(table):,} 行に列 {', '.join(added) or 'なし'} を追加し、"
            f"{', '.join(replaced) or 'なし'} を置き換えました（0 で割った行 {zero_divisions} 件）"
        )
        carried = [f"{n}＝{units[n]}" for n in names if n in units]
        if carried:
            ctx.log(f"計算した列の単位: {'、'.join(carried)}")
        for note in notes:
            ctx.log(note)
        return {
            "rows": rows,
            "summary": {
                "input_rows": len(table),
                "added_columns": added,
                "replaced_columns": replaced,
                "zero_divisions": zero_divisions,
            },
        }


_HINT = (
    "columns は {name: 作る列の名前, expr: 式} のリストです（上から順に計算し、後の式で前の列を使えます）。"
    '例: [{name: 税額, expr: "rounddown([税抜金額] * 0.1, 0)"}, {name: 税込金額, expr: "[税抜金額] + [税額]"}]'
)


def _formulas(value: Any) -> list[Formula]:
    if not isinstance(value, list) or not value:
        raise input_error("columns（計算して作る列）が指定されていません。", _HINT, field="columns")
    if len(value) > MAX_COMPUTED_COLUMNS:
        raise input_error(
            f"columns が多すぎます（{len(value)} 列。上限 {MAX_COMPUTED_COLUMNS} 列）。",
            "table.compute を複数のノードに分けてください。",
            field="columns",
        )
    return [_formula(number, item) for number, item in enumerate(value, start=1)]


def _formula(number: int, item: Any) -> Formula:
    keys_ok = isinstance(item, Mapping) and set(item) <= {"name", "expr"}
    name = item.get("name") if isinstance(item, Mapping) else None
    text = item.get("expr") if isinstance(item, Mapping) else None
    if not keys_ok or not isinstance(name, str) or not name.strip() or not isinstance(text, str):
        raise input_error(
            f"columns の {number} 番目は {{name: 列名, expr: 式}} の形ではありません（{item!r}）。"[
                :300
            ],
            _HINT,
            field="columns",
            index=number,
        )
    where = f"columns の {number} 番目（列「{name.strip()}」）: "
    return Formula(name.strip(), text, parse_formula(text, where=where), where)
