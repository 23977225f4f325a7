"""How the knowledge base ranks: candidates per source, fusion, and the relevance floor.

Every candidate carries three numbers: ``score`` (what it is ranked by), ``relevance`` (0..1,
the IDF-weighted share of the question's words it contains: :class:`LexicalIndex`) and, for a
dense Q/A hit, ``similarity`` (cosine). The floor keeps a candidate when its relevance reaches
``min_relevance``, or its similarity reaches ``min_similarity``.

- One source, lexical only: ranked by the calibrated lexical score (0..1).
- Q/A with dense search: reciprocal rank fusion of the lexical and the dense ranking.
- Manual and Q/A together (hybrid): the lexical scores of both sources are on one scale (each
  divided by the most the question could score in that index), so one merged lexical ranking;
  with dense search, that ranking is fused by RRF with the dense ranking of the Q/A pairs that
  pass the similarity floor. No per-source min-max: the best Q/A does not score 1.0 by rule.

With the local model (semantic search, the default: :mod:`.semantic`), every tool fuses its
lexical ranking with the semantic ranking of the same texts by RRF (:func:`fuse_semantic`), and
the floor is decided on more than one signal (:func:`coverage`, :func:`apply_semantic_floor`):

- is the question covered at all? Its *margin* is how much nearer it is to the knowledge base
  than to unrelated text (:class:`~keiri_agent.retrieval.semantic.Background`), measured twice
  and averaged with :data:`QUESTION_FORM_WEIGHT`: against the texts as passages (its best
  similarity to a piece minus its best to a background text) and against the same texts in the
  form of a question (what a question about this knowledge base looks like; question against
  question is the sharper measure of "about the same thing"), plus :data:`LEXICAL_WEIGHT` times
  its best lexical relevance. It is covered when the margin
  reaches ``min_margin`` (``KEIRI_HELPDESK_MIN_MARGIN``), or comes within
  :data:`SHARED_WORDS_ALLOWANCE` of it *and* one of the :data:`SHARED_WORDS_TOP` texts nearest
  in meaning holds the question's words (lexical relevance at least
  :data:`SHARED_WORDS_RELEVANCE`): a second, independent signal. The background can never hold
  every topic employees ask about; on a topic it lacks, an off-topic question's margin is as
  small as a paraphrase's, and what tells them apart is whether the text the model found
  shares any of the question's words (a paraphrase usually keeps one: 承認, 領収書, CSV…).
- which hits count? In a covered question, a hit whose similarity is within
  :data:`RELATIVE_WINDOW` of the question's own best, or whose lexical relevance reaches
  ``min_relevance``. An uncovered question has none: 該当なし.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from keiri_agent.retrieval.hybrid import reciprocal_rank_fusion
from keiri_agent.retrieval.lexical import LexicalIndex

__all__ = [
    "LEXICAL_WEIGHT",
    "QUESTION_FORM_WEIGHT",
    "RELATIVE_WINDOW",
    "SHARED_WORDS_ALLOWANCE",
    "SHARED_WORDS_RELEVANCE",
    "SHARED_WORDS_TOP",
    "Candidate",
    "Coverage",
    "apply_floor",
    "apply_semantic_floor",
    "coverage",
    "fuse_dense",
    "fuse_semantic",
    "interleave",
    "lexical_candidates",
    "merge",
]

SourceKind = Literal["manual", "qa"]
# Measured with benchmarks/helpdesk_floor.py on the development lists (benchmarks/README.md).
LEXICAL_WEIGHT = 0.05  # the share of the best lexical relevance (0..1) added to the margin
RELATIVE_WINDOW = 0.03  # cosine: a hit this close to the question's best similarity counts
QUESTION_FORM_WEIGHT = 0.5  # the share of the question-form margin in the margin (0..1)
# The second signal (module docstring). Chosen with the question-form margin on the development
# lists and heldout2 / heldout3 (benchmarks/README.md); heldout4 was never used to choose.
SHARED_WORDS_TOP = 3  # how many of the texts nearest in meaning are looked at for shared words
SHARED_WORDS_RELEVANCE = (
    0.25  # lexical relevance (0..1) that counts as sharing the question's words
)
SHARED_WORDS_ALLOWANCE = 0.015  # how far below min_margin a question with shared words is covered


@dataclass(frozen=True, slots=True)
class Candidate:
    source: SourceKind
    key: str  # chunk id, or the Q/A row as text
    score: float
    relevance: float
    similarity: float | None = None
    above_floor: bool = True

    @property
    def ref(self) -> str:
        return f"{self.source}:{self.key}"


def lexical_candidates(
    index: LexicalIndex, query: str, pool: int, source: SourceKind
) -> tuple[list[Candidate], dict[str, float]]:
    """The ``pool`` best texts by lexical score, and every text's relevance by id."""
    if len(index) == 0:
        return [], {}
    scored = index.scores(query)
    ids = index.ids
    relevance = {doc_id: float(value) for doc_id, value in zip(ids, scored.relevance, strict=True)}
    hits = index.fields["words"].top(scored.score, pool)
    return [Candidate(source, hit.id, hit.score, relevance[hit.id]) for hit in hits], relevance


def fuse_dense(
    lexical: Sequence[Candidate],
    dense: Sequence[tuple[str, float]],
    relevance: dict[str, float],
    *,
    min_similarity: float | None = None,
) -> list[Candidate]:
    """RRF of a lexical ranking and a dense one ((key, cosine), best first) over Q/A pairs.

    With ``min_similarity``, only dense hits that reach it vote (an unrelated pair that happens
    to be the nearest vector does not get a rank for free).
    """
    voting = [(key, sim) for key, sim in dense if min_similarity is None or sim >= min_similarity]
    similarity = dict(dense)
    by_ref = {c.ref: c for c in lexical}
    fused = reciprocal_rank_fusion([[c.ref for c in lexical], [f"qa:{key}" for key, _ in voting]])
    out = []
    for ref, score in fused.items():
        known = by_ref.get(ref)
        key = ref.split(":", 1)[1]
        source: SourceKind = known.source if known is not None else "qa"
        out.append(
            Candidate(
                source,
                key,
                score,
                known.relevance if known is not None else relevance.get(key, 0.0),
                similarity.get(key) if source == "qa" else None,
            )
        )
    return out


def merge(*rankings: Sequence[Candidate]) -> list[Candidate]:
    """Candidates of several sources by their (comparable) scores; on a tie Q/A comes first."""
    merged = [c for ranking in rankings for c in ranking]
    order = {"qa": 0, "manual": 1}
    return sorted(merged, key=lambda c: (-c.score, order[c.source]))


def apply_floor(
    candidates: Sequence[Candidate], *, min_relevance: float, min_similarity: float
) -> list[Candidate]:
    """The candidates with ``above_floor`` set (their order unchanged)."""
    return [
        replace(
            c,
            above_floor=c.relevance >= min_relevance
            or (c.similarity is not None and c.similarity >= min_similarity),
        )
        for c in candidates
    ]


@dataclass(frozen=True, slots=True)
class Coverage:
    """Whether the knowledge base covers a question, and the signals it was decided on."""

    best: float  # the question's best similarity to any text of the knowledge base
    background: float  # its best similarity to the unrelated background text
    as_question: float  # the same difference with both sides in the form of a question
    relevance: float  # its best lexical relevance
    shared: float  # the best lexical relevance among the SHARED_WORDS_TOP texts nearest in meaning
    margin: float  # the two differences averaged + LEXICAL_WEIGHT * relevance
    covered: bool


def coverage(
    best: float,
    background: float,
    relevance: float,
    shared: float,
    *,
    as_question: float,
    min_margin: float,
) -> Coverage:
    """The question is covered when its margin reaches ``min_margin``, or comes within
    :data:`SHARED_WORDS_ALLOWANCE` of it with ``shared`` words (module docstring).
    ``as_question`` is its best similarity to the texts minus its best to the background, both
    in the form of a question."""
    margin = (
        (1.0 - QUESTION_FORM_WEIGHT) * (best - background)
        + QUESTION_FORM_WEIGHT * as_question
        + LEXICAL_WEIGHT * relevance
    )
    covered = margin >= min_margin or (
        margin >= min_margin - SHARED_WORDS_ALLOWANCE and shared >= SHARED_WORDS_RELEVANCE
    )
    return Coverage(best, background, as_question, relevance, shared, margin, covered)


def fuse_semantic(
    lexical: Sequence[Candidate],
    semantic: Sequence[str],
    similarity: dict[str, float],
    relevance: dict[str, float],
) -> list[Candidate]:
    """RRF of a lexical ranking and a semantic one (refs as ``source:key``, best first); every
    candidate keeps its relevance and its similarity (``similarity``: every text's).

    The semantic ranking's weight is ``1 - best relevance``: when a text holds every word of
    the question (an error code, a screen name), exact matches lead; the fewer of its words the
    texts hold, the more the meaning decides.
    """
    best = max((c.relevance for c in lexical), default=0.0)
    fused = reciprocal_rank_fusion(
        [[c.ref for c in lexical], list(semantic)], weights=[1.0, 1.0 - best]
    )
    out = []
    for ref, score in fused.items():
        source, key = ref.split(":", 1)
        out.append(
            Candidate(
                "qa" if source == "qa" else "manual",
                key,
                score,
                relevance.get(ref, 0.0),
                similarity.get(ref),
            )
        )
    return out


def apply_semantic_floor(
    candidates: Sequence[Candidate], covered: Coverage, *, min_relevance: float
) -> list[Candidate]:
    """The candidates with ``above_floor`` set by the question's coverage (module docstring)."""
    return [
        replace(
            c,
            above_floor=covered.covered
            and (
                (c.similarity is not None and c.similarity >= covered.best - RELATIVE_WINDOW)
                or c.relevance >= min_relevance
            ),
        )
        for c in candidates
    ]


def interleave(rankings: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """The rankings of the questions of one message taken in turn (each one's best, then each
    one's second…), each text once: a message that asks two things gets hits for both. A text
    is above the floor when it is for any question."""
    if len(rankings) == 1:
        return list(rankings[0])
    above = {(c.source, c.key) for ranking in rankings for c in ranking if c.above_floor}
    merged: dict[tuple[str, str], Candidate] = {}
    for rank in range(max(len(ranking) for ranking in rankings)):
        for ranking in rankings:
            if rank < len(ranking):
                candidate = ranking[rank]
                key = (candidate.source, candidate.key)
                if key not in merged:
                    merged[key] = replace(candidate, above_floor=key in above)
    return list(merged.values())
