"""The help desk on the manual's katakana words typed otherwise: same page as the plain twin.

The generator :mod:`tests.retrieval.katakana_typed` writes each katakana word (and acronym) of the
sample manual that a question holds in hiragana (ぱすわーど, わんたいむ, ぶいぴーえぬ), with a long
vowel typed as a vowel kana (めえる, ぱすわあど), with a small kana typed full size (ふあいる), or in
katakana with one kana changed (パスワート, ロクイン). Searched on the sample knowledge base with the
default settings and no keys (hybrid, top 3):

- the answerable questions of every paraphrase list and of the evaluation set that the default
  search finds: a variant keeps its page when a gold source is still in its top 3;
- every word of the manual's vocabulary in two plain questions (…について教えてください, …が使え
  ない): a variant keeps its page when the plain question's first page is in its top 3;
- the off-topic questions the default search refuses, in the same shapes over their own katakana
  words: still 該当なし?

    python -m benchmarks.helpdesk_katakana [--cache DIR] [--index DIR]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path

from tests.retrieval.katakana_typed import (
    KATAKANA_SHAPES,
    TEMPLATES,
    katakana_variants,
    manual_texts,
    manual_vocabulary,
)
from tests.support.helpdesk import EXAMPLES
from tests.support.helpdesk_paraphrases import found, load_lists
from tests.support.helpdesk_variants import top

from benchmarks.embeddings import bundled_settings
from benchmarks.helpdesk_variants import SPLITS, answerable
from benchmarks.machine import machine_note
from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, ingest


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({hits / total:.1%})" if total else "-"


def _rows(title: str, cases: list[tuple[str, str, tuple[str, ...]]], kb: KnowledgeBase) -> None:
    """``cases``: (shape, variant, pages it should find); a variant keeps its page when one of
    them is in its top 3."""
    total: collections.Counter[str] = collections.Counter()
    lost: dict[str, list[str]] = collections.defaultdict(list)
    for shape, text, pages in cases:
        total[shape] += 1
        if not set(top(kb, text)) & set(pages):
            lost[shape].append(text)
    print(
        f"\n| {title}: shape | variants | page kept in top 3 | examples lost |\n|---|---|---|---|"
    )
    for shape in KATAKANA_SHAPES:
        kept = total[shape] - len(lost[shape])
        print(
            f"| {shape} | {total[shape]} | {_share(kept, total[shape])} | {'; '.join(lost[shape][:4])} |"
        )
    all_lost = sum(len(items) for items in lost.values())
    print(f"| all | {total.total()} | {_share(total.total() - all_lost, total.total())} | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, help="embedding cache kept between runs")
    parser.add_argument("--index", type=Path, help="the sample knowledge base already ingested")
    args = parser.parse_args()
    print(machine_note())
    vocabulary = manual_vocabulary(manual_texts())
    with tempfile.TemporaryDirectory() as tmp:
        settings = bundled_settings(args.cache or Path(tmp) / "cache")
        index = args.index
        if index is None:
            index = Path(tmp) / "sample"
            result = ingest(
                index, manuals=[EXAMPLES / "manual"], qa=EXAMPLES / "qa.csv", settings=settings
            )
            if not result.ok:
                raise SystemExit(f"ingest failed: {result.failures}")
        with KnowledgeBase.open(index, settings=settings) as kb:
            listed = [
                (v.shape, v.text, case.gold)
                for case in answerable()
                if found(kb, case)
                for v in katakana_variants(case.question, vocabulary)
            ]
            _rows("list questions", listed, kb)
            plain = [template.format(word) for word in vocabulary for template in TEMPLATES]
            worded = [
                (v.shape, v.text, tuple(pages[:1]))
                for question in plain
                if (pages := top(kb, question))
                for v in katakana_variants(question, vocabulary)
            ]
            _rows("the manual's words", worded, kb)
            total: collections.Counter[str] = collections.Counter()
            answered: dict[str, list[str]] = collections.defaultdict(list)
            for split in SPLITS:
                for question in load_lists(split).off_topic:
                    if top(kb, question):
                        continue
                    for v in katakana_variants(question, None):
                        total[v.shape] += 1
                        if top(kb, v.text):
                            answered[v.shape].append(v.text)
            print(
                "\n| off-topic, refused: shape | variants | still 該当なし | answered |\n|---|---|---|---|"
            )
            for shape in KATAKANA_SHAPES:
                refused = total[shape] - len(answered[shape])
                print(
                    f"| {shape} | {total[shape]} | {_share(refused, total[shape])} | {'; '.join(answered[shape][:4])} |"
                )
            all_answered = sum(len(items) for items in answered.values())
            print(
                f"| all | {total.total()} | {_share(total.total() - all_answered, total.total())} | |"
            )


if __name__ == "__main__":
    main()
