"""ui.interactive_input: what a person is asked, and how their answers are checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import Block, InputRequired
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.interactive_input import normalize_requirements
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("ui.interactive_input")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "inbox"
    folder.mkdir()
    made = {"zip": folder / "証跡.ZIP", "xlsx": folder / "book.xlsx", "pdf": folder / "a.pdf"}
    for path in made.values():
        path.write_bytes(b"x")
    return {**made, "folder": folder}


def ask(block: Block, make_ctx: ContextFactory, inputs: dict[str, Any], answers: Any) -> Any:
    ctx = make_ctx("ask", answers={"ask": answers} if answers is not None else {})
    return run_like_runner(block, inputs, ctx)


def problems_of(error: BlockError) -> dict[str, str]:
    return {p["id"]: p["message"] for p in error.details["problems"]}


def test_without_answers_the_run_waits_and_says_what_it_needs(
    block: Block, make_ctx: ContextFactory
) -> None:
    inputs = {
        "mode": "mixed",
        "message": "照合に必要な入力を提供してください",
        "requirements": [
            {"id": "evidence_zip", "type": "file", "label": "証跡ZIP", "accept": ".zip"},
            {"id": "memo", "type": "text", "label": "メモ", "required": False},
        ],
        "context": {"files": 3},
    }
    with pytest.raises(InputRequired) as info:
        ask(block, make_ctx, inputs, None)
    request = info.value.request
    assert info.value.node_path == "ask"
    assert request["mode"] == "mixed"
    assert request["message"] == "照合に必要な入力を提供してください"
    assert request["context"] == {"files": 3}
    first, second = request["requirements"]
    assert (first["id"], first["required"], first["accept"]) == ("evidence_zip", True, ".zip")
    assert (second["required"], second["options"], second["validation"]) == (False, [], {})


def test_every_field_type_accepts_a_valid_answer(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    requirements = [
        {"id": "evidence", "type": "file", "label": "証跡", "accept": ".zip"},
        {"id": "docs", "type": "files", "label": "資料", "accept": "pdf,.xlsx"},
        {"id": "folder", "type": "folder", "label": "フォルダ"},
        {"id": "code", "type": "text", "label": "コード", "validation": {"regex": "[0-9]{4}"}},
        {"id": "month", "type": "select", "label": "月", "options": ["1月", "2月"]},
        {"id": "kind", "type": "enum", "label": "種別", "options": [{"value": "a", "label": "A"}]},
        {"id": "ok", "type": "boolean", "label": "実行"},
        {"id": "amount", "type": "number", "label": "金額", "validation": {"min": 0}},
        {"id": "note", "type": "chat", "label": "補足"},
        {"id": "rows", "type": "table", "label": "明細"},
    ]
    answers = {
        "evidence": str(files["zip"]),  # ".ZIP": extensions match case-insensitively
        "docs": [str(files["pdf"]), str(files["xlsx"])],
        "folder": str(files["folder"]),
        "code": "0420",
        "month": "2月",
        "kind": "a",
        "ok": "はい",
        "amount": "1,200",
        "note": "急ぎです",
        "rows": [{"科目": "旅費", "金額": 300}],
    }
    out = ask(block, make_ctx, {"mode": "collect", "requirements": requirements}, answers)
    data = out["collected_data"]
    assert data["evidence"] == str(files["zip"])
    assert data["docs"] == [str(files["pdf"]), str(files["xlsx"])]
    assert (data["ok"], data["amount"], data["month"]) == (True, 1200, "2月")
    assert data["rows"] == [{"科目": "旅費", "金額": 300}]
    assert out["approved"] is True
    assert out["response"] == ""
    assert out["metadata"] == {
        "mode": "collect",
        "answered": [r["id"] for r in requirements],
        "defaults_used": [],
    }


@pytest.mark.parametrize(
    ("requirement", "answer", "expected"),
    [
        ({"type": "file", "accept": ".zip"}, "{missing}", "見つかりません"),
        ({"type": "file", "accept": ".zip,.xlsx"}, "{pdf}", "受け付けない形式"),
        ({"type": "files", "accept": ".pdf"}, ["{pdf}", "{missing}"], "見つかりません"),
        ({"type": "files"}, "{pdf}", "リスト"),
        ({"type": "folder"}, "{pdf}", "フォルダ"),
        ({"type": "number", "validation": {"min": 1, "max": 10}}, 11, "範囲外"),
        ({"type": "number"}, "たくさん", "数値ではありません"),
        ({"type": "number"}, True, "数値ではありません"),
        ({"type": "boolean"}, "たぶん", "はい/いいえ"),
        ({"type": "select", "options": ["A", "B"]}, "C", "選択肢にありません"),
        ({"type": "enum", "options": ["x"]}, "y", "選択肢にありません"),
        ({"type": "text", "validation": {"regex": "[0-9]{4}"}}, "12345", "形式"),
        ({"type": "text", "validation": {"min_length": 5}}, "abc", "5 文字以上"),
        ({"type": "chat", "validation": {"max_length": 2}}, "長すぎる", "上限 2 文字"),
        ({"type": "text"}, 42, "文字列ではありません"),
        ({"type": "table"}, [{"a": 1}, "行"], "表"),
        ({"type": "table", "validation": {"max_length": 1}}, [{"a": 1}, {"a": 2}], "上限 1 行"),
    ],
)
def test_each_field_type_rejects_a_bad_answer_with_a_fix(
    block: Block,
    make_ctx: ContextFactory,
    files: dict[str, Path],
    requirement: dict[str, Any],
    answer: Any,
    expected: str,
) -> None:
    names = {"missing": str(files["folder"] / "nai.zip"), "pdf": str(files["pdf"])}

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.format(**names)
        return [fill(v) for v in value] if isinstance(value, list) else value

    inputs = {"mode": "collect", "requirements": [{"id": "f", "label": "項目", **requirement}]}
    with pytest.raises(BlockError) as info:
        ask(block, make_ctx, inputs, {"f": fill(answer)})
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.recoverable is True
    assert expected in problems_of(error)["f"]
    assert "項目" in error.message
    assert expected in error.message
    assert error.details["problems"][0]["hint"] in error.hint


def test_all_problems_are_reported_at_once(
    block: Block, make_ctx: ContextFactory, files: dict[str, Path]
) -> None:
    inputs = {
        "mode": "mixed",
        "requirements": [
            {"id": "evidence_zip", "type": "file", "label": "証跡ZIP", "accept": ".zip"},
            {"id": "workbook", "type": "file", "label": "Excel", "accept": ".xlsx"},
            {"id": "amount", "type": "number", "label": "金額"},
            {"id": "memo", "type": "text", "label": "メモ", "required": False},
        ],
    }
    with pytest.raises(BlockError) as info:
        ask(block, make_ctx, inputs, {"workbook": str(files["pdf"]), "amount": "abc"})
    error = info.value
    problems = problems_of(error)
    # Missing approval, missing file, wrong file type, bad number: all four, the optional
    # memo not among them.
    assert set(problems) == {"approved", "evidence_zip", "workbook", "amount"}
    assert "（4 件）" in error.message
    for label in ("承認", "証跡ZIP", "Excel", "金額"):
        assert label in error.message
        assert label in error.hint
    assert ".zip" in error.hint  # says which file is wanted, not just "missing"
    assert error.details["node_id"] == "ask"


def test_confirm_rejection_is_an_answer_not_an_error(
    block: Block, make_ctx: ContextFactory
) -> None:
    inputs = {"mode": "confirm", "message": "処理を続行しますか？"}
    out = ask(block, make_ctx, inputs, {"approved": False, "response": "金額が違います"})
    assert out["approved"] is False
    assert out["collected_data"] == {}
    assert out["response"] == "金額が違います"
    assert ask(block, make_ctx, inputs, {"approved": "いいえ"})["approved"] is False
    assert ask(block, make_ctx, inputs, {"approved": "true"})["approved"] is True


def test_confirm_needs_an_approval_answer(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        ask(block, make_ctx, {"mode": "confirm"}, {})
    assert set(problems_of(info.value)) == {"approved"}
    assert "approved" in info.value.hint


def test_rejected_mixed_request_does_not_demand_the_fields(
    block: Block, make_ctx: ContextFactory
) -> None:
    inputs = {"mode": "mixed", "requirements": [{"id": "zip", "type": "file", "label": "ZIP"}]}
    out = ask(block, make_ctx, inputs, {"approved": False})
    assert out["approved"] is False
    assert out["collected_data"] == {"zip": None}


def test_defaults_fill_unanswered_fields_and_are_reported(
    block: Block, make_ctx: ContextFactory
) -> None:
    inputs = {
        "mode": "collect",
        "requirements": [
            {"id": "month", "type": "select", "label": "月", "options": ["1月", "2月"]},
            {"id": "rate", "type": "number", "label": "税率", "default": 10},
            {"id": "memo", "type": "text", "label": "メモ", "required": False},
            {"id": "dry", "type": "boolean", "label": "試行", "required": False, "default": False},
        ],
    }
    out = ask(block, make_ctx, inputs, {"month": "1月", "memo": "  "})
    assert out["collected_data"] == {"month": "1月", "rate": 10, "memo": None, "dry": False}
    assert out["metadata"]["answered"] == ["month"]
    assert out["metadata"]["defaults_used"] == ["rate", "dry"]


def test_inquire_requires_a_response(block: Block, make_ctx: ContextFactory) -> None:
    inputs = {"mode": "inquire", "message": "請求書CSVの列名を教えてください"}
    with pytest.raises(BlockError) as info:
        ask(block, make_ctx, inputs, {"response": ""})
    assert set(problems_of(info.value)) == {"response"}
    out = ask(block, make_ctx, inputs, {"response": "日付, 金額"})
    assert (out["response"], out["approved"], out["collected_data"]) == ("日付, 金額", True, {})


def test_answers_for_every_loop_iteration_use_the_plain_node_id(
    block: Block, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx("loop[2]/ask", answers={"ask": {"approved": True}})
    out = run_like_runner(block, {"mode": "confirm"}, ctx)
    assert out["approved"] is True


def test_bad_requirement_definitions_are_all_named(block: Block) -> None:
    requirements = [
        {"id": "a", "type": "text", "label": "A"},
        {"id": "a", "type": "text", "label": "A2"},
        {"id": "b", "type": "date", "label": "B"},
        {"id": "c", "type": "select", "label": "C"},
        {"id": "d", "type": "text", "label": "D", "validation": {"regex": "("}},
        {"id": "approved", "type": "boolean", "label": "承認"},
        {"id": "e", "type": "number", "label": "E", "validation": {"regex": ".*"}},
    ]
    with pytest.raises(BlockError) as info:
        block.check_inputs({"mode": "collect", "requirements": requirements})
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    problems = problems_of(error)
    assert set(problems) == {"a", "b", "c", "d", "approved", "e"}
    assert "重複" in problems["a"]
    assert "date" in problems["b"]
    assert "options" in problems["c"]
    assert "正規表現" in problems["d"]
    assert "予約語" in problems["approved"]


def test_confirm_mode_refuses_fields_it_would_drop(block: Block) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs(
            {"mode": "confirm", "requirements": [{"id": "x", "type": "text", "label": "X"}]}
        )
    assert "mixed" in info.value.hint


def test_normalize_requirements_fills_defaults() -> None:
    (req,) = normalize_requirements([{"id": "取引先", "type": "text"}])
    assert req == {
        "id": "取引先",
        "type": "text",
        "label": "取引先",
        "description": None,
        "required": True,
        "options": [],
        "accept": None,
        "validation": {},
        "default": None,
        "hint": None,
    }
