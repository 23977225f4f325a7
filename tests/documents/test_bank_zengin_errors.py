"""Malformed 全銀協 files are refused with a Japanese error that names the file, the record
(number, line, byte offset), the field and what was expected; nothing half-read comes back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from keiri_agent.documents import read_bank_statement
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents import bank_files as bf

TODAY = dt.date(2026, 12, 6)
DEPOSITS = bf.realistic_deposits(6)
NAME = "furikomi.txt"
CRLF_RECORD = 202  # bytes a record takes with its CR LF
TRAILER = len(DEPOSITS) + 2  # record number of the trailer


def refusal(data: bytes) -> FileProcessingError:
    with pytest.raises(FileProcessingError) as caught:
        read_bank_statement(data, name=NAME, today=TODAY)
    error = caught.value
    assert error.file == NAME
    assert f"「{NAME}」" in error.message
    assert error.hint
    return error


def notice(**options: object) -> bytes:
    return bf.transfer_notice(DEPOSITS, options=bf.Options(**options))  # type: ignore[arg-type]


def test_a_file_cut_off_in_its_last_record() -> None:
    one_line = notice(newline=b"")[:-150]
    crlf = notice()[:-152]  # the end record's CR LF and 150 of its bytes

    error = refusal(one_line)
    assert error.code == ErrorCode.FILE_UNREADABLE
    assert (
        "9 件目のレコード（先頭から 1,601 バイト目）は 50 バイトしかなく、途中で切れています"
        in (error.message)
    )
    assert (error.details["record"], error.details["offset"], error.details["length"]) == (
        9,
        1600,
        50,
    )
    error = refusal(crlf)
    assert (
        "9 件目のレコード（9 行目、先頭から 1,617 バイト目）は 50 バイトしかなく" in error.message
    )


def test_a_record_of_the_wrong_length() -> None:
    lines = notice().split(b"\r\n")
    lines[3] = lines[3].rstrip(b" ")  # an editor that strips trailing spaces
    error = refusal(b"\r\n".join(lines))

    assert error.code == ErrorCode.FILE_UNREADABLE
    assert "4 件目のレコード（4 行目、先頭から 607 バイト目）を含む行は" in error.message
    assert "200 バイトのレコードに分けられません" in error.message
    assert (error.details["line"], error.details["expected"]) == (4, 200)
    assert "行末の空白" in error.hint


def test_an_empty_line_between_records() -> None:
    lines = notice().split(b"\r\n")
    lines.insert(3, b"")
    error = refusal(b"\r\n".join(lines))

    assert "4 行目が空です（3 件目のレコードの後）" in error.message


def test_an_unknown_record_type() -> None:
    error = refusal(bf.patch(notice(), 3, 1, b"5"))

    assert error.code == ErrorCode.FILE_UNREADABLE
    assert "3 件目のレコード（3 行目、先頭から 405 バイト目）" in error.message
    assert "データ区分（1 バイト目）が「5」です" in error.message
    assert (error.details["record"], error.details["offset"], error.details["found"]) == (
        3,
        404,
        "5",
    )


Records = list[bytes]
OUT_OF_ORDER: dict[str, tuple[Callable[[Records], Records], str]] = {
    # [header, data x 6, trailer, end, ""] rearranged.
    "no-trailer": (
        lambda r: r[: TRAILER - 1] + r[TRAILER:],
        "1 件目のヘッダーのトレーラー・レコードがないまま、エンド・レコードがあります",
    ),
    "no-end": (lambda r: [*r[:-2], b""], "エンド・レコード（データ区分 9）がありません"),
    "data-first": (
        lambda r: [r[1], r[0], *r[2:]],
        "ヘッダー・レコードより前にデータ・レコードがあります",
    ),
    "data-after-trailer": (
        lambda r: [*r[:-2], r[1], *r[-2:]],
        "8 件目のトレーラー・レコードの後に、ヘッダー・レコードのないままデータ・レコードがあります",
    ),
    "after-end": (
        lambda r: [*r[:-1], r[1], b""],
        "エンド・レコード（9 件目）の後にデータ・レコードがあります",
    ),
}


@pytest.mark.parametrize("case", OUT_OF_ORDER)
def test_records_out_of_order(case: str) -> None:
    edit, expected = OUT_OF_ORDER[case]
    error = refusal(b"\r\n".join(edit(notice().split(b"\r\n"))))

    assert error.code == ErrorCode.FILE_UNREADABLE
    assert expected in error.message


@pytest.mark.parametrize(
    ("record", "position", "text", "field", "expected"),
    [
        (3, 8, b"081340", "勘定日", "YYMMDD（和暦の年・月・日）の実在する日付"),
        (3, 20, b"00001,2345", "金額", "10 桁の数字（右詰め、残りは 0）"),
        (3, 20, b"     12345", "金額", "10 桁の数字（右詰め、残りは 0）"),
        (3, 128, b"X", "取消区分", "空白か 0（通常）、1（取消）"),
        (TRAILER, 2, b"00000A", "振込合計件数", "6 桁の数字（右詰め、残りは 0）"),
    ],
    ids=["date", "amount-comma", "amount-spaces", "cancel", "trailer-count"],
)
def test_a_bad_field_is_named_with_its_bytes(
    record: int, position: int, text: bytes, field: str, expected: str
) -> None:
    error = refusal(bf.patch(notice(), record, position, text))

    where = f"{record} 件目のレコード（{record} 行目、先頭から {(record - 1) * CRLF_RECORD + 1:,} バイト目）"
    assert where in error.message
    assert f"{field}（{position}〜" in error.message
    assert f"「{text.decode()}」" in error.message
    assert expected in error.message
    assert error.details["field"] == field
    assert error.details["found"] == text.decode()
    assert error.details["expected"] == expected
    assert (error.details["record"], error.details["offset"]) == (
        record,
        (record - 1) * CRLF_RECORD,
    )


def test_bytes_that_are_not_jis_text() -> None:
    # 0x81 starts a two-byte character; a space cannot end one.
    error = refusal(bf.patch(notice(), 4, 55, b"\x81 "))

    assert "振込依頼人名（50〜97 バイト目）の 55 バイト目（0x81）" in error.message
    assert "JIS・Shift_JIS の文字として読めません" in error.message
    assert error.details["field"] == "振込依頼人名"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"trailer_count_delta": 1},
            "振込合計件数は 7 件ですが、この口座のデータ・レコードでは 6 件です",
        ),
        (
            {"trailer_total_delta": -1000},
            "振込合計金額は {:,} 円ですが、この口座のデータ・レコードでは {:,} 円です",
        ),
    ],
    ids=["count", "total"],
)
def test_a_trailer_that_disagrees_with_the_data_is_an_error(
    options: dict[str, int], expected: str
) -> None:
    total = sum(d.amount for d in DEPOSITS)
    error = refusal(notice(**options))

    assert error.code == ErrorCode.FILE_UNREADABLE
    assert f"{TRAILER} 件目のレコード" in error.message
    assert expected.format(total - 1000, total) in error.message
    assert "欠けているか、別のファイルとつながっている" in error.message


def test_a_statement_trailer_that_disagrees_with_the_data_is_an_error() -> None:
    data = bf.statement(
        DEPOSITS, bf.SAMPLE_WITHDRAWALS, options=bf.Options(trailer_total_delta=440)
    )
    error = refusal(data)

    assert "入金額合計は" in error.message
    assert error.details["field"] == "入金額合計"
    assert error.details["stated"] - error.details["counted"] == 440


@pytest.mark.parametrize(
    ("patch", "expected"),
    [((3, 22, b"3"), "入払区分"), ((3, 23, b"1A"), "取引区分")],
    ids=["direction", "transaction"],
)
def test_a_statement_record_with_a_bad_code(patch: tuple[int, int, bytes], expected: str) -> None:
    error = refusal(bf.patch(bf.statement(DEPOSITS), *patch))

    assert error.details["field"] == expected


def test_other_zengin_files_are_named_and_refused() -> None:
    transfer_request = b"1210" + b"0" * 116 + b"\r\n"  # 総合振込 (120-byte records)
    ebcdic = bytes([0xF1, 0xF0, 0xF1, 0xF0]) + b"\x40" * 196
    time_deposit = bf.statement(DEPOSITS, account=bf.Account(deposit_type="6"))

    error = refusal(transfer_request)
    assert error.code == ErrorCode.UNSUPPORTED_FORMAT
    assert "全銀協の総合振込の依頼ファイルで、入金の明細ではありません" in error.message
    error = refusal(ebcdic)
    assert error.code == ErrorCode.UNSUPPORTED_FORMAT
    assert "EBCDIC" in error.message
    error = refusal(time_deposit)
    assert error.code == ErrorCode.UNSUPPORTED_FORMAT
    assert "預金種目「6」の入出金取引明細は読めません" in error.message


def test_a_second_header_of_another_kind() -> None:
    first = notice()[: -(200 + 2)]
    second = bf.statement(DEPOSITS)
    error = refusal(first + second)

    assert "種別コード" in error.message
    assert "最初のヘッダーと同じ種別コード 01" in error.message
