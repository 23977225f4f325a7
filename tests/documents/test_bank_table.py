"""Internet banking statements (CSV, Excel) read by their Japanese headers into bank lines:
the payer found inside the 摘要, withdrawals counted, bad cells named by row and column."""

from __future__ import annotations

import datetime as dt

import pytest

from keiri_agent.bank_words import PARTY_WORDS
from keiri_agent.documents import BankStatement, read_bank_statement
from keiri_agent.documents.bank_table import payer_from_description
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents import bank_files as bf

TODAY = dt.date(2026, 12, 6)
DEPOSITS = bf.realistic_deposits(12)


def read(text: str | bytes, name: str = "meisai.csv", **kwargs: object) -> BankStatement:
    data = text.encode("cp932") if isinstance(text, str) else text
    return read_bank_statement(data, name=name, today=TODAY, **kwargs)  # type: ignore[arg-type]


def refusal(text: str, **kwargs: object) -> FileProcessingError:
    with pytest.raises(FileProcessingError) as caught:
        read(text, **kwargs)
    assert "「meisai.csv」" in caught.value.message or caught.value.code == (
        ErrorCode.INPUT_VALIDATION_FAILED
    )
    return caught.value


@pytest.mark.parametrize("style", sorted(bf.CSV_STYLES))
@pytest.mark.parametrize("encoding", ["cp932", "utf-8", "utf-8-sig"])
def test_header_styles_and_encodings_give_the_same_lines(style: str, encoding: str) -> None:
    data = bf.bank_csv(DEPOSITS, bf.SAMPLE_WITHDRAWALS, style=style, encoding=encoding)
    statement = read(data)

    assert [(x.date, x.amount, x.payer) for x in statement.deposits] == [
        (d.date, d.amount, d.payer) for d in DEPOSITS
    ]
    assert [(x.date, x.amount) for x in statement.withdrawals] == [
        (w.date, w.amount) for w in bf.SAMPLE_WITHDRAWALS
    ]
    date_h, text_h, in_h, out_h = bf.CSV_STYLES[style]
    assert statement.columns == {
        "date": date_h,
        "description": text_h,
        "deposit": in_h,
        "withdrawal": out_h,
    }
    assert statement.encoding == encoding
    assert any("タイトル行" in w for w in statement.warnings)


@pytest.mark.parametrize(
    "description",
    [
        "振込　ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",
        "ﾌﾘｺﾐ ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",
        "振込ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",
        "振込入金　ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",
        "フリコミ＊ｶ)ｱｵﾊﾞｼﾖｳｼﾞ",
        " ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ",
    ],
)
def test_the_payer_is_the_description_without_its_transfer_word(description: str) -> None:
    assert payer_from_description(description) == "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"
    statement = read(f"日付,摘要,入金額\n2026/2/3,{description},1000\n")
    assert statement.lines[0].payer == "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"
    assert statement.lines[0].description == description.strip()


@pytest.mark.parametrize("word", PARTY_WORDS)
@pytest.mark.parametrize("between", ["　", " ", "＊", ":"])
def test_every_transfer_word_of_the_bank_words_table_is_taken_off(word: str, between: str) -> None:
    # One table (bank_words) says which words stand before a payer: 電信振込, ﾃﾞﾝｼﾝ, 外為, ATM ...
    # were left in the payer before (only 振込, 振込入金, ﾌﾘｺﾐ, フリコミ were known here).
    assert payer_from_description(f"{word}{between}ｶ)ｱｵﾊﾞｼﾖｳｼﾞ") == "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"


@pytest.mark.parametrize(
    ("description", "payer"),
    [
        ("ﾃﾞﾝｼﾝ ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"),  # half-width, as a bank prints it
        ("ﾃﾞﾝｼﾝｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"),  # glued
        ("電信振込ﾔﾏﾀﾞ ﾀﾛｳ", "ﾔﾏﾀﾞ ﾀﾛｳ"),
        ("ATM ﾔﾏﾀﾞ ﾀﾛｳ", "ﾔﾏﾀﾞ ﾀﾛｳ"),
        ("ﾌﾘｺﾐ ﾃﾞﾝｼﾝｺｳｷﾞﾖｳ(ｶ", "ﾃﾞﾝｼﾝｺｳｷﾞﾖｳ(ｶ"),  # one word: 電信工業's name stays whole
        ("ﾌﾘｺﾐﾃｽｳﾘﾖｳ", "ﾌﾘｺﾐﾃｽｳﾘﾖｳ"),  # nothing but the bank's words: as written
        ("ﾘｿｸ", "ﾘｿｸ"),  # interest: not a word before a payer
        ("ｶｰﾄﾞ ﾔﾏﾀﾞ ﾀﾛｳ", "ｶｰﾄﾞ ﾔﾏﾀﾞ ﾀﾛｳ"),
    ],
)
def test_the_payer_after_a_transfer_word_in_any_spelling(description: str, payer: str) -> None:
    assert payer_from_description(description) == payer


def test_a_payer_column_wins_and_edi_is_read() -> None:
    text = (
        "取引日,摘要,振込依頼人名,お預り金額（円）,お引出し金額（円）,残高,EDI情報\n"
        '2026/2/3,振込,ﾎｸﾄｳﾝﾕ(ｶ,"12,000",,"12,000",INV-001\n'
    )
    (line,) = read(text).lines

    assert (line.payer, line.description, line.edi, line.amount) == (
        "ﾎｸﾄｳﾝﾕ(ｶ",
        "振込",
        "INV-001",
        12_000,
    )


def test_each_row_is_referenced_by_its_data_row() -> None:
    text = (
        "入出金明細\n"
        "日付,内容,入金,出金,残高\n"
        '2026/2/2,前日繰越,,,"100,000"\n'
        '2026/2/3,振込 ｶ)ｱｵﾊﾞｼﾖｳｼﾞ,"1,000",,"101,000"\n'
        "2026/2/4,ﾃﾞﾝｷﾀﾞｲ,,500,100500\n"
    )
    statement = read(text)

    assert [(x.reference, x.record, x.direction) for x in statement.lines] == [
        ("2", 2, "deposit"),
        ("3", 3, "withdrawal"),
    ]
    assert statement.lines[0].position.where() == "データ 2 行目"
    assert (statement.lines[0].payer, statement.lines[1].payer) == ("ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "")
    assert statement.lines[1].description == "ﾃﾞﾝｷﾀﾞｲ"
    assert any(
        "入金額・出金額のない 1 行（データ 1 行目）は読み飛ばしました" in w
        for w in statement.warnings
    )


@pytest.mark.parametrize(
    "written", ["2026/2/3", "令和8年2月3日", "20260203", "2026-02-03", "R8.2.3"]
)
def test_dates_as_banks_write_them(written: str) -> None:
    statement = read(f"取引日,摘要,入金額\n{written},振込 ｶ)ｱｵﾊﾞ,1000\n{written},振込 ﾕ)ｻｸﾗ,2000\n")

    assert {line.date for line in statement.lines} == {dt.date(2026, 2, 3)}


def test_an_excel_statement() -> None:
    statement = read(bf.bank_xlsx(DEPOSITS, bf.SAMPLE_WITHDRAWALS), name="meisai.xlsx")

    assert [(x.date, x.amount, x.payer) for x in statement.deposits] == [
        (d.date, d.amount, d.payer) for d in DEPOSITS
    ]
    assert len(statement.withdrawals) == 3


def test_columns_can_be_named_when_the_headers_are_unusual() -> None:
    text = "計上日,お客様名,受取額\n2026/2/3,ｶ)ｱｵﾊﾞ,1000\n"
    statement = read(text, columns={"date": "計上日", "deposit": "受取額", "payer": "お客様名"})

    assert [(x.date, x.amount, x.payer) for x in statement.lines] == [
        (dt.date(2026, 2, 3), 1000, "ｶ)ｱｵﾊﾞ")
    ]
    error = refusal(text, columns={"amount": "受取額"})
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "amount" in error.message


@pytest.mark.parametrize(
    ("text", "expected", "details"),
    [
        (
            "日付,摘要,金額\n2026/2/3,振込 ｶ)ｱｵﾊﾞ,1000\n",
            "入金額の列が見つかりません（見出しは「日付」「摘要」「金額」）",
            {"columns": ["日付", "摘要", "金額"]},
        ),
        (
            "日付,摘要,入金,入金額\n2026/2/3,振込 ｶ)ｱｵﾊﾞ,1000,1000\n",
            "入金額にあたる列が 2 つあります（「入金」「入金額」）",
            {"role": "deposit"},
        ),
        (
            "日付,摘要,入金額\n2026/2/3,a,1000\n2026/2/31,振込 ｶ)ｱｵﾊﾞ,1000\n",
            "データ 2 行目、列「日付」",  # with its value, or (typed by read_table) blank
            {"row": 2, "column": "日付"},
        ),
        (
            "日付,摘要,入金額\n2026/2/3,a,1000\n,振込 ｶ)ｱｵﾊﾞ,1000\n",
            "データ 2 行目、列「日付」が空欄か、日付として読めません",
            {"row": 2, "column": "日付"},
        ),
        (
            '日付,摘要,入金額\n2026/2/3,a,"1,2a4"\n',
            "データ 1 行目、列「入金額」の「1,2a4」: 数字以外の文字（a）を含みます",
            {"row": 1, "column": "入金額"},
        ),
        (
            "日付,摘要,入金額,出金額\n2026/2/3,a,1000,1000\n",
            "「入金額」と「出金額」の両方に金額があります",
            {"row": 1},
        ),
        (
            "日付,摘要,入金額\n2026/2/3,a,500\n2026/2/4,a,-500\n",
            "データ 2 行目、列「入金額」の「-500」: マイナスの金額です",
            {"row": 2},
        ),
        (
            "日付,摘要,入金額\n2026/2/3,a,12.5\n",
            "データ 1 行目、列「入金額」の「12.5」: 円未満の端数があります",
            {"row": 1},
        ),
    ],
    ids=[
        "no-deposit-column",
        "two-deposit-columns",
        "no-such-day",
        "blank-date",
        "bad-amount",
        "both-amounts",
        "negative",
        "fraction",
    ],
)
def test_bad_statements_are_refused_where_they_are_bad(
    text: str, expected: str, details: dict[str, object]
) -> None:
    error = refusal(text)

    assert error.code == ErrorCode.FILE_UNREADABLE
    assert expected in error.message
    for key, value in details.items():
        assert error.details[key] == value


def test_a_statement_without_names_is_read_with_a_warning() -> None:
    statement = read("日付,入金額\n2026/2/3,1000\n")

    assert statement.lines[0].payer == ""
    assert any("振込依頼人名・摘要の列がない" in w for w in statement.warnings)
