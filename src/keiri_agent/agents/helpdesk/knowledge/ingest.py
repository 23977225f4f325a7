"""``ingest``: manuals and a Q/A CSV into a knowledge-base index, incrementally.

Manuals (PDF, Word, Excel, PowerPoint, HTML, Markdown, text) go through the file layer
(``extract_text``: real type check, NFKC normalization, PDF pages), are chunked per page with
the configured size and overlap (``KEIRI_HELPDESK_CHUNK_CHARS`` / ``_OVERLAP``; changing them
re-chunks every manual) and analyzed by Sudachi; the Q/A CSV is read
by :mod:`.qa`. Re-ingesting is incremental by content hash: an unchanged file is neither
extracted nor tokenized again, a changed one is re-chunked, a file no longer under the given
PATHs is dropped. ``--manual`` mirrors the given PATHs; when no manual PATH is given the
manuals already in the index are kept, and likewise for the Q/A CSV.

Every manual gets a line in ``IngestResult.files`` (added, updated, unchanged, failed,
duplicate, empty or removed, with its chunk count). A file that fails to extract is also
reported in ``IngestResult.failures`` with its name, code and Japanese reason, and the other
files are still ingested. A bad Q/A CSV, a missing PATH or PATHs that hold no manual (an empty
folder, one of photos: mirrored, it would empty the index) stop the ingest before anything is
written. With an embedding model configured, the Q/A pairs are
embedded (through the embedding cache) into Qdrant; without one, the manual chunks and the Q/A
pairs are embedded by the model that ships with the install (:mod:`.semantic`), unless
``KEIRI_HELPDESK_SEMANTIC=false`` (lexical search only, logged).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from keiri_agent.agents.helpdesk.knowledge import storage
from keiri_agent.agents.helpdesk.knowledge.chunking import chunk_text
from keiri_agent.agents.helpdesk.knowledge.models import (
    FileFailure,
    FileNote,
    FileStatus,
    IngestResult,
    QAReport,
)
from keiri_agent.agents.helpdesk.knowledge.qa import QATable, read_qa_csv
from keiri_agent.agents.helpdesk.knowledge.rebuild import analyzer, rebuild
from keiri_agent.agents.helpdesk.knowledge.semantic import (
    build_semantic,
    is_current,
    local_semantic,
    provider_embedder,
)
from keiri_agent.agents.helpdesk.knowledge.sources import (
    MANUAL_EXTENSIONS,
    Discovered,
    SourceFile,
    discover,
)
from keiri_agent.documents.extract import extract_text
from keiri_agent.documents.source import read_source
from keiri_agent.errors import BlockError, ErrorCode, cause_of, input_error, reason_of
from keiri_agent.retrieval.lexical import analyzer_signature
from keiri_agent.retrieval.tokenize import JapaneseTokenizer, get_tokenizer

if TYPE_CHECKING:
    from keiri_agent.config import Settings
    from keiri_agent.llm import EmbeddingClient

__all__ = ["MAX_MANUAL_CHARS", "MAX_MANUAL_PAGES", "ProgressCallback", "ingest"]

logger = logging.getLogger(__name__)

MAX_MANUAL_PAGES = 2_000  # per PDF; pages beyond are reported, not silently dropped
MAX_MANUAL_CHARS = 5_000_000  # per file
ProgressCallback = Callable[[int, int, str], None]  # (files done, files in total, current name)
LOCK_FILE = ".lock"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def _exclusive(index_dir: Path) -> Iterator[None]:
    index_dir.mkdir(parents=True, exist_ok=True)
    with (index_dir / LOCK_FILE).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BlockError(
                f"ナレッジベース {index_dir} には別の取り込みが実行中です。",
                code=ErrorCode.PERMISSION_DENIED,
                hint="実行中の `keiri-agent helpdesk ingest` が終わってから、もう一度実行してください。",
                details={"index_dir": str(index_dir)},
                recoverable=True,
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _check_index_dir(directory: Path) -> None:
    """Refuse a folder that holds other files: the index must not be written among documents."""
    if directory.exists() and not directory.is_dir():
        raise input_error(
            f"インデックスの場所 {directory} はファイルです。",
            "--index にはフォルダーを指定してください。",
            index_dir=str(directory),
        )
    if not directory.is_dir() or (directory / storage.DB_FILE).is_file():
        return
    others = [p.name for p in directory.iterdir() if not p.name.startswith(".")]
    if others:
        raise input_error(
            f"{directory} はナレッジベースではないファイルを含むフォルダーです（{others[0]} など）。",
            "--index には新しいフォルダー名か、ingest で作ったインデックスを指定してください"
            "（既存のファイルを壊さないため、何も書き込んでいません）。",
            index_dir=str(directory),
            entries=others[:10],
        )


def ingest(
    index_dir: Path | str,
    *,
    manuals: Sequence[Path | str] = (),
    qa: Path | str | None = None,
    settings: Settings | None = None,
    embedder: EmbeddingClient | None = None,
    progress: ProgressCallback | None = None,
    tokenizer: JapaneseTokenizer | None = None,
) -> IngestResult:
    """Bring the index at ``index_dir`` up to date with ``manuals`` and the ``qa`` CSV."""
    if not manuals and qa is None:
        raise input_error(
            "取り込むマニュアルも Q/A ファイルも指定されていません。",
            "--manual にファイルかフォルダー、--qa に Q/A の CSV を指定してください。",
        )
    from keiri_agent.config import load_settings

    settings = settings or load_settings()
    embedder = provider_embedder(settings, embedder)
    tokenizer = tokenizer or get_tokenizer()
    directory = Path(index_dir)
    _check_index_dir(directory)
    started = time.perf_counter()
    result = IngestResult(index_dir=str(directory))
    found = discover(manuals) if manuals else None
    if found is not None and not found.files and not found.failures:
        raise _no_manuals(manuals, found)
    table = read_qa_csv(qa) if qa is not None else None  # a bad CSV stops here: nothing written

    with _exclusive(directory):
        db = storage.IndexDB.open(directory, create=True)
        try:
            chunking = (settings.keiri_helpdesk_chunk_chars, settings.keiri_helpdesk_chunk_overlap)
            changed = _update(db, result, found, table, tokenizer, progress, chunking)
            generation = int(db.get_meta("generation") or 0)
            if changed or storage.stale_indexes(directory, generation):
                rebuild(db, directory, tokenizer, generation)
                result.rebuilt = True
            result.chunks_total = db.chunk_count()
            result.qa_rows_total = db.qa_count()
            if embedder is not None and embedder.configured:
                result.qa_mode = "dense"
                result.embedding_model = _embed_qa(db, directory, settings, embedder, result)
            elif (local := local_semantic(settings)) is not None:
                result.qa_mode = "dense"
                result.embedding_model = local.model_key
                if not is_current(db, directory, local.model_key):
                    result.semantic_embedded = build_semantic(db, directory, local, settings)
            else:
                logger.info(
                    "Semantic search off (KEIRI_HELPDESK_SEMANTIC=false) and no embedding model "
                    "configured: %s is searched lexically only",
                    directory,
                )
        finally:
            db.close()
    result.duration_s = round(time.perf_counter() - started, 3)
    return result


def _no_manuals(manuals: Sequence[Path | str], found: Discovered) -> BlockError:
    """The error for manual PATHs that hold no manual at all."""
    places = "、".join(f"「{p}」" for p in manuals)
    skipped = f"（対応していないファイル {found.ignored} 件は読みません）" if found.ignored else ""
    return input_error(
        f"{places}に取り込めるマニュアルがありません{skipped}。",
        f"マニュアル（{' '.join(MANUAL_EXTENSIONS)}）の入ったフォルダーかファイルを指定してください"
        "（何も変更していません）。",
        manuals=[str(p) for p in manuals],
        ignored=found.ignored,
    )


def _update(
    db: storage.IndexDB,
    result: IngestResult,
    found: Discovered | None,
    table: QATable | None,
    tokenizer: JapaneseTokenizer,
    progress: ProgressCallback | None,
    chunking: tuple[int, int],
) -> bool:
    """Apply the changes in one transaction; True when anything in the index changed."""
    signature = analyzer_signature(tokenizer)
    stored_signature = db.get_meta("tokenizer")
    analyze = analyzer(tokenizer)
    changed = False
    with db.transaction() as tx:
        if db.get_meta("index_id") is None:
            storage.set_meta(tx, "index_id", uuid.uuid4().hex[:12])
        if stored_signature is not None and stored_signature != signature:
            # New tokenizer rules or dictionary: re-analyze the stored text (no re-extraction).
            storage.retokenize(tx, analyze)
            changed = True
        chunk_setting = f"{chunking[0]}/{chunking[1]}"
        if found is not None:
            # Other chunk settings than the stored chunks were cut with: re-chunk every file.
            rechunk = db.get_meta("chunking") not in (None, chunk_setting)
            changed |= _update_manuals(tx, db, result, found, analyze, progress, chunking, rechunk)
            storage.set_meta(tx, "chunking", chunk_setting)
        elif db.get_meta("chunking") not in (None, chunk_setting):
            result.notes.append(
                FileNote(
                    file_name="",
                    message=f"チャンクの設定（{chunk_setting}）が登録済みのマニュアルの設定"
                    f"（{db.get_meta('chunking')}）と違います。--manual を指定して取り込み直すと"
                    "新しい設定で分割します。",
                )
            )
        if table is not None:
            changed |= _update_qa(tx, db, result, table, analyze)
        storage.set_meta(tx, "tokenizer", signature)
        if changed:
            generation = int(db.get_meta("generation") or 0) + 1
            storage.set_meta(tx, "generation", str(generation))
            storage.set_meta(tx, "ingested_at", datetime.now(UTC).isoformat(timespec="seconds"))
    return changed


def _update_manuals(
    tx: sqlite3.Connection,
    db: storage.IndexDB,
    result: IngestResult,
    found: Discovered,
    analyze: Callable[[list[str]], list[str]],
    progress: ProgressCallback | None,
    chunking: tuple[int, int],
    rechunk: bool,
) -> bool:
    existing = db.files()
    result.files_seen = len(found.files)
    result.ignored = found.ignored
    result.failures.extend(found.failures)
    wanted = {f.key for f in found.files}
    removed = [key for key in existing if key not in wanted]
    for key in removed:  # first: a moved file may bring back the same chunk ids
        storage.delete_file(tx, key)
        result.files.append(FileStatus(file_name=existing[key].file_name, status="removed"))
    for failure in found.failures:
        result.files.append(
            FileStatus(file_name=failure.file_name, status="failed", message=failure.reason)
        )
    result.removed = len(removed)
    dropped = 0  # indexed files that now fail or duplicate another: their old chunks go
    # Hashes owned by files that stay as they are; a new file with one of them is a duplicate.
    owners: dict[str, str] = {}
    total = len(found.files)
    for done, source in enumerate(found.files):
        if progress is not None:
            progress(done, total, source.file_name)
        previous = existing.get(source.key)
        try:
            data = read_source(source.path, label=source.file_name)
        except BlockError as exc:
            _fail(result, source, exc)
            dropped += _drop(tx, previous)
            continue
        digest = _sha256(data)
        if previous is not None and previous.sha256 == digest and not rechunk:
            result.unchanged += 1
            result.files.append(
                FileStatus(file_name=source.file_name, status="unchanged", chunks=previous.chunks)
            )
            owners.setdefault(digest, source.file_name)
            if previous.file_name != source.file_name:  # the same file, named from another root
                storage.rename_file(tx, source.key, source.file_name)
            continue
        owner = owners.get(digest) or _owner_elsewhere(existing, digest, source.key, wanted)
        if owner is not None:
            dropped += _drop(tx, previous)
            message = f"「{owner}」と同じ内容のため取り込みませんでした。"
            result.notes.append(FileNote(file_name=source.file_name, message=message))
            result.files.append(
                FileStatus(file_name=source.file_name, status="duplicate", message=message)
            )
            continue
        owners[digest] = source.file_name
        try:
            extracted = extract_text(
                data, name=source.path.name, max_chars=MAX_MANUAL_CHARS, max_pages=MAX_MANUAL_PAGES
            )
        except BlockError as exc:
            _fail(result, source, exc)
            dropped += _drop(tx, previous)
            continue
        except Exception as exc:  # a parser bug on one file must not stop the others
            said = f"ファイルを読み込めませんでした: {reason_of(exc)}"
            _fail(result, source, BlockError(said, details={"cause": cause_of(exc)}))
            dropped += _drop(tx, previous)
            continue
        for warning in extracted.warnings:
            result.notes.append(FileNote(file_name=source.file_name, message=warning))
        chunks = chunk_text(
            extracted.text,
            file_name=source.file_name,
            file_hash=digest,
            paged=extracted.unit == "page",
            max_chars=chunking[0],
            overlap=chunking[1],
        )
        status = "added" if previous is None else "updated"
        message = ""
        if not chunks:
            status, message = "empty", "検索できる本文がありませんでした。"
            result.notes.append(FileNote(file_name=source.file_name, message=message))
        analyses = analyze([c.text for c in chunks])
        record = storage.FileRecord(source.key, source.file_name, digest, len(data), len(chunks))
        storage.put_file(tx, record, chunks, analyses)
        result.files.append(
            FileStatus(
                file_name=source.file_name, status=status, chunks=len(chunks), message=message
            )
        )
        result.rechunked += 1
        result.chunks_written += len(chunks)
        if previous is None:
            result.added += 1
        else:
            result.updated += 1
    if progress is not None:
        progress(total, total, "")
    return bool(removed or dropped or result.rechunked)


def _drop(tx: sqlite3.Connection, previous: storage.FileRecord | None) -> int:
    if previous is None:
        return 0
    storage.delete_file(tx, previous.key)
    return 1


def _owner_elsewhere(
    existing: dict[str, storage.FileRecord], digest: str, key: str, wanted: set[str]
) -> str | None:
    """The name of another kept file that has this content and has not been read yet."""
    for other_key, record in existing.items():
        if other_key != key and other_key in wanted and record.sha256 == digest:
            return record.file_name
    return None


def _fail(result: IngestResult, source: SourceFile, exc: BlockError) -> None:
    result.files.append(
        FileStatus(file_name=source.file_name, status="failed", message=exc.message)
    )
    result.failures.append(
        FileFailure(
            file_name=source.file_name,
            path=source.key,
            code=exc.code,
            reason=exc.message,
            hint=exc.hint,
        )
    )


def _update_qa(
    tx: sqlite3.Connection,
    db: storage.IndexDB,
    result: IngestResult,
    table: QATable,
    analyze: Callable[[list[str]], list[str]],
) -> bool:
    changed = db.get_meta("qa_sha256") != table.sha256
    if changed:
        storage.put_qa(tx, table.pairs, analyze([storage.qa_search_text(p) for p in table.pairs]))
        storage.set_meta(tx, "qa_sha256", table.sha256)
    storage.set_meta(tx, "qa_file", table.file_name)
    storage.set_meta(tx, "qa_encoding", table.encoding)
    result.qa = QAReport(
        file_name=table.file_name,
        encoding=table.encoding,
        rows=len(table.pairs),
        skipped_rows=table.skipped,
        changed=changed,
    )
    return changed


def _embed_qa(
    db: storage.IndexDB,
    directory: Path,
    settings: Settings,
    embedder: EmbeddingClient,
    result: IngestResult,
) -> str:
    from keiri_agent.agents.helpdesk.knowledge.qdrant import QAVectorStore

    store = QAVectorStore.connect(
        directory, index_id=str(db.get_meta("index_id")), settings=settings, embedder=embedder
    )
    try:
        sent = store.sync(db.qa_pairs())
    finally:
        store.close()
    if result.qa is not None:
        result.qa.embedded = sent
    return store.model_key
