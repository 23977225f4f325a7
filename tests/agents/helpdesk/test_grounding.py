"""Citation checking and the relevance floor: the rules an answer's sources are held to."""

from __future__ import annotations

from keiri_agent.agents.helpdesk.grounding import (
    attempt_issue,
    check_citations,
    remove_sentences,
    split_relevant,
    uncited_sentences,
)
from keiri_agent.agents.helpdesk.models import ToolResult
from tests.support.helpdesk import hit

MANUAL = hit("操作マニュアル.pdf", "再設定の手順", page=12)
MANUAL_P3 = hit("操作マニュアル.pdf", "ログイン", page=3)
NOTES = hit("リリースノート.md", "3.2.0 の変更点")
QA = hit("よくある質問.csv", "Q: ロック A: 30 分", row=7, source="qa")
HITS = [MANUAL, MANUAL_P3, NOTES, QA]


def test_exact_labels_of_retrieved_hits_are_kept() -> None:
    text = "再設定します【出典: 操作マニュアル.pdf p.12】。解除されます【出典: Q&A よくある質問.csv 7 行目】"
    check = check_citations(text, HITS)
    assert check.text == text
    assert check.removed == []
    assert check.verified == [
        "【出典: 操作マニュアル.pdf p.12】",
        "【出典: Q&A よくある質問.csv 7 行目】",
    ]
    assert check.cited == [MANUAL, QA]


def test_a_label_with_several_pages_is_split_into_verified_labels() -> None:
    check = check_citations("手順です【出典: 操作マニュアル.pdf p.12、p.3】", HITS)
    assert check.text == "手順です【出典: 操作マニュアル.pdf p.12】【出典: 操作マニュアル.pdf p.3】"
    assert check.cited == [MANUAL, MANUAL_P3]


def test_variant_spellings_name_the_same_hit() -> None:
    # Full-width colon and letters, no space before the page, an unpaged file.
    check = check_citations("【出典：操作マニュアル.pdf ｐ.12】【出典: リリースノート.md】", HITS)
    assert check.removed == []
    assert check.cited == [MANUAL, NOTES]


def test_citations_in_round_or_square_brackets_are_checked_too() -> None:
    text = "再設定します（出典: 操作マニュアル.pdf p.12）。規程です(出典: 規程.pdf p.1)[出典: リリースノート.md]"
    check = check_citations(text, HITS)
    assert (
        check.text
        == "再設定します【出典: 操作マニュアル.pdf p.12】。規程です【出典: リリースノート.md】"
    )
    assert check.removed == ["【出典: 規程.pdf p.1】"]
    assert check.cited == [MANUAL, NOTES]


def test_invented_files_pages_and_rows_are_removed_and_reported() -> None:
    text = (
        "規程です【出典: セキュリティ規程.pdf p.42】。"
        "手順です【出典: 操作マニュアル.pdf p.12、p.99】。"
        "回答です【出典: Q&A よくある質問.csv 8 行目】"
        "全体です【出典: 操作マニュアル.pdf】"  # a paged file without its page names no hit
    )
    check = check_citations(text, HITS)
    assert check.text == ("規程です。手順です【出典: 操作マニュアル.pdf p.12】。回答です全体です")
    assert check.removed == [
        "【出典: セキュリティ規程.pdf p.42】",
        "【出典: 操作マニュアル.pdf p.99】",
        "【出典: よくある質問.csv 8 行目】",
        "【出典: 操作マニュアル.pdf】",
    ]
    assert check.cited == [MANUAL]


def test_the_knowledge_bases_floor_flag_splits_the_hits() -> None:
    weak_manual = hit("操作マニュアル.pdf", "メニュー", page=2, score=0.9).model_copy(
        update={"above_floor": False}  # flagged by the knowledge base's one floor
    )
    cosine_qa = hit("よくある質問.csv", "Q", row=1, source="qa", score=0.4)
    assert split_relevant([MANUAL, weak_manual, cosine_qa]) == (
        [MANUAL, cosine_qa],
        [weak_manual],
    )


def test_why_an_attempt_cannot_resolve_its_subtask() -> None:
    failed = ToolResult(tool_name="x", args="{}", error="ツール 'x' はありません。")
    empty = ToolResult(tool_name="search_manual", args="{}")
    weak = ToolResult(tool_name="search_manual", args="{}", weak_results=[MANUAL])
    found = ToolResult(tool_name="search_manual", args="{}", results=[MANUAL])
    assert attempt_issue([failed], []) == "tool_errors"
    assert attempt_issue([failed, empty], []) == "no_results"
    assert attempt_issue([empty, weak], []) == "below_floor"
    assert attempt_issue([failed, found], []) == "no_citation"
    assert attempt_issue([failed, found], [MANUAL]) is None


CITE = "【出典: 操作マニュアル.pdf p.12】"


def test_a_citation_covers_the_sentences_of_its_paragraph_before_it() -> None:
    steps = (
        "パスワードは次のとおり再設定できます。\n"
        "1) ログイン画面の「パスワードをお忘れの方」を開きます。\n"
        f"2) 届いたメールの URL を 30 分以内に開きます。{CITE}"
    )
    assert uncited_sentences(steps) == []
    # A label right after the sentence end still belongs to that sentence.
    assert uncited_sentences(f"ロックは 30 分で解除されます。{CITE}") == []


def test_facts_after_the_last_citation_or_in_a_paragraph_without_one_are_uncited() -> None:
    text = (
        f"ログイン画面から再設定できます{CITE}。再設定のメールは 10 分で届きます。\n\n"
        "パスワードは 90 日ごとに変更が必要です。社内の規程で決まっています。\n\n"
        "ご不明な点はヘルプデスクにお問い合わせください。\n\n"
        "## 手順"
    )
    assert uncited_sentences(text) == [
        "再設定のメールは 10 分で届きます。",
        "パスワードは 90 日ごとに変更が必要です。",
        "社内の規程で決まっています。",
    ]
    kept = remove_sentences(text, uncited_sentences(text))
    assert kept == (
        f"ログイン画面から再設定できます{CITE}。\n\n"
        "ご不明な点はヘルプデスクにお問い合わせください。\n\n## 手順"
    )
