"""Help-desk answers grounded in what was found: which questions still get an answer.

The sample knowledge base (``examples/helpdesk``) is ingested into a temporary index (default
settings, no keys: semantic search with the bundled model), and every question of ``tests/data/helpdesk_eval.yaml`` (42, each answered by the
materials) plus eight off-topic questions (``tests.support.helpdesk_answering.OFF_TOPIC``) is
asked of the agent, with the tests' scripted server as a diligent but credulous model: it
searches with the question, answers from the best hit it is shown, cites it and calls that done
(see ``tests/support/helpdesk_answering.py``).

Printed for three settings in the same run: lexical search with no relevance floor
(``KEIRI_HELPDESK_SEMANTIC=false``, ``KEIRI_HELPDESK_MIN_RELEVANCE=0``, the baseline), lexical
search with the floor given (``--floor``, default the setting's default: what issue 26 shipped),
and the default (semantic and lexical search, the floor on the question's margin): eval
questions answered, answered citing a gold source, off-topic questions answered (each of those
is an answer resting on nothing relevant), and the ratio to the baseline.

Run: ``python -m benchmarks.helpdesk_grounding [--floor 0.35]``. To measure an older checkout of
the agent with the same harness: ``PYTHONPATH=/path/to/old/src python -m
benchmarks.helpdesk_grounding`` (run from this checkout; the old agent ignores the floor).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
from pathlib import Path

from tests.support.helpdesk import build_example_index
from tests.support.helpdesk_answering import (
    OFF_TOPIC,
    Answered,
    Question,
    answer_questions,
    eval_questions,
)
from tests.support.llm_server import ScriptedLLMServer

from benchmarks.machine import machine_note
from keiri_agent import config
from keiri_agent.config import Settings

# An older checkout of the agent (measured through PYTHONPATH) has no such floor.
DEFAULT_FLOOR = float(getattr(config, "DEFAULT_HELPDESK_MIN_RELEVANCE", 0.0))


def _row(label: str, eval_outcomes: list[Answered], off: list[Answered]) -> tuple[int, int, int]:
    answered = sum(o.answered for o in eval_outcomes)
    gold = sum(o.answered and o.from_gold for o in eval_outcomes)
    off_answered = sum(o.answered for o in off)
    print(
        f"| {label} | {answered}/{len(eval_outcomes)} | {gold}/{len(eval_outcomes)} "
        f"| {off_answered}/{len(off)} |"
    )
    return answered, gold, off_answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", type=float, default=DEFAULT_FLOOR)
    parser.add_argument("--verbose", action="store_true", help="list each off-topic outcome")
    args = parser.parse_args()
    logging.getLogger("keiri_agent").setLevel(logging.ERROR)  # the agent's progress lines
    print(machine_note())
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as server:
        os.environ.update(
            OPENAI_BASE_URL=server.url,
            OPENAI_API_KEY="sk-scripted",
            KEIRI_LLM_MODEL="openai:scripted-model",
            KEIRI_LLM_MAX_RETRIES="0",
        )
        os.environ.pop("KEIRI_LLM_MODEL_EMBEDDING", None)
        index_dir = build_example_index(Path(tmp) / "index")
        questions = eval_questions()
        off_topic = [Question(text) for text in OFF_TOPIC]
        rows: list[tuple[int, int, int]] = []
        print("| agent | eval answered | answered from a gold source | off-topic answered |")
        print("|---|---|---|---|")
        runs = (
            ("lexical, no floor (baseline)", False, 0.0),
            (f"lexical, floor {args.floor:g}", False, args.floor),
            ("default: semantic + lexical", True, DEFAULT_FLOOR),
        )
        for label, semantic, floor in runs:
            settings = Settings(
                _env_file=None,
                keiri_runs_dir=Path(tmp) / "runs",
                keiri_cache_dir=Path(tmp) / "cache",
                keiri_helpdesk_min_relevance=floor,
                keiri_helpdesk_semantic=semantic,
            )
            outcomes = answer_questions(
                server,
                index_dir,
                [*questions, *off_topic],
                settings=settings,
                run=f"{len(rows)}-",
            )
            on, off = outcomes[: len(questions)], outcomes[len(questions) :]
            rows.append(_row(label, on, off))
            if args.verbose:
                for outcome in off:
                    print(f"  {outcome.question.text}: answered={outcome.answered}")
        (base_answered, _, _), *others = rows
        for (label, _, _), (answered, _, _) in zip(runs[1:], others, strict=True):
            print(f"\neval questions answered, {label} / baseline: {answered / base_answered:.2f}")


if __name__ == "__main__":
    main()
