"""The unit of a column ``table.compute`` makes (千円, 百万円...), read from its expression.

A table read from a file knows the unit of its amount columns (``金額（千円）``, a title row
``（単位：千円）``) and never converts the numbers. A computed column carries a unit only where
the expression leaves no doubt that its numbers are amounts in that unit:

- the column itself, ``-`` / ``+`` in front, ``abs``, ``round`` / ``rounddown`` / ``roundup``;
- ``+``, ``-``, ``min``, ``max`` and the two results of ``if`` over values in that one unit or
  without one (``[金額] + 500``, ``if([区分] = "返品", -[金額], [金額])``);
- ``*`` or ``/`` by a written number that is a rate, not a change of unit (``* 0.1``, ``/ 1.1``,
  ``* 12``).

Everything else has no unit, with the reason when a unit was lost: values in different units
(千円 + 円), multiplying or dividing by a power of ten other than 0.1 and 0.01 (``* 1000`` may
turn 千円 into 円), products and quotients of columns (``[金額] * [為替レート]`` may change the
currency; ``[今期] / [前期]`` is a ratio), comparisons, text and day counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from keiri_agent.blocks.table.expr_parse import Binary, Call, Column, Literal, Node, Unary

__all__ = ["RATE_POWERS", "UnitOf", "unit_of"]

# Powers of ten that are rates (10 %, 1 %), not a change between 円, 千円, 万円 and 百万円.
RATE_POWERS: Final = frozenset({Decimal("0.1"), Decimal("0.01")})
_KEEPING: Final = frozenset({"round", "rounddown", "roundup", "abs"})
_JOINING: Final = frozenset({"min", "max"})


@dataclass(frozen=True)
class UnitOf:
    """The unit of an expression's numbers (None: none), and why a unit was not carried."""

    unit: str | None = None
    dropped: str | None = None  # Japanese, for the log


_NONE: Final = UnitOf()


def unit_of(node: Node, units: Mapping[str, str]) -> UnitOf:
    """The unit of ``node``'s numbers, given the ``units`` of the columns it may name."""
    if isinstance(node, Column):
        unit = units.get(node.name)
        return UnitOf(unit) if unit else _NONE
    if isinstance(node, Literal):
        return _NONE
    if isinstance(node, Unary):
        return unit_of(node.operand, units) if node.op != "not" else _NONE
    if isinstance(node, Call):
        if node.name in _KEEPING:
            return unit_of(node.args[0], units)
        if node.name in _JOINING:
            return _joined([unit_of(a, units) for a in node.args])
        if node.name == "if":
            return _joined([unit_of(node.args[1], units), unit_of(node.args[2], units)])
        return _NONE  # days
    if node.op in ("+", "-"):
        return _joined([unit_of(node.left, units), unit_of(node.right, units)])
    if node.op in ("*", "/"):
        return _scaled(node, unit_of(node.left, units), unit_of(node.right, units))
    return _NONE  # comparisons, and / or, &


def _joined(parts: list[UnitOf]) -> UnitOf:
    """Values added, compared or chosen between: one unit, or none when they differ."""
    found = list(dict.fromkeys(p.unit for p in parts if p.unit))
    if len(found) > 1:
        return UnitOf(None, f"単位の違う値（{'・'.join(found)}）を合わせて計算したため")
    if found:
        return UnitOf(found[0])
    return next((p for p in parts if p.dropped), _NONE)


def _scaled(node: Binary, left: UnitOf, right: UnitOf) -> UnitOf:
    if not left.unit and not right.unit:
        return left if left.dropped else right
    if left.unit and right.unit:
        if node.op == "/" and left.unit == right.unit:
            return _NONE  # a ratio
        return UnitOf(None, "単位のある値どうしを掛けたり割ったりしたため")
    unit, factor = (left.unit, node.right) if left.unit else (right.unit, node.left)
    if node.op == "/" and not left.unit:
        return UnitOf(None, "単位のある値で割ったため")
    number = _written_number(factor)
    if number is None:
        return UnitOf(
            None,
            "単位のない列や計算結果を掛けたり割ったりしたため（為替レートなら通貨が変わります）",
        )
    if _is_power_of_ten(number) and number not in RATE_POWERS:
        return UnitOf(
            None, f"{number.normalize():f} を掛けたり割ったりしたため（単位の換算かもしれません）"
        )
    return UnitOf(unit)


def _written_number(node: Node) -> Decimal | None:
    """The number written in the expression (``1.1``, ``-1``), or None for anything else."""
    if isinstance(node, Unary) and node.op in ("-", "+"):
        inner = _written_number(node.operand)
        return None if inner is None else (-inner if node.op == "-" else inner)
    if isinstance(node, Literal) and isinstance(node.value, Decimal):
        return node.value
    return None


def _is_power_of_ten(number: Decimal) -> bool:
    _, digits, _ = abs(number).normalize().as_tuple()
    return digits == (1,) and number != 1 and number != -1
