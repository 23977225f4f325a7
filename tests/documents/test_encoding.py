"""Encoding detection: the encodings Japanese offices really send, and clear refusals."""

from __future__ import annotations

import codecs

import pytest

from keiri_agent.documents.encoding import (
    EncodingGuess,
    decode_bytes,
    decode_head,
    detect_encoding,
)
from keiri_agent.errors import FileProcessingError

# Excel-on-Windows text: NEC specials (①②㈱), half-width kana, an IBM/NEC kanji (髙) and the
# wave dash that only CP932 maps to U+FF5E.
CP932_TEXT = '取引先,摘要,金額\n㈱髙橋商店,①振込手数料～②,"1,234"\nｶ)ﾔﾏﾀﾞｼｮｳｼﾞ,ﾌﾘｺﾐ ﾃｽｳﾘｮｳ,500\n'
EUC_TEXT = (
    "日付,摘要,金額\n2024-04-01,東京都の取引先へ支払い,1000\n2024-04-02,交通費の精算です。,250\n"
)


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (CP932_TEXT, "cp932"),
        ("髙", "cp932"),
        ("①②③", "cp932"),
        ("～", "cp932"),
        ("ｶﾀｶﾅ", "cp932"),
        ("売上", "cp932"),
        (EUC_TEXT, "euc-jp"),
        ("売上", "euc-jp"),
        ("経理", "euc-jp"),
        ("請求書をお送りします。", "euc-jp"),
        (CP932_TEXT, "utf-8"),
        ("売上", "utf-8"),
    ],
)
def test_detects_and_decodes_japanese_text_exactly(text: str, encoding: str) -> None:
    data = text.encode(encoding)

    decoded, used = decode_bytes(data, file="売上.csv")

    assert (decoded, used) == (text, encoding)
    assert detect_encoding(data).name == encoding


@pytest.mark.parametrize(
    "line",
    [
        "株式会社サンプル商事,請求書番号 INV-001,支払期日は4月末です",
        "ﾔﾏﾀﾞ ﾀﾛｳ,総務部,交通費（電車・バス）",
        "福利厚生費,会議費,消費税10%対象",
        "担当：渡辺,承認済み,備考なし",
    ],
)
def test_business_lines_in_both_legacy_encodings(line: str) -> None:
    for encoding in ("cp932", "euc-jp"):
        try:
            data = line.encode(encoding)
        except UnicodeEncodeError:
            continue  # half-width kana lines are a CP932 thing
        assert decode_bytes(data) == (line, encoding), encoding


def test_bom_decides_and_is_removed() -> None:
    assert decode_bytes(codecs.BOM_UTF8 + "金額".encode()) == ("金額", "utf-8-sig")
    assert decode_bytes("金額,数量\n".encode("utf-16")) == ("金額,数量\n", "utf-16")
    assert detect_encoding(codecs.BOM_UTF8 + b"a").confidence == 1.0


def test_ascii_and_iso_2022_jp() -> None:
    assert decode_bytes(b"a,b\n1,2\n") == ("a,b\n1,2\n", "ascii")
    assert decode_bytes("請求書".encode("iso-2022-jp")) == ("請求書", "iso-2022-jp")
    assert decode_bytes(b"") == ("", "ascii")


def test_guess_explains_itself_and_is_deterministic() -> None:
    data = "ｶﾀｶﾅ".encode("cp932")  # bytes that EUC-JP also decodes (as two kanji)
    first = detect_encoding(data)

    assert isinstance(first, EncodingGuess)
    assert first == detect_encoding(data)
    assert "CP932" in first.reason
    assert "EUC-JP" in first.reason
    assert 0.0 < first.confidence < 1.0


def test_binary_data_is_refused_with_a_hint() -> None:
    with pytest.raises(FileProcessingError) as info:
        decode_bytes(b"abc\x00\x01\x02def", file="data.csv")

    err = info.value
    assert err.code == "FILE_UNREADABLE"
    assert "data.csv" in err.message
    assert "テキストファイルではない" in err.message
    assert "UTF-8" in err.hint
    assert err.details["file"] == "data.csv"


@pytest.mark.parametrize(
    ("data", "label"),
    [(b"PK\x03\x04rest", "ZIP"), (b"%PDF-1.7\n", "PDF"), (b"\xd0\xcf\x11\xe0\xa1\xb1", ".xls")],
)
def test_known_binary_formats_are_named(data: bytes, label: str) -> None:
    with pytest.raises(FileProcessingError, match=label) as info:
        decode_bytes(data, file="売上.csv")
    assert "売上.csv" in info.value.message


def test_undecodable_bytes_are_refused_not_guessed() -> None:
    data = "売上".encode("cp932") + b"\x81\x7f\xa0\xff"

    with pytest.raises(FileProcessingError) as info:
        decode_bytes(data, file="壊れた.csv")

    err = info.value
    assert err.code == "FILE_UNREADABLE"
    assert "壊れた.csv" in err.message
    assert "文字コードを判別できません" in err.message
    assert "CP932 は 5 バイト目" in err.message  # the byte after 売上, counted from 1
    assert err.details["cp932_error_at"] == 4
    assert "UTF-8" in err.hint


def test_explicit_encoding_is_used_strictly() -> None:
    data = "①髙～".encode("cp932")

    # "Shift_JIS" as users say it means CP932, which has ① and 髙.
    assert decode_bytes(data, encoding="Shift_JIS") == ("①髙～", "cp932")
    assert decode_bytes(codecs.BOM_UTF8 + b"x", encoding="utf-8") == ("x", "utf-8-sig")
    with pytest.raises(FileProcessingError) as info:
        decode_bytes(data, file="a.csv", encoding="utf-8")
    assert info.value.code == "FILE_UNREADABLE"
    assert "utf-8" in info.value.message
    assert info.value.details["position"] == 0


def test_unknown_encoding_name_is_an_input_error() -> None:
    with pytest.raises(FileProcessingError) as info:
        decode_bytes(b"a", file="a.csv", encoding="shift-jisx")
    assert info.value.code == "INPUT_VALIDATION_FAILED"
    assert "shift-jisx" in info.value.message


# A file as Excel's "CSV UTF-8" writes it (BOM first) with one byte that is no UTF-8 on line 3.
BOM_CSV_WITH_BAD_BYTE = codecs.BOM_UTF8 + "取引先,金額\n㈱山田,100\n".encode() + b"\xff,200\n"
# The bad byte is the 35th byte of the file as a person counts it, BOM included (offset 34).
BAD_BYTE_OFFSET = 34
BAD_BYTE_WHERE = "3 行目（先頭から 35 バイト目）"


@pytest.mark.parametrize("encoding", ["utf-8", "UTF8", None])
def test_bom_file_names_the_bad_byte_as_counted_in_the_file(encoding: str | None) -> None:
    assert BOM_CSV_WITH_BAD_BYTE[BAD_BYTE_OFFSET] == 0xFF

    for read in (
        lambda: decode_bytes(BOM_CSV_WITH_BAD_BYTE, file="入金.csv", encoding=encoding),
        lambda: decode_head(BOM_CSV_WITH_BAD_BYTE, file="入金.csv", encoding=encoding, size=8),
    ):
        with pytest.raises(FileProcessingError) as info:
            read()
        assert info.value.code == "FILE_UNREADABLE"
        assert f"{BAD_BYTE_WHERE}以降" in info.value.message
        assert info.value.details["position"] == BAD_BYTE_OFFSET
        assert info.value.details["line"] == 3


def test_a_named_encoding_names_the_line_and_byte_of_its_first_failure() -> None:
    data = "科目,金額\n".encode("cp932") + b"\x81\x7f,100\n"  # 0x81 0x7F is no CP932 character

    with pytest.raises(FileProcessingError) as info:
        decode_bytes(data, file="a.csv", encoding="cp932")

    assert "2 行目（先頭から 11 バイト目）以降を読めません" in info.value.message
    assert (info.value.details["position"], info.value.details["line"]) == (10, 2)


def test_utf16_named_without_a_bom_is_little_endian_in_head_and_whole() -> None:
    data = "金額\n".encode("utf-16-le")

    assert decode_bytes(data, encoding="utf-16") == ("金額\n", "utf-16-le")
    assert decode_head(data, encoding="UTF-16", size=4) == ("金額", "utf-16-le", False)
    assert decode_bytes("金額".encode("utf-16"), encoding="utf-16") == ("金額", "utf-16")


@pytest.mark.parametrize("name", ["base64", "rot13", "zlib"])
def test_a_codec_that_is_no_text_encoding_is_an_input_error(name: str) -> None:
    for read in (
        lambda: decode_bytes(b"abcd", file="a.csv", encoding=name),
        lambda: decode_head(b"abcd", file="a.csv", encoding=name, size=2),
    ):
        with pytest.raises(FileProcessingError) as info:
            read()
        assert info.value.code == "INPUT_VALIDATION_FAILED"
        assert f"文字コード '{name}' は使用できません" in info.value.message
