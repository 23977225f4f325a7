"""Every limit the file layer puts on its inputs, in one place (``docs/limits.md`` lists them).

A file that is small on disk can be huge once read: a ZIP or an Office file (a ZIP of XML
parts) that inflates a thousandfold, a PDF stream that decompresses to gigabytes, a sheet with
one stray cell at XFD1048576, a CSV one line wide and 100,000 columns across. Each of these is
refused with a ``FileProcessingError`` that names the file, the limit and what to do, instead
of exhausting the machine. Readers take these as defaults; callers may pass lower (or higher)
values through the readers' arguments (``ArchiveLimits``, ``TableLimits``, ``max_bytes``...).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MAX_ARCHIVE_DEPTH",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_ARCHIVE_RATIO",
    "MAX_ARCHIVE_TOTAL_BYTES",
    "MAX_FILE_BYTES",
    "MAX_PARSE_CPU_SECONDS",
    "MAX_PARSE_MEMORY_BYTES",
    "MAX_PDF_PAGES",
    "MAX_TABLE_CELLS",
    "MAX_TABLE_COLUMNS",
    "MAX_TABLE_ROWS",
    "MAX_TEXT_CHARS",
    "PROMPT_BUDGET_CHARS",
    "TableLimits",
]

MiB = 1024 * 1024

# Seed 004 §2: at most ~100,000 characters of text in total, PDFs from their first 20 pages.
MAX_TEXT_CHARS = 100_000
MAX_PDF_PAGES = 20
# Seed 004 §2: documents are compressed to about 4,000 characters before they reach a prompt.
PROMPT_BUDGET_CHARS = 4_000

# A single input file larger than this is refused before it is parsed.
MAX_FILE_BYTES = 200 * MiB

# ZIP containers: evidence archives and Office Open XML files (.xlsx/.xlsm/.docx/.pptx, which
# are ZIPs of XML parts) alike. Total uncompressed size, per-member compression ratio (for
# members of at least 1 MiB), number of members, and nesting depth (1 = one ZIP inside the ZIP).
MAX_ARCHIVE_TOTAL_BYTES = 512 * MiB
MAX_ARCHIVE_RATIO = 200
MAX_ARCHIVE_MEMBERS = 5_000
MAX_ARCHIVE_DEPTH = 1

# Tables (CSV/TSV/Excel read into a DataFrame). Excel itself stops at 1,048,576 rows and
# 16,384 columns (XFD); the cell limit keeps a table's memory to a few hundred MB.
MAX_TABLE_ROWS = 2_000_000
MAX_TABLE_COLUMNS = 16_384
MAX_TABLE_CELLS = 20_000_000

# Parsers of binary formats (PDF, Word, Excel, PowerPoint) run in a child process that may
# grow by at most this much memory (address space, RLIMIT_AS) and use this much CPU time
# (RLIMIT_CPU); a file that needs more is reported as too large, and the caller keeps running.
MAX_PARSE_MEMORY_BYTES = 1024 * MiB
MAX_PARSE_CPU_SECONDS = 300


@dataclass(frozen=True)
class TableLimits:
    """Limits on a table read by ``read_table`` (defaults above)."""

    max_rows: int = MAX_TABLE_ROWS
    max_columns: int = MAX_TABLE_COLUMNS
    max_cells: int = MAX_TABLE_CELLS
