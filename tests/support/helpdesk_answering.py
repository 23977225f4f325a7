"""Which questions the help-desk agent answers, over the sample knowledge base and the eval set.

A scripted model that behaves like a diligent but credulous one is put in front of the real
tools: for each question it plans one subtask, searches the manual and the Q/A with the
question itself, answers from the best hit it is shown (citing it) and calls that done; when it
is shown nothing it says so and asks to retry. So whether a question ends answered depends only
on what the agent lets through: the relevance floor, the citation checks, the grounding of
"done". Shared by ``tests/agents/helpdesk/test_answering.py`` and
``benchmarks/helpdesk_grounding.py``.

Only ``run_agent`` and ``AgentResult.unresolved`` / ``sources`` are used, so the same harness
measures an older checkout of the agent (PYTHONPATH=that/src) for a before/after comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keiri_agent.agents.helpdesk.agent import run_agent
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, SearchOutput
from keiri_agent.agents.helpdesk.models import citation
from keiri_agent.config import Settings
from tests.support.helpdesk import HelpDeskScript, request_kind
from tests.support.helpdesk_eval import gold_id, load_cases
from tests.support.llm_server import ScriptedLLMServer
from tests.support.llm_wire import all_prompt_text

__all__ = ["OFF_TOPIC", "Answered", "Question", "answer_questions", "eval_questions"]

# Questions an employee might type that the sample materials (the XYZシステム manual, its
# release notes, its Q/A) do not answer.
OFF_TOPIC: tuple[str, ...] = (
    "社員食堂のメニューは？",
    "有給休暇は年に何日もらえますか？",
    "今日の天気は？",
    "会社の住所を教えて",
    "ボーナスの支給日は？",
    "駐車場は使えますか",
    "健康診断の予約方法は？",
    "エクセルの関数の使い方を教えて",
)


@dataclass(frozen=True)
class Question:
    text: str
    gold: tuple[str, ...] = ()  # gold source ids (tests.support.helpdesk_eval); () off-topic


@dataclass(frozen=True)
class Answered:
    question: Question
    answered: bool  # no unresolved subtask
    sources: tuple[str, ...]  # gold ids of the sources the answer cites

    @property
    def from_gold(self) -> bool:
        return bool(set(self.sources) & set(self.question.gold))


def eval_questions() -> list[Question]:
    return [Question(case.question, case.gold("hybrid")) for case in load_cases()]


def _visible(kb: KnowledgeBase, text: str) -> list[SearchOutput]:
    """What the tools let the model see: the hits above the knowledge base's floor."""
    hits = [*kb.search_manual(text, 3), *kb.search_qa(text, 3)]
    return sorted(hits, key=lambda h: -h.score)


def _script(script: HelpDeskScript, task: str, text: str, visible: Sequence[SearchOutput]) -> None:
    calls = [
        {"name": "search_manual", "arguments": {"query": text}},
        {"name": "search_qa", "arguments": {"query": text}},
    ]
    script.select(task, *calls, repeat=True)

    def final_of_this_task(body: dict[str, Any]) -> bool:
        return request_kind(body) == "final" and task in all_prompt_text(body)

    if not visible:
        script.answer(task, "検索結果には該当する記述がありませんでした。", repeat=True)
        script.reflect(task, False, "別の語で検索し直してください。", repeat=True)
        # Asked only by an agent that writes a final answer from nothing (an older one).
        final = "資料には該当する記述がありませんでした。"
    else:
        cite = citation(visible[0])
        script.answer(task, f"資料に手順が書かれています{cite}", repeat=True)
        script.reflect(task, True, repeat=True)
        final = f"資料に手順が書かれていますのでご確認ください{cite}。"
    script.server.add_chat(final, when=final_of_this_task, repeat=True)


def answer_questions(
    server: ScriptedLLMServer,
    index_dir: Path,
    questions: Sequence[Question],
    *,
    settings: Settings,
    run: str = "",
) -> list[Answered]:
    """Ask every question with the agent's ``settings`` (their ``keiri_helpdesk_min_relevance``
    decides what the scripted model is shown). The scripted replies repeat and are told apart
    by task name: give each call on the same server its own ``run``."""
    script = HelpDeskScript(server)
    outcomes = []
    with KnowledgeBase.open(index_dir, settings=settings) as kb:
        for number, question in enumerate(questions, start=1):
            task = f"質問 {run}{number} の答えを資料で調べる"
            script.plan(task)
            _script(script, task, question.text, _visible(kb, question.text))
            result = run_agent(question.text, index_dir=index_dir, settings=settings)
            sources = tuple(
                gold_id(
                    SearchOutput(
                        file_name=s.file_name,
                        content="",
                        page=s.page,
                        row=s.row,
                        chunk_id=s.chunk_id,
                        score=0.0,
                        source=s.source,
                    )
                )
                for s in result.sources
            )
            outcomes.append(Answered(question, not result.unresolved, sources))
    return outcomes
