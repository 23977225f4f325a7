"""Grounding does not cost answers: the eval questions nearest the relevance floor are still
answered from their sources, and off-topic questions are not (the whole set is measured by
``benchmarks/helpdesk_grounding.py``)."""

from __future__ import annotations

from pathlib import Path

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
from keiri_agent.config import Settings
from tests.support.helpdesk_answering import (
    Question,
    answer_questions,
    eval_questions,
)
from tests.support.llm_server import ScriptedLLMServer

NEAREST = 4  # eval questions whose best hit is least relevant
OFF_TOPIC = ("社員食堂のメニューは？", "会社の住所を教えて", "今日の天気は？")


def best_relevance(kb: KnowledgeBase, text: str) -> float:
    hits = [*kb.rank(text, 3, tool="manual")[:3], *kb.rank(text, 3, tool="qa")[:3]]
    return max((h.relevance for h in hits), default=0)


def test_eval_questions_nearest_the_floor_are_answered_and_off_topic_ones_are_not(
    llm_server: ScriptedLLMServer, helpdesk_index: Path, tmp_path: Path
) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        keiri_llm_model_embedding=None,
        keiri_runs_dir=tmp_path / "runs",
        keiri_llm_max_retries=0,
    )
    with KnowledgeBase.open(helpdesk_index, settings=settings) as kb:
        ranked = sorted(eval_questions(), key=lambda q: best_relevance(kb, q.text))
    nearest = ranked[:NEAREST]
    questions = [*nearest, *(Question(text) for text in OFF_TOPIC)]

    outcomes = answer_questions(llm_server, helpdesk_index, questions, settings=settings)

    for outcome in outcomes[:NEAREST]:
        assert outcome.answered, outcome.question.text
        assert outcome.sources, outcome.question.text
    assert [o.answered for o in outcomes[NEAREST:]] == [False] * len(OFF_TOPIC)
