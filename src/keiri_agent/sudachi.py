"""The Sudachi dictionary, opened once per process for everyone who reads Japanese with it.

Retrieval tokenizes with it (``retrieval.tokenize``), the personal-data detector reads its
parts of speech for names (``privacy.names``), the name matcher spells names by their reading
(``blocks.table.names.reading``); ``reading_of`` is the one rule for a word's reading, and
``tagged_place`` / ``known_as_place`` the one test of a place's name (the payer matcher's branch
names, privacy's places that are surnames too, romaji read as a place). A dictionary is safe to share between threads;
a Sudachi *tokenizer* is not: :func:`thread_tokenizer` is this thread's one per split mode, shared
by every reader of the thread (a tokenizer's results stay valid after its next call, so readers may nest).
"""

from __future__ import annotations

import re
import threading
from typing import Any, Literal

from keiri_agent.errors import ConfigurationError, cause_of, reason_of

__all__ = [
    "ASCII_WORD",
    "TO_HIRAGANA",
    "TO_KATAKANA",
    "known_as_place",
    "open_dictionary",
    "reading_of",
    "tagged_place",
    "thread_tokenizer",
]

ASCII_WORD = re.compile(r"[\x21-\x7e]+")  # a word of Latin letters, digits and ASCII signs
# Katakana ↔ hiragana (``str.translate`` tables): the dictionary knows many words in one of the
# two only (けんた, not ケンタ), and readings are katakana while people type hiragana.
TO_HIRAGANA = {code: code - 0x60 for code in range(ord("ァ"), ord("ヶ") + 1)}
TO_KATAKANA = {code: code + 0x60 for code in range(ord("ぁ"), ord("ゖ") + 1)}

_opened: dict[str, Any] = {}
_lock = threading.Lock()
_local = threading.local()  # .tokenizers: (dictionary name, split mode) → this thread's tokenizer


def open_dictionary(name: str = "core") -> Any:
    """The ``sudachidict-<name>`` dictionary (loaded on first use; ConfigurationError when the
    package is missing or broken)."""
    with _lock:
        dictionary = _opened.get(name)
        if dictionary is None:
            try:
                from sudachipy import Dictionary
            except ImportError as exc:  # pragma: no cover - a broken installation
                raise _missing(name, exc) from exc
            try:
                dictionary = Dictionary(dict=name)
            except Exception as exc:
                raise _missing(name, exc) from exc
            _opened[name] = dictionary
        return dictionary


def thread_tokenizer(name: str = "core", mode: Literal["C", "A"] = "C") -> Any:
    """This thread's Sudachi tokenizer over the ``sudachidict-<name>`` dictionary in split mode
    ``mode``: C, the longest words (振込手数料 is one), or A, the shortest (振込・手数料); built on
    the thread's first use of that dictionary and mode."""
    tokenizers: dict[tuple[str, str], Any] = _local.__dict__.setdefault("tokenizers", {})
    tokenizer = tokenizers.get((name, mode))
    if tokenizer is None:
        from sudachipy import SplitMode

        split = SplitMode.C if mode == "C" else SplitMode.A
        tokenizer = open_dictionary(name).tokenizer(mode=split)
        tokenizers[name, mode] = tokenizer
    return tokenizer


def reading_of(morpheme: Any) -> str:
    """How a word is read: ASCII as written (Sudachi would give its katakana), the rest by its
    reading form, or as written where the dictionary has no reading."""
    surface: str = morpheme.surface()
    if ASCII_WORD.fullmatch(surface):
        return surface
    reading: str = morpheme.reading_form()
    return reading or surface


def tagged_place(part_of_speech: Any) -> bool:
    """Whether a part of speech Sudachi gives is a place's name (名詞・固有名詞・地名: 大阪,
    長野, アマゾン)."""
    return bool(part_of_speech[1] == "固有名詞" and part_of_speech[2] == "地名")


def known_as_place(word: str) -> bool:
    """Whether the dictionary has ``word``, as written, among its places' names (in any of its
    readings: 石川 the prefecture as well as the surname)."""
    return any(tagged_place(m.part_of_speech()) for m in open_dictionary().lookup(word))


def _missing(dictionary: str, exc: BaseException) -> ConfigurationError:
    return ConfigurationError(
        f"日本語の形態素解析辞書（sudachidict-{dictionary}）を読み込めません: {reason_of(exc)}",
        hint=f"`pip install sudachipy sudachidict-{dictionary}` で辞書を導入してください"
        "（keiri-agent の依存に含まれています）。",
        details={"dictionary": dictionary, "cause": cause_of(exc)},
    )
