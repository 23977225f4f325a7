"""`helpdesk eval` on a team's question file, chunk settings, and Excel/PowerPoint/HTML manuals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import Workbook
from pptx import Presentation
from typer.testing import CliRunner

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.evaluate import parse_questions
from keiri_agent.cli import app
from keiri_agent.errors import BlockError
from tests.agents.helpdesk.conftest import bm25_settings

MANUAL = "XYZシステム_ユーザーマニュアル.pdf"


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, list(args), env={"KEIRI_LLM_MODEL_EMBEDDING": "", **(env or {})}
    )
    return result.exit_code, result.output


def test_eval_reports_recall_mrr_and_the_misses(helpdesk_index: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.csv"
    questions.write_text(
        "question,file,page,row\n"
        f"E-1004 って出てログインできません,{MANUAL},3;12,\n"
        "パスワードを忘れたので再設定したい,qa.csv,,1\n"
        f"週末に釣りへ行く,{MANUAL},9,\n",
        encoding="cp932",
    )
    code, out = _run(
        "helpdesk", "eval", "--questions", str(questions), "--index", str(helpdesk_index),
        "--k", "3", "--json",
    )  # fmt: skip
    assert code == 0, out
    report = json.loads(out)
    assert report["questions"] == 3
    assert report["answered"] == 2
    assert report["recall_at_k"] == pytest.approx(2 / 3)
    assert 0 < report["mrr"] <= 2 / 3
    assert report["no_match"] == 1  # the off-topic question: 該当なし
    assert [m["question"] for m in report["misses"]] == ["週末に釣りへ行く"]
    code, out = _run(
        "helpdesk", "eval", "--questions", str(questions), "--index", str(helpdesk_index)
    )
    assert code == 0
    assert "recall@3: 0.667" in out
    assert "週末に釣りへ行く" in out


def test_a_bad_question_file_is_explained(helpdesk_index: Path, tmp_path: Path) -> None:
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question": "締め日は？"}\n', encoding="utf-8")
    code, out = _run("helpdesk", "eval", "--questions", str(bad), "--index", str(helpdesk_index))
    assert code != 0
    assert "答えの場所" in out
    with pytest.raises(BlockError, match="question"):
        parse_questions(b"file,page\nx.pdf,1\n", name="q.csv")
    with pytest.raises(BlockError, match="1 以上の整数"):
        parse_questions('{"question": "a", "file": "x", "page": "三"}'.encode(), name="q.jsonl")


def test_chunk_settings_change_the_chunks_and_rechunk_on_change(tmp_path: Path) -> None:
    manual = tmp_path / "manual.md"
    manual.write_text(
        "\n".join(f"## {i}. 手順 {i}\n" + "経費精算の締め日は毎月5日です。" * 6 for i in range(8)),
        encoding="utf-8",
    )
    index = tmp_path / "index"
    wide = ingest(index, manuals=[manual], settings=bm25_settings())
    narrow = ingest(
        index,
        manuals=[manual],
        settings=bm25_settings(keiri_helpdesk_chunk_chars=120, keiri_helpdesk_chunk_overlap=0),
    )
    assert narrow.chunks_total > wide.chunks_total
    assert [f.status for f in narrow.files] == ["updated"]  # re-chunked although unchanged
    kb = KnowledgeBase.open(index, settings=bm25_settings())
    assert all(len(h.content) <= 120 for h in kb.search_manual("締め日", 3))
    code, out = _run(
        "helpdesk", "ingest", "--manual", str(manual), "--index", str(index),
        "--chunk-chars", "100", "--chunk-overlap", "80",
    )  # fmt: skip
    assert code != 0
    assert "チャンクの設定が不正" in out


def test_excel_powerpoint_and_html_manuals_are_ingested_with_a_status_per_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "manuals"
    folder.mkdir()
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["勘定科目", "説明"])
    sheet.append(["旅費交通費", "出張の新幹線代と宿泊費はこの科目で精算します。"])
    book.save(folder / "科目一覧.xlsx")
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "小口現金の補充"  # type: ignore[union-attr]
    slide.placeholders[1].text = "小口現金の残高が一万円を下回ったら経理課に補充を依頼します。"  # type: ignore[attr-defined]
    deck.save(str(folder / "研修.pptx"))
    (folder / "faq.html").write_text(
        "<html><head><title>FAQ</title><script>alert(1)</script></head><body>"
        "<h2>振込手数料</h2><p>振込手数料は当社負担です。</p></body></html>",
        encoding="utf-8",
    )
    (folder / "broken.xlsx").write_bytes(b"not a workbook")
    result = ingest(tmp_path / "index", manuals=[folder], settings=bm25_settings())
    states = {f.file_name: f.status for f in result.files}
    assert states == {
        "broken.xlsx": "failed",
        "faq.html": "added",
        "研修.pptx": "added",
        "科目一覧.xlsx": "added",
    }
    kb = KnowledgeBase.open(tmp_path / "index", settings=bm25_settings())
    assert kb.search_manual("新幹線代はどの科目？", 1)[0].file_name == "科目一覧.xlsx"
    assert kb.search_manual("小口現金の補充", 1)[0].file_name == "研修.pptx"
    top = kb.search_manual("ふりこみ手数料", 1)[0]
    assert top.file_name == "faq.html"
    assert "alert" not in top.content
