"""Reading the help desk's Q/A CSV: columns ``Q`` and ``A``, any Japanese encoding.

The bytes are decoded by the file layer (``decode_bytes``: UTF-8 with or without BOM, CP932,
EUC-JP) and NFKC-normalized. The header names are matched after normalization, so ``Ｑ`` and
``q`` work too; other columns are ignored. Rows are numbered from 1 without the header (the
``row`` of :class:`SearchOutput`); a row whose question or answer is empty is not indexed and is
listed in ``skipped`` with its number, never dropped silently. A missing column, an empty file
or a file without any usable row is a Japanese ``BlockError`` with a hint.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from keiri_agent.agents.helpdesk.knowledge.models import QAPair
from keiri_agent.documents.encoding import decode_bytes
from keiri_agent.documents.limits import MAX_FILE_BYTES
from keiri_agent.documents.normalize import normalize_text
from keiri_agent.documents.source import read_source
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError, cause_of, reason_of

__all__ = ["ANSWER_COLUMN", "QUESTION_COLUMN", "QATable", "parse_qa_csv", "read_qa_csv"]

QUESTION_COLUMN = "Q"
ANSWER_COLUMN = "A"
_FORMAT_HINT = (
    "1 行目に列名 Q（質問）と A（回答）を置いた CSV にしてください"
    "（例: Q,A の次の行から「パスワードを忘れた,ログイン画面の…」）。"
)


@dataclass
class QATable:
    """The usable Q/A pairs of one CSV, with what was skipped and how it was read."""

    file_name: str
    sha256: str
    encoding: str
    pairs: list[QAPair]
    skipped: list[str] = field(default_factory=list)


def read_qa_csv(path: Path | str, *, name: str | None = None) -> QATable:
    """Read the Q/A CSV at ``path`` (see the module docstring)."""
    source = Path(path)
    label = name or source.name
    data = read_source(source, label=label, max_bytes=MAX_FILE_BYTES)
    return parse_qa_csv(data, name=label)


def parse_qa_csv(data: bytes, *, name: str) -> QATable:
    """Parse CSV bytes named ``name`` into Q/A pairs."""
    digest = hashlib.sha256(data).hexdigest()
    if not data.strip():
        raise _invalid(name, f"Q/A ファイル「{name}」が空です。", reason="empty")
    text, encoding = decode_bytes(data, file=name)
    text = normalize_text(text)
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise _invalid(
            name,
            f"Q/A ファイル「{name}」を CSV として読めません: {reason_of(exc)}",
            reason="csv",
            cause=cause_of(exc),
        ) from exc
    first = next((i for i, r in enumerate(records) if any(cell.strip() for cell in r)), None)
    if first is None:
        raise _invalid(name, f"Q/A ファイル「{name}」に行がありません。", reason="empty")
    header = [cell.strip().upper() for cell in records[first]]
    missing = [col for col in (QUESTION_COLUMN, ANSWER_COLUMN) if col not in header]
    if missing:
        found = [cell.strip() for cell in records[first] if cell.strip()]
        raise _invalid(
            name,
            f"Q/A ファイル「{name}」に列 {'・'.join(missing)} がありません"
            f"（1 行目の列名: {'、'.join(found) or '（なし）'}）。",
            reason="missing_column",
            missing=missing,
            found=found,
        )
    q_col, a_col = header.index(QUESTION_COLUMN), header.index(ANSWER_COLUMN)
    pairs: list[QAPair] = []
    skipped: list[str] = []
    for number, record in enumerate(records[first + 1 :], start=1):
        question = record[q_col].strip() if q_col < len(record) else ""
        answer = record[a_col].strip() if a_col < len(record) else ""
        if not question and not answer:
            continue  # a blank line between pairs: nothing to report
        if not question or not answer:
            empty = "Q（質問）" if not question else "A（回答）"
            skipped.append(f"{number} 行目: {empty}が空のため取り込みませんでした。")
            continue
        pairs.append(QAPair(row=number, question=question, answer=answer))
    if not pairs:
        raise _invalid(
            name,
            f"Q/A ファイル「{name}」に、質問と回答の両方がそろった行がありません。",
            reason="no_pairs",
            skipped=skipped,
        )
    return QATable(file_name=name, sha256=digest, encoding=encoding, pairs=pairs, skipped=skipped)


def _invalid(name: str, message: str, *, reason: str, **details: object) -> BlockError:
    return FileProcessingError(
        name,
        message,
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint=_FORMAT_HINT,
        details={"reason": reason, **details},
    )
