"""A person decides the 要確認 lines of 入金消込, and what they confirm is learned.

The contract the example plan is wired on: ``table.match_payments``'s ``questions`` are the
``requirements`` of a ``ui.interactive_input``; its ``collected_data`` goes back as
``confirmations`` to a second ``table.match_payments``, whose ``learned`` goes to
``table.learn_payer_names``; the next month's run matches the same payer with reason 学習済み.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.field_types import normalize_requirements
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import AnswerBook, run_like_runner
from tests.blocks.payments_support import column, context, deposit, invoice, match, matched_pairs

PARENT = "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ"
INVOICES = [
    invoice("INV-1", "1001", "株式会社山田商事", 110_000),
    invoice("INV-5", "1005", "株式会社山田工業", 220_000),
    invoice("INV-6", "1006", "株式会社山田興業", 99_000),
]
DEPOSITS = [
    deposit("1", PARENT, 110_000),  # a parent company: nobody knows the name
    deposit("2", "ｶ)ﾔﾏﾀﾞｺｳｷﾞﾖｳ", 220_000),  # two customers read ヤマダコウギヨウ
    deposit("3", "ﾀﾅｶ ﾀﾛｳ", 5_000),  # a person nobody knows
]


def ask(
    registry: BlockRegistry,
    tmp_path: Path,
    questions: list[dict[str, Any]],
    answers: dict[str, Any],
) -> dict[str, Any]:
    """What ui.interactive_input gives when a person answers ``questions`` with ``answers``."""
    ctx = context(tmp_path, "ask", inputs=AnswerBook({"ask": answers}))
    inputs = {
        "mode": "collect",
        "message": "要確認の入金を確認してください",
        "requirements": questions,
    }
    return run_like_runner(registry.load("ui.interactive_input"), inputs, ctx)["collected_data"]


def learn(registry: BlockRegistry, tmp_path: Path, names: Any, **inputs: Any) -> dict[str, Any]:
    block = registry.load("table.learn_payer_names")
    return run_like_runner(block, {"names": names, **inputs}, context(tmp_path, "learn"))


def test_a_person_answers_the_questions_and_the_parent_company_is_learned(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    first = match(tmp_path, INVOICES, DEPOSITS)
    assert first["matched"] == []
    parent_id, homophone_id = column(first, "review", "確認ID")
    questions = first["questions"]
    assert [q["id"] for q in normalize_requirements(questions)] == [
        parent_id,
        "覚える_" + parent_id.removeprefix("確認_"),
        homophone_id,
        "覚える_" + homophone_id.removeprefix("確認_"),
    ]

    collected = ask(
        registry,
        tmp_path,
        questions,
        {
            parent_id: "請求:INV-1",
            "覚える_" + parent_id.removeprefix("確認_"): True,
            homophone_id: "取引先:1005",
        },
    )
    second = match(tmp_path, INVOICES, DEPOSITS, confirmations=collected)

    assert matched_pairs(second) == {"1": ["INV-1"], "2": ["INV-5"]}
    assert column(second, "matched", "理由") == [
        "名義: 確認済み／金額: 一致",
        "名義: 確認済み／金額: 一致",
    ]
    assert second["review"] == []
    assert second["questions"] == []
    assert column(second, "unknown", "振込依頼人名") == ["ﾀﾅｶ ﾀﾛｳ"]  # never asked about
    assert second["summary"]["confirmed"] == 2
    assert second["learned"] == [
        {
            "振込依頼人名": PARENT,
            "取引先コード": "1001",
            "取引先名": "株式会社山田商事",
            "確認ID": parent_id,
            "照会番号": "1",
        }
    ]  # the homophone was confirmed but not to be remembered

    stored = learn(registry, tmp_path, second["learned"], who="経理 花子")
    assert stored["summary"] == {
        "added": 1,
        "already_known": 0,
        "total": 1,
        "store": str(tmp_path / "learned_payer_names.csv"),
    }
    assert stored["added"][0]["登録者"] == "経理 花子"

    # Next month the bank writes the parent another way; the store says who it pays for.
    next_month = match(
        tmp_path,
        [invoice("INV-9", "1001", "株式会社山田商事", 88_000, due="2026-03-31")],
        [deposit("1", "ﾔﾏﾄﾎｰﾙﾃﾞｲﾝｸﾞｽ(ｶ", 88_000, "2026-03-27")],
    )
    assert column(next_month, "matched", "理由") == ["名義: 学習済み／金額: 一致"]
    # Without the store, the same line is unknown again.
    forgetful = match(
        tmp_path,
        [invoice("INV-9", "1001", "株式会社山田商事", 88_000, due="2026-03-31")],
        [deposit("1", "ﾔﾏﾄﾎｰﾙﾃﾞｲﾝｸﾞｽ(ｶ", 88_000, "2026-03-27")],
        use_learned=False,
    )
    assert forgetful["matched"] == []


def test_an_unanswered_line_stays_for_review_and_none_is_unknown(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    first = match(tmp_path, INVOICES, DEPOSITS)
    parent_id, homophone_id = column(first, "review", "確認ID")
    collected = ask(registry, tmp_path, first["questions"], {parent_id: "該当なし"})
    second = match(tmp_path, INVOICES, DEPOSITS, confirmations=collected)

    assert column(second, "review", "確認ID") == [homophone_id]
    confirmed = [r for r in second["unknown"] if r["確認ID"] == parent_id]
    assert confirmed[0]["理由"] == "確認済み: 該当なし"
    assert second["learned"] == []


def test_answers_may_be_a_table_a_person_filled_in(tmp_path: Path) -> None:
    first = match(tmp_path, INVOICES, DEPOSITS)
    unknown_id = first["unknown"][0]["確認ID"]
    answers = [
        {"確認ID": unknown_id, "選択": "取引先：1006", "覚える": "はい"},  # a full-width colon
    ]
    second = match(tmp_path, INVOICES, DEPOSITS, confirmations=answers)

    rows = [r for r in second["matched"] if r["照会番号"] == "3"]
    assert [(r["請求番号"], r["理由"]) for r in rows] == [
        ("INV-6", "名義: 確認済み／金額: 一部入金 (残 94,000 円)")
    ]
    assert column(second, "learned", "取引先コード") == ["1006"]


def test_wrong_answers_are_all_named_at_once(tmp_path: Path) -> None:
    first = match(tmp_path, INVOICES, DEPOSITS)
    parent_id, homophone_id = column(first, "review", "確認ID")
    answers = {
        parent_id: "請求:INV-404",
        homophone_id: "取引先:9999",
        "確認_9_20260227_1": "該当なし",
        "覚える_" + parent_id.removeprefix("確認_"): "たぶん",
        first["unknown"][0]["確認ID"]: "山田商事",
    }
    with pytest.raises(BlockError) as caught:
        match(tmp_path, INVOICES, DEPOSITS, confirmations=answers)
    error = caught.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.details["field"] == "confirmations"
    assert len(error.details["problems"]) == 5
    assert f"{parent_id}: 請求「INV-404」が請求一覧にありません" in error.message
    assert (
        f"{homophone_id}: 取引先「9999」が取引先マスタにも請求一覧にもありません" in error.message
    )
    assert "確認_9_20260227_1: この ID の入金がありません" in error.message
    assert "「たぶん」は はい / いいえ として読めません" in error.message
    assert (
        "「山田商事」は 取引先:<コード>・請求:<請求番号>・該当なし のどれでもありません"
        in error.message
    )


def test_an_answer_about_another_months_line_is_refused(tmp_path: Path) -> None:
    first = match(tmp_path, INVOICES, DEPOSITS)
    parent_id = first["review"][0]["確認ID"]
    other_month = [deposit("1", PARENT, 110_000, "2026-03-27")]  # same row, another day
    with pytest.raises(BlockError) as caught:
        match(tmp_path, INVOICES, other_month, confirmations={parent_id: "請求:INV-1"})
    assert f"{parent_id}: この ID の入金がありません" in caught.value.message
