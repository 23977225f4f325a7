"""The paraphrased and off-topic question lists of ``tests/data/helpdesk_paraphrases.yaml``.

Shared by ``benchmarks/helpdesk_floor.py`` and ``tests/agents/helpdesk/test_semantic.py``. A
question is *found* when one of its gold sources (scored as in :mod:`tests.support.helpdesk_eval`:
``<file>#p<page>``, ``<file>``, ``qa#<row>``) is among the first 3 hits of a hybrid search with
the default floor; an off-topic question is *refused* when that search returns nothing (該当なし).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, SearchOutput
from tests.support.helpdesk_eval import gold_id

__all__ = ["LISTS", "Paraphrase", "QuestionLists", "Split", "found", "load_lists", "refused"]

LISTS = Path(__file__).resolve().parents[1] / "data" / "helpdesk_paraphrases.yaml"
MANUAL_FILE = "XYZシステム_ユーザーマニュアル.pdf"
Split = Literal[
    "dev", "heldout", "dev2", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7"
]


@dataclass(frozen=True)
class Paraphrase:
    question: str
    gold: tuple[str, ...]


@dataclass(frozen=True)
class QuestionLists:
    answerable: tuple[Paraphrase, ...]
    off_topic: tuple[str, ...]


def load_lists(split: Split, path: Path = LISTS) -> QuestionLists:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))[split]
    answerable = tuple(
        Paraphrase(
            str(case["question"]),
            tuple(
                [f"{MANUAL_FILE}#p{int(p)}" for p in case.get("pages", [])]
                + [str(f) for f in case.get("files", [])]
                + [f"qa#{int(r)}" for r in case.get("qa", [])]
            ),
        )
        for case in data["answerable"]
    )
    return QuestionLists(answerable, tuple(str(q) for q in data["off_topic"]))


def _top(kb: KnowledgeBase, question: str) -> Sequence[SearchOutput]:
    return kb.search(question, 3, tool="hybrid")


def found(kb: KnowledgeBase, case: Paraphrase) -> bool:
    return any(gold_id(hit) in case.gold for hit in _top(kb, case.question))


def refused(kb: KnowledgeBase, question: str) -> bool:
    return not _top(kb, question)
