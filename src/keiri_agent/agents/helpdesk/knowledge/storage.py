"""The on-disk index of a help-desk knowledge base (one directory).

Layout of ``<index>/``::

    knowledge.sqlite3   files (path, name, SHA-256), chunks (text + Sudachi analysis), Q/A, meta
    manual_lexical/     the lexical index of the manual chunks (keiri_agent.retrieval.LexicalIndex)
    qa_lexical/         the same over "Q + A" of each pair
    state.json          which generation of the database the BM25 indexes were built from
    qdrant/             Qdrant's embedded local storage (dense Q/A search only)

Chunks are stored with their Sudachi analysis (``Analysis.encode()``), so re-ingesting after a
change tokenizes only the changed files and rebuilds the indexes from what is stored. One ingest is one SQLite transaction; the BM25
indexes are then replaced as whole directories and ``state.json`` last, so a reader either sees
a consistent index or is told that the previous ingest was interrupted.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keiri_agent.agents.helpdesk.knowledge.models import ManualChunk, QAPair
from keiri_agent.errors import ErrorCode, FileProcessingError, cause_of, reason_of

__all__ = [
    "DB_FILE",
    "INDEX_FORMAT",
    "LEXICAL_FORMAT",
    "MANUAL_LEXICAL_DIR",
    "QA_LEXICAL_DIR",
    "QDRANT_DIR",
    "STATE_FILE",
    "FileRecord",
    "IndexDB",
    "damaged",
    "delete_file",
    "put_file",
    "put_qa",
    "qa_search_text",
    "read_state",
    "rename_file",
    "retokenize",
    "set_meta",
    "stale_indexes",
]

INDEX_FORMAT = 1
DB_FILE = "knowledge.sqlite3"
MANUAL_LEXICAL_DIR = "manual_lexical"
QA_LEXICAL_DIR = "qa_lexical"
LEXICAL_FORMAT = 1  # state.json records it: indexes of another format are rebuilt by ingest
OLD_INDEX_DIRS = ("manual_bm25", "qa_bm25")  # written by earlier versions, removed on rebuild
STATE_FILE = "state.json"
QDRANT_DIR = "qdrant"
_BATCH = 500  # SQLite host parameters per query

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    key TEXT PRIMARY KEY, file_name TEXT NOT NULL, sha256 TEXT NOT NULL,
    bytes INTEGER NOT NULL, chunks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, file_key TEXT NOT NULL, file_name TEXT NOT NULL, page INTEGER,
    ordinal INTEGER NOT NULL, text TEXT NOT NULL, tokens TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (file_key);
CREATE TABLE IF NOT EXISTS qa (
    row INTEGER PRIMARY KEY, question TEXT NOT NULL, answer TEXT NOT NULL,
    tokens TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A manual file as the index knows it."""

    key: str  # the resolved absolute path
    file_name: str
    sha256: str
    bytes: int
    chunks: int


class IndexDB:
    """The SQLite database of one index; safe to share between threads (one lock)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._connection = connection
        self._lock = threading.RLock()

    @classmethod
    def open(cls, directory: Path, *, create: bool) -> IndexDB:
        path = directory / DB_FILE
        if not create and not path.is_file():
            raise FileNotFoundError(str(path))
        try:
            if create:
                directory.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
            connection.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise damaged(directory, exc) from exc
        db = cls(path, connection)
        stored = db.get_meta("format")
        if stored is None and create:
            db.set_meta_now("format", str(INDEX_FORMAT))
        elif stored != str(INDEX_FORMAT):
            connection.close()
            raise FileProcessingError(
                str(directory),
                f"ナレッジベース {directory} の形式（{stored}）はこの版では読めません"
                f"（対応: {INDEX_FORMAT}）。",
                code=ErrorCode.UNSUPPORTED_FORMAT,
                hint="ディレクトリを削除し、`keiri-agent helpdesk ingest` で作り直してください。",
            )
        return db

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: everything inside commits together or not at all."""
        with self._lock:
            try:
                with self._connection:
                    yield self._connection
            except sqlite3.Error as exc:
                raise damaged(self.path.parent, exc) from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._connection.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise damaged(self.path.parent, exc) from exc

    # --- meta -------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta_now(self, key: str, value: str) -> None:
        with self.transaction() as tx:
            set_meta(tx, key, value)

    # --- manual files and chunks ------------------------------------------------------------

    def files(self) -> dict[str, FileRecord]:
        rows = self._query("SELECT key, file_name, sha256, bytes, chunks FROM files ORDER BY key")
        return {row[0]: FileRecord(*row) for row in rows}

    def chunk_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM chunks")[0][0])

    def chunk_analyses(self) -> tuple[list[str], list[str], list[str]]:
        """Every chunk's id, text and stored analysis, in index order (file, page, position)."""
        rows = self._query("SELECT id, text, tokens FROM chunks ORDER BY file_key, page, ordinal")
        return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]

    def chunks(self, ids: Iterable[str]) -> dict[str, ManualChunk]:
        wanted = list(dict.fromkeys(ids))
        found: dict[str, ManualChunk] = {}
        for start in range(0, len(wanted), _BATCH):
            batch = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            for row in self._query(
                f"SELECT id, file_name, page, ordinal, text FROM chunks WHERE id IN ({marks})",
                batch,
            ):
                found[row[0]] = ManualChunk(*row)
        return found

    # --- Q/A --------------------------------------------------------------------------------

    def qa_count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM qa")[0][0])

    def qa_analyses(self) -> tuple[list[int], list[str], list[str]]:
        """Every pair's row, searched text and stored analysis, in row order."""
        rows = self._query("SELECT row, question, answer, tokens FROM qa ORDER BY row")
        return (
            [int(row[0]) for row in rows],
            [qa_search_text(QAPair(int(row[0]), row[1], row[2])) for row in rows],
            [row[3] for row in rows],
        )

    def qa_pairs(self, rows: Iterable[int] | None = None) -> dict[int, QAPair]:
        if rows is None:
            result = self._query("SELECT row, question, answer FROM qa ORDER BY row")
        else:
            wanted = list(dict.fromkeys(rows))
            result = []
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                result += self._query(
                    f"SELECT row, question, answer FROM qa WHERE row IN ({marks})", batch
                )
        return {int(r[0]): QAPair(int(r[0]), r[1], r[2]) for r in result}


# --- writes inside a transaction (ingest) ---------------------------------------------------


def set_meta(tx: sqlite3.Connection, key: str, value: str) -> None:
    tx.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def delete_file(tx: sqlite3.Connection, key: str) -> None:
    tx.execute("DELETE FROM chunks WHERE file_key = ?", (key,))
    tx.execute("DELETE FROM files WHERE key = ?", (key,))


def put_file(
    tx: sqlite3.Connection,
    record: FileRecord,
    chunks: Sequence[ManualChunk],
    analyses: Sequence[str],
) -> None:
    """Replace a file's row and all its chunks."""
    delete_file(tx, record.key)
    tx.execute(
        "INSERT INTO files (key, file_name, sha256, bytes, chunks) VALUES (?, ?, ?, ?, ?)",
        (record.key, record.file_name, record.sha256, record.bytes, record.chunks),
    )
    tx.executemany(
        "INSERT INTO chunks (id, file_key, file_name, page, ordinal, text, tokens)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (c.id, record.key, c.file_name, c.page, c.ordinal, c.text, a)
            for c, a in zip(chunks, analyses, strict=True)
        ],
    )


def rename_file(tx: sqlite3.Connection, key: str, file_name: str) -> None:
    tx.execute("UPDATE chunks SET file_name = ? WHERE file_key = ?", (file_name, key))
    tx.execute("UPDATE files SET file_name = ? WHERE key = ?", (file_name, key))


def qa_search_text(pair: QAPair) -> str:
    """What BM25 indexes for a Q/A pair: the question and the answer, without labels."""
    return f"{pair.question}\n{pair.answer}"


def retokenize(tx: sqlite3.Connection, analyze: Callable[[list[str]], list[str]]) -> None:
    """Recompute every stored analysis from the stored text (after a tokenizer change)."""
    chunks = tx.execute("SELECT id, text FROM chunks").fetchall()
    analyses = analyze([text for _, text in chunks])
    tx.executemany(
        "UPDATE chunks SET tokens = ? WHERE id = ?",
        [(a, cid) for (cid, _), a in zip(chunks, analyses, strict=True)],
    )
    pairs = [QAPair(int(r), q, a) for r, q, a in tx.execute("SELECT row, question, answer FROM qa")]
    analyses = analyze([qa_search_text(p) for p in pairs])
    tx.executemany(
        "UPDATE qa SET tokens = ? WHERE row = ?",
        [(a, p.row) for p, a in zip(pairs, analyses, strict=True)],
    )


def put_qa(tx: sqlite3.Connection, pairs: Sequence[QAPair], analyses: Sequence[str]) -> None:
    """Replace every Q/A pair."""
    tx.execute("DELETE FROM qa")
    tx.executemany(
        "INSERT INTO qa (row, question, answer, tokens) VALUES (?, ?, ?, ?)",
        [(p.row, p.question, p.answer, a) for p, a in zip(pairs, analyses, strict=True)],
    )


def read_state(directory: Path) -> dict[str, Any] | None:
    path = directory / STATE_FILE
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(directory, exc) from exc
    return state if isinstance(state, dict) else None


def stale_indexes(directory: Path, generation: int) -> bool:
    """Whether the indexes on disk are missing or were built from another state."""
    state = read_state(directory)
    return (
        state is None
        or state.get("generation") != generation
        or state.get("lexical_format") != LEXICAL_FORMAT
    )


def damaged(directory: Path, exc: BaseException) -> FileProcessingError:
    return FileProcessingError(
        str(directory),
        f"ナレッジベース {directory} を読み書きできません: {reason_of(exc)}",
        code=ErrorCode.FILE_UNREADABLE,
        hint="書き込み権限とディスクの空きを確認してください。壊れている場合はディレクトリを削除し、"
        "`keiri-agent helpdesk ingest` で作り直してください。",
        details={"index_dir": str(directory), "cause": cause_of(exc)},
    )
