"""README.md renders as its author meant: every table row is part of a table (a blank line in
the middle of a table turns the rows after it into one long paragraph), and every row of a table
has the header's number of columns (extra cells are dropped, missing ones left empty)."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

README = Path(__file__).resolve().parents[1] / "README.md"
# A cell separator is a pipe not escaped with a backslash (GFM: `\|` is literal, even in code).
_SEPARATOR = re.compile(r"(?<!\\)\|")


def _parse() -> tuple[list[str], list[range], list[range]]:
    """README's lines, the line ranges of its tables, and those of its code blocks."""
    text = README.read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables = [range(*t.map) for t in tokens if t.type == "table_open" and t.map]
    code = [range(*t.map) for t in tokens if t.type in ("fence", "code_block") and t.map]
    return text.splitlines(), tables, code


def _cells(line: str) -> int:
    parts = _SEPARATOR.split(line.strip())
    if parts and not parts[0].strip():
        parts = parts[1:]
    if parts and not parts[-1].strip():
        parts = parts[:-1]
    return len(parts)


def test_every_table_row_is_rendered_inside_a_table() -> None:
    lines, tables, code = _parse()
    assert tables, "README.md has no table"
    stray = [
        f"README.md:{number + 1}: {line[:60]}"
        for number, line in enumerate(lines)
        if line.lstrip().startswith("|") and not any(number in block for block in [*tables, *code])
    ]
    assert stray == [], "table rows outside any table (a blank line inside a table?)"


def test_every_table_row_has_the_header_column_count() -> None:
    lines, tables, _ = _parse()
    wrong = []
    for table in tables:
        header = _cells(lines[table.start])
        for number in table:
            if lines[number].strip() and _cells(lines[number]) != header:
                wrong.append(
                    f"README.md:{number + 1}: {_cells(lines[number])} columns, header has {header}"
                )
    assert wrong == []
