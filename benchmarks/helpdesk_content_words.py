"""Is what the question asks covered, word for word? (issue 38, sixth pass)

The off-topic questions the floor (``knowledge.ranking.coverage``) lets through name something
the manual does not have (取引先に年賀状, PDFに電子印鑑, 産業医に相談): the model finds the
manual's texts on the same topic, and the margin cannot tell. This benchmark measures a signal
built on the question's own content words: every noun of the question (Sudachi, split mode C,
with its mode-A parts; numbers, adverbial nouns and :data:`~keiri_agent.retrieval.tokenize.STOP_WORDS`
left out) must be *covered* by the texts nearest the question (:data:`NEAREST` by meaning and
:data:`NEAREST` by lexical score), in one of these ways, each a variant:

- **literal**: its normalized form, or all its mode-A parts, among the texts' normalized forms
  (mode C and mode A);
- **+ synonyms**: or one of its Sudachi synonym group ids (``Morpheme.synonym_group_ids``: the
  core dictionary's own synonym groups, ホテル代 / 宿泊費, スマホ / スマートフォン) among the
  texts' group ids;
- **+ word vectors**: or, embedded alone with the bundled e5 model, nearer to one of the texts'
  nouns than to every noun of the background (``retrieval/background_ja.txt``) that the
  manual does not have (a margin per word, as the floor's margin per question);
- **anywhere, + synonyms**: as + synonyms but in every text of the knowledge base (the
  question names something the knowledge base has no word for at all);
- **anywhere, + synonyms, + word vectors**: no word nor synonym anywhere, and the word's vector
  nearer to the background's nouns than to the nearest texts' (both conditions together).

A question's features: whether any noun is uncovered, and the IDF-weighted share of its nouns
that are (IDF over the knowledge base's texts and the background, so that a word every text
has weighs little). Each variant lowers the margin by a penalty times a feature; its threshold
is chosen as in :mod:`benchmarks.helpdesk_answer_signals` (the most tuning off-topic questions
refused with ≥ 196 of the 205 tuning paraphrases covered and ≤ 5% of ``examples/helpdesk_eval``
refused). Tuning lists: every list of ``tests/data/helpdesk_paraphrases.yaml`` but ``heldout5``,
and :data:`benchmarks.helpdesk_floor.OFF_TOPIC`.

Run: ``python -m benchmarks.helpdesk_content_words`` (about 3 minutes, most of it embedding)
"""

from __future__ import annotations

import math
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.helpdesk_answer_signals import Row as SignalRow
from benchmarks.helpdesk_answer_signals import measure
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.knowledge.semantic import _documents
from keiri_agent.agents.helpdesk.knowledge.store import HYBRID_MIN_POOL
from keiri_agent.retrieval.dense import EmbeddingCache, embed_cached
from keiri_agent.retrieval.semantic import _stacked, background_texts
from keiri_agent.retrieval.tokenize import STOP_WORDS
from keiri_agent.sudachi import open_dictionary

__all__ = ["Reader", "Word", "main"]

NEAREST = 3  # texts by meaning and texts by lexical score a question's words are looked for in
MIN_SPLIT_CHARS = 3  # as retrieval.tokenize: shorter compounds are not split into parts
MODES = (
    "literal",
    "+ synonyms",
    "+ word vectors",
    "anywhere, + synonyms",
    "anywhere, + synonyms, + word vectors",
)
PENALTIES = (0.005, 0.01, 0.02, 0.03)


@dataclass(frozen=True)
class Word:
    """A content word: its normalized form, its synonym groups and its mode-A parts."""

    form: str
    groups: frozenset[int]
    parts: tuple[str, ...]


class Reader:
    """Sudachi over the core dictionary: a question's nouns and a text's vocabulary."""

    def __init__(self) -> None:
        from sudachipy import SplitMode

        self._a = SplitMode.A
        self._tokenizer = open_dictionary().tokenizer(mode=SplitMode.C)

    def _morphemes(self, text: str) -> Any:
        return self._tokenizer.tokenize(unicodedata.normalize("NFKC", text).lower()[:10_000])

    def nouns(self, text: str) -> list[Word]:
        out = []
        for m in self._morphemes(text):
            pos = m.part_of_speech()
            form = m.normalized_form()
            if pos[0] != "名詞" or pos[1] == "数詞" or pos[2] == "副詞可能" or form in STOP_WORDS:
                continue
            parts = (
                tuple(
                    p.normalized_form() for p in m.split(self._a) if p.part_of_speech()[0] == "名詞"
                )
                if len(m.surface()) >= MIN_SPLIT_CHARS
                else ()
            )
            out.append(
                Word(form, frozenset(m.synonym_group_ids()), parts if len(parts) > 1 else ())
            )
        return out

    def vocabulary(self, text: str) -> tuple[set[str], set[int]]:
        """Normalized forms and synonym groups of a text's words, whole and in mode-A parts."""
        forms: set[str] = set()
        groups: set[int] = set()
        for m in self._morphemes(text):
            for w in (m, *m.split(self._a)):
                forms.add(w.normalized_form())
                groups.update(w.synonym_group_ids())
        return forms, groups


class WordVectors:
    """Single words embedded by the bundled model; a word's margin against the background's."""

    def __init__(self, kb: KnowledgeBase, cache: EmbeddingCache, words: Iterable[str]) -> None:
        search = kb._semantic
        assert search is not None
        self._embedder, self._cache = search.embedder, cache
        self.index: dict[str, int] = {}
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.add(words)

    def add(self, words: Iterable[str]) -> None:
        new = sorted(set(words) - set(self.index))
        if not new:
            return
        vectors, _ = embed_cached(
            self._embedder, new, kind="query", cache=self._cache, batch_size=64
        )
        stacked = _stacked(vectors)
        self.matrix = stacked if not self.index else np.vstack([self.matrix, stacked])
        for word in new:
            self.index[word] = len(self.index)

    def best(self, word: str, among: Sequence[str]) -> float:
        rows = [self.index[w] for w in among if w != word]
        return float((self.matrix[rows] @ self.matrix[self.index[word]]).max()) if rows else -1.0


@dataclass
class Side:
    """One knowledge base's texts, their vocabularies and nouns, the IDF and the word vectors."""

    texts: dict[str, str]
    vocab: dict[str, tuple[set[str], set[int]]]
    text_nouns: dict[str, list[str]]
    background_nouns: list[str]
    idf: Callable[[str], float]
    vectors: WordVectors
    whole: tuple[set[str], set[int]]  # the vocabulary of every text together


def _side(kb: KnowledgeBase, cache: EmbeddingCache, reader: Reader) -> Side:
    refs, pieces = _documents(kb._db)
    texts = {ref: "\n".join(p) for ref, p in zip(refs, pieces, strict=True)}
    vocab = {ref: reader.vocabulary(t) for ref, t in texts.items()}
    background = background_texts()
    df: Counter[str] = Counter()
    for forms, _ in [*vocab.values(), *(reader.vocabulary(t) for t in background)]:
        df.update(forms)
    n = len(texts) + len(background)
    text_nouns = {
        ref: sorted({f for w in reader.nouns(t) for f in (w.form, *w.parts)})
        for ref, t in texts.items()
    }
    manual = {f for ns in text_nouns.values() for f in ns}
    background_nouns = sorted(
        {f for t in background for w in reader.nouns(t) for f in (w.form, *w.parts)} - manual
    )
    vectors = WordVectors(kb, cache, [*manual, *background_nouns])
    return Side(
        texts,
        vocab,
        text_nouns,
        background_nouns,
        lambda w: math.log((n + 1) / (1 + df[w])),
        vectors,
        (
            set().union(*(forms for forms, _ in vocab.values())),
            set().union(*(groups for _, groups in vocab.values())),
        ),
    )


def _uncovered(words: Sequence[Word], near: Sequence[str], side: Side, mode: str) -> list[str]:
    if mode.startswith("anywhere"):
        forms, groups = side.whole
    else:
        forms = set().union(*(side.vocab[r][0] for r in near))
        groups = set().union(*(side.vocab[r][1] for r in near))
    near_nouns = sorted({n for r in near for n in side.text_nouns[r]})
    out = []
    for w in words:
        if w.form in forms or (w.parts and all(p in forms for p in w.parts)):
            continue
        if mode != "literal" and w.groups & groups:
            continue
        if mode.endswith("+ word vectors"):
            side.vectors.add([w.form])
            nearest = side.vectors.best(w.form, near_nouns)
            if nearest >= side.vectors.best(w.form, side.background_nouns):
                continue
        out.append(w.form)
    return out


def rows(
    kb: KnowledgeBase, side: Side, reader: Reader, questions: Sequence[str]
) -> list[SignalRow]:
    search = kb._semantic
    assert search is not None
    out = []
    for question in questions:
        found = search.signals(question, kb._manual, kb._qa, HYBRID_MIN_POOL)
        lexical = sorted([*found.manual, *found.qa], key=lambda c: -c.score)
        near = [ref for ref, _ in found.semantic[:NEAREST]] + [c.ref for c in lexical[:NEAREST]]
        words = reader.nouns(question)
        total = sum(side.idf(w.form) for w in words) or 1.0
        features: dict[str, float] = {}
        for mode in MODES:
            missing = _uncovered(words, near, side, mode)
            features[f"any uncovered ({mode})"] = float(bool(missing))
            features[f"uncovered share ({mode})"] = sum(side.idf(w) for w in missing) / total
        out.append(SignalRow(question, found.coverage, features))
    return out


def _minus(feature: str, penalty: float) -> Callable[[SignalRow], float]:
    """The margin lowered by ``penalty`` times one of a row's features."""
    return lambda r: r.coverage.margin - penalty * r.features[feature]


def main() -> None:
    print(machine_note())
    reader = Reader()
    tuning = measure(lambda kb, cache, qs: rows(kb, _side(kb, cache, reader), reader, qs))
    passed = [r for r in tuning.off if r.coverage.covered]
    print(
        f"\n{len(passed)} of the tuning off-topic questions covered by the floor\n\n"
        "| words covered by | paraphrases with a noun uncovered | off-topic (all) "
        "| off-topic the floor covers | large set |\n|---|---|---|---|---|"
    )
    for mode in MODES:
        name = f"any uncovered ({mode})"
        counts = [
            f"{sum(r.features[name] > 0 for r in g)}/{len(g)}"
            for g in (tuning.on, tuning.off, passed, tuning.large)
        ]
        print(f"| {mode} | {' | '.join(counts)} |")
    tuning.header()
    tuning.report("floor as it is (margin, shared words)", lambda r: r.coverage.margin)
    for mode in MODES:
        for feature in ("any uncovered", "uncovered share"):
            name = f"{feature} ({mode})"
            for penalty in PENALTIES:
                tuning.report(f"margin − {penalty:g} × {name}", _minus(name, penalty))


if __name__ == "__main__":
    main()
