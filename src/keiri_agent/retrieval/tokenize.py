"""Japanese tokenization for retrieval: SudachiPy with its core dictionary (shipped as a wheel).

A text becomes the list of terms BM25 counts:

- NFKC normalization and lower-casing first, so full-width ``ＸＹＺ－３００`` is ``xyz-300``.
- Sudachi in split mode C keeps compound words whole (``請求書``, ``一覧表``); each compound also
  contributes its mode-A parts (``請求``, ``書``), so a query saying 請求 finds 請求書 and back.
- Japanese words become their normalized form (``売上`` and ``売り上げ`` are one term); ASCII words
  keep their own spelling (Sudachi would turn ``process`` into プロセス).
- Particles, auxiliary verbs, conjunctions, interjections, pronouns, symbols and whitespace are
  dropped, as are a few light words (する, ある, こと, ...) that every instruction contains.
- Code-like ASCII words (``E-1024``, ``XYZ-300``, ``INV-2025-001``, ``ai.process_llm``,
  ``abc123``) are emitted whole as well as in the pieces Sudachi cuts them into, so error
  codes, product numbers and block ids match exactly.

The dictionary is loaded once per process (:func:`get_tokenizer`); each thread gets its own Sudachi
tokenizer over it (``sudachi.thread_tokenizer``), because one tokenizer must not be used from two
threads at once.
"""

from __future__ import annotations

import importlib.metadata
import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from keiri_agent.sudachi import ASCII_WORD, open_dictionary, reading_of, thread_tokenizer

__all__ = [
    "DROPPED_POS",
    "MAX_CHUNK_CHARS",
    "STOP_WORDS",
    "TOKENIZER_VERSION",
    "JapaneseTokenizer",
    "get_tokenizer",
    "tokenize",
    "tokenize_many",
]

# Bump when the rules below change: persisted indexes record it and refuse to load on mismatch.
TOKENIZER_VERSION = 2
# Sudachi refuses inputs over 49,149 UTF-8 bytes; 12,000 characters is at most 48,000 bytes.
MAX_CHUNK_CHARS = 12_000
# Compounds shorter than this are not split further (two characters rarely hide two words).
MIN_SPLIT_CHARS = 3
MAX_CACHED_SPLITS = 200_000  # compounds whose split is remembered (a few MB at most)
# First level of Sudachi's part of speech: these carry no topic.
DROPPED_POS = frozenset(
    {"助詞", "助動詞", "補助記号", "記号", "空白", "接続詞", "感動詞", "代名詞"}
)
# Normalized forms of light words found in nearly every instruction ("してください", "ことがある").
STOP_WORDS = frozenset(
    {
        "為る",
        "有る",
        "居る",
        "成る",
        "出来る",
        "下さる",
        "呉れる",
        "貰う",
        "言う",
        "事",
        "物",
        "様",
        "為",
        "所",
        # Light verbs of requests ("作って", "出して", "取り出して"): every block "makes" or
        # "outputs" something, so they only add noise once the catalog grows.
        "作る",
        "出す",
        "取る",
    }
)
_CODE_RE = re.compile(r"[a-z0-9]+(?:[-_./:#][a-z0-9]+)*")
_KANJI_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆]")
_KANA_RE = re.compile(r"[\u3041-\u309f]")
_BREAKS = "\n。．！？!?"  # preferred places to cut a text that is too long for Sudachi


class JapaneseTokenizer:
    """Text → retrieval terms with SudachiPy (see the module docstring for the rules).

    Safe to share between threads. Creating one is cheap; the dictionary is opened on first use.
    """

    def __init__(self, *, dictionary: str = "core") -> None:
        self.dictionary_name = dictionary
        self._dictionary: Any = None
        self._split_a: Any = None
        self._dropped_pos: frozenset[int] = frozenset()
        self._lock = threading.Lock()
        # word id → terms of its mode-A parts; dict reads and writes are atomic under the GIL.
        self._parts: dict[int, tuple[str, ...]] = {}

    @property
    def signature(self) -> str:
        """Names the rules and the dictionary; indexes built with another signature are stale."""
        sudachipy_version = _dist_version("sudachipy")
        dict_version = _dist_version(f"sudachidict-{self.dictionary_name}")
        return (
            f"sudachipy-{sudachipy_version}/sudachidict_{self.dictionary_name}-{dict_version}"
            f"/rules-{TOKENIZER_VERSION}"
        )

    def _open(self) -> Any:
        with self._lock:
            if self._dictionary is None:
                from sudachipy import SplitMode

                dictionary = open_dictionary(self.dictionary_name)
                self._dropped_pos = frozenset(_pos_ids(dictionary))
                self._split_a = SplitMode.A
                self._dictionary = dictionary
            return self._dictionary

    def dictionary(self) -> Any:
        """The opened Sudachi dictionary (loaded once; ConfigurationError when it is missing):
        the one :func:`keiri_agent.sudachi.open_dictionary` gives. No reader of the project calls
        this: those that need Sudachi itself (the names' readings, privacy, the question's
        normalisation) open it and their per-thread tokenizers through :mod:`keiri_agent.sudachi`.
        """
        return self._open()

    def _tokenizer(self) -> Any:
        self._open()
        return thread_tokenizer(self.dictionary_name)

    def tokenize(self, text: str) -> list[str]:
        """The terms of ``text`` in order (repeats kept: BM25 counts them)."""
        return self._tokenize(self._tokenizer(), text)

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        """``tokenize`` for each text, reusing this thread's tokenizer (the fast path)."""
        tokenizer = self._tokenizer()
        return [self._tokenize(tokenizer, text) for text in texts]

    def analyze_many(self, texts: Iterable[str]) -> list[tuple[list[str], list[str]]]:
        """Per text, its terms with spelling variants, and its readings.

        The terms are :meth:`tokenize`'s plus, for a word written with kanji and okurigana,
        its kanji alone (``振り込む`` and ``振込`` both give ``振込``; ``取り消し`` → ``取消``).
        The readings are the katakana readings of the text's words (``振込`` → ``フリコミ``,
        ``ふりこみ`` too), run together between dropped words (particles, symbols), so kana
        and kanji spellings of one word meet in their character n-grams.
        """
        tokenizer = self._tokenizer()
        results = []
        for text in texts:
            terms: list[str] = []
            readings: list[str] = []
            normalized = unicodedata.normalize("NFKC", text).lower()
            for chunk in _chunks(normalized):
                self._morphemes(tokenizer, chunk, terms, readings)
                terms.extend(_codes(chunk, terms))
            results.append((terms, readings))
        return results

    def _tokenize(self, tokenizer: Any, text: str) -> list[str]:
        normalized = unicodedata.normalize("NFKC", text).lower()
        terms: list[str] = []
        for chunk in _chunks(normalized):
            self._morphemes(tokenizer, chunk, terms)
            terms.extend(_codes(chunk, terms))
        return terms

    def _morphemes(
        self, tokenizer: Any, text: str, out: list[str], readings: list[str] | None = None
    ) -> None:
        dropped = self._dropped_pos
        parts_of = self._parts
        run: list[str] = []
        for morpheme in tokenizer.tokenize(text):
            if morpheme.part_of_speech_id() in dropped:
                if readings is not None and run:
                    readings.append("".join(run))
                    run = []
                continue
            term = _term(morpheme)
            if readings is not None:
                run.append(reading_of(morpheme))
                skeleton = _skeleton(term)
                if skeleton:
                    out.append(skeleton)
            if not term or term in STOP_WORDS:
                continue
            out.append(term)
            surface = morpheme.surface()
            if len(surface) < MIN_SPLIT_CHARS or ASCII_WORD.fullmatch(surface):
                continue
            # Splitting depends only on the dictionary entry: remember it per word id.
            word_id = None if morpheme.is_oov() else morpheme.word_id()
            parts = parts_of.get(word_id) if word_id is not None else None
            if parts is None:
                parts = self._split(morpheme)
                if word_id is not None and len(parts_of) < MAX_CACHED_SPLITS:
                    parts_of[word_id] = parts
            out.extend(parts)
        if readings is not None and run:
            readings.append("".join(run))

    def _split(self, morpheme: Any) -> tuple[str, ...]:
        pieces = morpheme.split(self._split_a)
        if len(pieces) <= 1:
            return ()
        dropped = self._dropped_pos
        return tuple(
            part_term
            for part in pieces
            if part.part_of_speech_id() not in dropped
            and (part_term := _term(part))
            and part_term not in STOP_WORDS
        )


def _term(morpheme: Any) -> str:
    surface: str = morpheme.surface()
    if ASCII_WORD.fullmatch(surface):
        return surface  # already NFKC + lower-cased; Sudachi's normalized form would be katakana
    normalized: str = morpheme.normalized_form()
    return normalized.lower().strip()


def _skeleton(term: str) -> str:
    """The kanji of a word written with kanji and kana (``振り込み`` → ``振込``), else ""."""
    kanji = _KANJI_RE.findall(term)
    if len(kanji) < 2 or len(kanji) == len(term) or not _KANA_RE.search(term):
        return ""
    return "".join(kanji)


def _codes(text: str, seen: list[str]) -> list[str]:
    """Whole code-like ASCII words of ``text`` that Sudachi cut into pieces."""
    codes: list[str] = []
    known: set[str] | None = None
    for match in _CODE_RE.finditer(text):
        word = match.group()
        has_separator = not word.isalnum()
        mixed = not has_separator and not word.isdigit() and not word.isalpha()
        if not (has_separator or mixed):
            continue
        if known is None:
            known = set(seen)
        if word not in known:
            codes.append(word)
            known.add(word)
    return codes


def _chunks(text: str) -> Iterable[str]:
    """Pieces of at most MAX_CHUNK_CHARS characters, cut after a line or sentence end if any."""
    while len(text) > MAX_CHUNK_CHARS:
        window = text[:MAX_CHUNK_CHARS]
        cut = max(window.rfind(mark) for mark in _BREAKS)
        if cut < MAX_CHUNK_CHARS // 2:
            space = window.rfind(" ")
            cut = space if space >= MAX_CHUNK_CHARS // 2 else MAX_CHUNK_CHARS - 1
        yield text[: cut + 1]
        text = text[cut + 1 :]
    if text:
        yield text


def _pos_ids(dictionary: Any) -> Iterable[int]:
    """Ids of the parts of speech in DROPPED_POS (Sudachi numbers them from 0 upwards)."""
    pos_id = 0
    while True:
        try:
            pos = dictionary.pos_of(pos_id)
        except (IndexError, ValueError, OverflowError):
            return
        if pos is None:
            return
        if pos[0] in DROPPED_POS:
            yield pos_id
        pos_id += 1


def _dist_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=4)
def get_tokenizer(dictionary: str = "core") -> JapaneseTokenizer:
    """The process-wide tokenizer for ``dictionary`` (built once, shared by every thread)."""
    return JapaneseTokenizer(dictionary=dictionary)


def tokenize(text: str) -> list[str]:
    """Terms of ``text`` with the shared core-dictionary tokenizer."""
    return get_tokenizer().tokenize(text)


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    """Terms of each text with the shared core-dictionary tokenizer."""
    return get_tokenizer().tokenize_many(texts)
