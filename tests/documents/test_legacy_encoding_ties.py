"""EUC-JP and CP932 files whose only Japanese reads as plausible characters both ways.

Seeded properties over short exports (a header in ASCII, a few rows, the only Japanese a name
or a bank-written payer): EUC-JP half-width kana and EUC-JP kanji names are EUC-JP, CP932
half-width kana stay CP932. Before this change, every EUC-JP half-width payer and 44 of 151
EUC-JP surnames were read as CP932 (叱捨酌湿…, ｻｳﾅﾄ).
"""

from __future__ import annotations

import random

import pytest

from keiri_agent.documents.encoding import detect_encoding
from keiri_agent.documents.tables import read_table
from tests.documents.legacy_names import SINGLE_KANJI_NAMES, SURNAMES, WORDS
from tests.support.bank_names import bank_written, companies

CASES = 300


def _export(names: list[str]) -> str:
    rows = "".join(
        f"2026-04-{i + 1:02d},{name},{1200 * (i + 1)}\r\n" for i, name in enumerate(names)
    )
    return "date,name,amount\r\n" + rows


def _payers(seed: int) -> list[str]:
    rng = random.Random(seed)
    pool = companies()
    return [bank_written(rng.choice(pool), rng) for _ in range(rng.choice((1, 1, 2, 3, 5)))]


def _misread(text: str, encoding: str) -> str | None:
    data = text.encode(encoding)
    guess = detect_encoding(data, file="x.csv")
    if guess.name == encoding or data.decode(guess.name) == text:
        return None
    return f"{text!r} read as {guess.name}: {data.decode(guess.name)!r} ({guess.reason})"


@pytest.mark.parametrize("encoding", ["euc-jp", "cp932"])
def test_half_width_payers_are_read_in_their_own_encoding(encoding: str) -> None:
    wrong = [m for seed in range(CASES) if (m := _misread(_export(_payers(seed)), encoding))]

    assert wrong == [], f"{len(wrong)} of {CASES}: {wrong[:3]}"


def test_one_kanji_name_or_word_in_euc_jp_is_euc_jp() -> None:
    texts = [_export([name]) for name in SURNAMES + WORDS]
    texts += [_export(["ﾔﾏﾀﾞ ﾀﾛｳ", name]) for name in SURNAMES[:20]]

    wrong = [m for text in texts if (m := _misread(text, "euc-jp"))]

    assert wrong == [], f"{len(wrong)} of {len(texts)}: {wrong[:3]}"


def test_cp932_half_width_words_stay_cp932() -> None:
    # The CP932 readings of EUC-JP names, written on purpose (a bank's ｶﾀｶﾅ, a real ﾎｸﾄｳｷﾞｹﾝ).
    for word in ("ｶﾀｶﾅ", "ﾎｸﾄｳｷﾞｹﾝ(ﾄﾞ", "ｼﾞﾑｼｮ", "ﾌﾘｺﾐ ﾃｽｳﾘｮｳ", "ｹｲﾘ"):
        assert _misread(_export([word]), "cp932") is None, word


def test_the_table_reader_gives_the_name_and_says_how_it_decided() -> None:
    result = read_table(_export(["山田", "佐藤"]).encode("euc-jp"), name="振込.csv")

    assert result.df["name"].tolist() == ["山田", "佐藤"]
    assert result.info.encoding == "euc-jp"


def test_a_lone_one_kanji_name_that_is_also_a_kana_word_is_the_documented_tie() -> None:
    # docs/limits.md: 林 in EUC-JP is ﾎﾓ in CP932, a word too; CP932 is kept, as for any tie.
    undecided = [name for name in SINGLE_KANJI_NAMES if _misread(_export([name]), "euc-jp")]

    assert set(undecided) <= {"林", "関"}


def test_a_tie_name_beside_other_japanese_in_the_file_is_euc_jp() -> None:
    # docs/limits.md: the tie is a file whose Japanese is one-kanji names only; a name or word
    # of two characters or more on another line decides it (the file's words, together).
    others = [name for name in SURNAMES + WORDS if len(name) > 1]
    texts = [
        _export(names) for tie in ("林", "関") for o in others for names in ([tie, o], [o, tie])
    ]

    wrong = [m for text in texts if (m := _misread(text, "euc-jp"))]

    assert wrong == [], f"{len(wrong)} of {len(texts)}: {wrong[:3]}"


def test_one_kanji_names_only_with_a_tie_among_them_are_the_documented_tie() -> None:
    # docs/limits.md: 林 and 森 (ﾎﾓ and unknown kana in CP932) are no words of two characters.
    assert _misread(_export(["林", "森"]), "euc-jp") is not None
