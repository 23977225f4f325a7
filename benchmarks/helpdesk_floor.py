"""The help desk's relevance floor: which threshold tells answerable questions from unrelated ones.

Two knowledge bases are ingested into temporary indexes (BM25 only, no embedding model):

- **sample KB** — ``examples/helpdesk``: every question of ``tests/data/helpdesk_eval.yaml``
  (42, each answered by the materials) is searched as the agent's tools do (``search_manual``
  and ``search_qa``, 3 hits each, the question itself as the query). A question *keeps an answer*
  when one of those hits reaches the floor (what ``grounding.split_relevant`` lets the model see).
- **large set** — ``examples/helpdesk_eval``: the 600 questions over 300 passages; a question
  *keeps its gold* when an answering passage is among the first 3 manual hits and reaches the
  floor (questions without gold in the first 3 are a ranking miss, not counted).

Against each, off-topic questions (:data:`OFF_TOPIC`: ``tests.support.helpdesk_answering``'s
eight and more written here, several sharing a word with the knowledge base: メニュー, 会社,
パスワード, スマートフォン, 申請) must find nothing that reaches the floor (該当なし).

Printed: per threshold, gold lost and off-topic passed on both sets, and the relevance of the
nearest cases on each side (which questions decide the floor).

Run: ``python -m benchmarks.helpdesk_floor``
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.helpdesk import build_example_index
from tests.support.helpdesk_answering import OFF_TOPIC as OFF_TOPIC_26
from tests.support.helpdesk_answering import eval_questions

from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.evaluate import read_questions
from keiri_agent.config import DEFAULT_HELPDESK_MIN_RELEVANCE, Settings

__all__ = ["OFF_TOPIC", "main"]

ROOT = Path(__file__).resolve().parent.parent
LARGE = ROOT / "examples" / "helpdesk_eval"
OFF_TOPIC: tuple[str, ...] = (
    *OFF_TOPIC_26,
    "今日の天気",
    "今日の天気を教えてください",
    "明日は雨が降りますか",
    "社員旅行の行き先はどこですか",
    "インフルエンザの予防接種はいつですか",
    "ランチのおすすめのお店を教えて",
    "忘年会の会場はどこ？",
    "駅から会社までの行き方",
    "来週の株価の予想",
    "メニューの作り方を教えてください",
    "新しいスマートフォンのおすすめは？",
    "ログインボーナスはありますか",
    "名刺の発注方法",
    "社用車の予約方法",
    "会議室の予約方法を教えてください",
    "プリンターの紙詰まりを直したい",
    "画面の明るさを変えたい",
    "野球の試合結果を教えて",
    "おすすめの映画は？",
    "エラーの多い社員の評価方法",
    "Wi-Fiのパスワードを教えて",
    "育児休業の申請方法",
)
THRESHOLDS = (0.2, 0.25, 0.3, 0.32, 0.35, 0.38, 0.4, 0.45)


def _best(kb: KnowledgeBase, text: str, tools: Sequence[str]) -> float:
    hits = [h for tool in tools for h in kb.rank(text, 3, tool=tool, min_relevance=0.0)[:3]]
    return max((h.relevance for h in hits), default=0.0)


def _sample(
    index: Path, settings: Settings
) -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    with KnowledgeBase.open(index, settings=settings) as kb:
        gold = [(_best(kb, q.text, ("manual", "qa")), q.text) for q in eval_questions()]
        off = [(_best(kb, q, ("manual", "qa")), q) for q in OFF_TOPIC]
    return gold, off


def _large(
    index: Path, settings: Settings
) -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    gold = []
    with KnowledgeBase.open(index, settings=settings) as kb:
        for question in read_questions(LARGE / "questions.jsonl"):
            hits = kb.rank(question.question, 3, tool="manual", min_relevance=0.0)[:3]
            found = [h.relevance for h in hits if question.rank([h])]
            if found:
                gold.append((max(found), question.question))
        off = [(_best(kb, q, ("manual",)), q) for q in OFF_TOPIC]
    return gold, off


def _nearest(label: str, rows: list[tuple[float, str]], *, reverse: bool) -> None:
    nearest = sorted(rows, reverse=reverse)[:5]
    print(f"- {label}: " + "、".join(f"{text}（{value:.3f}）" for value, text in nearest))


def main() -> None:
    print(machine_note())
    settings = Settings(_env_file=None, keiri_llm_model_embedding=None)  # type: ignore[call-arg]
    with tempfile.TemporaryDirectory() as tmp:
        sample_index = build_example_index(Path(tmp) / "sample")
        result = ingest(Path(tmp) / "large", manuals=[LARGE / "manual"], settings=settings)
        if not result.ok:
            raise SystemExit(f"ingest failed: {result.failures}")
        sample_gold, sample_off = _sample(sample_index, settings)
        large_gold, large_off = _large(Path(tmp) / "large", settings)
    print(
        f"\nsample KB: {len(sample_gold)} answerable questions, {len(sample_off)} off-topic; "
        f"large set: {len(large_gold)} questions with gold in the first 3, "
        f"{len(large_off)} off-topic (default floor {DEFAULT_HELPDESK_MIN_RELEVANCE:g})\n"
    )
    print(
        "| floor | sample: answers lost | sample: off-topic passed "
        "| large: gold lost | large: off-topic passed |"
    )
    print("|---|---|---|---|---|")
    for t in sorted({*THRESHOLDS, DEFAULT_HELPDESK_MIN_RELEVANCE}):
        mark = " (default)" if t == DEFAULT_HELPDESK_MIN_RELEVANCE else ""
        print(
            f"| {t:g}{mark} | {sum(v < t for v, _ in sample_gold)}/{len(sample_gold)} "
            f"| {sum(v >= t for v, _ in sample_off)}/{len(sample_off)} "
            f"| {sum(v < t for v, _ in large_gold)}/{len(large_gold)} "
            f"| {sum(v >= t for v, _ in large_off)}/{len(large_off)} |"
        )
    print()
    _nearest("sample KB, answerable, lowest", sample_gold, reverse=False)
    _nearest("sample KB, off-topic, highest", sample_off, reverse=True)
    _nearest("large set, gold, lowest", large_gold, reverse=False)
    _nearest("large set, off-topic, highest", large_off, reverse=True)


if __name__ == "__main__":
    main()
