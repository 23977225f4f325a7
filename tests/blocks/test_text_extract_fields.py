"""text.extract_fields: one record per file from patterns; unreadable fields are never guessed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.cell_forms import DASH_END, read_amount
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.documents.amount_texts import amount_texts

FIELDS = [
    {"name": "請求書番号", "pattern": r"請求書番号[:\s]*(?P<value>[A-Z0-9-]+)"},
    {"name": "請求日", "pattern": r"請求日[:\s]*(\S+)", "type": "date"},
    {"name": "金額", "pattern": r"ご請求金額[^0-9¥]*(?P<value>¥?[0-9,]+)", "type": "amount"},
    {"name": "備考", "pattern": r"備考[:\s]*(?P<value>.+)", "required": False},
]


def evidence(*files: tuple[str, str | None]) -> dict[str, Any]:
    return {
        "files": [
            {"group": path.split("/")[0], "path": path, "name": path.rsplit("/", 1)[-1], "text": t}
            for path, t in files
        ]
    }


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("text.extract_fields")


def test_each_file_becomes_a_typed_record_with_its_group_and_path(
    block: Block, make_ctx: ContextFactory
) -> None:
    data = evidence(
        (
            "A社/請求書.pdf",
            "請求書\n請求書番号: INV-001\n請求日: 2025年1月10日\nご請求金額 ¥110,000\n",
        ),
        (
            "B社/請求書.xlsx",
            "請求書番号\tINV-002\n請求日\t2025-01-15\nご請求金額\t55,000\n備考\t分割",
        ),
    )
    out = run_like_runner(block, {"evidence_data": data, "fields": FIELDS}, make_ctx("extract"))
    assert out["records"] == [
        {
            "グループ": "A社",
            "ファイル": "A社/請求書.pdf",
            "請求書番号": "INV-001",
            "請求日": "2025-01-10",
            "金額": 110000,
            "備考": None,
        },
        {
            "グループ": "B社",
            "ファイル": "B社/請求書.xlsx",
            "請求書番号": "INV-002",
            "請求日": "2025-01-15",
            "金額": 55000,
            "備考": "分割",
        },
    ]
    assert out["problems"] == []
    assert out["summary"] == {"files": 2, "extracted": 2, "problem_files": 0, "skipped": 0}


def test_include_limits_the_files_and_columns_can_be_left_out(
    block: Block, make_ctx: ContextFactory
) -> None:
    data = evidence(("A社/請求書.pdf", "請求書番号: INV-001"), ("A社/メモ.txt", "関係ない"))
    inputs = {
        "evidence_data": data,
        "fields": [FIELDS[0]],
        "include": "*.pdf",
        "group_column": None,
        "file_column": None,
    }
    out = run_like_runner(block, inputs, make_ctx("extract"))
    assert out["records"] == [{"請求書番号": "INV-001"}]
    assert out["summary"]["skipped"] == 1


def test_a_missing_required_field_stops_with_the_file_and_field_named(
    block: Block, make_ctx: ContextFactory
) -> None:
    data = evidence(
        ("A社/請求書.pdf", "請求書番号: INV-001\n請求日: 2025/1/10\nご請求金額 ¥110,000"),
        ("B社/請求書.pdf", "請求書番号: INV-002\n請求日: 1月15日ごろ\n"),
    )
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"evidence_data": data, "fields": FIELDS}, make_ctx("extract"))
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "B社/請求書.pdf" in error.message
    assert "請求日: 「1月15日ごろ」" in error.message
    assert "金額: 見つかりません" in error.message
    assert "A社" not in error.message
    assert "on_missing: report" in (error.hint or "")
    assert len(error.details["problems"]) == 2


def test_report_mode_keeps_the_good_files_and_lists_the_others(
    block: Block, make_ctx: ContextFactory
) -> None:
    data = evidence(
        ("A社/請求書.pdf", "請求書番号: INV-001\n請求日: 2025/1/10\nご請求金額 ¥110,000"),
        ("B社/壊れた.pdf", None),
    )
    data["files"][1]["error"] = {"message": "PDF が壊れています"}
    inputs = {"evidence_data": data, "fields": FIELDS, "on_missing": "report"}
    out = run_like_runner(block, inputs, make_ctx("extract"))
    assert [r["請求書番号"] for r in out["records"]] == ["INV-001"]
    assert out["problems"] == [
        {
            "ファイル": "B社/壊れた.pdf",
            "項目": "",
            "内容": "ファイルを読めません: PDF が壊れています",
        }
    ]
    assert out["summary"]["problem_files"] == 1


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ([{"name": "x", "pattern": "([0-9"}], "正規表現が不正"),
        ([{"name": "x", "pattern": "a", "type": "money"}], "type「money」"),
        ([{"name": "x", "pattern": "a"}, {"name": "x", "pattern": "b"}], "重複"),
        ([], "指定されていません"),
    ],
)
def test_bad_field_definitions_are_refused_before_running(
    block: Block, fields: list[dict[str, Any]], fragment: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"evidence_data": evidence(), "fields": fields})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert fragment in info.value.message
    assert info.value.hint


def test_evidence_without_files_is_refused(block: Block) -> None:
    with pytest.raises(BlockError, match="files") as info:
        block.check_inputs({"evidence_data": {"text": "x"}, "fields": FIELDS})
    assert "file.parse_zip_2tier" in (info.value.hint or "")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(texts=st.lists(amount_texts(), min_size=1, max_size=20))
def test_extracted_fields_read_amounts_as_read_amount_does(
    texts: list[str], block: Block, make_ctx: ContextFactory
) -> None:
    files = [
        {"group": "A社", "path": f"A社/{name}", "name": name, "text": f"金額: {text}\n数量: {text}"}
        for name, text in zip([f"{i}.txt" for i in range(len(texts))], texts, strict=True)
    ]
    fields = [
        {"name": "金額", "pattern": r"金額: (?P<value>.+)", "type": "amount"},
        {"name": "数量", "pattern": r"数量: (?P<value>.+)", "type": "integer"},
    ]
    inputs: dict[str, Any] = {
        "evidence_data": {"files": files},
        "fields": fields,
        "on_missing": "report",
    }
    out = run_like_runner(block, inputs, make_ctx("extract"))
    records = {r["ファイル"]: r for r in out["records"]}
    failed = {(p["ファイル"], p["項目"]) for p in out["problems"]}
    for file, text in zip(files, texts, strict=True):
        value = read_amount(text, DASH_END)  # in a document, ¥1,200- is the end mark
        path = file["path"]
        assert ((path, "金額") in failed) is (value is None), text
        assert ((path, "数量") in failed) is not isinstance(value, int), text
        if isinstance(value, int):
            assert (records[path]["金額"], records[path]["数量"]) == (value, value), text


def test_negative_amounts_in_parentheses_and_with_a_trailing_minus_are_read(
    block: Block, make_ctx: ContextFactory
) -> None:
    fields = [
        {"name": "差額", "pattern": r"差額[:\s]*(?P<value>\S+)", "type": "amount"},
        {"name": "返品数", "pattern": r"返品数[:\s]*(?P<value>\S+)", "type": "integer"},
    ]
    data = evidence(
        ("A社/精算書.pdf", "差額: (1,200)\n返品数: (3)"),
        ("B社/精算書.csv", "差額: 1,200-\n返品数: 1,200-"),
    )
    out = run_like_runner(block, {"evidence_data": data, "fields": fields}, make_ctx("extract"))
    assert [(r["差額"], r["返品数"]) for r in out["records"]] == [(-1200, -3), (-1200, -1200)]
    assert out["problems"] == []


@pytest.mark.parametrize(
    ("written", "amount"),
    [
        ("￥12,000-", 12000),
        ("$1,200-", 1200),
        ("金12,000-", 12000),
        ("33,000円-", 33000),
        ("1,200-", -1200),  # after bare digits: a system's trailing minus
    ],
)
def test_a_dash_after_a_currency_amount_in_a_document_is_the_end_mark(
    block: Block, make_ctx: ContextFactory, written: str, amount: int
) -> None:
    fields = [{"name": "金額", "pattern": r"金額[:\s]*(?P<value>\S+)", "type": "amount"}]
    data = evidence(("A社/領収書.pdf", f"領収書\n金額: {written}\n上記正に領収いたしました"))
    out = run_like_runner(block, {"evidence_data": data, "fields": fields}, make_ctx("extract"))
    assert [r["金額"] for r in out["records"]] == [amount]
