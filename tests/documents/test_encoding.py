"""Encoding detection: the encodings Japanese offices really send, and clear refusals."""

from __future__ import annotations

import codecs

import pytest

from keiri_agent.documents.encoding import EncodingGuess, decode_bytes, detect_encoding
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
