"""Property: 生成の経過 names the steps a generated attempt changed by the names the attempt gives
them — its steps' descriptions — also when the attempt does not parse as a plan.

A model's attempt is often not a plan yet (a key the DSL does not know, a value of the wrong
kind): the 設計 page still says what changed since the attempt before (``attempt_lines``), each
step by its name. A seeded generator (``SEED``) takes the realistic plans of
``test_check_words`` (two to four steps, each described in Japanese), derives the attempt before
each (``test_shown_words._changed``: an input rewired, a block changed, a condition, a step
added or removed), and spoils the attempt's text the ways a model does (a top-level key the DSL
does not have, a step's ``timeout_ms`` in words, a step's ``retries`` as a mapping), or leaves
it whole. Each change line must say the changed step by its description, in the attempt that
has it; never by its block's label alone.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from pydantic import ValidationError

from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.models import AttemptRecord
from keiri_agent.design.repair import node_diff
from keiri_agent.plan import Plan
from keiri_agent.ui.design.generation import attempt_lines
from tests.design.test_check_words import _cases
from tests.design.test_shown_words import _changed

SEED = 19
SPOILS = ("whole", "top_key", "timeout_words", "retries_mapping")


def _spoiled(rng: random.Random, plan: dict[str, Any], spoil: str) -> dict[str, Any]:
    """The attempt's raw plan as the model wrote it (not a plan, unless ``whole``)."""
    raw = copy.deepcopy(plan)
    node = rng.choice(raw["graph"])
    if spoil == "top_key":
        raw["memo"] = "集計の前に並べ替える"
    elif spoil == "timeout_words":
        node["timeout_ms"] = "長め"
    elif spoil == "retries_mapping":
        node["retries"] = {"回数": 2}
    return raw


def _descriptions(plan: dict[str, Any] | None) -> dict[str, str]:
    return {n["id"]: n["description"] for n in (plan or {}).get("graph", []) if "description" in n}


def _measure() -> tuple[int, list[str]]:
    rng = random.Random(SEED)
    registry = default_registry()
    lines = 0
    wrong: list[str] = []
    for number, case in enumerate(_cases()):
        spoil = SPOILS[number % len(SPOILS)]
        now = _spoiled(rng, case.plan, spoil)
        if spoil != "whole":
            with pytest.raises(ValidationError):
                Plan.model_validate(now)
        before = _changed(rng, now)
        attempt = AttemptRecord(number=2, plan=now, diff=node_diff(before, now))
        said = [line for line in attempt_lines(attempt, before, registry) if "変更" in line]
        for change, line in zip(attempt.diff, said, strict=True):
            side = before if change.change == "removed" else now
            name = _descriptions(side).get(change.node_id)
            lines += 1
            if name is not None and name not in line:
                wrong.append(f"{number} {spoil}: {change.node_id} is {name}: {line!r}")
    return lines, wrong


def test_a_generated_attempts_changes_name_its_steps_even_when_it_does_not_parse() -> None:
    lines, wrong = _measure()
    assert lines > 150, lines
    assert wrong == [], f"{len(wrong)} of {lines} change lines: {wrong[:5]}"
