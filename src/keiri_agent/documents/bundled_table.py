"""Tables shipped as package data: a CSV beside the module that reads it, checked when it loads.

Facts copied from a published list (the 全銀協 法人略語, the 全銀協 record layouts) are kept as
CSV so that each row can be compared with the list it was copied from, and extended without
touching code. A :class:`BundledTable` names one such file, its columns and how to fix it; its
:meth:`~BundledTable.rows` yields the rows with their line numbers (blank lines skipped, header
and column count checked), and :meth:`~BundledTable.error` is the one error for a row or a
table that cannot be used, naming the file and the line, for the module's own checks.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["BundledTable"]


@dataclass(frozen=True, slots=True)
class BundledTable:
    """One CSV table of package data: ``file`` beside the module of ``package``."""

    package: str
    file: str
    what: str  # what the table is, as the error names it: 法人略語の表
    columns: tuple[str, ...]  # the header row, in order
    hint: str  # how a row is written

    def text(self) -> str:
        """The table's text as installed (UTF-8, with or without a BOM)."""
        return resources.files(self.package).joinpath(self.file).read_text("utf-8-sig")

    def rows(self, text: str) -> Iterator[tuple[int, list[str]]]:
        """Each non-blank row of ``text`` after the header, its cells stripped, with its 1-based
        line; BlockError for a header other than :attr:`columns` or a row with another number
        of cells."""
        rows = csv.reader(io.StringIO(text))
        if next(rows, None) != list(self.columns):
            raise self.error(1, f"見出しが {','.join(self.columns)} ではありません")
        for line, row in enumerate(rows, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(self.columns):
                raise self.error(
                    line, f"列が {len(row)} 個あります（{len(self.columns)} 個のはずです）"
                )
            yield line, [cell.strip() for cell in row]

    def error(self, line: int | None, problem: str) -> BlockError:
        """The table cannot be used: ``problem`` at 1-based ``line`` (None: the whole table)."""
        where = f" の {line} 行目を" if line else " を"
        return BlockError(
            f"{self.what} {self.file}{where}読めません: {problem}。",
            code=ErrorCode.FILE_UNREADABLE,
            hint=self.hint,
            details={"file": self.file, "line": line},
        )
