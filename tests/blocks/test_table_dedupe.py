"""table.dedupe: duplicates found on normalized keys and similar names, each traced to its row."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pandas as pd
import pytest
from rapidfuzz import fuzz

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.documents.table_value import Table, TableOrigin
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.blocks.counting import CountingTable, run_counted

VENDORS = [
    {"取引先名": "株式会社山田商事", "電話": "03-1234-5678"},
    {"取引先名": "鈴木工業", "電話": "06-2345-6789"},
    {"取引先名": "(株)山田商事", "電話": "03-1234-5678"},
    {"取引先名": "山田工業", "電話": "03-1234-5678"},
    {"取引先名": "山田商事株式会社", "電話": "０３-１２３４-５６７８"},
    {"取引先名": "鈴木工業", "電話": "06-9999-0000"},
]


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.dedupe")


def dedupe(block: Block, make_ctx: ContextFactory, table: Any = None, **options: Any) -> Any:
    inputs = {"table": VENDORS if table is None else table, **options}
    return run_like_runner(block, inputs, make_ctx("dedupe"))


def test_company_forms_are_duplicates_but_a_different_company_is_not(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = dedupe(block, make_ctx, fuzzy={"column": "取引先名"})
    assert out["unique"] == [VENDORS[0], VENDORS[1], VENDORS[3]]
    assert out["duplicates"] == [
        {**VENDORS[2], "行番号": 3, "重複グループ": 1, "重複元行": 1, "類似度": 100},
        {**VENDORS[4], "行番号": 5, "重複グループ": 1, "重複元行": 1, "類似度": 100},
        {**VENDORS[5], "行番号": 6, "重複グループ": 2, "重複元行": 2, "類似度": 100},
    ]
    assert out["groups"] == [
        {
            "重複グループ": 1,
            "残した行": 1,
            "行番号": "1, 3, 5",
            "件数": 3,
            "取引先名": "株式会社山田商事",
            "表記": "株式会社山田商事 / (株)山田商事 / 山田商事株式会社",
        },
        {
            "重複グループ": 2,
            "残した行": 2,
            "行番号": "2, 6",
            "件数": 2,
            "取引先名": "鈴木工業",
            "表記": "鈴木工業",
        },
    ]
    assert out["summary"] == {
        "input_rows": 6,
        "unique_rows": 3,
        "duplicate_rows": 3,
        "groups": 2,
        "warnings": [],
    }


def test_keys_block_fuzzy_matching_and_are_normalized(
    block: Block, make_ctx: ContextFactory
) -> None:
    out = dedupe(block, make_ctx, keys=["電話"], fuzzy={"column": "取引先名"}, keep="last")
    # 鈴木工業 twice but with different phone numbers: not duplicates within a key block.
    assert [row["取引先名"] for row in out["unique"]] == [
        "鈴木工業",
        "山田工業",
        "山田商事株式会社",
        "鈴木工業",
    ]
    assert [(d["行番号"], d["重複元行"]) for d in out["duplicates"]] == [(1, 5), (3, 5)]
    assert out["groups"][0]["電話"] == "０３-１２３４-５６７８"


def test_exact_keys_only(block: Block, make_ctx: ContextFactory) -> None:
    out = dedupe(block, make_ctx, keys="電話")
    assert [d["行番号"] for d in out["duplicates"]] == [3, 4, 5]
    assert {d["類似度"] for d in out["duplicates"]} == {100}
    assert out["groups"] == [
        {
            "重複グループ": 1,
            "残した行": 1,
            "行番号": "1, 3, 4, 5",
            "件数": 4,
            "電話": "03-1234-5678",
        }
    ]


def test_a_lower_threshold_reports_the_similarity(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"名": "山田商事"}, {"名": "山田商亊"}, {"名": "山田工業"}]
    out = dedupe(block, make_ctx, table=table, fuzzy={"column": "名", "threshold": 70})
    assert [(d["名"], d["類似度"]) for d in out["duplicates"]] == [("山田商亊", 75)]
    assert out["unique"] == [table[0], table[2]]


def test_groups_are_transitive(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"名": "abcdefghij"}, {"名": "abcdefghXY"}, {"名": "abcdefXYZW"}]
    out = dedupe(block, make_ctx, table=table, fuzzy={"column": "名", "threshold": 80})
    # a~b (80) and b~c (80), though a~c is only 60: one group, as union-find promises.
    assert [(d["行番号"], d["重複元行"], d["類似度"]) for d in out["duplicates"]] == [
        (2, 1, 80),
        (3, 1, 60),
    ]


def test_token_sort_ratio_ignores_word_order(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"名": "Yamada Trading Co., Ltd."}, {"名": "TRADING YAMADA"}]
    plain = dedupe(block, make_ctx, table=table, fuzzy={"column": "名"})
    assert plain["duplicates"] == []
    out = dedupe(block, make_ctx, table=table, fuzzy={"column": "名", "scorer": "token_sort_ratio"})
    assert [d["行番号"] for d in out["duplicates"]] == [2]


def test_blank_keys_and_names_are_never_duplicates(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"名": "", "No": None}, {"名": "株式会社", "No": None}, {"名": "  ", "No": None}]
    out = dedupe(block, make_ctx, table=table, fuzzy={"column": "名"})
    assert out["unique"] == table
    assert out["summary"]["warnings"] == [
        "3 行はキーまたは fuzzy.column が空欄のため、重複の判定から外しました（unique に残ります）。"
    ]
    exact = dedupe(block, make_ctx, table=table, keys="No")
    assert exact["duplicates"] == []


def test_a_few_thousand_rows_are_grouped_correctly(block: Block, make_ctx: ContextFactory) -> None:
    vendors = [f"{chr(0x4E00 + i)}{chr(0x5000 + i * 7 % 3000)}商事" for i in range(1500)]
    table = [{"取引先名": name, "No": i} for i, name in enumerate(vendors)]
    table += [{"取引先名": f"株式会社{name}", "No": i} for i, name in enumerate(vendors[:500])]
    out = dedupe(block, make_ctx, table=table, fuzzy={"column": "取引先名"})
    assert out["summary"]["unique_rows"] == 1500
    assert out["summary"]["groups"] == 500
    assert all(d["重複元行"] == d["行番号"] - 1500 for d in out["duplicates"])


def test_kanji_and_bank_kana_spellings_are_duplicates_by_reading(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = [
        {"取引先名": "山田商事株式会社"},
        {"取引先名": "ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ"},
        {"取引先名": "医療法人社団 桜歯科"},
        {"取引先名": "ｲ)ｻｸﾗｼｶ"},
        {"取引先名": "山田商店"},
    ]
    plain = dedupe(block, make_ctx, table=table, fuzzy={"column": "取引先名"})
    assert plain["duplicates"] == []
    fuzzy = {"column": "取引先名", "normalize_reading": True}
    out = dedupe(block, make_ctx, table=table, fuzzy=fuzzy)
    assert out["unique"] == [table[0], table[2], table[4]]
    assert [(d["取引先名"], d["重複元行"]) for d in out["duplicates"]] == [
        ("ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ", 1),
        ("ｲ)ｻｸﾗｼｶ", 3),
    ]


def test_normalize_key() -> None:
    assert normalize_key("㈱ 山田　商事", company=True) == "山田商事"
    # Kana compare as banks write them: small kana large, so the master's ショウジ is ｼﾖｳｼﾞ.
    assert normalize_key("ﾔﾏﾀﾞｼｮｳｼﾞ(ｶ", company=True) == "ヤマダシヨウジ"
    assert normalize_key("ヤマダショウジ（カ", company=True) == "ヤマダシヨウジ"
    assert normalize_key("ABC Co., Ltd.", company=True) == "abc"
    assert normalize_key("  Yamada   Trading ", keep_spaces=True) == "yamada trading"
    assert normalize_key(1001.0) == "1001"
    assert normalize_key(None) == ""


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, "keys か fuzzy"),
        ({"keys": []}, "keys か fuzzy"),
        ({"fuzzy": {"column": "取引先名", "threshold": 120}}, "0〜100"),
        ({"fuzzy": {"threshold": 90}}, "fuzzy.column"),
        ({"fuzzy": {"column": "取引先名", "scorer": "jaro"}}, "scorer"),
        ({"fuzzy": {"column": "取引先名", "normalize_reading": "yes"}}, "normalize_reading"),
        ({"keys": "電話", "keep": "newest"}, "keep に 'newest'"),
    ],
    ids=["nothing", "empty-keys", "threshold", "no-column", "scorer", "reading", "keep"],
)
def test_bad_settings_are_refused_before_running(
    block: Block, options: dict[str, Any], expected: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"table": VENDORS, **options})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert expected in info.value.message
    assert info.value.hint


def test_missing_and_clashing_columns_are_named(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        dedupe(block, make_ctx, keys=["電話番号"])
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "電話番号" in info.value.message
    assert "使える列: 取引先名, 電話" in info.value.hint
    table = [{**row, "重複グループ": 1} for row in VENDORS]
    with pytest.raises(BlockError) as clash:
        dedupe(block, make_ctx, table=table, keys="電話")
    assert "重複グループ" in clash.value.message
    assert "unique" in clash.value.hint


def test_a_ledger_of_200000_rows_is_deduplicated_by_columns_without_making_records(
    block: Block, make_ctx: ContextFactory
) -> None:
    size = 200_000
    names = np.array(["株式会社山田商事", "(株)山田商事", "鈴木工業", "佐藤物産"], dtype=object)
    row = np.arange(size)
    # Every four rows share a day and an amount: the first two are one company written twice.
    ledger = CountingTable(
        pd.DataFrame(
            {
                "日付": pd.Timestamp("2025-01-01") + pd.to_timedelta(row // 4 % 365, unit="D"),
                "金額": pd.array(row // 4 * 100 + 100, dtype="Int64"),
                "取引先": pd.array(names[row % 4], dtype="str"),
            }
        ),
        origin=TableOrigin("台帳.csv"),
        positions=row + 2,  # the header is line 1
    )
    out = run_counted(
        block,
        {"table": ledger, "keys": ["日付", "金額"], "fuzzy": {"column": "取引先"}},
        make_ctx(),
    )
    assert getattr(ledger, "rows_read", 0) == 0  # no row was made a record
    assert out["summary"] == {
        "input_rows": size,
        "unique_rows": 150_000,
        "duplicate_rows": 50_000,
        "groups": 50_000,
        "warnings": [],
    }
    assert out["duplicates"][0] == {
        "日付": "2025-01-01",
        "金額": 100,
        "取引先": "(株)山田商事",
        "行番号": 3,
        "重複グループ": 1,
        "重複元行": 2,
        "類似度": 100,
    }
    assert out["duplicates"].where(49_999, "取引先") == "台帳.csv の 199999 行目の列「取引先」"
    assert out["unique"].where(3, "金額") == "台帳.csv の 6 行目の列「金額」"
    assert out["groups"][49_999] == {
        "重複グループ": 50_000,
        "残した行": 199_998,
        "行番号": "199998, 199999",
        "件数": 2,
        "日付": "2025-12-26",  # day 49,999 % 365
        "金額": 5_000_000,
        "取引先": "株式会社山田商事",
        "表記": "株式会社山田商事 / (株)山田商事",
    }


def test_groups_match_pairwise_comparison_in_blocks_of_every_size(
    block: Block, make_ctx: ContextFactory
) -> None:
    rng = random.Random(7)
    table = []
    # A block's distinct names are compared pair by pair with other small blocks' (up to 16),
    # or as a matrix of their own, in chunks of 256 queries for the largest.
    for number, size in enumerate([2, 3, 5, 9, 16, 17, 40, 700]):
        for _ in range(size):
            name = "".join(rng.choice("山田商事工業") for _ in range(rng.randint(2, 9)))
            table.append({"区分": f"B{number}", "名": name})
    rng.shuffle(table)
    threshold = 75
    out = dedupe(
        block,
        make_ctx,
        table=table,
        keys="区分",
        fuzzy={"column": "名", "threshold": threshold, "normalize_company": False},
    )
    # The reference: every pair of a block compared, groups closed transitively.
    parent = list(range(len(table)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(table):
        for j in range(i + 1, len(table)):
            b = table[j]
            if a["区分"] == b["区分"] and fuzz.ratio(a["名"], b["名"]) >= threshold:
                parent[max(find(i), find(j))] = min(find(i), find(j))
    members: dict[int, list[int]] = {}
    for i in range(len(table)):
        members.setdefault(find(i), []).append(i + 1)
    expected = [", ".join(map(str, rows)) for rows in sorted(members.values()) if len(rows) > 1]
    assert [group["行番号"] for group in out["groups"]] == expected
    assert len(expected) > 20


def test_true_and_1_are_different_keys(block: Block, make_ctx: ContextFactory) -> None:
    table = [{"済": True}, {"済": 1}, {"済": "TRUE"}, {"済": 1.0}]
    out = dedupe(block, make_ctx, table=table, keys="済")
    assert [group["行番号"] for group in out["groups"]] == ["1, 3", "2, 4"]


def test_duplicates_and_groups_keep_the_unit_of_an_amount(
    block: Block, make_ctx: ContextFactory
) -> None:
    table = Table(
        pd.DataFrame({"金額": [1200, 1200, 500], "摘要": ["会費", "会費", "備品"]}),
        units={"金額": "千円"},
    )
    out = dedupe(block, make_ctx, table=table, keys=["金額", "摘要"])
    assert out["groups"] == [
        {
            "重複グループ": 1,
            "残した行": 1,
            "行番号": "1, 2",
            "件数": 2,
            "金額": 1200,
            "摘要": "会費",
        }
    ]
    assert out["groups"].units == {"金額": "千円"}
    assert out["duplicates"].units == {"金額": "千円"}
