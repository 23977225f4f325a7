"""Lexical retrieval for Japanese help-desk text: three BM25 fields, one calibrated score.

A question rarely spells a word the way the manual does (振り込む / 振込 / ふりこみ, 取消し /
とりけし, full- and half-width forms), and Sudachi's words alone miss those. Each text is
indexed three ways, each a BM25 field of its own:

- ``words``: Sudachi terms (normalized forms, compound parts, codes) plus the kanji skeleton
  of words written with okurigana (:meth:`JapaneseTokenizer.analyze_many`);
- ``chars``: character bigrams of the NFKC-normalized, lower-cased text, except those of
  hiragana only (exact strings, unknown words, product names the dictionary does not know);
- ``yomi``: character bigrams of the words' katakana readings (kana and kanji spellings).

Raw BM25 scores depend on the query (its length, the rarity of its words), so each field's
score is divided by the most that query could score in that field (the sum of its terms' IDF)
before the fields are mixed by :data:`DEFAULT_FIELD_WEIGHTS`: ``score`` is in 0..1 and means
the same for every query.

``relevance`` (0..1) is the number a relevance floor is set on. It is the larger of two readings
of how much of the question a text answers:

- coverage: the IDF-weighted share of the query's terms the text contains
  (:meth:`BM25Index.coverage`, fields mixed as above) — a short question whose words are all
  there;
- evidence: the text's BM25 in each field divided by the IDF of a word found nowhere
  (``unseen_idf``: "how many rare words' worth" matched), weighted and summed, then divided by
  :data:`FULL_EVIDENCE` — a long question that shares several specific words with the text,
  even though its many other words (ほしい, 頼む, 私物) are nowhere in the knowledge base.

An unrelated question that shares one common word with the knowledge base (社員食堂の
メニュー, 会社の住所) reaches neither. Coverage alone cannot tell it from a long paraphrase, and
evidence alone cannot tell a short exact question from it (benchmarks/helpdesk_floor.py).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from keiri_agent.errors import ErrorCode, FileProcessingError
from keiri_agent.retrieval.bm25 import BM25Index, write_directory
from keiri_agent.retrieval.hits import FloatArray, Hit
from keiri_agent.retrieval.tokenize import JapaneseTokenizer, get_tokenizer

__all__ = [
    "DEFAULT_FIELD_WEIGHTS",
    "FIELDS",
    "FULL_EVIDENCE",
    "LEXICAL_VERSION",
    "Analysis",
    "LexicalHit",
    "LexicalIndex",
    "LexicalScores",
    "analyzer_signature",
    "char_ngrams",
]

# Bump when the fields or their rules change: stored analyses and saved indexes become stale.
LEXICAL_VERSION = 2
FIELDS = ("words", "chars", "yomi")
# Measured on the help-desk evaluation sets (benchmarks/helpdesk_search.py).
DEFAULT_FIELD_WEIGHTS: Mapping[str, float] = {"words": 1.5, "chars": 1.0, "yomi": 0.5}
# Evidence (rare words' worth of BM25, see the module docstring) that counts as relevance 1.0;
# with the default floor 0.35, about 2.5 rare words' worth of matches pass (benchmarks/helpdesk_floor.py).
FULL_EVIDENCE = 7.2
META_FILE = "lexical.json"
_WORD_RUN = re.compile(r"\w+")
_HIRAGANA_ONLY = re.compile(r"[\u3041-\u309f]+")
_TERM_SEP = "\x1f"
_FIELD_SEP = "\x1e"


def analyzer_signature(tokenizer: JapaneseTokenizer) -> str:
    """Names the tokenizer and the field rules; stored analyses from another one are stale."""
    return f"{tokenizer.signature}/lexical-{LEXICAL_VERSION}"


def char_ngrams(text: str, n: int = 2, *, skip_hiragana: bool = False) -> list[str]:
    """Character ``n``-grams of each run of word characters (a shorter run is kept whole).

    With ``skip_hiragana``, n-grams made of hiragana only are left out: they are particles and
    inflections (です, ます, して) that every text shares; kana spellings of words are matched
    by their readings instead.
    """
    normalized = unicodedata.normalize("NFKC", text).lower()
    grams: list[str] = []
    for run in _WORD_RUN.findall(normalized):
        if len(run) <= n:
            grams.append(run)
        else:
            grams.extend(run[i : i + n] for i in range(len(run) - n + 1))
    if skip_hiragana:
        return [g for g in grams if not _HIRAGANA_ONLY.fullmatch(g)]
    return grams


@dataclass(frozen=True, slots=True)
class Analysis:
    """What Sudachi gives for one text (the costly part), stored so rebuilding needs no Sudachi."""

    words: list[str]
    readings: list[str]

    def encode(self) -> str:
        return _TERM_SEP.join(self.words) + _FIELD_SEP + _TERM_SEP.join(self.readings)

    @classmethod
    def decode(cls, encoded: str) -> Analysis:
        words, _, readings = encoded.partition(_FIELD_SEP)
        return cls(
            words=words.split(_TERM_SEP) if words else [],
            readings=readings.split(_TERM_SEP) if readings else [],
        )

    def yomi(self) -> list[str]:
        return [gram for reading in self.readings for gram in char_ngrams(reading)]


def analyze(tokenizer: JapaneseTokenizer, texts: Sequence[str]) -> list[Analysis]:
    return [Analysis(words, readings) for words, readings in tokenizer.analyze_many(texts)]


@dataclass(frozen=True, slots=True)
class LexicalHit(Hit):
    """One ranked text whose ``score`` (0..1) is what it was ranked by, with its ``relevance``."""

    relevance: float


@dataclass(frozen=True, slots=True)
class LexicalScores:
    """Every text's ``score`` and ``relevance`` for one query (arrays in corpus order)."""

    score: FloatArray
    relevance: FloatArray


class LexicalIndex:
    """The three fields over one corpus; build with :meth:`build`."""

    def __init__(
        self,
        fields: Mapping[str, BM25Index],
        *,
        tokenizer: JapaneseTokenizer,
        weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
    ) -> None:
        if set(fields) != set(FIELDS):
            raise ValueError(f"fields must be {FIELDS}")
        self.fields = dict(fields)
        self.tokenizer = tokenizer
        self.weights = {name: float(weights[name]) for name in FIELDS}
        if sum(self.weights.values()) <= 0 or min(self.weights.values()) < 0:
            raise ValueError("field weights must be non-negative and not all zero")

    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        *,
        analyses: Sequence[Analysis] | None = None,
        ids: Sequence[str] | None = None,
        tokenizer: JapaneseTokenizer | None = None,
        weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
    ) -> LexicalIndex:
        """Index ``texts``; with their Sudachi ``analyses`` already known (stored), Sudachi is
        not run again (``chars`` always come from ``texts``)."""
        chosen = tokenizer or get_tokenizer()
        if analyses is None:
            analyses = analyze(chosen, texts)
        elif len(analyses) != len(texts):
            raise ValueError(f"{len(analyses)} analyses for {len(texts)} texts")
        corpus = {
            "words": [a.words for a in analyses],
            "chars": [char_ngrams(text, skip_hiragana=True) for text in texts],
            "yomi": [a.yomi() for a in analyses],
        }
        fields = {
            name: BM25Index.from_tokens(tokens, ids=ids, tokenizer=chosen)
            for name, tokens in corpus.items()
        }
        return cls(fields, tokenizer=chosen, weights=weights)

    def __len__(self) -> int:
        return len(self.fields["words"])

    @property
    def ids(self) -> list[str]:
        return self.fields["words"].ids

    def query_fields(self, query: str) -> dict[str, list[str]]:
        """The distinct terms of ``query`` per field (known to the corpus or not)."""
        (analysis,) = analyze(self.tokenizer, [query])
        return {
            "words": list(dict.fromkeys(analysis.words)),
            "chars": list(dict.fromkeys(char_ngrams(query, skip_hiragana=True))),
            "yomi": list(dict.fromkeys(analysis.yomi())),
        }

    def scores(self, query: str) -> LexicalScores:
        size = len(self)
        score = np.zeros(size, dtype=np.float32)
        coverage = np.zeros(size, dtype=np.float32)
        evidence = np.zeros(size, dtype=np.float32)
        total = 0.0
        for name, terms in self.query_fields(query).items():
            weight = self.weights[name]
            field = self.fields[name]
            best = field.max_score(terms)
            if not terms or weight == 0 or best <= 0:
                continue
            total += weight
            raw = field.scores_for_terms(terms)
            score += np.float32(weight / best) * raw
            coverage += np.float32(weight) * field.coverage(terms)
            evidence += np.float32(weight / field.unseen_idf()) * raw
        if total:
            score /= np.float32(total)
            coverage /= np.float32(total)
        relevance = np.maximum(coverage, np.minimum(evidence / np.float32(FULL_EVIDENCE), 1))
        return LexicalScores(score=score, relevance=relevance.astype(np.float32))

    def search(self, query: str, k: int = 10) -> list[LexicalHit]:
        """The ``k`` best texts with a positive score, best first (ties by corpus order)."""
        if k < 1:
            raise ValueError("k must be at least 1")
        scored = self.scores(query)
        ids = self.ids
        return [
            LexicalHit(hit.index, ids[hit.index], hit.score, float(scored.relevance[hit.index]))
            for hit in self.fields["words"].top(scored.score, k)
        ]

    # --- persistence ------------------------------------------------------------------------

    def save(self, directory: Path | str) -> Path:
        """Write the three fields under ``directory`` (replaced as a whole)."""
        return write_directory(directory, self._write)

    def _write(self, staging: Path) -> None:
        for name, field in self.fields.items():
            field.save(staging / name)
        meta = {
            "version": LEXICAL_VERSION,
            "signature": analyzer_signature(self.tokenizer),
            "weights": self.weights,
        }
        (staging / META_FILE).write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(
        cls,
        directory: Path | str,
        *,
        tokenizer: JapaneseTokenizer | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> LexicalIndex:
        """Read an index written by :meth:`save`; a stale or missing one is a clear error."""
        path = Path(directory)
        chosen = tokenizer or get_tokenizer()
        try:
            meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            meta = None
        if not isinstance(meta, dict) or meta.get("signature") != analyzer_signature(chosen):
            raise FileProcessingError(
                str(path),
                f"検索インデックス {path} がないか、この版とは別の方式で作られています。",
                code=ErrorCode.FILE_UNREADABLE,
                hint="元の文書からインデックスを作り直してください（keiri-agent の更新後は"
                "作り直しが必要です）。",
                details={"current": analyzer_signature(chosen)},
            )
        fields = {name: BM25Index.load(path / name, tokenizer=chosen) for name in FIELDS}
        return cls(
            fields,
            tokenizer=chosen,
            weights=weights or meta.get("weights") or DEFAULT_FIELD_WEIGHTS,
        )
