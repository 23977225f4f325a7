"""Data models of the help desk's knowledge base: search results, chunks, ingest reports.

``SearchOutput`` is the seed's name for one search hit (seed 001 §3.2, ``ToolResult.results``).
It keeps the seed's ``file_name`` and ``content`` and adds where the text came from (``page`` of
a manual, ``row`` of the Q/A CSV), a stable ``chunk_id`` and the ``score`` it was ranked by, so
an answer can cite its source and a ranking can be explained.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FileFailure",
    "FileNote",
    "FileStatus",
    "IngestResult",
    "KnowledgeStats",
    "ManualChunk",
    "QAMode",
    "QAPair",
    "QAReport",
    "SearchOutput",
    "Source",
]

Source = Literal["manual", "qa"]
QAMode = Literal["dense", "bm25"]


class SearchOutput(BaseModel):
    """One search hit, as the ``search_manual`` and ``search_qa`` tools return it.

    ``page`` is the 1-based PDF page of a manual chunk (``None`` for Markdown, text and Word
    files, which have no fixed pages); ``row`` is the 1-based data row of a Q/A pair in its CSV
    (the header is not counted: row 1 is the first question). ``score`` is the ranking score:
    the lexical score (0..1, BM25 of three fields divided by the most the question could score)
    for manual chunks and BM25 Q/A search, and the reciprocal-rank-fusion score when dense Q/A
    search takes part. ``relevance`` (0..1) is the IDF-weighted share of the question's words
    the text contains, the same scale for every source and question; ``similarity`` is the
    cosine similarity of a dense Q/A hit, or with the bundled model (semantic search) that of
    the hit's best piece. ``above_floor`` says whether the hit passed the
    relevance floor (``KEIRI_HELPDESK_MIN_RELEVANCE``, or ``KEIRI_HELPDESK_MIN_SIMILARITY`` for
    a dense hit): searches return only hits above it, and an empty result means 該当なし.
    """

    model_config = ConfigDict(frozen=True)

    file_name: str = Field(
        description="出典のファイル名（フォルダを取り込んだ場合はその中の相対パス）"
    )
    content: str = Field(description="本文（マニュアルの一部、または Q/A の質問と回答）")
    page: int | None = Field(default=None, description="PDF のページ番号（1 始まり）")
    row: int | None = Field(
        default=None, description="Q/A CSV のデータ行番号（見出し行を除き 1 始まり）"
    )
    chunk_id: str = Field(description="チャンクの ID（ファイル内容のハッシュ・ページ・連番）")
    score: float = Field(description="検索スコア（大きいほど関連が強い）")
    source: Source = Field(description="manual（マニュアル）または qa（よくある質問）")
    relevance: float = Field(
        default=1.0, description="関連度（0〜1: 質問の語のうち本文に含まれる語の重みの割合）"
    )
    similarity: float | None = Field(
        default=None, description="埋め込みの類似度（意味検索のときだけ）"
    )
    above_floor: bool = Field(default=True, description="関連度の下限を満たすかどうか")

    def citation(self) -> str:
        """Where the text came from, in Japanese (``ファイル名 p.3`` / ``qa.csv 5 行目``)."""
        if self.page is not None:
            return f"{self.file_name} p.{self.page}"
        if self.row is not None:
            return f"{self.file_name} {self.row} 行目"
        return self.file_name


@dataclass(frozen=True, slots=True)
class ManualChunk:
    """A piece of one manual page, as stored in the index."""

    id: str
    file_name: str
    page: int | None
    ordinal: int  # position within its page (or within the file when it has no pages)
    text: str


@dataclass(frozen=True, slots=True)
class QAPair:
    """One question/answer row of the Q/A CSV (``row`` counts data rows from 1)."""

    row: int
    question: str
    answer: str

    @property
    def text(self) -> str:
        """What is indexed and shown: the question and its answer."""
        return f"Q: {self.question}\nA: {self.answer}"


class FileFailure(BaseModel):
    """A source file that could not be ingested, and why (in Japanese)."""

    file_name: str
    path: str
    code: str
    reason: str
    hint: str = ""


class FileNote(BaseModel):
    """Something a user should know about a file that was ingested or skipped on purpose."""

    file_name: str
    message: str


class QAReport(BaseModel):
    """What happened to the Q/A CSV in one ingest."""

    file_name: str
    encoding: str
    rows: int
    skipped_rows: list[str] = Field(default_factory=list)
    changed: bool
    embedded: int = 0  # Q/A pairs sent to the embedding model (0 when cached or BM25 only)


FileState = Literal["added", "updated", "unchanged", "failed", "duplicate", "empty", "removed"]
FILE_STATE_LABELS: dict[str, str] = {
    "added": "追加",
    "updated": "更新",
    "unchanged": "変更なし",
    "failed": "失敗",
    "duplicate": "重複（取り込まず）",
    "empty": "本文なし",
    "removed": "削除",
}


class FileStatus(BaseModel):
    """What one ingest did with one manual file."""

    file_name: str
    status: FileState
    chunks: int = 0
    message: str = ""

    @property
    def label(self) -> str:
        return FILE_STATE_LABELS[self.status]


class IngestResult(BaseModel):
    """The outcome of ``ingest``: counts a user can check, and every file that failed.

    ``rechunked`` counts files extracted and chunked in this run (new or changed);
    ``unchanged`` files were skipped because their content hash matched the index.
    """

    index_dir: str
    files_seen: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    rechunked: int = 0
    chunks_written: int = 0
    chunks_total: int = 0
    ignored: int = 0  # files in the given folders with an unsupported extension
    failures: list[FileFailure] = Field(default_factory=list)
    notes: list[FileNote] = Field(default_factory=list)
    files: list[FileStatus] = Field(default_factory=list)  # one line per manual file
    qa: QAReport | None = None
    qa_rows_total: int = 0
    qa_mode: QAMode = "bm25"
    embedding_model: str | None = None
    semantic_embedded: int = 0  # texts the bundled model embedded (0: stored or cached)
    rebuilt: bool = False  # whether the search indexes were rebuilt
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


class KnowledgeStats(BaseModel):
    """What an index holds and how ``search_qa`` runs (shown by the CLI and the UI)."""

    min_relevance: float = 0.0

    index_dir: str
    files: int
    chunks: int
    qa_rows: int
    qa_file: str | None
    qa_mode: QAMode
    qa_mode_reason: str
    embedding_model: str | None
    qdrant: str | None  # "local:<path>" or the server URL; None in BM25 mode
    semantic_model: str | None = None  # the bundled model, when it searches (issue 38)
    min_margin: float | None = None  # its floor (KEIRI_HELPDESK_MIN_MARGIN)
    ingested_at: str | None
    file_names: list[str] = Field(default_factory=list)
