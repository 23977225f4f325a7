"""The unit of an amount column whose cells write one (``1,200千円``, ``3.5百万円``, ``￥1,200千``).

``cell_forms.read_amount_unit`` reads each cell's number and unit; :func:`cell_units` decides
the column's unit and puts every number in it (exact decimal conversion), or names the cells
whose unit is in doubt, which ``table_types`` then lists while it keeps the column as written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pandas as pd

from keiri_agent.documents.cell_forms import YEN_FACTORS

__all__ = ["CellUnits", "cell_units"]


@dataclass
class CellUnits:
    """What the units written in a column's cells decided (``cell_units``)."""

    numbers: pd.Series
    unit: str | None = None  # the column's unit, when the cells name one
    doubtful: dict[Any, str] = field(default_factory=dict)  # label -> why
    notes: list[str] = field(default_factory=list)


def cell_units(
    values: pd.Series,
    numbers: pd.Series,
    units: pd.Series,
    declared: str | None,
    cell_text: Callable[[Any], str] = str,
) -> CellUnits:
    """The column's numbers in one unit, from the units its cells wrote (``1,200千円``):

    * the column's unit is the one the header or a title row declares (``declared``), else the
      one every cell that writes a unit writes, else (cells write different units) the smallest
      of them, so that every conversion multiplies;
    * a cell written in another unit than the column's is converted exactly (decimal
      arithmetic; ``1,200千円`` beside ``500円`` is 1,200,000 円; ``1,200円`` under
      ``（単位：千円）`` is 1.2 千円), with a note naming the first: the unit written on the
      number speaks for that cell, more precisely than a header speaks for a column; one whose
      converted value a float cannot hold exactly is doubtful;
    * a cell without a unit is in the declared unit, or in yen when every written unit is 円;
      else (``300`` among ``1,200千円`` cells, no unit declared) it is doubtful: 300 円 or 300
      千円 cannot be told.

    Doubtful cells are listed, and the column is left as written (``table_types``)."""
    written = units.dropna()
    if written.empty:
        return CellUnits(numbers)
    kinds = list(dict.fromkeys(written.tolist()))
    if declared is not None:
        unit = declared
    elif len(kinds) == 1:
        unit = kinds[0]
    else:
        unit = min(kinds, key=YEN_FACTORS.__getitem__)
    bare = units.isna() & numbers.ne(0) & numbers.notna()
    found = CellUnits(numbers.copy(), unit if (declared or set(kinds) != {"円"}) else None)
    if declared is None and set(kinds) != {"円"}:
        for label in values.index[bare.to_numpy()]:
            found.doubtful[label] = (
                f"単位が書かれていません。この列のほかのセルには{'・'.join(kinds)}と書かれて"
                "いるため、何の単位の金額か決められません（セルに単位を書くか、見出しに"
                f"「金額（{unit}）」のように書いてください）"
            )
    moved = written[written.ne(unit).to_numpy()]
    first: str | None = None
    for label, cell_unit in zip(moved.index.tolist(), moved.tolist(), strict=True):
        converted = _converted(numbers[label], cell_unit, unit)
        if converted is None:
            found.doubtful[label] = (
                f"{cell_unit}の金額を{unit}に換算した値を数値として正確に表せません"
            )
            continue
        found.numbers[label] = converted
        shown = f"{int(converted):,}" if converted.is_integer() else f"{converted:,}"
        first = first or f"{cell_text(values[label]).strip()} → {shown}"
    count = len(moved) - sum(label in found.doubtful for label in moved.index)
    if count:
        said = f"見出しやタイトル行の単位（{declared}）と" if declared else ""
        found.notes.append(
            f"{said}単位の違うセル {count:,} 個を、セルに書かれた単位のとおり{unit}に換算して"
            f"読みました（最初は {first}）。単位が正しいか確かめてください"
        )
    return found


def _converted(number: float, cell_unit: str, unit: str) -> float | None:
    """``number`` (in ``cell_unit``) in ``unit``, when a float holds the result exactly."""
    exact = Decimal(repr(float(number))) * YEN_FACTORS[cell_unit] / YEN_FACTORS[unit]
    result = float(exact)
    return result if Decimal(repr(result)) == exact else None
