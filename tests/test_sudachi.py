"""``keiri_agent.sudachi.thread_tokenizer``: one Sudachi tokenizer per thread, shared by every
reader of Japanese (names in personal data, the CP932 / EUC-JP tie-break, the help desk's
respelling and loanwords, retrieval's terms), and the readers' results the same from many threads
at once as from one."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from keiri_agent import sudachi
from keiri_agent.documents.encoding_words import word_fit
from keiri_agent.privacy.names import find_names
from keiri_agent.retrieval.normalize import Spellings
from keiri_agent.retrieval.tokenize import JapaneseTokenizer
from tests.privacy.backoffice import PEOPLE

CONTEXTS = [
    "経理部の{}です。",
    "{}様より請求書が届きました",
    "担当: {}（総務）",
    "{}さんに振込手数料を確認",
]


def _in_new_thread(work: Any) -> Any:
    with ThreadPoolExecutor(max_workers=1) as pool:  # a thread that has read nothing yet
        return pool.submit(work).result(timeout=120)


def test_every_reader_of_a_thread_shares_its_one_tokenizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened = sudachi.open_dictionary
    built: list[str] = []  # thread_tokenizer opens the dictionary for each tokenizer it builds

    def counting(name: str = "core") -> Any:
        built.append(name)
        return opened(name)

    monkeypatch.setattr(sudachi, "open_dictionary", counting)

    def read() -> tuple[list[str], float, list[str]]:
        text = "経理部の山田太郎です。振込手数料について"
        names = [text[span.start : span.end] for span in find_names(text)]
        fit = word_fit(["山田"])
        Spellings.from_texts(["振込手数料は差し引かれます"])
        terms = JapaneseTokenizer().tokenize(text)
        find_names("佐藤花子様")
        word_fit(["カタカナ"])
        return names, fit, terms

    names, fit, terms = _in_new_thread(read)

    assert built == ["core"]  # one tokenizer for the thread, whoever reads
    assert names == ["山田太郎"]
    assert fit == 1.0
    assert "振込手数料" in terms


def test_a_thread_keeps_its_tokenizer_and_another_thread_has_its_own() -> None:
    mine = sudachi.thread_tokenizer()
    assert sudachi.thread_tokenizer() is mine
    theirs = _in_new_thread(sudachi.thread_tokenizer)
    assert theirs is not mine


def test_a_reader_may_tokenize_again_while_it_reads_the_words_of_an_earlier_call() -> None:
    outer = sudachi.thread_tokenizer().tokenize("経理部の山田太郎です")
    words = []
    for morpheme in outer:
        sudachi.thread_tokenizer().tokenize("まったく別の長い文章を途中で解析します")
        words.append(morpheme.surface())
    assert words == ["経理部", "の", "山田", "太郎", "です"]


def test_names_found_from_many_threads_at_once_are_those_found_one_by_one() -> None:
    rng = random.Random(13)
    texts = [rng.choice(CONTEXTS).format("".join(rng.choice(PEOPLE)[:2])) for _ in range(200)]

    def names(text: str) -> list[str]:
        return [text[span.start : span.end] for span in find_names(text)]

    alone = [names(text) for text in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(names, texts))

    assert together == alone
    assert all(found for found in alone)  # every generated text names its person


def test_a_thread_has_one_tokenizer_per_split_mode_and_the_name_matcher_reads_with_them() -> None:
    from keiri_agent.blocks.table.names import reading

    def tokenizers() -> tuple[Any, Any, Any, Any]:
        whole, words, _ = reading._tokenizers()
        return whole, words, sudachi.thread_tokenizer(), sudachi.thread_tokenizer(mode="A")

    whole, words, c, a = _in_new_thread(tokenizers)
    assert whole is c
    assert words is a
    assert a is not c
    assert [m.surface() for m in c.tokenize("振込手数料")] == ["振込手数料"]
    assert len(list(a.tokenize("振込手数料"))) > 1
