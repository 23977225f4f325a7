"""Property: what the generation, the composition and a refused run show a person names steps,
items, settings and templates as people do — no node id, port key, YAML key or template id
where a name for people exists.

A seeded generator (``SEED``) takes the realistic plans of ``test_check_words`` (two to four
steps of the library's labelled blocks, each described in Japanese, wired by references, with
labelled settings; then broken the ways an author breaks one) and reads them on the paths the
check's own test does not:

- **a refused run**: ``plan run`` of a plan that does not validate says 「Plan … に検証エラーが
  あります: …」 (``ValidationReport.raise_if_invalid``, the runner's and the 実行 page's line);
- **生成の経過**: each plan as the second attempt of a generation after a first one the model
  then changed (an input rewired, a step's block changed, a condition added, a step added or
  removed), each change said as the 設計 page says it (``ui.design.generation.attempt_lines``);
- **a subflow's dry run**: the plan called as a subflow from a plan that has a step of the same
  id with another name; what the dry run says of the subflow's steps (``call/…``) must name them
  as the subflow does, never by the caller's step of that id;
- **composition conflicts**: the template library's templates composed in random sets and
  orders, with and without a binding that cannot be read, and small templates whose contracts
  clash in type or in an export's name; each conflict's message and hint.

A text is wrong when it names something by its YAML name where it has a name for people,
except in parentheses right after that name (``「売上の集計」（sum2）``), and except where a
hint says what to type (「CLI では --bind a.b=c.d と入力」: what to type may name keys). A hint
that shows a Python mapping (``bindings={'a.b': 'c.d'}``) is wrong too.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.compose import compose
from keiri_agent.design.models import AttemptRecord
from keiri_agent.design.repair import node_diff
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec, check_template
from keiri_agent.errors import BlockError
from keiri_agent.plan import dry_run_source, parse_source, validate_source
from keiri_agent.ui.design.generation import attempt_lines
from tests.design.test_check_words import (
    DESCRIPTIONS,
    IDS,
    Case,
    _cases,
    _specs,
    _type,
    empty_plan,
    wrong_words,
)

SEED = 18
TEMPLATES = Path(__file__).resolve().parents[2] / "designs" / "templates"
# A node's YAML keys, as the 設計 page names them in a change.
KEY_NAMES = {
    "in": {"入力"},
    "out": {"出力の名前"},
    "block": {"ブロック"},
    "when": {"実行条件"},
    "description": {"説明"},
}
CALLER_NAME = "親 Plan の下準備"
TITLES = ("仕訳の取り込み", "売掛金の消込", "経費精算の確認", "請求書の発行", "残高の照合")
# What a hint tells a person to type: it may name keys.
_TYPED = re.compile(r"(?:CLI|API|YAML) では[^。]*")
# An output without a description is named by its template's title, its typed name after it.
_OWNED = re.compile(r"」の出力（")
_MAPPING = re.compile(r"[A-Za-z_]+=\{")


def _text(plan: dict[str, Any]) -> str:
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


def run_texts(case: Case) -> Iterator[str]:
    """The line a run of a plan that does not validate stops with."""
    report = validate_source(parse_source(_text(case.plan)), default_registry())
    try:
        report.raise_if_invalid(case.plan["id"])
    except BlockError as exc:
        yield exc.message


def _changed(rng: random.Random, plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as the model's first attempt had it, before this change."""
    before = copy.deepcopy(plan)
    graph = before["graph"]
    node = rng.choice(graph)
    change = rng.choice(("input", "block", "when", "added", "removed", "two"))
    if change in ("input", "two") and node["in"]:
        port = rng.choice(sorted(node["in"]))
        node["in"][port] = "前回の値"
    if change in ("block", "two"):
        node["block"] = rng.choice(_specs()).id
    if change == "when":
        node["when"] = "${vars.run_it}"
    if change == "added" and len(graph) > 1:
        graph.remove(node)  # the second attempt added it
    if change == "removed":
        graph.append({"id": "old_step", "block": _specs()[0].id, "description": "前回だけの手順"})
    return before


def change_texts(rng: random.Random, case: Case) -> Iterator[str]:
    """生成の経過 of a generation whose second attempt is ``case``'s plan."""
    before = _changed(rng, case.plan)
    diff = node_diff(before, case.plan)
    attempt = AttemptRecord(number=2, plan=case.plan, diff=diff)
    yield from (
        line for line in attempt_lines(attempt, before, default_registry()) if "変更" in line
    )


def _sub_plan(rng: random.Random, number: int) -> Case:
    """A plan that validates, whose dry run has something to say of its steps: steps of the
    blocks whose required items are texts, each item a labelled setting, some left null."""
    specs = [
        s for s in _specs() if all(_type(s.inputs[p]) == "string" for p in s.required_inputs())
    ]
    count = rng.randint(2, 4)
    ids, described = rng.sample(IDS, count), rng.sample(DESCRIPTIONS, count)
    plan = empty_plan(f"sub_{number}")
    case = Case(f"{number} sub", plan)
    for node_id, name in zip(ids, described, strict=True):
        spec = rng.choice(specs)
        case.names[node_id] = {name}
        inputs: dict[str, Any] = {}
        for port in spec.required_inputs():
            label = spec.inputs[port].get("label")
            if label:
                case.names.setdefault(port, set()).add(str(label))
            var = f"v_{node_id}_{port}"
            plan["vars"][var] = None if rng.random() < 0.5 else "月次"
            plan["ui"]["vars"][var] = f"{name}の設定"
            case.names[var] = {f"{name}の設定"}
            inputs[port] = f"${{vars.{var}}}"
        plan["graph"].append({"id": node_id, "block": spec.id, "description": name, "in": inputs})
    return case


def subflow_texts(case: Case, designs: Path, *, given: bool) -> Iterator[str]:
    """What the dry run says of ``case``'s steps when a plan with steps of the same ids calls
    it as a subflow."""
    sub = copy.deepcopy(case.plan)
    sub["id"] = f"lib/{sub['id']}"
    (designs / "lib").mkdir(parents=True, exist_ok=True)
    (designs / f"{sub['id']}.yaml").write_text(_text(sub), encoding="utf-8")
    own = copy.deepcopy(sub["graph"])  # the caller's steps of the same ids, named otherwise
    for number, node in enumerate(own, start=1):
        node["description"] = f"{CALLER_NAME} {number}"
    caller = {
        "apiVersion": "v1",
        "id": "caller",
        "vars": dict(sub["vars"]),
        "graph": [*own, {"id": "call", "type": "subflow", "call": {"plan_id": sub["id"]}}],
    }
    if given:  # each setting passed on (a null one stays null)
        caller["graph"][-1]["call"]["inputs"] = {name: f"${{vars.{name}}}" for name in sub["vars"]}
    caller["ui"] = {"vars": dict(sub["ui"]["vars"])}
    dry = dry_run_source(
        parse_source(_text(caller)), default_registry(), designs_dir=designs, config={}, env={}
    )
    for finding in dry.findings:
        if (finding.node_id or "").startswith("call"):
            yield finding.message
    for node in dry.nodes:
        if node.node_id.startswith("call/"):
            yield from node.notes


def _library() -> list[TemplateSpec]:
    return TemplateLibrary.load(TEMPLATES, registry=default_registry()).list()


def _small(tid: str, title: str, imports: dict[str, Any], exports: dict[str, Any]) -> TemplateSpec:
    body = {
        "id": tid,
        "title": title,
        "category": "check",
        "imports": imports,
        "exports": exports,
        "graph_snippet": [
            {"id": "pick", "block": "table.filter", "in": {"table": "${imports.rows}"}}
            if "rows" in imports
            else {"id": "pick", "block": "table.filter", "in": {}}
        ],
    }
    spec = TemplateSpec.model_validate(body)
    assert check_template(spec, default_registry()) == []
    return spec


def _clashing(rng: random.Random, number: int) -> list[TemplateSpec]:
    """Two small templates whose contracts clash: a type, or an export's name."""
    kind = rng.choice(("records", "object", "number", "text"))
    other = rng.choice([k for k in ("records", "object", "number", "text") if k != kind])
    titles = rng.sample(TITLES, 2)
    producer = _small(
        f"producer{number}",
        titles[0],
        {},
        {"rows": {"type": other, "from": "pick.rows", "description": "抽出した明細"}},
    )
    consumer = _small(
        f"consumer{number}",
        titles[1],
        {"rows": {"type": kind, "description": "対象の明細"}},
        {"rows": {"type": "records", "from": "pick.rows", "description": "残った明細"}},
    )
    return [producer, consumer]


def _names(specs: list[TemplateSpec]) -> dict[str, set[str]]:
    """Each template id and each described import or export name, with its name for people."""
    names: dict[str, set[str]] = {}
    bare: set[str] = set()  # a name some template's port leaves undescribed: quoted, it is fine
    for spec in specs:
        names.setdefault(spec.id, set()).add(spec.title)
        for name, port in [*spec.imports.items(), *spec.exports.items()]:
            said = (port.description or "").split("。")[0].strip()
            if said and len(said) <= 30:
                names.setdefault(name, set()).add(said)
            else:
                bare.add(name)
    return {name: said for name, said in names.items() if name not in bare}


def compose_texts(rng: random.Random, number: int, library: list[TemplateSpec]) -> Iterator[str]:
    """The messages and hints of one composition's conflicts (a hint without what to type)."""
    if number % 3 == 0:
        specs = _clashing(rng, number)
    else:
        specs = rng.sample(library, rng.randint(2, min(4, len(library))))
    bindings: dict[str, str] = {}
    importing = [s for s in specs if s.imports]
    if importing and number % 2:
        spec = rng.choice(importing)
        bindings[f"{spec.id}.{rng.choice(sorted(spec.imports))}"] = "どこかの出力"
    result = compose(specs, plan_id="generated/words", bindings=bindings)
    names = _names(specs)
    for conflict in result.conflicts:
        yield from wrong_words(_OWNED.sub("」の出力」（", conflict.message), names)
        hint = _OWNED.sub("」の出力」（", _TYPED.sub("", conflict.hint))
        yield from wrong_words(hint, names)
        if _MAPPING.search(conflict.hint):
            yield f"a Python mapping: {conflict.hint[:120]!r}"


def _collect(tmp_path: Path) -> tuple[dict[str, int], dict[str, list[str]]]:
    rng = random.Random(SEED)
    library = _library()
    texts: dict[str, int] = {}
    wrong: dict[str, list[str]] = {}
    for number, case in enumerate(_cases()):
        names = {**case.names, **KEY_NAMES}
        shown = [("run", t) for t in run_texts(case)]
        shown += [("change", t) for t in change_texts(rng, case)]
        sub = _sub_plan(rng, number)
        shown += [
            ("subflow", t) for t in subflow_texts(sub, tmp_path / "designs", given=number % 4 != 0)
        ]
        for path, text in shown:
            texts[path] = texts.get(path, 0) + 1
            problems = wrong_words(text, {**(sub.names if path == "subflow" else names)})
            if path == "subflow" and CALLER_NAME in text:
                problems.append(f"the caller's name: {text[:120]!r}")
            if problems:
                wrong.setdefault(f"{path} {case.name}", []).extend(problems)
        conflicts = list(compose_texts(rng, number, library))
        texts["compose"] = texts.get("compose", 0) + 1
        if conflicts:
            wrong.setdefault(f"compose {number}", []).extend(conflicts)
    return texts, wrong


def test_generation_runs_subflows_and_compositions_name_things_as_people_do(
    tmp_path: Path,
) -> None:
    counts, wrong = _collect(tmp_path)
    texts = sum(counts.values())
    assert texts > 600, counts
    assert counts["subflow"] > 50, counts
    by_path: dict[str, int] = {}
    for key in wrong:
        by_path[key.split()[0]] = by_path.get(key.split()[0], 0) + 1
    lines = [f"{len(wrong)} cases show YAML names ({by_path}) among {texts} texts {counts}:"]
    for name, problems in list(wrong.items())[:20]:
        lines += [f"  {name}"] + [f"    {p}" for p in problems[:3]]
    assert not wrong, "\n".join(lines)


@pytest.mark.parametrize("described", DESCRIPTIONS[:2])
def test_a_removed_step_is_named_as_the_attempt_before_named_it(described: str) -> None:
    before = {
        "apiVersion": "v1",
        "id": "removed",
        "graph": [
            {"id": "sum2", "block": "table.filter", "description": described, "in": {}},
            {"id": "keep", "block": "table.filter", "in": {}},
        ],
    }
    after = {
        "apiVersion": "v1",
        "id": "removed",
        "graph": [{"id": "keep", "block": "table.filter", "in": {"table": "x"}}],
    }
    attempt = AttemptRecord(number=2, plan=after, diff=node_diff(before, after))
    lines = attempt_lines(attempt, before, default_registry())
    assert f"- 前回からの変更 「{described}」を削除" in lines
    assert any(line.endswith(": 入力を変更") for line in lines), lines
