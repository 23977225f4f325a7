"""table.reconcile on columns: the same pairs as the rule taken pair by pair, at ledger scale.

The rule (every candidate pair of a key in the order: outside a tolerance, amount difference,
day difference, left row, right row; a pair taken when neither row is) decides which deposit
pays which invoice, so the pairing computed with numpy is checked against the rule itself on
random tables. The block is then run on tables of 200,000 rows that it must never turn into
records, and on a table typed as ``file.read_table`` types it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.table.pairing import BATCH_PAIRS, Side, pair_rows
from keiri_agent.blocks.table.reconcile import MAX_DETAILED
from keiri_agent.documents.table_value import TableOrigin
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.blocks.counting import CountingTable, run_counted

KEYS = [{"left": "取引先", "right": "振込名義"}]
AMOUNT = {"left": "請求額", "right": "入金額", "tolerance": 660}
DATE = {"left": "期日", "right": "入金日", "tolerance_days": 3}


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.reconcile")


# --- the rule, pair by pair ------------------------------------------------------------------


Rows = list[tuple[int, Decimal, int]]  # (key or -1, amount, day) per row


def rule_pairs(
    left: Rows, right: Rows, tolerance: Decimal, tolerance_days: int
) -> list[tuple[int, int]]:
    """table.reconcile's rule as written: every pair of a key sorted, taken greedily."""
    candidates = []
    for i, (lkey, lamount, lday) in enumerate(left):
        for j, (rkey, ramount, rday) in enumerate(right):
            if lkey >= 0 and lkey == rkey:
                amount, days = abs(ramount - lamount), abs(rday - lday)
                outside = amount > tolerance or days > tolerance_days
                candidates.append((outside, amount, days, i, j))
    taken_left: set[int] = set()
    taken_right: set[int] = set()
    pairs = []
    for *_, i, j in sorted(candidates):
        if i not in taken_left and j not in taken_right:
            taken_left.add(i)
            taken_right.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def side(rows: Rows, decimals: bool, dated: bool) -> Side:
    amounts = [amount for _, amount, _ in rows]
    return Side(
        np.array([key for key, _, _ in rows], dtype=np.int64),
        np.array(amounts, dtype=object) if decimals else np.array(amounts, dtype=np.int64),
        np.array([day for *_, day in rows], dtype=np.int64) if dated else None,
    )


ROWS = st.lists(
    st.tuples(
        st.integers(-1, 4),  # few keys, a blank one: groups of every size
        st.sampled_from([0, 10, 20, 30, 100, 110, 340, 1000, 1660]).map(Decimal),
        st.integers(0, 9),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(
    ROWS,
    ROWS,
    st.sampled_from([0, 10, 25, 660, 10**6]),
    st.sampled_from([0, 1, 3, 100]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 5, 40, BATCH_PAIRS]),
)
def test_pairs_are_the_rules_pairs_on_random_tables(
    left: Rows,
    right: Rows,
    tolerance: int,
    tolerance_days: int,
    dated: bool,
    decimals: bool,
    batch: int,
) -> None:
    if not dated:  # without dates every day difference is 0
        left = [(k, a, 0) for k, a, _ in left]
        right = [(k, a, 0) for k, a, _ in right]
    limit: int | Decimal = Decimal(tolerance) if decimals else tolerance
    got = pair_rows(
        side(left, decimals, dated),
        side(right, decimals, dated),
        limit,
        tolerance_days,
        batch=batch,
    )
    expected = rule_pairs(left, right, Decimal(tolerance), tolerance_days)
    assert list(zip(got.left.tolist(), got.right.tolist(), strict=True)) == expected
    for i, j, off in zip(got.left.tolist(), got.right.tolist(), got.outside.tolist(), strict=True):
        amount, days = abs(right[j][1] - left[i][1]), abs(right[j][2] - left[i][2])
        assert off == (amount > tolerance or days > tolerance_days)


def test_a_chain_of_equal_differences_is_paired_by_row_order() -> None:
    # Every invoice is 10 yen from two deposits: each round of mutually first candidates takes
    # one pair only, so the rest is taken pair by pair, still by the rule.
    size = 400
    left: Rows = [(0, Decimal(20 * i), 0) for i in range(size)]
    right: Rows = [(0, Decimal(20 * i + 10), 0) for i in range(size)]
    got = pair_rows(side(left, False, False), side(right, False, False), 0, 0)
    expected = rule_pairs(left, right, Decimal(0), 0)
    assert list(zip(got.left.tolist(), got.right.tolist(), strict=True)) == expected
    assert expected == [(i, i) for i in range(size)]


def test_a_monthly_fee_of_the_same_amount_is_paid_by_the_deposit_of_its_month(
    block: Block, make_ctx: ContextFactory
) -> None:
    months = range(1, 13)
    left = [{"取引先": "山田商事", "期日": f"2025-{m:02d}-28", "請求額": 11000} for m in months]
    right = [  # in the bank's order, a fee taken in March
        {"振込名義": "ﾔﾏﾀﾞ", "入金日": "2025-01-01", "入金額": 11000},
        *(
            {"振込名義": "山田商事", "入金日": f"2025-{m:02d}-27", "入金額": 11000 - 660 * (m == 3)}
            for m in reversed(months)
        ),
    ]
    out = run_like_runner(
        block,
        {"left": left, "right": right, "keys": KEYS, "amount": AMOUNT, "date": DATE},
        make_ctx(),
    )
    assert [(m["請求行番号"], m["入金行番号"], m["差額"], m["日数差"]) for m in out["matched"]] == [
        (m, 14 - m, -660 if m == 3 else 0, -1) for m in months
    ]
    assert out["unmatched_right"] == [right[0]]


# --- the block at scale ----------------------------------------------------------------------


def ledgers(size: int) -> tuple[CountingTable, CountingTable]:
    """``size`` invoices of 2,000 customers and their deposits (every 10th 660 yen short, every
    50th never paid, every 50th deposit from someone else), both read from files."""
    rows = np.arange(size)
    customers = np.array([f"取引先{i:04d}" for i in range(2000)], dtype=object)
    amounts = (rows % 97 + 1) * 1000 + (rows // 2000) * 100_000
    due = np.datetime64("2025-01-01") + (rows % 300).astype("timedelta64[D]")
    invoices = CountingTable(
        pd.DataFrame(
            {
                "請求番号": pd.array([f"INV{i:06d}" for i in rows], dtype="str"),
                "取引先": pd.array(customers[rows % 2000], dtype="str"),
                "期日": due.astype("datetime64[s]"),
                "請求額": amounts.astype("float64"),
            }
        ),
        origin=TableOrigin("請求一覧.csv"),
        positions=rows + 2,
        units={"請求額": "円"},
    )
    payer = np.where(rows % 50 == 49, "不明", customers[rows % 2000].astype(str))
    fee = np.where(rows % 10 == 3, 660, 0)
    deposits = CountingTable(
        pd.DataFrame(
            {
                "入金日": (due + (rows % 3).astype("timedelta64[D]")).astype("datetime64[s]"),
                "振込名義": pd.array(payer, dtype="str"),
                "入金額": (amounts - fee).astype("int64"),
            }
        ),
        origin=TableOrigin("入金明細.csv"),
        positions=rows + 2,
        units={"入金額": "円"},
    )
    return invoices, deposits


def test_200000_invoices_are_reconciled_by_columns_without_making_records(
    block: Block, make_ctx: ContextFactory
) -> None:
    size = 200_000
    invoices, deposits = ledgers(size)
    out = run_counted(
        block,
        {"left": invoices, "right": deposits, "keys": KEYS, "amount": AMOUNT, "date": DATE},
        make_ctx(),
    )
    assert getattr(invoices, "rows_read", 0) == 0  # no row of either side became a record
    assert getattr(deposits, "rows_read", 0) == 0
    unpaid = size // 50
    assert out["summary"]["matched"] == size - unpaid
    assert out["summary"]["unmatched_left"] == unpaid
    assert out["summary"]["differences"] == 0  # 不明 is no customer: no pair at all
    assert out["summary"]["unmatched_right"] == unpaid
    matched = out["matched"]
    assert matched[3] == {
        "取引先": "取引先0003",
        "区分": "許容範囲内",
        "請求金額": 4000,
        "入金金額": 3340,
        "差額": -660,
        "請求日付": "2025-01-04",
        "入金日付": "2025-01-04",
        "日数差": 0,
        "請求行番号": 4,
        "入金行番号": 4,
        "請求_請求番号": "INV000003",
        "入金_振込名義": "取引先0003",
    }
    # A pair is named by its invoice's line; the leftovers keep theirs.
    assert matched.where(3, "差額") == "請求一覧.csv の 5 行目の列「差額」"
    assert out["unmatched_left"].where(0) == "請求一覧.csv の 51 行目"
    assert out["unmatched_right"].where(0) == "入金明細.csv の 51 行目"
    assert matched.units == {"請求金額": "円", "入金金額": "円", "差額": "円"}
    assert out["unmatched_left"].units == {"請求額": "円"}


def test_unreadable_cells_of_a_large_table_are_counted_and_the_first_named(
    block: Block, make_ctx: ContextFactory
) -> None:
    size = 200_000
    invoices, deposits = ledgers(size)
    frame = invoices.frame.assign(請求額=pd.array(["未定"] * size, dtype="str"))
    left = CountingTable(frame, origin=invoices.origin, positions=invoices.positions)
    with pytest.raises(BlockError) as info:
        run_counted(
            block,
            {"left": left, "right": deposits, "keys": KEYS, "amount": AMOUNT, "date": DATE},
            make_ctx(),
        )
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.message.startswith("金額として読めない値が 200000 件あります: ")
    assert "請求（left）の 請求一覧.csv の 2 行目の列「請求額」（値: '未定'）" in error.message
    assert error.message.endswith(" ほか 199990 件")
    problems = error.details["problems"]
    assert len(problems) == MAX_DETAILED  # all are counted, a thousand are detailed
    assert problems[-1]["where"] == f"請求一覧.csv の {MAX_DETAILED + 1} 行目の列「請求額」"
    assert getattr(left, "rows_read", 0) == 0


def test_a_table_typed_by_the_file_reader_reconciles_as_its_records(
    block: Block, make_ctx: ContextFactory
) -> None:
    invoices, deposits = ledgers(3000)
    inputs = {"keys": KEYS, "amount": AMOUNT, "date": DATE, "left_label": "売掛"}
    typed = run_counted(block, {"left": invoices, "right": deposits, **inputs}, make_ctx())
    plain = run_like_runner(
        block,
        {"left": invoices.records(), "right": deposits.records(), **inputs},
        make_ctx(),
    )
    for name in ("matched", "differences", "unmatched_left", "unmatched_right"):
        assert typed[name].records() == plain[name].records(), name
    assert typed["summary"] == plain["summary"]


# --- exact amounts and the limit of one key --------------------------------------------------


def test_amounts_with_decimals_are_compared_and_subtracted_exactly(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [
        {"取引先": "A", "請求額": 0.1},
        {"取引先": "B", "請求額": "0.1234567890"},
        {"取引先": "C", "請求額": 0.3},
    ]
    right = [
        {"振込名義": "A", "入金額": 0.3},  # 0.3 - 0.1 is 0.19999999999999998 in floats
        {"振込名義": "B", "入金額": 0.1234567891},  # beyond nine decimals: Decimals
        {"振込名義": "C", "入金額": 0.1},
    ]
    amount = {"left": "請求額", "right": "入金額", "tolerance": 0.2}
    out = run_like_runner(
        block, {"left": left, "right": right, "keys": KEYS, "amount": amount}, make_ctx()
    )
    assert [(m["取引先"], m["区分"], m["差額"]) for m in out["matched"]] == [
        ("A", "許容範囲内", 0.2),
        ("B", "許容範囲内", 1e-10),
        ("C", "許容範囲内", -0.2),
    ]
    amount["tolerance"] = 0.1
    out = run_like_runner(
        block, {"left": left, "right": right, "keys": KEYS, "amount": amount}, make_ctx()
    )
    assert [(d["取引先"], d["区分"], d["差額"]) for d in out["differences"]] == [
        ("A", "金額差異", 0.2),
        ("C", "金額差異", -0.2),
    ]


def test_a_key_with_too_many_pairs_is_refused_naming_it(
    block: Block, make_ctx: ContextFactory
) -> None:
    left: list[dict[str, Any]] = [{"取引先": "鈴木", "請求額": 1}] * 3
    left += [{"取引先": "株式会社 山田", "請求額": i} for i in range(1001)]
    right = [{"振込名義": "株式会社山田", "入金額": i} for i in range(1000)]
    right += [{"振込名義": "鈴木", "入金額": 1}] * 3
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block,
            {"left": left, "right": right, "keys": KEYS, "amount": AMOUNT},
            make_ctx(),
        )
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "キー「株式会社山田」の行が多すぎて照合できません（請求 1001 行 × 入金 1000 行）" in (
        info.value.message
    )
    assert info.value.details["key"] == ["株式会社山田"]
    assert "keys に加える" in info.value.hint


def test_a_list_or_a_mapping_in_a_key_cell_is_compared_by_its_text(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [{"取引先": {"名": "山田"}, "請求額": 1000}, {"取引先": ["鈴木"], "請求額": 500}]
    right = [{"振込名義": ["鈴木"], "入金額": 500}, {"振込名義": "{'名': '山田'}", "入金額": 1000}]
    out = run_like_runner(
        block, {"left": left, "right": right, "keys": KEYS, "amount": AMOUNT}, make_ctx()
    )
    assert [(m["取引先"], m["入金行番号"]) for m in out["matched"]] == [
        ("{'名': '山田'}", 2),
        ("['鈴木']", 1),
    ]
