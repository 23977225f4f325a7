"""table.join: rows combined on normalized keys; lost and multiplied rows are reported."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.table_value import Table, TableOrigin
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.blocks.counting import CountingTable, run_counted

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


def test_a_ledger_of_200000_rows_is_joined_by_columns_without_making_records(
    block: Block, make_ctx: ContextFactory
) -> None:
    size = 200_000
    codes = np.array([f"C{i % 500:03d}" for i in range(size)], dtype=object)
    ledger = CountingTable(
        pd.DataFrame(
            {
                "取引先コード": pd.array(codes, dtype="str"),
                "金額": np.arange(size, dtype=np.int64) * 10,
            }
        ),
        origin=TableOrigin("売上.csv"),
        positions=np.arange(size) + 2,  # the header is line 1
    )
    master = CountingTable(
        pd.DataFrame(
            {
                "取引先コード": [f"ｃ{i:03d}" for i in range(400)],  # full-width, lower case
                "担当": [f"担当{i % 7}" for i in range(400)],
                "与信限度": np.arange(400, dtype=np.int64) * 1000,
            }
        )
    )
    out = run_counted(
        block, {"left": ledger, "right": master, "on": "取引先コード", "how": "left"}, make_ctx()
    )
    assert getattr(ledger, "rows_read", 0) == 0  # no row of either side was made a record
    assert getattr(master, "rows_read", 0) == 0
    assert out["summary"] == {
        "left_rows": size,
        "right_rows": 400,
        "output_rows": size,
        "matched": 160_000,  # codes C000-C399 of every 500
        "left_only": 40_000,
        "right_only": 0,
        "warnings": [],
    }
    rows = out["rows"]
    assert rows[1] == {"取引先コード": "C001", "金額": 10, "担当": "担当1", "与信限度": 1000}
    assert rows[123_456] == {
        "取引先コード": "C456",
        "金額": 1234560,
        "担当": None,
        "与信限度": None,
    }
    assert rows.where(123_456, "金額") == "売上.csv の 123458 行目の列「金額」"
    assert pd.api.types.is_integer_dtype(rows.frame["与信限度"].dtype)  # blanks did not make floats


def test_a_header_only_table_keeps_its_columns(block: Block, make_ctx: ContextFactory) -> None:
    empty = Table(
        pd.DataFrame(
            {"取引先コード": pd.Series([], dtype="str"), "請求番号": pd.Series([], dtype="str")}
        ),
        origin=TableOrigin("請求.csv"),
        positions=np.empty(0, dtype=np.int64),
    )
    out = run_like_runner(
        block, {"left": empty, "right": VENDORS, "on": "取引先コード", "how": "right"}, make_ctx()
    )
    assert out["rows"].columns == ["取引先コード", "請求番号", "取引先名", "金額"]
    assert out["rows"][0] == {
        "取引先コード": "a001",
        "請求番号": None,
        "取引先名": "山田商事",
        "金額": 0,
    }


def test_many_to_many_keys_are_listed_in_left_order_up_to_ten(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [{"k": f"K{i:02d}", "n": j} for i in reversed(range(12)) for j in range(2)]
    right = [{"k": f"k{i:02d}", "m": j} for i in range(12) for j in range(3)]
    out = run(block, make_ctx, left=left, right=right, on="k")
    (warning,) = out["summary"]["warnings"]
    assert warning.startswith(
        "左右どちらにも重複しているキーが 12 件あり、行が掛け合わされました: "
    )
    assert "「K11」（左 2 行 × 右 3 行 = 6 行）、「K10」（左 2 行 × 右 3 行 = 6 行）" in warning
    assert warning.endswith("「K02」（左 2 行 × 右 3 行 = 6 行） ほか 2 件")
    assert out["summary"]["output_rows"] == 72
    with pytest.raises(BlockError) as info:
        run(block, make_ctx, left=left, right=right, on="k", on_many_to_many="error")
    assert info.value.details["keys"][:2] == [["k11"], ["k10"]]
    assert len(info.value.details["keys"]) == 12


def test_true_and_1_are_different_keys(block: Block, make_ctx: ContextFactory) -> None:
    left = [{"k": True, "v": "真"}, {"k": 1, "v": "一"}]
    right = [{"k": "TRUE", "w": "文字の真"}, {"k": 1.0, "w": "数の一"}]
    out = run(block, make_ctx, left=left, right=right, on="k")
    assert [(r["v"], r["w"]) for r in out["rows"]] == [("真", "文字の真"), ("一", "数の一")]
    exact = run(block, make_ctx, left=left, right=right, on="k", normalize_keys=False)
    assert [(r["v"], r["w"]) for r in exact["rows"]] == [("一", "数の一")]
