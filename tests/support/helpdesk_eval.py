"""The help desk's retrieval evaluation set (``tests/data/helpdesk_eval.yaml``) and its scoring.

Shared by ``tests/agents/helpdesk/test_eval.py`` and ``benchmarks/helpdesk_search.py``. A hit
is scored by the source it cites, not by its chunk: ``<file>#p<page>`` for a PDF page,
``<file>`` for an unpaged manual, ``qa#<row>`` for a Q/A pair; a ranking keeps each source
once, at its best position.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, SearchOutput
from keiri_agent.retrieval.eval import EvalSummary, summarize

__all__ = [
    "EVAL_SET",
    "EVAL_TOOLS",
    "HelpdeskCase",
    "Tool",
    "evaluate",
    "gold_id",
    "load_cases",
    "ranking",
    "searcher",
]

EVAL_SET = Path(__file__).resolve().parents[1] / "data" / "helpdesk_eval.yaml"
Tool = Literal["manual", "qa", "hybrid"]
EVAL_TOOLS: tuple[Tool, ...] = ("manual", "qa", "hybrid")
RANKING_DEPTH = 10  # hits fetched per query (recall is read at 3, MRR over these)


@dataclass(frozen=True)
class HelpdeskCase:
    id: str
    question: str
    manual_gold: tuple[str, ...]
    qa_gold: tuple[str, ...]

    def gold(self, tool: Tool) -> tuple[str, ...]:
        if tool == "manual":
            return self.manual_gold
        if tool == "qa":
            return self.qa_gold
        return self.manual_gold + self.qa_gold


def load_cases(path: Path = EVAL_SET) -> list[HelpdeskCase]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    manual = str(data["manual_file"])
    return [
        HelpdeskCase(
            id=str(case["id"]),
            question=str(case["question"]),
            manual_gold=tuple(
                [f"{manual}#p{int(p)}" for p in case.get("pages", [])]
                + [str(f) for f in case.get("files", [])]
            ),
            qa_gold=tuple(f"qa#{int(r)}" for r in case.get("qa", [])),
        )
        for case in data["cases"]
    ]


def gold_id(hit: SearchOutput) -> str:
    if hit.source == "qa":
        return f"qa#{hit.row}"
    return f"{hit.file_name}#p{hit.page}" if hit.page is not None else hit.file_name


def ranking(hits: Sequence[SearchOutput]) -> list[str]:
    return list(dict.fromkeys(gold_id(hit) for hit in hits))


def searcher(kb: KnowledgeBase, tool: Tool) -> Callable[[str, int], list[SearchOutput]]:
    return {"manual": kb.search_manual, "qa": kb.search_qa, "hybrid": kb.search_hybrid}[tool]


def evaluate(
    kb: KnowledgeBase, cases: Sequence[HelpdeskCase], tool: Tool
) -> tuple[EvalSummary, list[tuple[HelpdeskCase, list[str]]]]:
    """Recall@1/3/5 and MRR of ``tool`` over the cases that have gold for it."""
    search = searcher(kb, tool)
    used = [case for case in cases if case.gold(tool)]
    rankings = [ranking(search(case.question, RANKING_DEPTH)) for case in used]
    summary = summarize(rankings, [case.gold(tool) for case in used], ks=(1, 3, 5))
    return summary, list(zip(used, rankings, strict=True))
