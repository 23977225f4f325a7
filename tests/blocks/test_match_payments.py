"""table.match_payments: bank lines written as banks write them, matched to open invoices the
way an accountant would tick them off, each match with its reason, and never a guess.

Each test is one situation an accounting team meets every month: a kana payer against a kanji
master, a fee taken off, several invoices in one transfer, an invoice paid in parts, an
overpayment, a code or an invoice number written by the payer, two customers whose names read
alike, two sets of invoices that fit equally well, a parent company paying for its subsidiary.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import run_like_runner
from tests.blocks.payments_support import (
    column,
    context,
    deposit,
    invoice,
    match,
    matched_pairs,
)

YAMADA = ("1001", "株式会社山田商事")
AOBA = ("1002", "青葉商事株式会社")
HOKUTO = ("1003", "北東運輸株式会社")
MASTER = [
    {"取引先コード": "1001", "取引先名": "株式会社山田商事", "取引先名カナ": "ヤマダショウジ"},
    {"取引先コード": "1002", "取引先名": "青葉商事株式会社", "取引先名カナ": ""},
    {"取引先コード": "1003", "取引先名": "北東運輸株式会社", "取引先名カナ": "ホクトウウンユ"},
]


def test_kana_payers_meet_kanji_customers_by_master_kana_or_by_reading(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-1", *YAMADA, 110_000),
        invoice("INV-2", *AOBA, 55_000),
        invoice("INV-3", *HOKUTO, 33_000),
    ]
    deposits = [
        deposit("000001", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000),  # small kana written large
        deposit("000002", "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ", 55_000),  # the form last
        deposit("000003", "ﾎｸﾄｳｳﾝﾕ(ｶ)ｵｵｻｶｼﾃﾝ", 33_000),  # the form in the middle, a branch
    ]
    out = match(tmp_path, invoices, deposits, customers=MASTER)

    assert matched_pairs(out) == {"000001": ["INV-1"], "000002": ["INV-2"], "000003": ["INV-3"]}
    assert (
        column(out, "matched", "理由")
        == [
            "名義: マスタのカナ／金額: 一致",
            "名義: 読み／金額: 一致",  # no kana in the master: the reading of 青葉商事
            "名義: マスタのカナ（後ろの支店名などを除いて一致）／金額: 一致",  # the branch after the form
        ]
    )
    assert out["summary"]["match_rate"] == 1.0
    assert out["unpaid"] == []


@pytest.mark.parametrize("fee", [440, 660, 880])
def test_a_bank_fee_taken_off_is_matched_and_shown_as_the_difference(
    tmp_path: Path, fee: int
) -> None:
    out = match(
        tmp_path, [invoice("INV-1", *YAMADA, 110_000)], [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000 - fee)]
    )
    (row,) = out["matched"]
    assert (row["請求番号"], row["消込額"], row["差額"], row["消込後残高"]) == (
        "INV-1",
        110_000 - fee,
        -fee,
        0,
    )
    assert row["理由"] == f"名義: 読み／金額: 手数料差引 ({fee:,} 円)"
    assert out["summary"]["fees"] == fee
    assert out["unpaid"] == []


def test_a_shortfall_beyond_the_fee_tolerance_is_a_partial_payment(tmp_path: Path) -> None:
    invoices = [invoice("INV-1", *YAMADA, 110_000)]
    deposits = [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 109_340)]

    strict = match(tmp_path, invoices, deposits, fee_tolerance=0)

    (row,) = strict["matched"]
    assert (row["差額"], row["消込後残高"]) == (-660, 660)
    assert row["理由"] == "名義: 読み／金額: 一部入金 (残 660 円)"
    assert column(strict, "unpaid", "残高") == [660]
    assert column(strict, "unpaid", "状態") == ["一部入金"]


def test_one_transfer_for_several_invoices_takes_the_smallest_set_oldest_first(
    tmp_path: Path,
) -> None:
    invoices = [
        invoice("INV-1", *AOBA, 30_000, due="2026-01-31"),
        invoice("INV-2", *AOBA, 50_000, due="2026-02-28"),
        invoice("INV-3", *AOBA, 20_000, due="2026-02-28"),
        invoice("INV-4", *AOBA, 80_000, due="2026-03-31"),
    ]
    # 80,000 is INV-4 alone (one invoice before two); 100,000 less a fee of 660 is INV-1..3.
    deposits = [deposit("1", "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ", 80_000), deposit("2", "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ", 99_340)]
    out = match(tmp_path, invoices, deposits)

    assert matched_pairs(out) == {"1": ["INV-4"], "2": ["INV-1", "INV-2", "INV-3"]}
    combined = [r for r in out["matched"] if r["照会番号"] == "2"]
    assert [r["差額"] for r in combined] == [0, 0, -660]  # the fee on the last invoice
    assert sum(r["消込額"] for r in combined) == 99_340
    assert combined[0]["理由"] == "名義: 読み／金額: 3 件まとめ・手数料差引 (660 円)"
    assert out["summary"]["by_amount"]["まとめ入金"] == 1


def test_an_invoice_paid_in_parts_stays_open_until_the_last_part(tmp_path: Path) -> None:
    invoices = [invoice("INV-1", *HOKUTO, 300_000)]
    parts = [
        deposit("1", "ﾎｸﾄｳｳﾝﾕ(ｶ", 100_000, "2026-02-05"),
        deposit("2", "ﾎｸﾄｳｳﾝﾕ(ｶ", 150_000, "2026-02-15"),
    ]
    first = match(tmp_path, invoices, parts)
    assert column(first, "matched", "理由") == [
        "名義: 読み／金額: 一部入金 (残 200,000 円)",
        "名義: 読み／金額: 一部入金 (残 50,000 円)",
    ]
    assert column(first, "unpaid", "残高") == [50_000]
    assert column(first, "unpaid", "入金済額") == [250_000]

    last = match(tmp_path, invoices, [*parts, deposit("3", "ﾎｸﾄｳｳﾝﾕ(ｶ", 50_000, "2026-02-25")])
    assert column(last, "matched", "消込後残高") == [200_000, 50_000, 0]
    assert last["unpaid"] == []


def test_an_invoice_already_partly_paid_is_matched_on_its_balance(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-1", *YAMADA, 110_000, 入金済額=10_000),
        invoice("INV-2", *AOBA, 55_000, 入金済額=55_000),  # paid in full before: not open
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 100_000)])
    (row,) = out["matched"]
    assert (row["請求金額"], row["消込前残高"], row["差額"]) == (110_000, 100_000, 0)
    assert out["summary"]["invoices_closed_before"] == 1


def test_an_overpayment_clears_the_invoice_and_keeps_the_rest(tmp_path: Path) -> None:
    out = match(
        tmp_path, [invoice("INV-1", *YAMADA, 110_000)], [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 115_000)]
    )
    (row,) = out["matched"]
    assert (row["差額"], row["消込後残高"]) == (5_000, 0)
    assert row["理由"] == "名義: 読み／金額: 過入金 (5,000 円)"
    assert out["summary"]["overpaid"] == 5_000


def test_an_invoice_number_or_a_code_written_by_the_payer_decides(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-2026-0001", *YAMADA, 110_000, due="2026-01-31"),
        invoice("INV-2026-0002", *YAMADA, 220_000, due="2026-02-28"),
        invoice("INV-2026-0003", *AOBA, 55_000),
    ]
    deposits = [
        # The EDI names the newer invoice; the payer, a parent company, is no customer at all.
        deposit("1", "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", 219_340, edi="INV20260002"),
        # A customer code put first, a name the master does not know.
        deposit("2", "1002ｱｵﾊﾞ", 55_000),
    ]
    out = match(tmp_path, invoices, deposits)

    assert matched_pairs(out) == {"1": ["INV-2026-0002"], "2": ["INV-2026-0003"]}
    assert column(out, "matched", "理由") == [
        "名義: 請求番号（EDI情報）／金額: 手数料差引 (660 円)",
        "名義: コード（振込依頼人名）／金額: 一致",
    ]


def test_a_code_naming_another_customer_than_the_name_is_for_a_person(tmp_path: Path) -> None:
    invoices = [invoice("INV-1", *YAMADA, 110_000), invoice("INV-2", *AOBA, 110_000)]
    out = match(tmp_path, invoices, [deposit("1", "1002ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000)])

    assert out["matched"] == []
    (row,) = out["review"]
    assert "コード（振込依頼人名）の取引先と、振込依頼人名（読み）の取引先" in row["理由"]
    assert row["候補数"] == 2


def test_two_customers_whose_names_read_alike_go_to_review_with_both(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-1", "1005", "株式会社山田工業", 220_000),
        invoice("INV-2", "1006", "株式会社山田興業", 99_000),
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ﾔﾏﾀﾞｺｳｷﾞﾖｳ", 220_000)])

    assert out["matched"] == []
    (row,) = out["review"]
    assert row["理由"].startswith("振込依頼人名が同じくらい合う取引先が 2 社あります")
    assert "INV-1（残 220,000 円、期日 2026-02-28）（一致）" in row["候補"]
    (question, remember) = out["questions"]
    assert [o["value"] for o in question["options"]] == ["取引先:1005", "取引先:1006", "該当なし"]
    assert (question["type"], question["required"], remember["type"]) == (
        "select",
        False,
        "boolean",
    )
    assert column(out, "unpaid", "請求番号") == ["INV-1", "INV-2"]  # nothing taken


def test_two_sets_of_invoices_that_fit_equally_go_to_review(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-1", *YAMADA, 110_000, due="2026-02-28"),
        invoice("INV-2", *YAMADA, 110_000, due="2026-02-28"),
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000)])

    assert out["matched"] == []
    (row,) = out["review"]
    assert "金額の合う請求の組み合わせが 2 通りあり、支払期日でも決められません" in row["理由"]
    assert [o["value"] for o in out["questions"][0]["options"]] == [
        "請求:INV-1",
        "請求:INV-2",
        "該当なし",
    ]


def test_of_equal_invoices_the_oldest_is_paid_first(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-2", *YAMADA, 110_000, due="2026-02-28"),
        invoice("INV-1", *YAMADA, 110_000, due="2026-01-31"),
    ]
    deposits = [
        deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000, "2026-02-03"),
        deposit("2", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000, "2026-02-27"),
    ]
    out = match(tmp_path, invoices, deposits)
    assert matched_pairs(out) == {"1": ["INV-1"], "2": ["INV-2"]}


def test_a_name_one_kana_apart_is_proposed_never_matched(tmp_path: Path) -> None:
    invoices = [invoice("INV-1", "1007", "株式会社白鳥商事", 77_000)]
    master = [
        {"取引先コード": "1007", "取引先名": "株式会社白鳥商事", "取引先名カナ": "シラトリショウジ"}
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ｼﾛﾄﾘｼﾖｳｼﾞ", 77_000)], customers=master)

    assert out["matched"] == []
    (row,) = out["review"]
    assert "1 文字だけ違う取引先" in row["理由"]
    assert "1007 株式会社白鳥商事（マスタのカナ（1文字違い））" in row["候補"]


def test_an_unknown_payer_is_unknown_unless_an_open_invoice_fits_its_amount(
    tmp_path: Path,
) -> None:
    invoices = [invoice("INV-1", *YAMADA, 110_000)]
    deposits = [deposit("1", "ﾀﾅｶ ﾀﾛｳ", 12_345), deposit("2", "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", 110_000)]
    out = match(tmp_path, invoices, deposits)

    (unknown,) = out["unknown"]
    assert (unknown["照会番号"], unknown["確認ID"]) == ("1", "確認_1_20260227_12345")
    assert unknown["理由"].startswith("振込依頼人名に合う取引先がありません")
    (review,) = out["review"]
    assert review["照会番号"] == "2"
    assert "金額の合う請求があります（名義は一致しません）" in review["理由"]
    assert [o["value"] for o in out["questions"][0]["options"]] == ["請求:INV-1", "該当なし"]


def test_a_parent_company_is_matched_once_its_name_is_learned(tmp_path: Path) -> None:
    invoices = [invoice("INV-1", *YAMADA, 110_000)]
    deposits = [deposit("1", "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", 110_000)]
    assert match(tmp_path, invoices, deposits)["matched"] == []

    # Learned as the bank wrote it once; the bank writes it another way this month.
    aliases = [{"振込依頼人名": "ﾔﾏﾄﾎｰﾙﾃﾞｲﾝｸﾞｽ(ｶ", "取引先コード": "1001"}]
    out = match(tmp_path, invoices, deposits, aliases=aliases)
    assert column(out, "matched", "理由") == ["名義: 学習済み／金額: 一致"]


def test_a_payer_learned_for_two_customers_is_for_a_person(tmp_path: Path) -> None:
    invoices = [invoice("INV-1", *YAMADA, 110_000), invoice("INV-2", *AOBA, 66_000)]
    aliases = [
        {"振込依頼人名": "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "取引先コード": "1001"},
        {"振込依頼人名": "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "取引先コード": "1002"},
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", 110_000)], aliases=aliases)
    assert out["matched"] == []
    assert "学習済みの名義が 2 社の取引先に登録されていて" in out["review"][0]["理由"]


def test_the_result_does_not_depend_on_the_order_of_the_bank_lines(tmp_path: Path) -> None:
    invoices = [
        invoice("INV-1", *YAMADA, 110_000, due="2026-01-31"),
        invoice("INV-2", *YAMADA, 110_000, due="2026-02-28"),
        invoice("INV-3", *AOBA, 50_000),
    ]
    deposits = [
        deposit("3", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000, "2026-02-10"),
        deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000, "2026-02-03"),
        deposit("2", "ｱｵﾊﾞｼﾖｳｼﾞ(ｶ", 50_000, "2026-02-03"),
    ]
    first = match(tmp_path, invoices, deposits)
    shuffled = deposits[:]
    random.Random(3).shuffle(shuffled)
    again = match(tmp_path, invoices, shuffled)

    assert matched_pairs(first) == {"1": ["INV-1"], "2": ["INV-3"], "3": ["INV-2"]}
    assert column(first, "matched", "照会番号") == ["1", "2", "3"]  # 勘定日, then 照会番号
    assert column(again, "matched", "照会番号") == column(first, "matched", "照会番号")
    assert column(again, "matched", "請求番号") == column(first, "matched", "請求番号")


def test_a_later_line_does_not_take_by_due_date_what_an_earlier_review_line_may_have_paid(
    tmp_path: Path,
) -> None:
    invoices = [
        invoice("INV-1", *YAMADA, 110_000, due="2026-01-31"),
        invoice("INV-2", *YAMADA, 110_000, due="2026-02-28"),
    ]
    deposits = [
        # Nobody knows this payer, but its amount fits INV-1: it may be the one who paid it.
        deposit("1", "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", 110_000, "2026-02-03"),
        deposit("2", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000, "2026-02-10"),
    ]
    out = match(tmp_path, invoices, deposits)
    assert out["matched"] == []
    assert "先の要確認の入金がその請求への入金の可能性があります" in out["review"][1]["理由"]


def test_invoices_named_without_codes_take_the_masters_codes(tmp_path: Path) -> None:
    invoices = [
        {
            "請求番号": "A-1",
            "取引先名": "(株)山田商事",
            "請求金額": "110,000",
            "支払期日": "2026/2/28",
        }
    ]
    out = match(tmp_path, invoices, [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000)], customers=MASTER)
    (row,) = out["matched"]
    assert (row["取引先コード"], row["取引先名"], row["理由"]) == (
        "1001",
        "株式会社山田商事",
        "名義: マスタのカナ／金額: 一致",
    )


def test_a_raw_bank_statement_table_gives_its_payers_from_the_description(
    tmp_path: Path, registry: BlockRegistry
) -> None:
    csv = (
        "取引日,お取引内容,お預り金額,お引出し金額,残高\r\n"
        '2026/2/3,振込　ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ,"109,340",,"1,109,340"\r\n'
        '2026/2/4,ﾃﾞﾝｷﾀﾞｲ,,"38,500","1,070,840"\r\n'
    )
    path = tmp_path / "meisai.csv"
    path.write_bytes(csv.encode("cp932"))
    rows = run_like_runner(registry.load("file.read_table"), {"path": str(path)}, context(tmp_path))
    out = match(tmp_path, [invoice("INV-1", *YAMADA, 110_000)], rows["rows"])

    (row,) = out["matched"]
    assert (row["照会番号"], row["振込依頼人名"], row["位置"]) == (
        "1",
        "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ",
        "meisai.csv の 2 行目",
    )
    assert out["summary"]["deposit_rows_without_amount"] == 1
    assert out["summary"]["warnings"] == [
        "入金明細の 1 行は入金額がない（出金など）ため照合していません。"
    ]


# --- bad input: one clear Japanese error, naming where ------------------------------------


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
@pytest.mark.parametrize("text", ["十一万", "①"])
def test_unreadable_cells_and_repeated_invoice_numbers_are_all_named(
    tmp_path: Path, text: str
) -> None:
    invoices = [
        invoice("INV-1", *YAMADA, text),
        invoice("INV-1", *AOBA, 55_000),
        invoice("", *AOBA, 1_000, due="来月"),
    ]
    with pytest.raises(BlockError) as caught:
        match(tmp_path, invoices, [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110_000)])
    error = caught.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.message.startswith("請求一覧に読めない値が 4 件あります")
    assert f"1 行目の列「請求金額」: 「{text}」は金額として読めません" in error.message
    assert "2 行目の列「請求番号」: 請求番号 INV-1 が 1 行目 と重複しています" in error.message
    assert "3 行目の列「支払期日」: 「来月」は日付として読めません" in error.message
    assert "3 行目の列「請求番号」: 請求番号が空欄です" in error.message


def test_a_missing_column_is_named_with_the_columns_the_table_has(tmp_path: Path) -> None:
    with pytest.raises(BlockError) as caught:
        match(
            tmp_path, [{"番号": "INV-1", "取引先": "山田商事", "額": 1}], [deposit("1", "ﾔﾏﾀﾞ", 1)]
        )
    assert "請求一覧に必要な列が見つかりません: number（請求番号" in caught.value.message
    assert "見出しは「番号」「取引先」「額」" in caught.value.message
    renamed = match(
        tmp_path,
        [{"番号": "INV-1", "取引先": "株式会社山田商事", "額": 1_000}],
        [deposit("1", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 1_000)],
        invoice_columns={"number": "番号", "amount": "額"},
    )
    assert matched_pairs(renamed) == {"1": ["INV-1"]}


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"fee_tolerance": -1}, "fee_tolerance"),
        ({"max_combined": 0}, "max_combined"),
        ({"max_combined": 9}, "max_combined"),
        ({"invoice_columns": {"numbr": "番号"}}, "invoice_columns"),
        ({"use_learned": "yes"}, "use_learned"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_read(
    tmp_path: Path, registry: BlockRegistry, inputs: dict[str, Any], field: str
) -> None:
    block = registry.load("table.match_payments")
    with pytest.raises(BlockError) as caught:
        block.check_inputs({"invoices": [], "deposits": [], **inputs})
    assert caught.value.details["field"] == field
    assert caught.value.hint
