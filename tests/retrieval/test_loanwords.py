"""Loanwords as users type them (retrieval.loanwords): hiragana for a loanword the documents
never use (ほてる代), two-kana loanwords, never a word of the language taken for a loanword, and
the reading of an English word (how Spellings.respell uses them: tests/retrieval/test_normalize)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.retrieval.loanwords import (
    english_reading,
    katakana_loanwords,
    reads_better,
    typed_forms,
)
from tests.support.helpdesk_eval import load_cases
from tests.support.helpdesk_paraphrases import load_lists

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("typed", "written"),
    [
        # Each was searched as typed before: the dictionary read ほてる代 as ほ・てる代.
        ("ほてる代はいくらまで出ますか", "ホテル代はいくらまで出ますか"),
        ("たくしー代は出ますか", "タクシー代は出ますか"),
        ("すまほで見られますか", "スマホで見られますか"),
        ("ぷりんたーで印刷できない", "プリンターで印刷できない"),
        ("たまにえらーが出る", "たまにエラーが出る"),
        # Two kana where a hiragana run begins.
        ("ろごを変えたい", "ロゴを変えたい"),
        # The dictionary's own hiragana spelling of a loanword.
        ("めーるが届かない", "メールが届かない"),
        # Read as grammar only through a joint no sentence has: ちゃっ|と (a sound-changed form
        # before と), されたら|ちゃっ (an auxiliary after a conditional).
        (
            "承認されたらちゃっとに知らせが来るようにしたい",
            "承認されたらチャットに知らせが来るようにしたい",
        ),
        ("申請したらちゃっとで連絡が来ますか", "申請したらチャットで連絡が来ますか"),
    ],
)
def test_a_loanword_typed_in_hiragana_is_written_in_katakana(typed: str, written: str) -> None:
    assert katakana_loanwords(typed) == written


@pytest.mark.parametrize(
    "typed",
    [
        "ホテル代はいくらまで出ますか",  # いくら is a word (イクラ is roe)
        "健康診断はいつですか",  # は・いつ, not ハイツ
        "同じ取引先コードが2行あるとエラーになった",  # ある・と, not アルト
        "予算オーバーの経費でも申請は出せますか",  # でも, not デモ
        "入れ子の foreach でもスレッドは増えない",
        "でんしゃだいの精算",  # two kana inside a run are a piece (だい is 代)
        "そのまま使える",
        "しているところです",
        "承認が止まったままだと誰かに通知がいきますか",
        "社員番号もパスワードも合っているはずなのに入れない",
        # ちゃう after a て-form is grammar, whatever follows it.
        "間違えて消しちゃったらどうなる",
        "書いちゃっといてください",
        "読んじゃったけど大丈夫",
        "見られたらどうする",
    ],
)
def test_words_of_the_language_are_never_taken_for_loanwords(typed: str) -> None:
    assert katakana_loanwords(typed) == typed


def _list_questions() -> list[str]:
    splits = ("dev", "heldout", "dev2", "heldout2", "heldout3", "heldout4", "heldout5")
    questions = [c.question for s in splits for c in load_lists(s).answerable]
    questions += [q for s in splits for q in load_lists(s).off_topic]
    questions += [c.question for c in load_cases()]
    with (ROOT / "examples" / "helpdesk_eval" / "questions.jsonl").open(encoding="utf-8") as file:
        questions += [json.loads(line)["question"] for line in file]
    return questions


def test_no_question_of_the_project_lists_is_rewritten_but_its_hiragana_loanwords() -> None:
    """Over 1,000 questions as people wrote them: the only spans written in katakana are the
    large set's loanwords typed in hiragana (いんぼいす)."""
    questions = _list_questions()
    assert len(questions) >= 1000
    changed = {q: katakana_loanwords(q) for q in questions if katakana_loanwords(q) != q}
    assert changed, "the large set types インボイス in hiragana"
    assert all(
        written == typed.replace("いんぼいす", "インボイス") for typed, written in changed.items()
    ), changed


def test_english_reading_of_a_word_and_of_an_acronym() -> None:
    assert english_reading("Password") == "パスワード"
    assert english_reading("PDF") is None
    assert english_reading("ok") is None


def test_a_message_longer_than_the_dictionary_reads_at_once_is_read_sentence_by_sentence() -> None:
    """Sudachi refuses 49,149 bytes at once; a pasted log of one line is read in pieces."""
    message = "ほてる代はいくらまで出ますか。" + "ろぐ" + "あ" * 60_000
    written = katakana_loanwords(message)
    assert written.startswith("ホテル代はいくらまで出ますか。ログ")
    assert len(written) == len(message)


@pytest.mark.parametrize(
    ("katakana", "typed"),
    [
        ("メール", {"メエル", "メイル"}),  # え lengthened with え or い (せんせい)
        ("コード", {"コオド", "コウド"}),  # お lengthened with お or う (こうど)
        ("パスワード", {"パスワアド"}),
        ("ファイル", {"フアイル"}),  # a small kana full size
        ("チェック", {"チエック"}),  # ッ is typed on purpose: kept
        ("ユーザー", {"ユウザア", "ユウザー", "ユーザア"}),
        ("ロック", set()),
    ],
)
def test_a_loanword_typed_by_ear(katakana: str, typed: set[str]) -> None:
    assert typed_forms(katakana) == typed


@pytest.mark.parametrize(
    ("text", "span", "word", "better"),
    [
        ("まにゆあるについて教えてください", range(0, 5), "マニュアル", True),  # ま|に|ゆ|ある
        ("えらあが出る", range(0, 3), "エラー", True),
        ("気がめいる", range(2, 5), "メール", False),  # one word of the language: 滅入る
        ("何かあるかな", range(1, 4), "カアル", False),  # reads worse
    ],
)
def test_kana_read_as_grammar_pieces_are_a_loanword_when_the_sentence_reads_better(
    text: str, span: range, word: str, better: bool
) -> None:
    assert reads_better(text, span, word) is better
