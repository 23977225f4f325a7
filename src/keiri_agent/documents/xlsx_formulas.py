"""Formula cells a workbook holds without their result, found while openpyxl reads the sheet.

Excel saves each formula with the value it computed (``<f>B2*C2</f><v>200</v>``), and tables are
read from those values (``data_only``). A workbook written by a program that never computed its
formulas (openpyxl, some web systems' exports) stores the formula with an empty or missing
``<v>``; openpyxl then gives ``None``, which a table would read as a blank cell: an amount column
of such formulas sums to zero without a word. The reader refuses such a sheet and names the
cells (:func:`check_computed`); a formula whose result is the empty text (``t="str"`` with an
empty ``<v>``, Excel's ``=""``) is computed.

The cells are found in the one pass in which openpyxl parses the sheet, not by reading the
sheet's XML a second time: openpyxl's ``data_only`` reading drops the formula of each cell, so
its cell parser (``WorkSheetParser``, which both its full and its read-only worksheets use) is
replaced, once, by a subclass that notes a formula cell that gave no value while a reader on
this thread is :func:`recording` (other threads and readers are unaffected; openpyxl's version
is pinned in requirements.lock, and the tests read such workbooks both ways).
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl.worksheet._read_only as openpyxl_read_only
import openpyxl.worksheet._reader as openpyxl_reader
from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.cell import get_column_letter
from openpyxl.xml.constants import SHEET_MAIN_NS

from keiri_agent.documents.failures import unreadable

__all__ = ["MAX_NAMED_CELLS", "FormulaResults", "check_computed", "recording", "sheet_part"]

# Cells named in the error (the count is always exact).
MAX_NAMED_CELLS = 5

_FORMULA = f"{{{SHEET_MAIN_NS}}}f"
# Cell types whose empty <v> is a computed empty text.
_TEXT_TYPES = ("str", "inlineStr", "s")

# (min_col, min_row, max_col, max_row), 1-based and inclusive, as ``range_bounds`` gives.
Bounds = tuple[int, int, int, int]


@dataclass
class FormulaResults:
    """The formula cells without a result found while recording: ``(row, column)`` by the
    worksheet part they are in (``xl/worksheets/sheet1.xml``), in sheet order."""

    missing: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def cells(self, part: str, within: Bounds | None = None) -> list[tuple[int, int]]:
        """Those of the part ``part`` (only those ``within`` a range when given)."""
        found = self.missing.get(part, [])
        if within is None:
            return list(found)
        min_col, min_row, max_col, max_row = within
        return [(r, c) for r, c in found if min_row <= r <= max_row and min_col <= c <= max_col]


_state = threading.local()


class _RecordingParser(openpyxl_reader.WorkSheetParser):
    """openpyxl's cell parser, noting formula cells that hold no value while recording."""

    def parse_cell(self, element: Any) -> dict[str, Any]:
        cell: dict[str, Any] = super().parse_cell(element)
        if cell["value"] is None:
            results: FormulaResults | None = getattr(_state, "results", None)
            if (
                results is not None
                and element.find(_FORMULA) is not None
                and element.get("t") not in _TEXT_TYPES
            ):
                part = str(getattr(self.source, "name", ""))
                results.missing.setdefault(part, []).append((cell["row"], cell["column"]))
        return cell


# Installed once, where openpyxl's full (``WorksheetReader``) and read-only worksheets look
# the parser up when they read a sheet.
for _module in (openpyxl_reader, openpyxl_read_only):
    setattr(_module, "WorkSheetParser", _RecordingParser)  # noqa: B010


def sheet_part(source: bytes | Path, sheet: str) -> str:
    """The path in the archive of the worksheet titled ``sheet`` of the workbook ``source``
    (its bytes or path), from the workbook part and its relationships only ("" when the
    workbook does not list it as a worksheet)."""
    reader = ExcelReader(io.BytesIO(source) if isinstance(source, bytes) else source)
    try:
        reader.read_manifest()
        reader.read_workbook()
        return next(
            (rel.target for found, rel in reader.parser.find_sheets() if found.name == sheet), ""
        )
    finally:
        reader.archive.close()


@contextmanager
def recording() -> Iterator[FormulaResults]:
    """Note, on this thread, the formula cells without a result of every sheet openpyxl parses
    inside the block (a read-only sheet is parsed while its rows are iterated)."""
    previous = getattr(_state, "results", None)
    results = FormulaResults()
    _state.results = results
    try:
        yield results
    finally:
        _state.results = previous


def check_computed(
    results: FormulaResults,
    part: str,
    label: str,
    sheet: str,
    within: Bounds | None = None,
) -> None:
    """Refuse (FILE_UNREADABLE) the sheet ``sheet`` (its worksheet part ``part``; the range
    ``within`` when given) when ``results`` hold formulas of it without a computed value,
    naming the first cells and the count: read, they would be blanks that are not."""
    found = results.cells(part, within)
    if not found:
        return
    cells = [f"{get_column_letter(c)}{r}" for r, c in found[:MAX_NAMED_CELLS]]
    count = len(found)
    named = "、".join(cells) + (" ほか" if count > len(cells) else "")
    raise unreadable(
        label,
        f"'{label}' のシート '{sheet}' の数式のセル {count:,} 個（{named}）に計算結果が"
        "保存されていないため、値を読めません（空欄として読むと合計などが変わります）。",
        "数式を作ったソフトが計算していないファイルです。Excel で開いて上書き保存すると"
        "計算結果が保存されます。",
        sheet=sheet,
        cells=cells,
        count=count,
    )
