"""table.join: rows combined on normalized keys; lost and multiplied rows are reported."""

from __future__ import annotations

from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

INVOICES = [
    {"取引先コード": "Ａ００１", "請求番号": "INV-1", "金額": 110000},
    {"取引先コード": 1001, "請求番号": "INV-2", "金額": 55000},
    {"取引先コード": "Z999", "請求番号": "INV-3", "金額": 8800},
    {"取引先コード": " a001 ", "請求番号": "INV-4", "金額": 22000},
]
VENDORS = [
    {"取引先コード": "a001", "取引先名": "山田商事", "金額": 0},
    {"取引先コード": "1001", "取引先名": "鈴木工業", "金額": 1},
    {"取引先コード": "B002", "取引先名": "佐藤物産", "金額": 2},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.join")


def run(block: Block, make_ctx: ContextFactory, **inputs: Any) -> dict[str, Any]:
    data = {"left": INVOICES, "right": VENDORS, "on": "取引先コード", **inputs}
    return run_like_runner(block, data, make_ctx("join"))


def test_inner_join_matches_normalized_keys_and_keeps_the_original_values(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(block, make_ctx)
    assert out["rows"] == [
        {
            "取引先コード": "Ａ００１",
            "請求番号": "INV-1",
            "金額_左": 110000,
            "取引先名": "山田商事",
            "金額_右": 0,
        },
        {
            "取引先コード": 1001,
            "請求番号": "INV-2",
            "金額_左": 55000,
            "取引先名": "鈴木工業",
            "金額_右": 1,
        },
        {
            "取引先コード": " a001 ",
            "請求番号": "INV-4",
            "金額_左": 22000,
            "取引先名": "山田商事",
            "金額_右": 0,
        },
    ]
    assert out["summary"] == {
        "left_rows": 4,
        "right_rows": 3,
        "output_rows": 3,
        "matched": 3,
        "left_only": 1,
        "right_only": 1,
        "warnings": [],
    }


def test_without_normalization_keys_must_be_identical(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(block, make_ctx, normalize_keys=False)
    assert out["rows"] == []
    assert out["summary"]["left_only"] == 4


def test_left_join_keeps_every_left_row_and_marks_where_rows_came_from(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(block, make_ctx, how="left", indicator=True, suffixes=["_請求", "_マスタ"])
    assert [(r["請求番号"], r["取引先名"], r["_結合"]) for r in out["rows"]] == [
        ("INV-1", "山田商事", "両方"),
        ("INV-2", "鈴木工業", "両方"),
        ("INV-3", None, "左のみ"),
        ("INV-4", "山田商事", "両方"),
    ]
    assert list(out["rows"][2]) == [
        "取引先コード",
        "請求番号",
        "金額_請求",
        "取引先名",
        "金額_マスタ",
        "_結合",
    ]
    assert out["rows"][2]["金額_請求"] == 8800


def test_right_and_outer_joins_order_and_fill_the_shared_key(
    block: Block, make_ctx: ContextFactory
) -> None:
    right = run(block, make_ctx, how="right")
    assert [(r["取引先コード"], r["請求番号"]) for r in right["rows"]] == [
        ("Ａ００１", "INV-1"),
        (" a001 ", "INV-4"),
        (1001, "INV-2"),
        ("B002", None),
    ]
    outer = run(block, make_ctx, how="outer", indicator=True)
    assert [(r["取引先コード"], r["請求番号"], r["_結合"]) for r in outer["rows"]] == [
        ("Ａ００１", "INV-1", "両方"),
        (1001, "INV-2", "両方"),
        ("Z999", "INV-3", "左のみ"),
        (" a001 ", "INV-4", "両方"),
        ("B002", None, "右のみ"),
    ]
    assert outer["summary"]["output_rows"] == 5


def test_differently_named_keys_are_both_kept(block: Block, make_ctx: ContextFactory) -> None:
    master = [{"コード": "A001", "名称": "山田商事"}]
    out = run_like_runner(
        block,
        {"left": INVOICES[:1], "right": master, "left_on": "取引先コード", "right_on": "コード"},
        make_ctx(),
    )
    assert out["rows"] == [
        {
            "取引先コード": "Ａ００１",
            "請求番号": "INV-1",
            "金額": 110000,
            "コード": "A001",
            "名称": "山田商事",
        }
    ]


def test_many_to_many_keys_are_reported_or_refused(block: Block, make_ctx: ContextFactory) -> None:
    right = [*VENDORS, {"取引先コード": "A001", "取引先名": "山田商事（旧）", "金額": 3}]
    out = run(block, make_ctx, right=right)
    assert out["summary"]["output_rows"] == 5
    assert [(r["請求番号"], r["取引先名"]) for r in out["rows"][:2]] == [
        ("INV-1", "山田商事"),
        ("INV-1", "山田商事（旧）"),
    ]
    (warning,) = out["summary"]["warnings"]
    assert "「Ａ００１」（左 2 行 × 右 2 行 = 4 行）" in warning
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, right=right, on_many_to_many="error")
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "「Ａ００１」" in info.value.message
    assert "table.dedupe" in info.value.hint


def test_blank_keys_never_match(block: Block, make_ctx: ContextFactory) -> None:
    left = [{"取引先コード": "", "請求番号": "INV-9"}, {"取引先コード": None, "請求番号": "INV-8"}]
    right = [{"取引先コード": None, "取引先名": "不明"}]
    out = run_like_runner(
        block, {"left": left, "right": right, "on": "取引先コード", "how": "outer"}, make_ctx()
    )
    assert [r["取引先名"] for r in out["rows"]] == [None, None, "不明"]
    assert out["summary"]["matched"] == 0
    assert out["summary"]["warnings"] == [
        "左の表の 2 行はキーが空欄のため、どの行とも結合していません。",
        "右の表の 1 行はキーが空欄のため、どの行とも結合していません。",
    ]


def test_an_empty_left_table_in_a_right_join_still_has_the_key_column(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = run(block, make_ctx, left=[], how="right")
    assert out["rows"][0] == {"取引先コード": "a001", "取引先名": "山田商事", "金額": 0}
    assert out["summary"]["right_only"] == 3


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"on": "取引先コード", "left_on": "取引先コード"}, "両方指定されています"),
        ({"left_on": ["取引先コード", "請求番号"], "right_on": "取引先コード"}, "列数が違います"),
        ({}, "キー列（on または left_on と right_on）がありません"),
        ({"on": "取引先コード", "how": "cross"}, "how に 'cross'"),
        ({"on": "取引先コード", "suffixes": ["_x", "_x"]}, "suffixes"),
    ],
    ids=["both", "lengths", "none", "how", "suffixes"],
)
def test_bad_settings_are_refused_before_running(
    block: Block, inputs: dict[str, Any], expected: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"left": INVOICES, "right": VENDORS, **inputs})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert expected in info.value.message
    assert info.value.hint


def test_a_key_missing_on_one_side_is_named(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, on=None, left_on="取引先コード", right_on="コード")
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "right に列 コード がありません（right_on）" in info.value.message
    assert "使える列: 取引先コード, 取引先名, 金額" in info.value.hint
