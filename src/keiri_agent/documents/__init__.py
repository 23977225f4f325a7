"""The file layer: every agent and block reads files through here.

- ``extract_text``: text of PDF, DOCX, XLSX, PPTX and text files, NFKC-normalized, within the
  seed's limits (100,000 characters, first 20 PDF pages), with metadata and warnings.
- ``normalize_for_prompt``: documents compressed fairly into a prompt budget (~4,000 chars).
- ``read_table``: CSV/TSV/XLSX to a DataFrame, detecting encoding, delimiter and header row.
- ``parse_zip_2tier`` / ``parse_folder_2tier``: archives and folders as groups of evidence,
  refusing zip-slip, symlinks, bombs and encrypted members.
- ``ExcelManager``: read sheets and ranges; write into a copy, atomically.
- ``decode_bytes`` / ``detect_encoding``: UTF-8 (BOM or not), CP932, EUC-JP and friends.
- ``read_bank_statement``: a 全銀協 振込入金通知 / 入出金取引明細 or a CSV/Excel bank statement
  into a ``BankStatement`` of ``BankLine``s (date, yen amount, direction, payer as written, EDI,
  position in the file), the same for the same deposits whatever the format.

Every limit on inputs (sizes, expansion, rows/columns/cells, parser memory) is a named constant
in ``limits`` (listed in docs/limits.md); PDF and Office files are parsed in a memory-bounded
child process (``bounded``). Failures are ``FileProcessingError``s naming the file, with a
Japanese message and hint.
"""

from __future__ import annotations

from keiri_agent.documents.archives import (
    ArchiveLimits,
    ArchiveMember,
    EvidenceFile,
    EvidenceSet,
    open_archive,
    open_folder,
    parse_folder_2tier,
    parse_zip_2tier,
)
from keiri_agent.documents.bank import read_bank_statement
from keiri_agent.documents.bank_lines import BankAccount, BankLine, BankStatement, LinePosition
from keiri_agent.documents.encoding import EncodingGuess, decode_bytes, detect_encoding
from keiri_agent.documents.excel import ExcelEdit, ExcelManager, WriteSummary
from keiri_agent.documents.extract import SUPPORTED_EXTENSIONS, detect_kind, extract_text
from keiri_agent.documents.limits import (
    MAX_PDF_PAGES,
    MAX_TEXT_CHARS,
    PROMPT_BUDGET_CHARS,
    TableLimits,
)
from keiri_agent.documents.models import ExtractedText
from keiri_agent.documents.normalize import (
    NO_DOCUMENTS_TEXT,
    PromptDocuments,
    normalize_for_prompt,
    normalize_text,
)
from keiri_agent.documents.tables import TableReadInfo, TableResult, read_table

__all__ = [
    "MAX_PDF_PAGES",
    "MAX_TEXT_CHARS",
    "NO_DOCUMENTS_TEXT",
    "PROMPT_BUDGET_CHARS",
    "SUPPORTED_EXTENSIONS",
    "ArchiveLimits",
    "ArchiveMember",
    "BankAccount",
    "BankLine",
    "BankStatement",
    "EncodingGuess",
    "EvidenceFile",
    "EvidenceSet",
    "ExcelEdit",
    "ExcelManager",
    "ExtractedText",
    "LinePosition",
    "PromptDocuments",
    "TableLimits",
    "TableReadInfo",
    "TableResult",
    "WriteSummary",
    "decode_bytes",
    "detect_encoding",
    "detect_kind",
    "extract_text",
    "normalize_for_prompt",
    "normalize_text",
    "open_archive",
    "open_folder",
    "parse_folder_2tier",
    "parse_zip_2tier",
    "read_bank_statement",
    "read_table",
]
