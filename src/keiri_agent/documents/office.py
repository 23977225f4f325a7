"""Text of Office Open XML files: Word (.docx), Excel (.xlsx) and PowerPoint (.pptx).

Each reader takes the file's bytes (already checked to be a ZIP of the right kind by
``extract``) and returns an :class:`ExtractedText` whose text went through ``normalize_text``.
Tables become tab-separated lines with merged cells written once; Excel is read from the
top-left used range of the sheet it opens to (its first visible one) with the values Excel
last calculated.

The Office libraries are imported inside the readers: they take longer to import than most
PDF jobs take to run, and many runs never see an Office file.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime, time
from typing import Any

from keiri_agent.documents.excel_address import first_shown
from keiri_agent.documents.failures import RESAVE_HINT, exception_reason, unreadable
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.normalize import normalize_text
from keiri_agent.documents.ooxml import XML_ERRORS, open_workbook, xml_error
from keiri_agent.documents.pdf import PAGE_SEPARATOR
from keiri_agent.documents.xlsx_formulas import recording, sheet_part
from keiri_agent.errors import FileProcessingError

__all__ = ["XLSX_MAX_COLS", "XLSX_MAX_ROWS", "read_docx", "read_pptx", "read_xlsx"]

# Seed 004 §2: "XLSX は先頭シートの左上範囲". The range starts at the first used row and column.
XLSX_MAX_ROWS = 2_000
XLSX_MAX_COLS = 50


def read_docx(data: bytes, name: str) -> ExtractedText:
    """Paragraphs and tables of the document body, in document order."""
    return _guarded(_docx_text, data, name, "Word 文書")


def _docx_text(data: bytes, name: str) -> ExtractedText:
    import docx
    from docx.table import Table

    document = docx.Document(io.BytesIO(data))
    blocks: list[str] = []
    tables = 0
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            tables += 1
            blocks.append(_table_text(_docx_rows(item)))
        else:
            blocks.append(item.text)
    text = normalize_text("\n".join(blocks)).strip("\n")
    return ExtractedText(
        file=name,
        text=text,
        format="docx",
        warnings=_empty_warning(name, text),
        metadata={"paragraphs": len(document.paragraphs), "tables": tables},
    )


def read_pptx(data: bytes, name: str) -> ExtractedText:
    """Text of every slide in order: text frames, tables, grouped shapes, then the notes."""
    return _guarded(_pptx_text, data, name, "PowerPoint ファイル")


def _pptx_text(data: bytes, name: str) -> ExtractedText:
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(data))
    slides: list[str] = []
    for slide in presentation.slides:
        parts = list(_shape_texts(slide.shapes))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            if notes is not None and notes.text.strip():
                parts.append(f"ノート: {notes.text}")
        slides.append(normalize_text("\n".join(parts)).strip("\n"))
    count = len(slides)
    text = PAGE_SEPARATOR.join(slides)
    return ExtractedText(
        file=name,
        text=text,
        format="pptx",
        units_read=count,
        units_total=count,
        unit="slide",
        warnings=_empty_warning(name, text),
        metadata={"slides": count},
    )


def read_xlsx(data: bytes, name: str) -> ExtractedText:
    """The top-left used range of the sheet the workbook opens to (its first visible one,
    ``excel_address.first_shown``) as tab-separated rows of cached values."""
    book = open_workbook(data, name, read_only=True, data_only=True)
    try:
        sheet_names = list(book.sheetnames)  # chart sheets included
        if not book.worksheets:
            raise unreadable(
                name,
                f"「{name}」にはセルのあるシートがありません（グラフシートのみ）。",
                "データの入ったシートを含むブックを渡してください。",
            )
        shown: Any = first_shown(book)  # openpyxl's ReadOnlyWorksheet, typed as Worksheet
        # Saved dimensions are often wrong; rows are read lazily up to the limit instead.
        shown.reset_dimensions()
        try:  # read-only sheets are parsed while they are iterated
            with recording() as formulas:
                rows, more_rows, more_cols = _sheet_rows(shown.iter_rows(values_only=True))
        except XML_ERRORS as exc:
            raise xml_error(name, exc) from exc
        hidden = [ws.title for ws in book.worksheets if ws.sheet_state != "visible"]
    finally:
        book.close()
    sheet = shown.title
    # Formulas saved without their result read as blanks: counted inside the range read.
    read = (1, 1, XLSX_MAX_COLS, XLSX_MAX_ROWS)
    missing = len(formulas.cells(sheet_part(data, sheet), read))

    grid = _trim(rows)
    warnings: list[str] = []
    if len(sheet_names) > 1:
        unread = [n for n in sheet_names if n != sheet]
        others = "、".join(unread[:5]) + (" など" if len(unread) > 5 else "")
        skipped = [n for n in hidden if sheet_names.index(n) < sheet_names.index(sheet)]
        which = (
            f"最初の表示されているシート「{sheet}」のみ読み込みました（非表示のシート"
            f"「{'」「'.join(skipped)}」は飛ばしました。"
            if skipped
            else f"先頭シート「{sheet}」のみ読み込みました（"
        )
        warnings.append(f"{which}全 {len(sheet_names)} シート、未読: {others}）。")
    if more_rows or more_cols:
        warnings.append(
            f"シート「{sheet}」の左上 {XLSX_MAX_ROWS} 行 × {XLSX_MAX_COLS} 列までを読み込みました。"
            "それ以降のセルは含まれていません。"
        )
    if missing:
        warnings.append(
            f"数式のセル {missing} 個に計算済みの値が保存されていないため、空欄として読みました。"
            "Excel で開いて保存し直すと値が入ります。"
        )
    text = normalize_text(_table_text(grid))
    warnings += _empty_warning(name, text)
    return ExtractedText(
        file=name,
        text=text,
        format="xlsx",
        units_read=1,
        units_total=len(sheet_names),
        unit="sheet",
        truncated=more_rows or more_cols,
        warnings=warnings,
        metadata={
            "sheet": sheet,
            "sheets": sheet_names,
            "rows": len(grid),
            "columns": max((len(r) for r in grid), default=0),
            "formulas_without_value": missing,
        },
    )


def _sheet_rows(values: Iterator[tuple[Any, ...]]) -> tuple[list[list[str]], bool, bool]:
    """Cell texts of the first XLSX_MAX_ROWS rows, and whether rows or columns beyond the
    limit hold data."""
    rows: list[list[str]] = []
    more_cols = False
    for count, row in enumerate(values):
        if count == XLSX_MAX_ROWS:
            return rows, any(v is not None for v in row), more_cols
        more_cols = more_cols or any(v is not None for v in row[XLSX_MAX_COLS:])
        rows.append([_cell_text(v) for v in row[:XLSX_MAX_COLS]])
    return rows, False, more_cols


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time() else value.isoformat(" ")
    if isinstance(value, date | time):
        return value.isoformat()
    # Keep one row per line: line breaks and tabs inside a cell become spaces.
    return " ".join(str(value).split()) if isinstance(value, str) else str(value)


def _trim(rows: list[list[str]]) -> list[list[str]]:
    """The used range: no leading or trailing empty rows and columns."""
    used = [i for i, row in enumerate(rows) if any(row)]
    if not used:
        return []
    rows = rows[used[0] : used[-1] + 1]
    width = max(len(row) for row in rows)
    filled = [c for c in range(width) if any(c < len(row) and row[c] for row in rows)]
    first, last = filled[0], filled[-1]
    return [(row + [""] * width)[first : last + 1] for row in rows]


def _table_text(rows: Iterable[Sequence[str]]) -> str:
    lines = []
    for row in rows:
        cells = list(row)
        while cells and not cells[-1]:
            cells.pop()
        lines.append("\t".join(cells))
    return "\n".join(lines)


def _docx_rows(table: Any) -> Iterator[list[str]]:
    """Rows of a Word table; a merged cell's text appears in its first grid position only."""
    seen: dict[int, object] = {}  # id -> element, kept alive so ids stay unique
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            element = cell._tc
            if id(element) in seen:
                cells.append("")
                continue
            seen[id(element)] = element
            cells.append(" ".join(cell.text.split()))
        yield cells


def _shape_texts(shapes: Iterable[Any]) -> Iterator[str]:
    from pptx.shapes.group import GroupShape

    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes)
        elif getattr(shape, "has_table", False):
            rows = ([" ".join(c.text.split()) for c in r.cells] for r in shape.table.rows)
            yield _table_text(rows)
        elif getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
            yield shape.text_frame.text


def _empty_warning(name: str, text: str) -> list[str]:
    if text.strip():
        return []
    return [f"「{name}」にはテキストが含まれていません（画像や図形のみの可能性があります）。"]


def _guarded(
    read: Callable[[bytes, str], ExtractedText], data: bytes, name: str, kind: str
) -> ExtractedText:
    """``read`` (over python-docx or python-pptx) on ``data``, with the file layer's errors: a
    part missing or broken anywhere in the file (found when it is opened or only when a slide
    or table refers to it) refuses the file the same way."""
    try:
        return read(data, name)
    except FileProcessingError:
        raise
    except MemoryError:
        raise  # the bounded child reports it as a file too large
    except XML_ERRORS as exc:
        raise xml_error(name, exc) from exc
    except Exception as exc:  # python-docx and python-pptx raise KeyError, ValueError...
        raise _broken(name, kind, exc) from exc


def _broken(name: str, kind: str, exc: Exception) -> FileProcessingError:
    return unreadable(
        name,
        f"「{name}」は {kind}として壊れているため読み込めません（中の部品が欠けているか、形式が違います）。",
        RESAVE_HINT,
        reason=exception_reason(exc),
    )
