"""read_bank_statement: the 全銀協 files and bank CSV/Excel statements a bank really sends give
the same bank lines for the same deposits, each with where it is in the file."""

from __future__ import annotations

import datetime as dt

import pytest

from keiri_agent.documents import BankLine, BankStatement, read_bank_statement
from keiri_agent.documents.zengin_layout import LAYOUTS, RECORD_BYTES
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents import bank_files as bf

TODAY = dt.date(2026, 12, 6)
DEPOSITS = bf.realistic_deposits()


def read(data: bytes, name: str = "furikomi.txt", **kwargs: object) -> BankStatement:
    return read_bank_statement(data, name=name, today=TODAY, **kwargs)  # type: ignore[arg-type]


def essentials(lines: tuple[BankLine, ...], *, edi: bool = True) -> list[tuple[object, ...]]:
    """What 入金消込 matches on: date, yen amount, the payer as written, EDI."""
    return [(x.date, x.amount, x.payer, x.edi if edi else None) for x in lines]


def expected(*, edi: bool = True) -> list[tuple[object, ...]]:
    return [(d.date, d.amount, d.payer, d.edi if edi else None) for d in DEPOSITS]


def test_transfer_notice_statement_csv_and_excel_give_the_same_deposits() -> None:
    notice = read(bf.transfer_notice(DEPOSITS))
    statement = read(bf.statement(DEPOSITS, bf.SAMPLE_WITHDRAWALS), name="meisai.txt")
    csv = read(bf.bank_csv(DEPOSITS, bf.SAMPLE_WITHDRAWALS, edi_column=True), name="meisai.csv")
    xlsx = read(bf.bank_xlsx(DEPOSITS, bf.SAMPLE_WITHDRAWALS), name="meisai.xlsx")

    assert essentials(notice.deposits) == expected()
    assert essentials(statement.deposits) == expected()
    assert essentials(csv.deposits) == expected()
    assert essentials(xlsx.deposits, edi=False) == expected(edi=False)
    assert [s.format for s in (notice, statement, csv, xlsx)] == [
        "zengin_transfer",
        "zengin_statement",
        "table",
        "table",
    ]
    # Withdrawals are counted, never offered for matching.
    withdrawals = [(w.date, w.amount) for w in bf.SAMPLE_WITHDRAWALS]
    for read_back in (statement, csv, xlsx):
        assert [(w.date, w.amount) for w in read_back.withdrawals] == withdrawals
        assert read_back.summary()["withdrawals"] == {
            "count": 3,
            "total": sum(w.amount for w in bf.SAMPLE_WITHDRAWALS),
        }
    assert notice.withdrawals == ()


def test_payer_names_are_kept_exactly_as_the_bank_wrote_them() -> None:
    payers = {line.payer for line in read(bf.transfer_notice(DEPOSITS)).deposits}

    assert {
        "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",  # 株式会社 before the name, small ョ written large
        "ﾎｸﾄｳﾝﾕ(ｶ",  # 株式会社 after the name
        "ﾕ)ｻｸﾗｲｾｲｻｸｼﾖ",
        "ｲ)ｻｸﾗｼｶ",
        "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ",  # ー as -
        "ｶ)ﾏﾙﾔﾏｰﾄ",  # ー as ｰ
        "1012ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",  # a customer code put first
        "ﾆｼｷﾃｸﾉﾛｼﾞｰ(ﾄﾞ",
        "ﾀﾅｶ ﾀﾛｳ",
    } <= payers
    cut = [payer for payer in payers if payer.startswith("ｶ)ﾆﾂﾎﾟﾝｺｸｻｲ")]
    assert len(cut) == 1
    assert len(cut[0]) == 48  # the 振込依頼人名 field is 48 characters: the name is cut


@pytest.mark.parametrize(
    ("layout", "stride"),
    [
        (bf.Options(newline=b"\r\n"), RECORD_BYTES + 2),
        (bf.Options(newline=b"\n"), RECORD_BYTES + 1),
        (bf.Options(newline=b""), RECORD_BYTES),
        (bf.Options(newline=b"", end_mark=b"\r\n\x1a"), RECORD_BYTES),
        (bf.Options(newline=b"\r\n", end_mark=b"\x1a"), RECORD_BYTES + 2),
    ],
    ids=["crlf", "lf", "one-line", "one-line-then-crlf-and-eof", "crlf-and-eof"],
)
def test_records_with_or_without_line_breaks_read_the_same(layout: bf.Options, stride: int) -> None:
    statement = read(bf.transfer_notice(DEPOSITS, options=layout))

    assert essentials(statement.deposits) == expected()
    first, last = statement.lines[0], statement.lines[-1]
    assert (first.record, first.offset) == (2, stride)
    assert (last.record, last.offset) == (len(DEPOSITS) + 1, len(DEPOSITS) * stride)
    if stride == RECORD_BYTES:
        assert (first.line, last.line) == (None if not layout.end_mark else 1,) * 2
    else:
        assert (first.line, last.line) == (2, len(DEPOSITS) + 1)


def test_each_line_says_where_it_is_in_the_file() -> None:
    crlf = read(bf.transfer_notice(DEPOSITS))
    one_line = read(bf.transfer_notice(DEPOSITS, options=bf.Options(newline=b"")))

    assert crlf.lines[0].position.where() == "2 件目のレコード（2 行目、先頭から 203 バイト目）"
    assert one_line.lines[2].position.where() == "4 件目のレコード（先頭から 601 バイト目）"
    assert [line.reference for line in crlf.lines[:3]] == ["000001", "000002", "000003"]
    frame = crlf.to_frame()
    assert frame["record"].tolist()[:3] == [2, 3, 4]
    assert frame["offset"].tolist()[:3] == [202, 404, 606]
    assert frame["amount"].sum() == sum(d.amount for d in DEPOSITS)
    assert str(frame["date"].dtype).startswith("datetime64")


def test_header_and_trailer_are_read_and_checked() -> None:
    account = bf.Account(opening_balance=500_000)
    statement = read(bf.statement(DEPOSITS, bf.SAMPLE_WITHDRAWALS, account), name="meisai.txt")

    (read_account,) = statement.accounts
    assert (read_account.bank_code, read_account.branch_code) == ("0005", "001")
    assert (read_account.bank_name, read_account.branch_name) == ("ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ", "ﾎﾝﾃﾝ")
    assert (read_account.account_number, read_account.account_name) == (
        "0001234567",
        "ｶ)ｹｲﾘｴ-ｼﾞｴﾝﾄ",
    )
    assert (read_account.period_from, read_account.period_to) == (
        dt.date(2026, 2, 2),
        dt.date(2026, 2, 26),
    )
    moved = sum(d.amount for d in DEPOSITS) - sum(w.amount for w in bf.SAMPLE_WITHDRAWALS)
    assert (read_account.opening_balance, read_account.closing_balance) == (
        500_000,
        500_000 + moved,
    )
    assert statement.year_style == "wareki"
    assert statement.warnings == ()
    assert {line.transaction for line in statement.deposits} == {"11"}
    assert {line.transaction for line in statement.withdrawals} == {"14"}
    assert all(line.account == 0 for line in statement.lines)


def test_western_year_files_are_recognised_by_their_dates() -> None:
    wareki = read(bf.transfer_notice(DEPOSITS))
    seireki = read(bf.transfer_notice(DEPOSITS, options=bf.Options(year_style="seireki")))

    assert (wareki.year_style, seireki.year_style) == ("wareki", "seireki")
    assert essentials(seireki.deposits) == essentials(wareki.deposits) == expected()
    # Told the style, the reader does not guess: 令和8年 read as 西暦 is 2008.
    told = read(bf.transfer_notice(DEPOSITS), year_style="seireki")
    assert told.lines[0].date == dt.date(2008, 2, 2)


def test_an_unknown_year_style_is_refused() -> None:
    with pytest.raises(FileProcessingError) as caught:
        read(bf.transfer_notice(DEPOSITS), year_style="showa")

    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "year_style='showa' は使えません" in caught.value.message


def test_a_cancelled_transfer_is_a_correction_and_not_a_deposit() -> None:
    options = bf.Options(cancelled=[1])
    statement = read(bf.transfer_notice(DEPOSITS, options=options))

    cancelled = statement.lines[1]
    assert (cancelled.correction, cancelled.direction) == (True, "withdrawal")
    assert cancelled not in statement.deposits
    assert statement.corrections == (cancelled,)
    assert len(statement.deposits) == len(DEPOSITS) - 1
    assert statement.summary()["corrections"] == {"count": 1, "total": DEPOSITS[1].amount}
    # Banks that count the cancelled notices in 振込合計件数/金額 are read too.
    options.cancels_in_total = True
    assert read(bf.transfer_notice(DEPOSITS, options=options)).corrections == (cancelled,)


def test_several_accounts_in_one_file() -> None:
    first = bf.transfer_notice(DEPOSITS[:10])
    second = bf.transfer_notice(DEPOSITS[10:], bf.Account(number="7654321", branch_code="002"))
    # One group per account (header, data, trailer), then one end record.
    joined = first[: -(RECORD_BYTES + 2)] + second

    statement = read(joined)

    assert [a.account_number for a in statement.accounts] == ["1234567", "7654321"]
    assert essentials(statement.deposits) == expected()
    assert [line.account for line in statement.lines] == [0] * 10 + [1] * (len(DEPOSITS) - 10)
    assert statement.lines[10].record == 14  # header, 10 data, trailer, header 2


def test_odd_but_sound_files_are_read_with_warnings() -> None:
    period = (dt.date(2026, 2, 2), dt.date(2026, 2, 20))
    outside = read(bf.transfer_notice(DEPOSITS, options=bf.Options(period=period)))
    wrong_balance = bf.patch(
        bf.statement(DEPOSITS),
        len(DEPOSITS) + 2,
        41,
        b"1" + b"0" * 13,
    )
    balance = read(wrong_balance, name="meisai.txt")
    unnumbered = read(bf.patch(bf.transfer_notice(DEPOSITS), 2, 2, b"      "))

    (warning,) = outside.warnings
    assert "ヘッダーの期間 2026-02-02〜2026-02-20 の外" in warning
    assert "2026-02-21" in warning
    assert len(outside.deposits) == len(DEPOSITS)
    assert any("取引後残高" in w and "一致しません" in w for w in balance.warnings)
    assert unnumbered.lines[0].reference == ""
    assert any("照会番号がありません" in w for w in unnumbered.warnings)


def test_every_layout_covers_200_bytes_without_gaps() -> None:
    for layout in LAYOUTS.values():
        position = 1
        for spec in layout.values():
            assert spec.start == position
            position = spec.end + 1
        assert position - 1 == RECORD_BYTES
