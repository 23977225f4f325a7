"""Ingesting manuals and Q/A: incremental re-ingest by content hash, failures reported by file
name while the rest is ingested, folders of many files, and the Q/A CSV's encodings and errors."""

from __future__ import annotations

import fcntl
import shutil
import sqlite3
from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest, read_qa_csv
from keiri_agent.agents.helpdesk.knowledge.storage import DB_FILE
from keiri_agent.errors import BlockError, ErrorCode
from tests.agents.helpdesk.conftest import EXAMPLES, bm25_settings

PDF = EXAMPLES / "manual" / "XYZシステム_ユーザーマニュアル.pdf"


@pytest.fixture
def manuals(tmp_path: Path) -> Path:
    folder = tmp_path / "manuals"
    (folder / "経理").mkdir(parents=True)
    shutil.copy(PDF, folder / PDF.name)
    (folder / "経理" / "振込.md").write_text(
        "# 振込データの作成\n振込データは全銀フォーマットで毎月 9 日に作成します。\n",
        encoding="utf-8",
    )
    (folder / "経理" / "仮払.txt").write_text(
        "仮払金の精算は出張から戻って 5 営業日以内に行います。", encoding="utf-8"
    )
    return folder


def _chunk_ids(index: Path) -> dict[str, set[str]]:
    with sqlite3.connect(index / DB_FILE) as db:
        rows = db.execute("SELECT file_name, id FROM chunks").fetchall()
    ids: dict[str, set[str]] = {}
    for name, chunk_id in rows:
        ids.setdefault(name, set()).add(chunk_id)
    return ids


def test_re_ingest_is_incremental_by_content_hash(manuals: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    settings = bm25_settings()
    first = ingest(index, manuals=[manuals], settings=settings)
    assert (first.files_seen, first.added, first.rechunked, first.unchanged) == (3, 3, 3, 0)
    assert first.chunks_written == first.chunks_total == 37
    assert first.rebuilt
    assert first.ok
    ids = _chunk_ids(index)
    assert set(ids) == {PDF.name, "経理/振込.md", "経理/仮払.txt"}

    # Nothing changed: nothing is extracted, chunked or rebuilt.
    again = ingest(index, manuals=[manuals], settings=settings)
    assert (again.unchanged, again.rechunked, again.chunks_written) == (3, 0, 0)
    assert not again.rebuilt
    assert _chunk_ids(index) == ids

    # One file changed: only it is re-chunked; the others keep their chunk ids.
    (manuals / "経理" / "仮払.txt").write_text(
        "仮払金の精算は出張から戻って 3 営業日以内に行います。", encoding="utf-8"
    )
    changed = ingest(index, manuals=[manuals], settings=settings)
    assert (changed.updated, changed.unchanged, changed.rechunked) == (1, 2, 1)
    assert changed.chunks_written == 1
    assert changed.rebuilt
    after = _chunk_ids(index)
    assert after[PDF.name] == ids[PDF.name]
    assert after["経理/仮払.txt"].isdisjoint(ids["経理/仮払.txt"])
    kb = KnowledgeBase.open(index, settings=settings)
    hits = kb.search_manual("仮払金の精算は何営業日以内", k=5)
    assert "3 営業日以内" in next(h for h in hits if h.file_name == "経理/仮払.txt").content

    # A deleted file's chunks are gone from the index and from search.
    (manuals / "経理" / "振込.md").unlink()
    removed = ingest(index, manuals=[manuals], settings=settings)
    assert (removed.removed, removed.unchanged, removed.rechunked) == (1, 2, 0)
    assert "経理/振込.md" not in _chunk_ids(index)
    kb = KnowledgeBase.open(index, settings=settings)
    assert all(h.file_name != "経理/振込.md" for h in kb.search_manual("振込データ 全銀", k=10))


def test_a_broken_pdf_is_reported_by_name_and_the_others_are_ingested(
    manuals: Path, tmp_path: Path
) -> None:
    (manuals / "壊れた手順書.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n")
    (manuals / "空のメモ.txt").write_bytes(b"")
    result = ingest(tmp_path / "index", manuals=[manuals], settings=bm25_settings())
    assert not result.ok
    failed = {f.file_name: f for f in result.failures}
    assert set(failed) == {"壊れた手順書.pdf", "空のメモ.txt"}
    assert failed["壊れた手順書.pdf"].code == ErrorCode.FILE_UNREADABLE
    assert "壊れた手順書.pdf" in failed["壊れた手順書.pdf"].reason
    assert "空のファイル" in failed["空のメモ.txt"].reason
    assert result.added == 3
    kb = KnowledgeBase.open(tmp_path / "index", settings=bm25_settings())
    assert kb.stats().files == 3
    assert kb.search_manual("E-1004")[0].file_name in (PDF.name,)


def test_a_file_that_breaks_later_loses_its_old_chunks(manuals: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    ingest(index, manuals=[manuals], settings=bm25_settings())
    (manuals / "経理" / "仮払.txt").write_bytes(b"\x00\x01\x02 binary garbage \xff\xfe\x00")
    result = ingest(index, manuals=[manuals], settings=bm25_settings())
    assert [f.file_name for f in result.failures] == ["経理/仮払.txt"]
    assert "経理/仮払.txt" not in _chunk_ids(index)


def test_folders_of_many_files_with_progress(tmp_path: Path) -> None:
    folder = tmp_path / "faq"
    for group in range(12):
        (folder / f"部署{group:02d}").mkdir(parents=True)
        for item in range(100):
            (folder / f"部署{group:02d}" / f"手順{item:03d}.txt").write_text(
                f"部署{group:02d}の手順{item:03d}: 伝票番号 DN-{group:02d}{item:03d} は"
                "月末までに承認してください。",
                encoding="utf-8",
            )
    (folder / "部署00" / "画像.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "部署00" / "~$手順000.docx").write_bytes(b"lock")
    calls: list[tuple[int, int, str]] = []
    result = ingest(
        tmp_path / "index",
        manuals=[folder],
        settings=bm25_settings(),
        progress=lambda done, total, name: calls.append((done, total, name)),
    )
    assert (result.files_seen, result.added, result.ignored) == (1200, 1200, 2)
    assert result.ok
    assert calls[0] == (0, 1200, "部署00/手順000.txt")
    assert calls[-1] == (1200, 1200, "")
    assert [done for done, _, _ in calls] == list(range(1201))
    kb = KnowledgeBase.open(tmp_path / "index", settings=bm25_settings())
    (hit,) = kb.search_manual("DN-07042", k=1)
    assert (hit.file_name, hit.page) == ("部署07/手順042.txt", None)


def test_duplicates_a_docx_and_a_missing_path(tmp_path: Path) -> None:
    import docx

    folder = tmp_path / "manuals"
    folder.mkdir()
    document = docx.Document()
    document.add_heading("経費精算の手引き", level=1)
    document.add_paragraph("立替経費は利用日から 6 か月以内に申請してください。")
    document.save(str(folder / "手引き.docx"))
    (folder / "a.md").write_text("# 同じ内容\n重複しているファイルです。", encoding="utf-8")
    (folder / "b.md").write_text("# 同じ内容\n重複しているファイルです。", encoding="utf-8")
    result = ingest(tmp_path / "index", manuals=[folder], settings=bm25_settings())
    assert result.added == 2
    assert [(n.file_name, "a.md" in n.message) for n in result.notes] == [("b.md", True)]
    kb = KnowledgeBase.open(tmp_path / "index", settings=bm25_settings())
    (hit,) = kb.search_manual("立替経費 申請期限", k=1)
    assert (hit.file_name, hit.page) == ("手引き.docx", None)

    with pytest.raises(BlockError, match="見つかりません") as missing:
        ingest(tmp_path / "index", manuals=[tmp_path / "typo"], settings=bm25_settings())
    assert "何も変更していません" in missing.value.hint
    assert KnowledgeBase.open(tmp_path / "index", settings=bm25_settings()).stats().files == 2


def test_qa_only_re_ingest_keeps_the_manuals(manuals: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    ingest(index, manuals=[manuals], settings=bm25_settings())
    result = ingest(index, qa=EXAMPLES / "qa.csv", settings=bm25_settings())
    assert result.qa is not None
    assert result.qa.rows == 36
    assert result.qa.encoding == "cp932"
    assert result.chunks_total == 37
    again = ingest(index, qa=EXAMPLES / "qa.csv", settings=bm25_settings())
    assert again.qa is not None
    assert not again.qa.changed


def test_a_tokenizer_change_re_tokenizes_the_stored_text(manuals: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    ingest(index, manuals=[manuals], qa=EXAMPLES / "qa.csv", settings=bm25_settings())
    with sqlite3.connect(index / DB_FILE) as db:
        db.execute("UPDATE meta SET value = 'sudachipy-0.0/old-rules' WHERE key = 'tokenizer'")
        db.execute("UPDATE chunks SET tokens = ''")
    result = ingest(index, manuals=[manuals], settings=bm25_settings())
    assert result.rebuilt
    assert result.rechunked == 0
    kb = KnowledgeBase.open(index, settings=bm25_settings())
    assert kb.search_manual("E-1004")


def test_the_index_is_never_written_among_other_files(manuals: Path) -> None:
    with pytest.raises(
        BlockError, match="ナレッジベースではないファイルを含むフォルダー"
    ) as refused:
        ingest(manuals / "経理", manuals=[manuals], settings=bm25_settings())
    assert "何も書き込んでいません" in refused.value.hint
    assert sorted(p.name for p in (manuals / "経理").iterdir()) == ["仮払.txt", "振込.md"]


def test_a_concurrent_ingest_is_refused(manuals: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    with (index / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        with pytest.raises(BlockError, match="別の取り込みが実行中"):
            ingest(index, manuals=[manuals], settings=bm25_settings())
    with pytest.raises(BlockError, match="指定されていません"):
        ingest(index, settings=bm25_settings())


def test_qa_csv_in_cp932_and_utf8_with_bom(tmp_path: Path) -> None:
    cp932 = read_qa_csv(EXAMPLES / "qa.csv")
    assert (cp932.encoding, len(cp932.pairs)) == ("cp932", 36)
    assert cp932.pairs[33].answer.startswith("平日 9 時~18 時")  # 〜 was ～ in CP932, NFKC ~
    bom = tmp_path / "faq.csv"
    bom.write_bytes(
        "\ufeffＱ,Ａ,担当\r\n申請を取り消したい,「引戻し」を押してください。,経理\r\n".encode()
    )
    table = read_qa_csv(bom)
    assert table.encoding == "utf-8-sig"
    assert [(p.row, p.question, p.answer) for p in table.pairs] == [
        (1, "申請を取り消したい", "「引戻し」を押してください。")
    ]


def test_qa_rows_without_an_answer_are_listed_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text('Q,A\n質問1,回答1\n\n質問2,\n"複数行の\n質問3","回答3"\n', encoding="utf-8")
    table = read_qa_csv(path)
    assert [p.row for p in table.pairs] == [1, 4]
    assert table.pairs[1].question == "複数行の\n質問3"
    assert table.skipped == ["3 行目: A（回答）が空のため取り込みませんでした。"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("質問,回答\nパスワード,再設定\n", "列 Q・A がありません（1 行目の列名: 質問、回答）"),
        ("Q,Answer\nパスワード,再設定\n", "列 A がありません"),
        ("", "空です"),
        ("Q,A\n,\n", "質問と回答の両方がそろった行がありません"),
    ],
)
def test_bad_qa_csv_is_explained_and_nothing_is_written(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BlockError, match=message) as bad:
        ingest(tmp_path / "index", qa=path, settings=bm25_settings())
    assert bad.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "Q（質問）と A（回答）" in bad.value.hint
    assert not (tmp_path / "index").exists()
