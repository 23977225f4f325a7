"""The table of the bank's words: every spelling a statement uses is found, words inside a name
are not, and a badly written table is refused when it loads."""

from __future__ import annotations

import pytest

from keiri_agent import bank_words
from keiri_agent.bank_words import BANK_WORD_TABLE, bank_word_runs, without_bank_words


@pytest.mark.parametrize(
    "spelling",
    ["ﾃｽｳﾘﾖｳ", "ﾃｽｳﾘｮｳ", "テスウリヨウ", "テスウリョウ", "ｶ-ﾄﾞ", "ｶｰﾄﾞ", "カード", "ATM", "ＡＴＭ"],
)
def test_a_word_is_found_in_every_spelling_of_a_statement(spelling: str) -> None:
    assert without_bank_words(f"{spelling} 1,000") == " " * len(spelling) + " 1,000"


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ", [(0, 4, True)]),  # glued to the name after it
        ("ﾃﾞﾝｼﾝﾌﾘｺﾐ ｲﾉｳｴ", [(0, 9, True)]),  # two words, one run
        ("ﾌﾘｺﾐﾃｽｳﾘﾖｳ", [(0, 10, True)]),  # the longer word wins
        ("ﾘｿｸ", [(0, 3, False)]),  # the bank's own entry: nobody beside it
        ("ﾘｿｸﾞﾙｰﾌﾟ", []),  # a short word starts a name: not glued
        ("ｱﾘｿｸ", []),  # inside a word
        ("ｶ)ﾌﾘｶｴﾙ", []),  # a company's name after its form
        ("振込ｺﾝﾄﾞｳ", [(0, 2, True)]),  # kanji glued to a kana name
        ("お振込み", []),  # prose
    ],
)
def test_runs_of_words_and_whether_a_party_stands_beside_them(
    text: str, runs: list[tuple[int, int, bool]]
) -> None:
    assert [(r.start, r.end, r.party) for r in bank_word_runs(text)] == runs


def test_every_word_has_its_spellings_once() -> None:
    words = [word for word, _, _ in BANK_WORD_TABLE]
    assert len(words) == len(set(words))
    assert "振込" in bank_words.BANK_WORDS  # kanji spellings are words of their own
    assert "ﾌﾘｺﾐ" not in bank_words.BANK_WORDS  # half-width ones are found by the pattern


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (("テスウリョウ", "", True), "small kana"),
        (("ﾃｽｳﾘﾖｳ", "", True), "not full-width katakana"),
        (("atm", "", True), "not full-width katakana"),
        (("リソク", "りそく", False), "no kanji spelling"),
    ],
)
def test_a_badly_written_table_is_refused_when_it_loads(
    row: tuple[str, str, bool], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        bank_words._checked((row,))


def test_a_spelling_written_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="written twice"):
        bank_words._checked((("リソク", "利息", False), ("リソク", "", False)))
