"""The help desk on questions as users really type them: same page, other writing (property).

For every answerable question of ``tests/data/helpdesk_paraphrases.yaml`` (all lists) and the
evaluation set ``tests/data/helpdesk_eval.yaml`` that the default search finds (its gold source
in the top 3 of a hybrid search on the sample knowledge base, default settings, no keys), each
written variant of :mod:`tests.support.helpdesk_variants` (half-width kana, full-width letters,
hiragana for a kanji word or a loanword, a kana typo, the other register, a greeting and
signature around it, an emoji, a pasted URL, an error code spelled otherwise) is searched the
same way; a variant *keeps its page* when a gold source is still in its top 3. Printed per shape,
then the same for the chat-style shapes of :mod:`tests.support.helpdesk_typed` (English for a
loanword, a loanword in hiragana, って, chat endings, keigo, two typos, 〜って何？), and for the
third, independent generator :mod:`tests.support.helpdesk_chat` (a sentence about the asking
before or after the question, other endings, the topic as a heading, "what is X" after it, every
loanword in hiragana with ー or "-", a dropped particle, a tone mark).
Also: two found questions in one message (each one's best page among the message's 3 hits), and
the variants of the off-topic questions the default search refuses (still 該当なし?).

The guard rails measured in the same run with the default settings: found@3 and off-topic
該当なし of every paraphrase list, and on the large set (``examples/helpdesk_eval``) recall@3
and 該当なし of ``helpdesk eval`` (benchmarks/README.md).

    python -m benchmarks.helpdesk_variants [--cache DIR] [--skip-large]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import get_args

from tests.support.helpdesk import EXAMPLES
from tests.support.helpdesk_chat import CHAT_SHAPES, chat_variants
from tests.support.helpdesk_eval import gold_id, load_cases
from tests.support.helpdesk_paraphrases import Paraphrase, Split, found, load_lists, refused
from tests.support.helpdesk_typed import TYPED_SHAPES, typed_variants
from tests.support.helpdesk_variants import SHAPES, Variant, both_pages_kept, top, variants

from benchmarks.embeddings import bundled_settings
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest
from keiri_agent.agents.helpdesk.knowledge.evaluate import evaluate, read_questions

ROOT = Path(__file__).resolve().parents[1]
LARGE = ROOT / "examples" / "helpdesk_eval"
SPLITS: tuple[Split, ...] = get_args(Split)  # every list of the paraphrase file


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({hits / total:.1%})" if total else "-"


def answerable() -> list[Paraphrase]:
    """Every answerable question of the paraphrase lists and the evaluation set."""
    cases = [case for split in SPLITS for case in load_lists(split).answerable]
    return cases + [Paraphrase(c.question, c.manual_gold + c.qa_gold) for c in load_cases()]


Generator = Callable[[str], list[Variant]]
GENERATORS: tuple[tuple[Generator, Sequence[str]], ...] = (
    (variants, SHAPES),
    (typed_variants, TYPED_SHAPES),
    (chat_variants, CHAT_SHAPES),
)


def _variant_rows(kb: KnowledgeBase, generate: Generator, shapes: Sequence[str]) -> None:
    base = [case for case in answerable() if found(kb, case)]
    print(f"\nquestions found by the default search: {len(base)} / {len(answerable())}\n")
    total: collections.Counter[str] = collections.Counter()
    wrong: dict[str, list[str]] = collections.defaultdict(list)
    for case in base:
        for variant in generate(case.question):
            total[variant.shape] += 1
            hits = kb.search(variant.text, 3, tool="hybrid")
            if not any(gold_id(hit) in case.gold for hit in hits):
                wrong[variant.shape].append(f"{variant.text!r}{'（該当なし）' if not hits else ''}")
    print("| shape | variants | page kept in top 3 | examples lost |\n|---|---|---|---|")
    for shape in shapes:
        kept = total[shape] - len(wrong[shape])
        print(
            f"| {shape} | {total[shape]} | {_share(kept, total[shape])} "
            f"| {'; '.join(wrong[shape][:3])} |"
        )
    lost = sum(len(items) for items in wrong.values())
    print(
        f"| all | {sum(total.values())} | {_share(sum(total.values()) - lost, sum(total.values()))} | |"
    )


def _multi_row(kb: KnowledgeBase) -> None:
    """Two found questions of different best pages in one message: both best pages kept."""
    base = [case.question for case in answerable() if found(kb, case)]
    pairs, kept = both_pages_kept(kb, base, 7)
    print(f"\n| two questions in one message | both best pages in top 3 | {_share(kept, pairs)} |")


def _off_topic_rows(kb: KnowledgeBase, generate: Generator, shapes: Sequence[str]) -> None:
    """Variants of the off-topic questions that the default search refuses: still refused?"""
    total: collections.Counter[str] = collections.Counter()
    answered: collections.Counter[str] = collections.Counter()
    for split in SPLITS:
        for question in load_lists(split).off_topic:
            if top(kb, question):
                continue
            for variant in generate(question):
                total[variant.shape] += 1
                answered[variant.shape] += bool(top(kb, variant.text))
    print("\n| off-topic, refused: shape | variants | still 該当なし |\n|---|---|---|")
    for shape in shapes:
        print(
            f"| {shape} | {total[shape]} | {_share(total[shape] - answered[shape], total[shape])} |"
        )
    all_total = sum(total.values())
    print(f"| all | {all_total} | {_share(all_total - sum(answered.values()), all_total)} |")


def _guard_rows(kb: KnowledgeBase) -> None:
    print("\n| list | paraphrases found@3 | off-topic 該当なし |\n|---|---|---|")
    for split in SPLITS:
        lists = load_lists(split)
        print(
            f"| {split} | {_share(sum(found(kb, c) for c in lists.answerable), len(lists.answerable))} "
            f"| {_share(sum(refused(kb, q) for q in lists.off_topic), len(lists.off_topic))} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="embedding cache kept between runs")
    parser.add_argument("--skip-large", action="store_true", help="no large-set guard rail")
    args = parser.parse_args()
    print(machine_note())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = bundled_settings(args.cache or root / "cache")
        sample = ingest(
            root / "sample",
            manuals=[EXAMPLES / "manual"],
            qa=EXAMPLES / "qa.csv",
            settings=settings,
        )
        if not sample.ok:
            raise SystemExit(f"ingest failed: {sample.failures}")
        with KnowledgeBase.open(root / "sample", settings=settings) as kb:
            for generate, shapes in GENERATORS:
                _variant_rows(kb, generate, shapes)
            _multi_row(kb)
            for generate, shapes in GENERATORS:
                _off_topic_rows(kb, generate, shapes)
            _guard_rows(kb)
        if args.skip_large:
            return
        large = ingest(root / "large", manuals=[LARGE / "manual"], settings=settings)
        if not large.ok:
            raise SystemExit(f"ingest failed: {large.failures}")
        with KnowledgeBase.open(root / "large", settings=settings) as kb:
            report = evaluate(kb, read_questions(LARGE / "questions.jsonl"), tool="hybrid", k=3)
        print(
            f"\n| large set (600) | recall@3 {report.recall_at_k:.3f} | MRR {report.mrr:.3f} "
            f"| 該当なし {_share(report.no_match, report.questions)} |"
        )


if __name__ == "__main__":
    main()
