"""Formula cells a workbook holds without their result.

Excel saves each formula with the value it computed (``<f>B2*C2</f><v>200</v>``), and tables are
read from those values (``data_only``). A workbook written by a program that never computed its
formulas (openpyxl, some web systems' exports) stores the formula with an empty or missing
``<v>``; openpyxl then gives ``None``, which a table would read as a blank cell: an amount column
of such formulas sums to zero without a word. :func:`uncomputed_formulas` finds those cells in
one sheet's XML, so the reader can refuse the sheet and name them; a formula whose result is the
empty text (``t="str"`` with an empty ``<v>``, Excel's ``=""``) is computed.

The sheet's XML is first searched for a formula element at all, in pieces of bytes (exports of
a million rows rarely hold any); only a sheet that has one is parsed, element by element.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from zipfile import ZipFile

from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.cell import coordinate_to_tuple
from openpyxl.xml.constants import SHEET_MAIN_NS
from openpyxl.xml.functions import iterparse

from keiri_agent.documents.failures import unreadable

__all__ = ["MAX_NAMED_CELLS", "check_computed", "uncomputed_formulas"]

# Cells named in the error (the count is always exact).
MAX_NAMED_CELLS = 5

# Bytes of the sheet's XML searched at once for a formula element (and the overlap kept between
# pieces, longer than any tag name).
SCAN_CHUNK_BYTES = 1 << 20
_OVERLAP = 64
# A formula element <f>, <f t="shared" .../> or with a namespace prefix (<x:f>).
_FORMULA_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?f[\s>/]")
_CELL = f"{{{SHEET_MAIN_NS}}}c"
_ROW = f"{{{SHEET_MAIN_NS}}}row"
_FORMULA = f"{{{SHEET_MAIN_NS}}}f"
_VALUE = f"{{{SHEET_MAIN_NS}}}v"
# Cell types whose empty <v> is a computed empty text.
_TEXT_TYPES = ("str", "inlineStr", "s")


# (min_col, min_row, max_col, max_row), 1-based and inclusive, as ``range_bounds`` gives.
Bounds = tuple[int, int, int, int]


def _sheet_part(source: bytes | Path, sheet: str) -> tuple[ZipFile, str] | None:
    """The archive and the path in it of the worksheet titled ``sheet`` (None when the
    workbook does not list it as a worksheet part)."""
    target = io.BytesIO(source) if isinstance(source, bytes) else source
    reader = ExcelReader(target, read_only=True, data_only=True)
    reader.read_manifest()
    reader.read_workbook()
    for found, rel in reader.parser.find_sheets():
        if found.name == sheet:
            return reader.archive, rel.target
    reader.archive.close()
    return None


def _has_formula(archive: ZipFile, part: str) -> bool:
    with archive.open(part) as xml:
        tail = b""
        while chunk := xml.read(SCAN_CHUNK_BYTES):
            if _FORMULA_TAG.search(tail + chunk):
                return True
            tail = chunk[-_OVERLAP:]
    return False


def _inside(ref: str | None, within: Bounds | None) -> bool:
    if within is None or not ref:
        return True  # a cell without its reference (allowed) is counted wherever it is
    row, col = coordinate_to_tuple(ref)
    min_col, min_row, max_col, max_row = within
    return min_row <= row <= max_row and min_col <= col <= max_col


def uncomputed_formulas(
    source: bytes | Path, sheet: str, within: Bounds | None = None
) -> tuple[list[str], int]:
    """``(cells, count)``: the references (``D2``) of the first ``MAX_NAMED_CELLS`` formula
    cells of the worksheet ``sheet`` of the workbook ``source`` (its bytes or path) that hold
    no computed value (only those ``within`` a range when given), in sheet order, and how many
    there are in all."""
    found = _sheet_part(source, sheet)
    if found is None:
        return [], 0
    archive, part = found
    cells: list[str] = []
    count = 0
    with archive:
        if not _has_formula(archive, part):
            return [], 0
        with archive.open(part) as xml:
            for _event, element in iterparse(xml):
                if element.tag == _CELL:
                    formula = element.find(_FORMULA)
                    value = element.find(_VALUE)
                    empty = value is None or (
                        not value.text and element.get("t") not in _TEXT_TYPES
                    )
                    if formula is not None and empty and _inside(element.get("r"), within):
                        count += 1
                        if len(cells) < MAX_NAMED_CELLS:
                            cells.append(element.get("r") or "")
                elif element.tag == _ROW:
                    element.clear()  # the row's cells are done with
    return cells, count


def check_computed(
    source: bytes | Path, label: str, sheet: str, within: Bounds | None = None
) -> None:
    """Refuse (FILE_UNREADABLE) the sheet ``sheet`` (the range ``within`` when given) when it
    holds formulas without a computed value, naming the first cells and the count: read, they
    would be blanks that are not."""
    cells, count = uncomputed_formulas(source, sheet, within)
    if not count:
        return
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
