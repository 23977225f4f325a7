"""Property: what the check of a plan says names its steps and their items as people do.

A seeded generator writes plans the way the 設計 page and ``keiri-agent plan`` meet them: two
to four steps of the library's labelled blocks, each step described in Japanese (its name for
people), some of its settings labelled in ``ui.vars``, the steps wired by references to earlier
steps' outputs. Each plan is then broken the ways an author breaks one: a required item left out,
an item misspelt, a reference to an output a step does not give, a reference to a step further
down (a cycle), a value of the wrong kind, a setting left null for the dry run, an output alias
no one reads, and a plan left whole. Every text a person reads of its check is collected: each
validation error's and warning's message, each dry-run finding's message and each step's dry-run
notes (what the 設計 page shows under a step, ``ui/design/check``), and the lines
``keiri-agent plan dry-run`` prints (its table and its findings, not the hints, which say what to
write in the YAML, nor ``--json``).

A text is wrong when it names a step by its id or an item by its port name where the plan or
the block gives it a name for people: the YAML name may stand only in parentheses right after
that name (``「明細の読み込み」（read）``, as ``設定値「label」（vars.name）`` already does), for
whoever edits the YAML. A dry-run message that says a null twice (「null（空） null」) is wrong too.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.plan import dry_run_source, parse_source, validate_source

SEED = 17
CASES = 240  # the plans other tests draw from (_cases)
# The check's texts are read for the first 40: all 8 ways of breaking a plan 5 times, all 24
# labelled blocks, 2 to 4 steps, a step, an item and a null said twice among what was wrong; 39 of
# them name YAML names on the code before fbd122a (236 of the 240).
CHECKED = 40
KINDS = tuple(
    [
        "whole",
        "missing_input",
        "misspelt_input",
        "unknown_output",
        "cycle",
        "wrong_type",
        "null_var",
        "unread_alias",
    ]
)
IDS = tuple(["t", "read", "r1", "calc", "bank", "step_a", "sum2", "chk", "out_x", "load"])
DESCRIPTIONS = tuple(
    [
        "明細の読み込み",
        "売上の集計",
        "入金の照合",
        "請求書の確認",
        "差異の抽出",
        "月次レポートの作成",
        "経費の仕分け",
        "残高の確認",
    ]
)
VAR_LABELS = ("対象月", "入力ファイル", "取引先の一覧", "手数料の上限（円）", "担当者")
_LITERALS: dict[str, Any] = {
    "string": "月次",
    "integer": 3,
    "number": 1.5,
    "boolean": True,
    "array": ["a"],
    "object": {"a": 1},
}
_WRONG: dict[str, Any] = {
    "string": {"金額": 1},
    "integer": "三",
    "number": "多い",
    "boolean": "はい",
}


def _specs() -> list[BlockSpec]:
    registry = default_registry()
    return sorted(
        (
            s
            for s in registry.list()
            if s.label and s.category != "ui" and s.outputs and s.required_inputs()
        ),
        key=lambda s: s.id,
    )


def _type(port: dict[str, Any]) -> str:
    kind = port.get("type", "string")
    return kind[0] if isinstance(kind, list) else str(kind)


@dataclass
class Case:
    name: str
    plan: dict[str, Any]
    names: dict[str, set[str]] = field(default_factory=dict)  # YAML name → names for people
    nulls: dict[str, Any] = field(default_factory=dict)  # vars given null for the dry run


def empty_plan(plan_id: str) -> dict[str, Any]:
    """A plan without steps, settings or labels yet, for a generator to fill."""
    return {"apiVersion": "v1", "id": plan_id, "vars": {}, "ui": {"vars": {}}, "graph": []}


def _plan(rng: random.Random, specs: list[BlockSpec], kind: str, number: int) -> Case:
    count = rng.randint(2, 4)
    chosen = [rng.choice(specs) for _ in range(count)]
    ids = rng.sample(IDS, count)
    descriptions = rng.sample(DESCRIPTIONS, count)
    plan = empty_plan(f"check_words_{number}")
    case = Case(f"{number} {kind} {[s.id for s in chosen]}", plan)
    labels = list(VAR_LABELS)
    rng.shuffle(labels)
    for index, (spec, node_id, described) in enumerate(zip(chosen, ids, descriptions, strict=True)):
        case.names[node_id] = {described}
        inputs: dict[str, Any] = {}
        for port_name in spec.required_inputs():
            port = spec.inputs[port_name]
            if port.get("label"):
                case.names.setdefault(port_name, set()).add(str(port["label"]))
            earlier = plan["graph"][:index]
            if earlier and rng.random() < 0.5:
                source = rng.choice(earlier)
                source_spec = next(s for s, i in zip(chosen, ids, strict=True) if i == source["id"])
                output = rng.choice(sorted(source_spec.outputs))
                inputs[port_name] = f"${{{source['id']}.{output}}}"
            elif labels and rng.random() < 0.5:
                var = f"v_{node_id}_{port_name}"
                plan["vars"][var] = _LITERALS.get(_type(port), "月次")
                plan["ui"]["vars"][var] = labels.pop()
                inputs[port_name] = f"${{vars.{var}}}"
            else:
                inputs[port_name] = _LITERALS.get(_type(port), "月次")
        for port_name, port in spec.outputs.items():
            if port.get("label"):
                case.names.setdefault(port_name, set()).add(str(port["label"]))
        plan["graph"].append(
            {"id": node_id, "block": spec.id, "description": described, "in": inputs}
        )
    _break(rng, case, chosen, kind)
    return case


def _break(rng: random.Random, case: Case, specs: list[BlockSpec], kind: str) -> None:
    graph = case.plan["graph"]
    at = rng.randrange(len(graph))
    node, spec = graph[at], specs[at]
    port_name = rng.choice(sorted(node["in"]))
    if kind == "missing_input":
        del node["in"][port_name]
    elif kind == "misspelt_input":
        node["in"][port_name + "s"] = node["in"].pop(port_name)
    elif kind == "unknown_output":
        other = graph[rng.randrange(len(graph))]
        node["in"][port_name] = (
            f"${{{other['id']}.{rng.choice(sorted(specs[graph.index(other)].outputs))}x}}"
        )
    elif kind == "cycle":
        later = graph[-1]
        first = graph[0]
        later_spec = specs[-1]
        port = rng.choice(sorted(first["in"]))
        first["in"][port] = f"${{{later['id']}.{rng.choice(sorted(later_spec.outputs))}}}"
    elif kind == "wrong_type":
        wanted = _type(spec.inputs[port_name])
        node["in"][port_name] = None if rng.random() < 0.3 else _WRONG.get(wanted, 12345)
    elif kind == "null_var":
        var = f"v_{node['id']}_{port_name}"
        case.plan["vars"][var] = None
        if rng.random() < 0.5:
            case.plan["ui"]["vars"][var] = rng.choice(VAR_LABELS) + "（未入力）"
        node["in"][port_name] = f"${{vars.{var}}}"
        case.nulls[var] = None
    elif kind == "unread_alias":
        output = rng.choice(sorted(spec.outputs))
        node["out"] = {output: f"{output}_kept"}


def _cases() -> list[Case]:
    rng = random.Random(SEED)
    specs = _specs()
    return [_plan(rng, specs, KINDS[n % len(KINDS)], n) for n in range(CASES)]


def _text(case: Case) -> str:
    return yaml.safe_dump(case.plan, allow_unicode=True, sort_keys=False)


def check_texts(case: Case) -> Iterator[str]:
    """What the 設計 page reads out of the check: messages and each step's notes."""
    registry = default_registry()
    source = parse_source(_text(case))
    report = validate_source(source, registry)
    for issue in [*report.errors, *report.warnings]:
        yield issue.message
    if report.valid:
        dry = dry_run_source(source, registry)
        for finding in dry.findings:
            yield finding.message
        for node in dry.nodes:
            yield from node.notes


def cli_texts(case: Case, folder: Path) -> Iterator[str]:
    """The lines ``keiri-agent plan dry-run`` prints, but its hints."""
    from keiri_agent.cli import app

    file = folder / f"{case.plan['id']}.yaml"
    file.write_text(_text(case), encoding="utf-8")
    result = CliRunner().invoke(app, ["plan", "dry-run", str(file)], env={"COLUMNS": "400"})
    for line in result.output.splitlines():
        if line.strip().startswith("ヒント:"):
            continue
        yield line.replace(str(file), "〈Plan〉")


_TWICE_NULL = re.compile(r"null（空）\s*null")
# The YAML spelling of what a quoted name names, in parentheses right after it: 「表」（table）,
# 「売上の集計」の「答え」（${calc.answer}）.
# The keys a value may hold (an input's settings), which have no names for people.
_KEYS = re.compile(r"（使える項目: [^）]*）")
# A name the plan writes that is not there (an output a step does not give): no one names it.
_ABSENT = re.compile(r"'[^']*' はありません")
_SPELLED = re.compile(r"」\s*（[^（）]*(?:（[^（）]*）[^（）]*)*）")


def wrong_words(text: str, names: dict[str, set[str]]) -> list[str]:
    """The YAML names of ``names`` that ``text`` says without their name for people right
    before them, and a null said twice."""
    found = [f"null twice: {text[:120]!r}"] if _TWICE_NULL.search(text) else []
    rest = _ABSENT.sub("", _KEYS.sub("", _SPELLED.sub("」", text)))
    for yaml_name, labels in names.items():
        for label in labels:
            spelled = rf"{re.escape(label)}\s*[（(]\s*{re.escape(yaml_name)}\s*[）)]"
            rest = re.sub(spelled, label, rest)
    for yaml_name in names:
        if re.search(rf"(?<![A-Za-z0-9_.$]){re.escape(yaml_name)}(?![A-Za-z0-9_])", rest):
            found.append(f"{yaml_name}: {text[:160]!r}")
    return found


def _measure(tmp_path: Path) -> tuple[int, int, dict[str, list[str]]]:
    total = wrong = 0
    found: dict[str, list[str]] = {}
    for case in _cases()[:CHECKED]:
        texts = [*check_texts(case), *cli_texts(case, tmp_path)]
        total += len(texts)
        for text in texts:
            problems = wrong_words(text, case.names)
            if problems:
                wrong += 1
                found.setdefault(case.name, []).extend(problems)
    return total, wrong, found


def test_a_checks_words_name_steps_and_items_as_people_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.cli.common import console

    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path))
    monkeypatch.setattr(console, "width", 400)  # a row a line (made at import: COLUMNS is late)
    total, wrong, found = _measure(tmp_path)
    lines = [f"{wrong} of {total} texts in {len(found)} of {CHECKED} plans name YAML names:"]
    for name, problems in list(found.items())[:25]:
        lines += [f"  {name}"] + [f"    {p}" for p in problems[:4]]
    assert not found, "\n".join(lines)


def _asked(case: Case) -> list[Any]:
    """What a generation would still ask of ``case``: each labelled required input of its
    steps, and each of its labelled settings (``${vars.*}``)."""
    from keiri_agent.design.models import Requirement, RequirementTarget

    registry = default_registry()
    asked = [
        Requirement(
            id=f"{name}_value",
            label=f"{label}の値",
            target=RequirementTarget(kind="var", var=name),
        )
        for name, label in case.plan["ui"]["vars"].items()
        if isinstance(label, str)
    ]
    for node in case.plan["graph"]:
        spec = registry.find(str(node.get("block")))
        for port in spec.required_inputs() if spec is not None else []:
            if spec is not None and spec.inputs[port].get("label"):
                target = RequirementTarget(kind="input", node=node["id"], port=port)
                asked.append(Requirement(id=f"{node['id']}_{port}", label="確認", target=target))
    return asked


def test_what_is_still_missing_names_steps_as_the_check_does() -> None:
    """The 設計 page's 不足項目 and the design chat's reply to a plan it could not finish name
    steps and items as the check does — never ``[t] CODE: …`` nor ``t.table``."""
    from keiri_agent.design.chat import describe_result
    from keiri_agent.design.models import GeneratedPlan
    from keiri_agent.ui.design.generation import missing_summary

    registry = default_registry()
    wrong: dict[str, list[str]] = {}
    listed = 0
    for case in _cases():
        report = validate_source(parse_source(_text(case)), registry)
        result = GeneratedPlan(
            status="ok" if report.valid else "failed",
            plan=case.plan,
            errors=report.errors,
            requirements=_asked(case),
        )
        summary = missing_summary(result, None, registry)
        texts = [line for lines in summary.values() for line in lines]
        texts += [] if report.valid else [describe_result(result)]
        listed += len(texts)
        for text in texts:
            problems = wrong_words(text, case.names)
            if problems:
                wrong.setdefault(case.name, []).extend(problems)
    assert listed > 400
    assert not wrong, f"{len(wrong)} plans: {list(wrong.items())[:3]}"
