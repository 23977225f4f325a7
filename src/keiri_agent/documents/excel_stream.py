"""A new workbook written row by row (openpyxl's write-only mode), saved atomically.

A write-only workbook does not keep its cells: each appended row goes straight into a
temporary XML file per sheet (openpyxl makes it in the system's temporary folder), and saving
zips those files into the workbook. So a table of hundreds of thousands of rows is written in
the memory of one chunk of rows. What such a sheet cannot do is go back: column widths, frozen
panes and the like are set before the first row, and no cell is read or changed once appended.

:func:`streamed_workbook` saves the workbook to a temporary file beside the target and renames
it into place (``workspace.atomic_path``) only when everything succeeded; when writing fails
the sheets' temporary files are removed and the target is left as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from openpyxl import Workbook

from keiri_agent.workspace import atomic_path

__all__ = ["streamed_workbook"]


@contextmanager
def streamed_workbook(target: Path, *, prefix: str | None = None) -> Iterator[Workbook]:
    """A write-only workbook that becomes ``target`` when the ``with`` block exits cleanly
    (through a temporary file named ``prefix*`` beside it); on an exception, nothing is
    written and no temporary file is left."""
    book = Workbook(write_only=True)
    try:
        yield book
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target, suffix=".xlsx", prefix=prefix) as tmp:
            book.save(tmp)
    except BaseException:
        _discard(book)
        raise


def _discard(book: Workbook) -> None:
    """Remove the temporary files of the sheets that started writing (saving removes them
    otherwise)."""
    for sheet in book.worksheets:
        writer = getattr(sheet, "_writer", None)  # openpyxl makes it at a sheet's first row
        if writer is None:
            continue
        rows = getattr(sheet, "_rows", None)  # the generator that takes appended rows
        if rows is not None:
            rows.close()
        writer.xf.close()  # closes the sheet's XML file
        # Already gone when a save zipped the sheet, then failed.
        with suppress(FileNotFoundError):
            os.remove(writer.out)
