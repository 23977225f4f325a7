"""table.reconcile: invoices against bank deposits, as an accountant would tick them off.

Every row of both tables must end in exactly one of matched / differences / unmatched_left /
unmatched_right, with the amounts, differences and row numbers a person checks by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

AMOUNT = {"left": "請求額", "right": "入金額", "tolerance": 660}
DATE = {"left": "期日", "right": "入金日", "tolerance_days": 3}
KEYS = [{"left": "取引先", "right": "振込名義"}]


def invoice(no: str, vendor: str, amount: Any, due: str = "2025-01-31") -> dict[str, Any]:
    return {"請求番号": no, "取引先": vendor, "期日": due, "請求額": amount}


def deposit(name: str, amount: Any, day: str = "2025-01-31") -> dict[str, Any]:
    return {"入金日": day, "振込名義": name, "入金額": amount}


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("table.reconcile")


def reconcile(
    block: Block, make_ctx: ContextFactory, left: Any, right: Any, **options: Any
) -> dict[str, Any]:
    inputs = {"left": left, "right": right, "keys": KEYS, "amount": AMOUNT, "date": DATE}
    return run_like_runner(block, {**inputs, **options}, make_ctx("reconcile"))


def test_exact_match_fee_within_tolerance_and_both_kinds_of_leftovers(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [
        invoice("INV-1", "山田商事", 110000),
        invoice("INV-2", "鈴木工業", "¥55,000"),
        invoice("INV-3", "佐藤物産", 33000),
    ]
    right = [
        deposit("鈴木工業", "54,340円", "2025-02-02"),
        deposit("山田商事", 110000),
        deposit("田中建設", 22000),
    ]
    out = reconcile(block, make_ctx, left, right)
    assert out["matched"] == [
        {
            "取引先": "山田商事",
            "区分": "一致",
            "請求金額": 110000,
            "入金金額": 110000,
            "差額": 0,
            "請求日付": "2025-01-31",
            "入金日付": "2025-01-31",
            "日数差": 0,
            "請求行番号": 1,
            "入金行番号": 2,
            "請求_請求番号": "INV-1",
            "入金_振込名義": "山田商事",
        },
        {
            "取引先": "鈴木工業",
            "区分": "許容範囲内",
            "請求金額": 55000,
            "入金金額": 54340,
            "差額": -660,
            "請求日付": "2025-01-31",
            "入金日付": "2025-02-02",
            "日数差": 2,
            "請求行番号": 2,
            "入金行番号": 1,
            "請求_請求番号": "INV-2",
            "入金_振込名義": "鈴木工業",
        },
    ]
    assert out["differences"] == []
    assert out["unmatched_left"] == [left[2]]
    assert out["unmatched_right"] == [right[2]]
    assert out["summary"] == {
        "left_rows": 3,
        "right_rows": 3,
        "matched": 2,
        "differences": 0,
        "unmatched_left": 1,
        "unmatched_right": 1,
        "left_total": 198000,
        "right_total": 186340,
        "warnings": [],
    }


def test_amount_and_date_differences_are_classified(block: Block, make_ctx: ContextFactory) -> None:
    left = [
        invoice("INV-1", "山田商事", 110000),
        invoice("INV-2", "鈴木工業", 55000),
        invoice("INV-3", "佐藤物産", 33000),
    ]
    right = [
        deposit("山田商事", 100000),
        deposit("鈴木工業", 55000, "2025-02-10"),
        deposit("佐藤物産", 30000, "2025-03-31"),
    ]
    out = reconcile(block, make_ctx, left, right)
    assert out["matched"] == []
    assert [
        (d["取引先"], d["区分"], d["差額"], d["日数差"], d["請求行番号"], d["入金行番号"])
        for d in out["differences"]
    ] == [
        ("山田商事", "金額差異", -10000, 0, 1, 1),
        ("鈴木工業", "日付差異", 0, 10, 2, 2),
        ("佐藤物産", "金額・日付差異", -3000, 59, 3, 3),
    ]
    assert out["unmatched_left"] == []
    assert out["unmatched_right"] == []


def test_two_invoices_of_one_vendor_are_paired_with_the_right_deposits(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [
        invoice("INV-1", "山田商事", 110000, "2025-01-31"),
        invoice("INV-2", "山田商事", 55000, "2025-02-28"),
        invoice("INV-3", "山田商事", 55000, "2025-03-31"),
    ]
    right = [
        deposit("山田商事", 55000, "2025-03-31"),  # pays INV-3 (same amount as INV-2, later date)
        deposit("山田商事", 109340, "2025-01-31"),  # pays INV-1 less a 660 yen fee
        deposit("山田商事", 55000, "2025-02-27"),  # pays INV-2
    ]
    out = reconcile(block, make_ctx, left, right)
    pairs = [(m["請求_請求番号"], m["入金行番号"], m["差額"], m["日数差"]) for m in out["matched"]]
    assert pairs == [("INV-1", 2, -660, 0), ("INV-2", 3, 0, -1), ("INV-3", 1, 0, 0)]
    assert out["differences"] == []
    assert out["unmatched_left"] == []
    assert out["unmatched_right"] == []


def test_a_pair_within_tolerance_wins_over_an_exact_amount_too_late(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [
        invoice("INV-1", "山田商事", 10000, "2025-01-31"),
        invoice("INV-2", "山田商事", 10660, "2025-03-31"),
    ]
    right = [deposit("山田商事", 10000, "2025-03-31")]
    out = reconcile(block, make_ctx, left, right)
    assert [(m["請求_請求番号"], m["差額"]) for m in out["matched"]] == [("INV-2", -660)]
    assert out["unmatched_left"] == [left[0]]


def test_company_forms_and_bank_kana_are_ignored_when_asked(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [
        invoice("INV-1", "株式会社山田商事", 110000),
        invoice("INV-2", "ﾔﾏﾀﾞｼｮｳｼﾞ", 22000),
        invoice("INV-3", "鈴木工業有限会社", 33000),
    ]
    right = [
        deposit("㈱山田商事", 110000),
        deposit("ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ", 22000),
        deposit("（有）鈴木　工業", 33000),
    ]
    plain = reconcile(block, make_ctx, left, right)
    assert plain["matched"] == []
    out = reconcile(block, make_ctx, left, right, normalize_company=True)
    assert [(m["取引先"], m["入金_振込名義"]) for m in out["matched"]] == [
        ("株式会社山田商事", "㈱山田商事"),
        ("ﾔﾏﾀﾞｼｮｳｼﾞ", "ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ"),
        ("鈴木工業有限会社", "（有）鈴木　工業"),
    ]
    per_key = [{"left": "取引先", "right": "振込名義", "normalize_company": True}]
    assert len(reconcile(block, make_ctx, left, right, keys=per_key)["matched"]) == 3


def test_kanji_invoices_meet_bank_kana_payers_by_reading_when_asked(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [
        invoice("INV-1", "株式会社山田商事", 110000),
        invoice("INV-2", "医療法人社団 桜歯科", 33000),
        invoice("INV-3", "ヤマダショウテン（カ", 22000),
    ]
    right = [
        deposit("1012ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110000),
        deposit("ｲ)ｻｸﾗｼｶ", 33000),
        deposit("ﾔﾏﾀﾞｼﾖｳﾃﾝ(ｶ", 22000),
    ]
    company = reconcile(block, make_ctx, left, right, normalize_company=True)
    assert [m["取引先"] for m in company["matched"]] == ["ヤマダショウテン（カ"]
    out = reconcile(block, make_ctx, left, right, normalize_reading=True)
    assert [(m["取引先"], m["入金_振込名義"]) for m in out["matched"]] == [
        ("株式会社山田商事", "1012ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        ("医療法人社団 桜歯科", "ｲ)ｻｸﾗｼｶ"),
        ("ヤマダショウテン（カ", "ﾔﾏﾀﾞｼﾖｳﾃﾝ(ｶ"),
    ]
    per_key = [{"left": "取引先", "right": "振込名義", "normalize_reading": True}]
    assert len(reconcile(block, make_ctx, left, right, keys=per_key)["matched"]) == 3


def test_an_empty_side_leaves_every_row_of_the_other_unmatched(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [invoice("INV-1", "山田商事", 110000)]
    out = reconcile(block, make_ctx, left, [])
    assert out["unmatched_left"] == left
    assert out["matched"] == out["differences"] == out["unmatched_right"] == []
    assert (out["summary"]["left_total"], out["summary"]["right_total"]) == (110000, 0)
    out = reconcile(block, make_ctx, {"rows": []}, {"items": [deposit("山田商事", 1)]})
    assert out["unmatched_right"] == [deposit("山田商事", 1)]


def test_rows_with_a_blank_key_stay_unmatched_with_a_warning(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [invoice("INV-1", "", 1000)]
    right = [deposit(" ", 1000)]
    out = reconcile(block, make_ctx, left, right)
    assert (out["unmatched_left"], out["unmatched_right"]) == (left, right)
    assert out["summary"]["warnings"] == [
        "請求の 1 行はキーが空欄のため照合できず、請求のみとして残しました。",
        "入金の 1 行はキーが空欄のため照合できず、入金のみとして残しました。",
    ]


def test_without_dates_and_with_own_labels_and_two_keys(
    block: Block, make_ctx: ContextFactory
) -> None:
    left = [{"得意先": "A社", "番号": "1", "残高": 500, "メモ": "x"}]
    right = [{"相手": "a社", "摘要": "1", "金額": 500}]
    out = run_like_runner(
        block,
        {
            "left": left,
            "right": right,
            "keys": [{"left": "得意先", "right": "相手"}, {"left": "番号", "right": "摘要"}],
            "amount": {"left": "残高", "right": "金額"},
            "left_label": "売掛",
            "right_label": "銀行",
        },
        make_ctx(),
    )
    assert out["matched"] == [
        {
            "得意先": "A社",
            "番号": "1",
            "区分": "一致",
            "売掛金額": 500,
            "銀行金額": 500,
            "差額": 0,
            "売掛行番号": 1,
            "銀行行番号": 1,
            "売掛_メモ": "x",
            "銀行_相手": "a社",
            "銀行_摘要": "1",
        }
    ]


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
@pytest.mark.parametrize("text", ["未定", "①"])
def test_unreadable_amounts_and_dates_are_named_by_side_row_and_column(
    block: Block, make_ctx: ContextFactory, text: str
) -> None:
    left = [invoice("INV-1", "山田商事", 110000), invoice("INV-2", "鈴木工業", text)]
    right = [deposit("山田商事", 110000, "1月末"), deposit("鈴木工業", None)]
    with pytest.raises(BlockError) as info:
        reconcile(block, make_ctx, left, right)
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert f"請求（left）の 2 行目の列「請求額」（値: '{text}'）" in error.message
    assert "入金（right）の 1 行目の列「入金日」（値: '1月末'）" in error.message
    assert "入金（right）の 2 行目の列「入金額」（値: 空欄）" in error.message
    assert "¥110,000" in error.hint
    assert len(error.details["problems"]) == 3


def test_a_missing_column_is_named_with_its_table(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        reconcile(block, make_ctx, [invoice("INV-1", "山田商事", 1)], [{"名義": "x", "入金額": 1}])
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "right に列 振込名義, 入金日 がありません" in info.value.message
    assert "使える列: 名義, 入金額" in info.value.hint


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"keys": []}, "keys（照合キーの列）"),
        ({"keys": [{"left": "取引先"}]}, "keys の 1 番目"),
        ({"amount": {"left": "請求額", "right": "入金額", "tolerance": -1}}, "amount は"),
        ({"amount": {"left": "請求額"}}, "amount は"),
        ({"date": {"left": "期日", "right": "入金日", "tolerance_days": 1.5}}, "0 以上の整数"),
        ({"left_label": "入金"}, "別々の空でない文字列"),
        ({"normalize_company": "yes"}, "normalize_company"),
        ({"normalize_reading": 1}, "normalize_reading"),
        (
            {"keys": [{"left": "取引先", "right": "振込名義", "normalize_reading": "yes"}]},
            "keys の 1 番目",
        ),
    ],
    ids=[
        "no-keys",
        "half-key",
        "negative",
        "no-right",
        "fraction-days",
        "labels",
        "flag",
        "reading-flag",
        "reading-per-key",
    ],
)
def test_bad_settings_are_refused_before_running(
    block: Block, options: dict[str, Any], expected: str
) -> None:
    inputs = {"left": [], "right": [], "keys": KEYS, "amount": AMOUNT, "date": DATE, **options}
    with pytest.raises(BlockError) as info:
        block.check_inputs(inputs)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert expected in info.value.message
    assert info.value.hint


def test_output_column_clashes_are_refused(block: Block, make_ctx: ContextFactory) -> None:
    left = [{"差額": "A社", "請求額": 1}]
    right = [{"振込名義": "A社", "入金額": 1}]
    with pytest.raises(BlockError) as info:
        run_like_runner(
            block,
            {
                "left": left,
                "right": right,
                "keys": [{"left": "差額", "right": "振込名義"}],
                "amount": {"left": "請求額", "right": "入金額"},
            },
            make_ctx(),
        )
    assert "差額" in info.value.message
    assert "left_label" in info.value.hint
