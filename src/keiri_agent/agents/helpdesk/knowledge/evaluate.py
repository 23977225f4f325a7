"""Retrieval evaluation a team runs on its own knowledge base (``keiri-agent helpdesk eval``).

A question file lists questions and where their answer is. CSV (UTF-8 or Shift_JIS, a header
row) or JSONL (one object per line) with these fields:

- ``question`` (required; CSV header ``question`` or ``質問``);
- ``file``: the manual or Q/A file that answers it (the name ``search`` shows, or its last part);
- ``page``: PDF page(s), ``row``: Q/A row(s) — several as ``3;12`` in CSV or a list in JSONL;
- ``passage``: text the answering chunk contains (a sentence or a heading), checked after NFKC
  normalization with spaces removed;
- ``id`` (optional).

At least one of ``file`` and ``passage`` is required. A hit answers the question when it meets
every field given (any one of several pages or rows). Each question is searched like the agent
does (relevance floor included) and scored: recall@k is the share of questions answered within
the first k hits, MRR the mean of 1 / the rank of the first answering hit (0 when none in
the first ``max(k, 10)``). Questions left unanswered at k are listed as misses with what came
first instead; a question whose search returned nothing is counted as 該当なし.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from keiri_agent.agents.helpdesk.knowledge.models import SearchOutput
from keiri_agent.agents.jsonlines import json_objects
from keiri_agent.errors import BlockError, input_error, reason_of

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.knowledge.store import KnowledgeBase

__all__ = [
    "EvalQuestion",
    "EvalReport",
    "Expected",
    "Miss",
    "evaluate",
    "parse_questions",
    "read_questions",
]

MIN_DEPTH = 10  # hits fetched per question for MRR
MAX_QUESTIONS = 10_000
_ALIASES = {
    "質問": "question",
    "ファイル": "file",
    "ページ": "page",
    "行": "row",
    "本文": "passage",
}
_LIST_SPLIT = re.compile(r"[;；、,，\s]+")
_FORMAT_HINT = (
    "1 行目に question,file,page,row,passage の列名を置いた CSV か、"
    '{"question": "...", "file": "...", "page": 3} を 1 行ずつ書いた JSONL にしてください'
    "（file か passage のどちらかは必須）。"
)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text)).lower()


@dataclass(frozen=True, slots=True)
class Expected:
    """Where one answer is: a file, optionally a page or Q/A row, and/or a passage."""

    file: str | None = None
    page: int | None = None
    row: int | None = None
    passage: str | None = None

    def matches(self, hit: SearchOutput) -> bool:
        if self.file is not None:
            name = unicodedata.normalize("NFKC", hit.file_name)
            wanted = unicodedata.normalize("NFKC", self.file)
            if name != wanted and not name.endswith("/" + wanted):
                return False
        if self.page is not None and hit.page != self.page:
            return False
        if self.row is not None and hit.row != self.row:
            return False
        return self.passage is None or _squash(self.passage) in _squash(hit.content)

    def describe(self) -> str:
        parts = [self.file or ""]
        if self.page is not None:
            parts.append(f"p.{self.page}")
        if self.row is not None:
            parts.append(f"{self.row} 行目")
        if self.passage:
            parts.append(f"「{self.passage}」")
        return " ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    id: str
    question: str
    expected: tuple[Expected, ...]

    def rank(self, hits: Sequence[SearchOutput]) -> int | None:
        """1-based rank of the first hit that answers the question (None: none does)."""
        for position, hit in enumerate(hits, start=1):
            if any(e.matches(hit) for e in self.expected):
                return position
        return None


class Miss(BaseModel):
    """A question not answered within the first k hits, and what came instead."""

    id: str
    question: str
    expected: list[str]
    rank: int | None = Field(description="答えのある結果の順位（上位 10 件になければ null）")
    top: list[str] = Field(description="上位 k 件の出典")


class EvalReport(BaseModel):
    tool: str
    k: int
    questions: int
    recall_at_k: float
    mrr: float
    answered: int
    no_match: int = Field(description="検索結果が 0 件（該当なし）だった質問の数")
    min_relevance: float
    min_margin: float | None = None  # the semantic floor, when the bundled model searches
    misses: list[Miss] = Field(default_factory=list)


def evaluate(
    kb: KnowledgeBase,
    questions: Sequence[EvalQuestion],
    *,
    tool: str = "hybrid",
    k: int = 3,
    progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Search every question with ``tool`` and score the rankings (see the module docstring)."""
    if not questions:
        raise input_error("評価する質問がありません。", _FORMAT_HINT)
    depth = max(k, MIN_DEPTH)
    answered = 0
    no_match = 0
    reciprocal = 0.0
    misses: list[Miss] = []
    for done, item in enumerate(questions):
        if progress is not None:
            progress(done, len(questions))
        hits = kb.search(item.question, depth, tool=tool)
        rank = item.rank(hits)
        no_match += not hits
        if rank is not None:
            reciprocal += 1.0 / rank
        if rank is not None and rank <= k:
            answered += 1
            continue
        misses.append(
            Miss(
                id=item.id,
                question=item.question,
                expected=[e.describe() for e in item.expected],
                rank=rank,
                top=[hit.citation() for hit in hits[:k]],
            )
        )
    if progress is not None:
        progress(len(questions), len(questions))
    return EvalReport(
        tool=tool,
        k=k,
        questions=len(questions),
        recall_at_k=answered / len(questions),
        mrr=reciprocal / len(questions),
        answered=answered,
        no_match=no_match,
        min_relevance=kb.min_relevance,
        min_margin=kb.stats().min_margin,
        misses=misses,
    )


# --- question files -------------------------------------------------------------------------


def read_questions(path: Path | str) -> list[EvalQuestion]:
    """Read a CSV or JSONL question file (see the module docstring)."""
    from keiri_agent.documents.source import read_source

    source = Path(path)
    data = read_source(source, label=source.name)
    return parse_questions(data, name=source.name)


def parse_questions(data: bytes, *, name: str) -> list[EvalQuestion]:
    from keiri_agent.documents.encoding import decode_bytes

    text, _ = decode_bytes(data, file=name)
    if name.lower().endswith((".jsonl", ".json", ".ndjson")):
        records = _jsonl(text, name)
    else:
        records = _csv(text, name)
    questions = [_question(record, number, name) for number, record in records]
    if not questions:
        raise _invalid(name, f"質問ファイル「{name}」に質問がありません。")
    if len(questions) > MAX_QUESTIONS:
        raise _invalid(
            name, f"質問ファイル「{name}」の質問が多すぎます（上限 {MAX_QUESTIONS:,} 件）。"
        )
    return questions


def _jsonl(text: str, name: str) -> list[tuple[int, dict[str, Any]]]:
    return json_objects(
        text,
        not_json=lambda number, exc: _invalid(
            name, f"「{name}」の {number} 行目が JSON として読めません: {reason_of(exc)}"
        ),
        not_object=lambda number: _invalid(
            name, f"「{name}」の {number} 行目がオブジェクト（{{...}}）ではありません。"
        ),
    )


def _csv(text: str, name: str) -> list[tuple[int, dict[str, Any]]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        return []
    header = [_ALIASES.get(cell.strip(), cell.strip().lower()) for cell in rows[0]]
    if "question" not in header:
        found = "、".join(cell for cell in rows[0] if cell.strip()) or "（なし）"
        raise _invalid(
            name, f"質問ファイル「{name}」に列 question（質問）がありません（1 行目: {found}）。"
        )
    records = []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        records.append((number, {key: value for key, value in zip(header, row, strict=False)}))
    return records


def _question(record: dict[str, Any], number: int, name: str) -> EvalQuestion:
    record = {_ALIASES.get(str(key), str(key).lower()): value for key, value in record.items()}
    question = str(record.get("question") or "").strip()
    where = f"「{name}」の {number} 行目"
    if not question:
        raise _invalid(name, f"{where}に質問（question）がありません。")
    file = str(record.get("file") or "").strip() or None
    passages = [str(p).strip() for p in _items(record.get("passage")) if str(p).strip()]
    if file is None and not passages:
        raise _invalid(name, f"{where}に答えの場所（file か passage）がありません。")
    pages = _numbers(record.get("page"), where, "page")
    rows = _numbers(record.get("row"), where, "row")
    any_page: list[int | None] = [*pages] or [None]
    any_row: list[int | None] = [*rows] or [None]
    any_passage: list[str | None] = [*passages] or [None]
    expected = [
        Expected(file=file, page=page, row=row, passage=passage)
        for page in any_page
        for row in any_row
        for passage in any_passage
    ]
    return EvalQuestion(str(record.get("id") or number), question, tuple(expected))


def _items(value: Any) -> list[Any]:
    if value is None or value == "":
        return []
    return list(value) if isinstance(value, list) else [value]


def _numbers(value: Any, where: str, field: str) -> list[int]:
    items = _items(value)
    if len(items) == 1 and isinstance(items[0], str):
        items = [part for part in _LIST_SPLIT.split(items[0]) if part]
    numbers = []
    for item in items:
        try:
            number = int(unicodedata.normalize("NFKC", str(item)))
        except ValueError:
            number = 0
        if number < 1:
            raise _invalid(where, f"{where}の {field} 「{item}」は 1 以上の整数ではありません。")
        numbers.append(number)
    return numbers


def _invalid(name: str, message: str) -> BlockError:
    return input_error(message, _FORMAT_HINT, file=name)
