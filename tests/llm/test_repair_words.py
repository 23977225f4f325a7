"""Property: a model's structured reply that does not fit is told to a person in words.

Every schema the product asks a model to fill (the analysis agent's decision, code and report,
the help desk's plan and reflection, the conversion's job, the design's skeleton and its plan of
many block kinds) is given, through the scripted OpenAI-compatible server, replies drawn from a
seeded generator that breaks a valid reply where a real model does: a field left out, a value of
the wrong type (a number, a list, an object, null), a word the field does not allow, a field
the schema does not have, an empty list where one item is needed, a whole reply of another
shape. The error the call ends with and the repair notice a run logs are then read as the app
shows them (the message, the hint and ``ui.error_view.detail_rows``): no class name of the code
(``ReasonOutput``), no field name (``next_action``, ``expected_outputs``), no library English
(``Field required``, ``Input should be``). What is sent back to the model stays precise: its
observation names the field's path and the validator's words.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from keiri_agent.agents.analysis.models import CodeGenOutput, ReasonOutput, ReportOutput
from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.agents.helpdesk.models import Plan, ReflectionResult
from keiri_agent.blocks.registry import default_registry
from keiri_agent.config import LLMRole
from keiri_agent.design.schema import design_model, skeleton_model
from keiri_agent.errors import LLMOutputError
from keiri_agent.events import EventStream
from keiri_agent.llm import get_llm
from keiri_agent.ui.error_view import detail_rows
from tests.support import ScriptedLLMServer
from tests.ui.screen import Shown, leaks

SEED = 16
CASES_PER_SCHEMA = 24
DESIGN_BLOCKS = (
    "excel.read_data",
    "table.filter",
    "table.aggregate",
    "table.reconcile",
    "excel.write_report",
    "ui.interactive_input",
    "ai.process_llm",
)
# The values of KEIRI_LLM_STRUCTURED_METHOD the hint names: what a person types in a setting.
SETTING_VALUES = ("json_schema", "function_calling")
# A class name of the code: two capitalised words glued (ReasonOutput, LLMDesignModel).
CLASS_NAME = re.compile(r"\b[A-Z]+[a-z]+[A-Z][A-Za-z]*\b|\b[A-Z][a-z]+[A-Z]+[a-z]*\b")


@dataclass(frozen=True)
class Schema:
    name: str
    model: type[BaseModel]
    good: dict[str, Any]
    role: LLMRole


def _schemas() -> list[Schema]:
    registry = default_registry()
    design = design_model(registry, DESIGN_BLOCKS)
    return [
        Schema(
            "reason",
            ReasonOutput,
            {"next_action": "act", "instruction": "取引先別に合計する", "rationale": "集計"},
            LLMRole.REASON,
        ),
        Schema(
            "codegen",
            CodeGenOutput,
            {
                "code": "print(df.sum())",
                "expected_outputs": [
                    {"file_name": "a.png", "description": "棒グラフ", "output_type": "figure"}
                ],
            },
            LLMRole.CODEGEN,
        ),
        Schema(
            "report",
            ReportOutput,
            {
                "title": "売上",
                "conclusion": "増えました。",
                "evidence": ["4月 120,000円"],
                "sections": [{"section_type": "text", "content": "概要", "description": "説明"}],
                "suggestions": ["月別に見る"],
            },
            LLMRole.REPORT,
        ),
        Schema("helpdesk plan", Plan, {"subtasks": ["締め日を調べる"]}, LLMRole.HELPDESK),
        Schema(
            "reflection",
            ReflectionResult,
            {"advice": "規程を調べ直す", "is_completed": False},
            LLMRole.HELPDESK,
        ),
        Schema(
            "convert",
            ConvertJob,
            {
                "action": "viz",
                "files": ["*.csv"],
                "target_format": "xlsx",
                "chart": {"kind": "bar", "x": "月", "y": ["売上"], "title": "売上"},
                "summary_ja": "グラフにする",
            },
            LLMRole.INTERPRET,
        ),
        Schema(
            "skeleton",
            skeleton_model(DESIGN_BLOCKS),
            {
                "plan_id": "keiri/sales",
                "title": "売上の集計",
                "flow": "読む→集計→書く",
                "steps": [
                    {"id": "read", "purpose": "読む", "block": "excel.read_data"},
                    {"id": "sum", "purpose": "集計", "block": "table.aggregate"},
                ],
                "needs_ui": True,
                "missing_information": [{"id": "month", "question": "何月分ですか？"}],
            },
            LLMRole.PLAN,
        ),
        Schema(
            "design",
            design,
            {
                "id": "keiri/sales",
                "vars": {"month": "2026-04"},
                "policy": {"on_error": "halt", "retries": 0},
                "graph": [
                    {"id": "read", "block": "excel.read_data", "in": {"path": "売上.xlsx"}},
                    {
                        "id": "pick",
                        "block": "table.filter",
                        "in": {"table": "${read.rows}", "conditions": []},
                        "when": {"expr": "${read.count} > 0"},
                    },
                    {
                        "id": "each",
                        "type": "loop",
                        "foreach": {"items": "${pick.rows}", "var": "row"},
                        "body": {
                            "plan": {
                                "graph": [
                                    {
                                        "id": "ask",
                                        "block": "ui.interactive_input",
                                        "in": {"requirements": []},
                                    }
                                ]
                            }
                        },
                    },
                ],
                "exports": [{"from": "pick.rows", "as": "rows"}],
                "reasoning": "読んで絞る",
            },
            LLMRole.PLAN,
        ),
    ]


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place of a valid reply: keys of its objects, items of its lists."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from _places(item, (*path, index))


WRONG_VALUES: tuple[Any, ...] = (123, 4.5, True, None, "どこかへ", ["a", "b"], {"x": 1}, [])


def _broken(good: dict[str, Any], rng: random.Random) -> dict[str, Any] | list[Any] | str:
    """``good`` broken the way a model breaks a reply (see the module docstring)."""
    reply = copy.deepcopy(good)
    kind = rng.choice(("drop", "wrong", "wrong", "extra", "empty", "shape"))
    if kind == "shape":
        return rng.choice((["a", "b"], {"answer": "はい"}, {"result": reply}))
    places = list(_places(reply))
    place = rng.choice(places)
    *parent_path, last = place
    parent: Any = reply
    for part in parent_path:
        parent = parent[part]
    if kind == "drop" and isinstance(parent, dict):
        del parent[last]
    elif kind == "extra" and isinstance(parent, dict):
        parent[rng.choice(("note", "confidence", "extra_field"))] = "追加"
    elif kind == "empty" and isinstance(parent[last], list):
        parent[last] = []
    else:
        parent[last] = rng.choice(WRONG_VALUES)
    return reply


def _cases() -> list[tuple[str, Schema, Any]]:
    rng = random.Random(SEED)
    cases = []
    for schema in _schemas():
        for number in range(CASES_PER_SCHEMA):
            cases.append((f"{schema.name}-{number}", schema, _broken(schema.good, rng)))
    return cases


def _field_names(model: type[BaseModel]) -> set[str]:
    """Every field name and alias of ``model`` and of the models inside it."""
    names: set[str] = set()
    seen: set[type[BaseModel]] = set()

    def walk(current: type[BaseModel]) -> None:
        if current in seen:
            return
        seen.add(current)
        for name, info in current.model_fields.items():
            names.update(n for n in (name, info.alias) if n)
            for inner in _models_in(info.annotation):
                walk(inner)

    walk(model)
    return {n for n in names if "_" in n or len(n) > 5}


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _models_in(arg)
    origin = getattr(annotation, "__origin__", None)
    if origin is not None and origin is not annotation:
        for arg in getattr(annotation, "__metadata__", ()) or ():
            yield from _models_in(arg)


def _shown(error: LLMOutputError, notes: list[str]) -> list[Shown]:
    texts = [Shown("message", error.message), Shown("hint", error.hint or "")]
    for row in detail_rows(error):
        texts += [Shown("detail", row["項目"]), Shown("detail", row["内容"])]
    texts += [Shown("log", note) for note in notes]
    return texts


def _wrong(schema: Schema, texts: list[Shown]) -> list[str]:
    found = leaks(texts, ids=sorted(_field_names(schema.model)), allowed=SETTING_VALUES)
    found += [f"{s.kind}: class: {m}" for s in texts for m in CLASS_NAME.findall(s.text)]
    return found


def _ask(schema: Schema, reply: Any, server: ScriptedLLMServer) -> tuple[LLMOutputError, list]:
    for _ in range(2):  # the reply and the one repair round
        server.add_chat(json=reply)
    stream = EventStream("run_words", "test")
    with pytest.raises(LLMOutputError) as info:
        get_llm(schema.role, events=stream).structured(schema.model, "お願いします")
    notes = [e.model_dump()["msg"] for e in stream.events() if e.event == "log"]
    return info.value, notes


def test_a_reply_that_does_not_fit_is_said_in_words(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "1")
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    cases = _cases()
    wrong: dict[str, list[str]] = {}
    asked = 0
    for name, schema, reply in cases:
        try:
            schema.model.model_validate(reply)
        except ValueError:
            pass
        else:
            continue  # the break left a valid reply (an optional field dropped)
        asked += 1
        error, notes = _ask(schema, reply, llm_server)
        if found := _wrong(schema, _shown(error, notes)):
            wrong[name] = found
    assert asked > len(cases) // 2
    report = "\n".join(f"{k}: {v[:3]}" for k, v in list(wrong.items())[:20])
    assert not wrong, f"{len(wrong)} of {asked} replies shown with names of the code:\n{report}"


def test_the_model_is_still_told_the_path_and_the_validators_words(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "1")
    llm_server.add_chat(json={"next_action": "どこかへ", "rationale": "迷った"})
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    decision = get_llm(LLMRole.REASON).structured(ReasonOutput, "お願いします")
    assert decision.next_action == "finalize"
    repair = str(llm_server.chat_requests()[1]["messages"][-1]["content"])
    assert "[next_action: literal_error: Input should be" in repair
    assert "ReasonOutput" in repair


def test_every_field_a_model_fills_has_a_label_a_person_reads() -> None:
    """The labels the words above are made of: each field of each schema, at every depth (the
    design's nodes of every block kind, loops and subflows included), has a ``title`` or a
    Japanese ``description`` (:func:`field_label`)."""
    from keiri_agent.llm.field_problems import field_label

    unlabelled: set[str] = set()
    seen: set[type[BaseModel]] = set()

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            if field_label(info) is None:
                unlabelled.add(f"{model.__name__}.{name}")
            for inner in _models_in(info.annotation):
                walk(inner)

    for schema in _schemas():
        walk(schema.model)
    assert not unlabelled, sorted(unlabelled)
