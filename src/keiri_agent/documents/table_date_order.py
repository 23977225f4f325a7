"""The order a column writes its dates with the year last in (``02/03/2026``: February 3rd in
the US, March 2nd in Europe), decided by the column's cells, for every reader of a column of
dates: ``read_table`` (``table_types``), a bank statement's date column (``bank_table``) and
the table blocks' date cells (``blocks.table.cells``).

One cell cannot say its order; a column can: day first where some cell's first number is above
12 (``13/02/2026``) and no cell's second, month first the other way round (``day_order``).
Where no cell shows it, every such cell is refused with why (``date_problem``); where cells
show both orders, with the two cells that show them (``column_order``'s ``why``).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from keiri_agent.documents.cell_forms import DAY_FIRST, MONTH_FIRST, date_problem, day_order
from keiri_agent.documents.table_cells import at_once, each_once

__all__ = ["ColumnOrder", "column_order", "order_reason", "starts_year_last"]

# A cell that may write a date with its year last (``13/02/2026``).
# (ASCII spaces only: ``\s`` sends Arrow's regex engine back to Python, cell by cell.)
_YEAR_LAST_START = r"^[ 　]*[0-9０-９]{1,2}[ 　]*[-/.／－．]"
_MIXED_ORDER = (
    "この列には日が先の日付（{dmy}）と月が先の日付（{mdy}）の両方があり、年が最後に書かれた"
    "日付を 月/日/年 か 日/月/年 か決められません（2026/2/3 のように年から書いてください）"
)


class ColumnOrder(NamedTuple):
    """How a column writes a date with its year last: ``order`` (``DAY_FIRST``,
    ``MONTH_FIRST``, or None where no cell shows it or cells show both), ``why`` such a cell
    is not read where cells show both (None: ``date_problem`` says it), ``example`` the first
    cell that shows the order ("" without one)."""

    order: str | None
    why: str | None
    example: str


def starts_year_last(values: pd.Series) -> np.ndarray:
    """The mask of the cells of a column that may write a date with its year last."""
    if at_once(values):
        maybe = values.str.contains(_YEAR_LAST_START, regex=True).fillna(False).astype(bool)
    else:
        start = re.compile(_YEAR_LAST_START)
        maybe = values.map(lambda v: isinstance(v, str) and start.match(v) is not None)
    return maybe.to_numpy(dtype=bool)


def column_order(values: pd.Series) -> ColumnOrder:
    """The order the cells of ``values`` (a column's non-blank cells) show (see the module
    docstring)."""
    candidates = values[starts_year_last(values)]
    if candidates.empty:
        return ColumnOrder(None, None, "")
    shown: dict[str, str] = {}
    for text, order in zip(candidates.tolist(), each_once(day_order, candidates), strict=True):
        if order:
            shown.setdefault(order, text.strip())
    if len(shown) == 1:
        order, example = next(iter(shown.items()))
        return ColumnOrder(order, None, example)
    if shown:  # both orders
        why = _MIXED_ORDER.format(dmy=shown[DAY_FIRST], mdy=shown[MONTH_FIRST])
        return ColumnOrder(None, why, "")
    return ColumnOrder(None, None, "")


def order_reason(text: str, order: ColumnOrder) -> str:
    """Why a text cell of a date column whose order is ``order`` is not read, in Japanese."""
    if order.why is not None and day_order(text) is not None:
        return order.why
    return date_problem(text)


def cells_order(cells: Any) -> ColumnOrder:
    """``column_order`` of the text cells among ``cells`` (any column a block holds)."""
    series = cells if isinstance(cells, pd.Series) else pd.Series(list(cells), dtype=object)
    texts = series[series.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)]
    return column_order(texts.astype(object))
