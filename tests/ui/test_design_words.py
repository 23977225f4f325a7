"""Property: the 設計 page says a plan, its check and its generation in an accountant's Japanese.

A seeded generator drives the page (alone, as ``test_design_page`` does) the ways people use it:
templates composed without an LLM (one to three of the library's templates, of many block kinds:
files, tables, reconciliation, reports, questions to a person, loops), a composed plan edited
into one that does not validate (a reference to a node that is not there, a block that does not
exist) and checked, and generation with a model in each mode that needs one (テンプレートを手本に /
テンプレートを使わずに) whose replies do not fit (a skeleton of the wrong shape; a plan whose node
ids are numbers, so every attempt fails). Every text the page then shows (``tests/ui/screen``:
alerts, Markdown, captions, expanders, tables, options) is read, and must hold no id of the plan
(its node ids, its blocks' port names), no mode's program name (``hint``, ``llm-only``), no
field or class name of the schemas a model fills, no JSON written out (a ``st.json`` element),
and no library English. The YAML editor (what a person edits) and the expanders titled 詳細:
(the ids, on purpose, for whoever edits the YAML) are not read.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.templates import TemplateLibrary
from keiri_agent.ui.design.state import INSTRUCTION_KEY, MODE_KEY, TEMPLATES_KEY, YAML_KEY
from tests.design.test_generate import INSTRUCTION, SKELETON, wiring
from tests.support import ScriptedLLMServer
from tests.ui.screen import Shown, leaks, node_texts

SEED = 16
COMPOSED = 8  # seeded template selections composed without an LLM
EDITED = 4  # composed plans edited into invalid ones
PAGE_TIMEOUT_S = 180
MODE_IDS = ("hint", "compose", "llm-only")
SCHEMA_NAMES = ("PlanSkeleton", "LLMDesignModel", "plan_id", "needs_ui", "missing_information")
# A class name of the code: two capitalised words glued (PlanSkeleton, LLMDesignModel).
CLASS_NAME = re.compile(r"\b[A-Z]+[a-z]+[A-Z][A-Za-z]*\b|\b[A-Z][a-z]+[A-Z]+[a-z]*\b")
# Words a page may show that look like names: a setting's values a hint names, CodeAct (a
# product name the sidebar does not reach here).
ALLOWED = ("json_schema", "function_calling")


def design_page() -> None:
    from keiri_agent.ui.design.page import render

    render()


def _app() -> AppTest:
    return AppTest.from_function(design_page, default_timeout=PAGE_TIMEOUT_S)


def _template_ids() -> list[str]:
    return sorted(t.id for t in TemplateLibrary.load(registry=default_registry()).list())


def _compose(app: AppTest, templates: list[str]) -> AppTest:
    app.run()
    app.text_area(key=INSTRUCTION_KEY).set_value("月次の経理業務をまとめて行う").run()
    app.multiselect(key=TEMPLATES_KEY).set_value(templates)
    app.radio(key=MODE_KEY).set_value("compose").run()
    return app.button(key="design_generate").click().run()


def _nodes(graph: Any) -> Iterator[dict[str, Any]]:
    for node in graph if isinstance(graph, list) else []:
        if isinstance(node, dict):
            yield node
            body = node.get("body")
            if isinstance(body, dict) and isinstance(body.get("plan"), dict):
                yield from _nodes(body["plan"].get("graph"))


def _broken(text: str, rng: random.Random) -> str:
    """The plan with one node's input pointing at a node that is not there, or its block
    misspelt."""
    plan = yaml.safe_load(text)
    nodes = [n for n in _nodes(plan.get("graph")) if n.get("block")]
    node = rng.choice(nodes)
    if rng.random() < 0.5 and isinstance(node.get("in"), dict) and node["in"]:
        port = rng.choice(sorted(node["in"]))
        node["in"][port] = "${no_such_step.rows}"
    else:
        node["block"] = str(node["block"]) + "_v2"
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


Flow = Callable[[pytest.MonkeyPatch], AppTest]


def _composed(templates: list[str]) -> Flow:
    def flow(_: pytest.MonkeyPatch) -> AppTest:
        return _compose(_app(), templates)

    return flow


def _edited(templates: list[str], seed: int) -> Flow:
    def flow(_: pytest.MonkeyPatch) -> AppTest:
        app = _compose(_app(), templates)
        text = app.text_area(key=YAML_KEY).value or ""
        if text.strip():
            app.text_area(key=YAML_KEY).set_value(_broken(text, random.Random(seed)))
            app.button(key="design_check_button").click().run()
        return app

    return flow


def _generated(mode: str, replies: list[Any]) -> Flow:
    def flow(monkeypatch: pytest.MonkeyPatch) -> AppTest:
        with ScriptedLLMServer() as server:  # its own script: no step left for the next flow
            monkeypatch.setenv("OPENAI_BASE_URL", server.url)
            for reply in replies[:-1]:
                server.add_chat(json=reply)
            server.add_chat(json=replies[-1], repeat=True)
            app = _app()
            app.run()
            app.radio(key=MODE_KEY).set_value(mode)
            app.text_area(key=INSTRUCTION_KEY).set_value(INSTRUCTION).run()
            return app.button(key="design_generate").click().run()

    return flow


def _numbered_ids() -> dict[str, Any]:
    plan = wiring()
    plan["graph"][0]["id"] = 1
    return plan


def _flows() -> dict[str, Flow]:
    rng = random.Random(SEED)
    ids = _template_ids()
    flows: dict[str, Flow] = {}
    for number in range(COMPOSED):
        chosen = rng.sample(ids, rng.randint(1, 3))
        flows[f"compose {number} {chosen}"] = _composed(chosen)
    for number in range(EDITED):
        chosen = rng.sample(ids, 1)
        flows[f"edited {number} {chosen}"] = _edited(chosen, rng.randrange(1 << 30))
    bad_skeleton = {**SKELETON, "steps": "read → pick → write", "needs_ui": "no"}
    for mode in ("hint", "llm-only"):
        flows[f"{mode}: skeleton that does not fit"] = _generated(mode, [bad_skeleton])
        flows[f"{mode}: plans that do not fit"] = _generated(mode, [SKELETON, _numbered_ids()])
    return flows


def _plan_ids(app: AppTest) -> set[str]:
    """The node ids of the plan in the editor and the port names of its blocks."""
    registry = default_registry()
    try:
        plan = yaml.safe_load(app.text_area(key=YAML_KEY).value or "")
    except yaml.YAMLError:
        return set()
    found: set[str] = set()
    for node in _nodes(plan.get("graph") if isinstance(plan, dict) else None):
        if isinstance(node.get("id"), str):
            found.add(node["id"])
        spec = registry.find(str(node.get("block") or ""))
        if spec is not None:
            found.update(spec.inputs)
            found.update(spec.outputs)
    return found


CHECK_SECTION = "検証/ドライランの結果"
GENERATION_EXPANDER = "生成の経過"
ERROR_EXPANDER = "エラー詳細"
# What the check view writes itself: node headers (markdown), expander titles, value tables.
OWN_KINDS = frozenset({"markdown", "expander", "table", "dataframe", "arrow_data_frame", "json"})


def _skip(label: str) -> bool:
    return label.startswith("詳細:")


def _shown(app: AppTest) -> list[Shown]:
    """What the page says of what this test is about: the modes offered, each node of the
    checked plan (its name, its block, its dry-run values), the attempts of a generation and
    the errors with their details. Read elsewhere, not here: the words of the validator and
    the dry run (a finding's message, a node's notes: ``plan``), the chat's turns, the compose
    hints, the generation's reasoning and 不足項目 (``design``)."""
    mode = app.radio(key=MODE_KEY)
    texts = [Shown("radio", str(mode.label)), *(Shown("radio", str(o)) for o in mode.options)]
    section = ""
    for child in app.main.children.values():
        kind = getattr(child, "type", "")
        if kind in ("subheader", "header", "title"):
            section = str(getattr(child, "value", ""))
            continue
        label = str(getattr(child, "label", ""))
        if section == CHECK_SECTION:
            texts += [s for s in node_texts(child, skip=_skip) if s.kind in OWN_KINDS]
        elif kind == "error" or (kind == "expander" and label.startswith(ERROR_EXPANDER)):
            texts += node_texts(child, skip=_skip)
        elif kind == "expander" and label.startswith(GENERATION_EXPANDER):
            attempts = node_texts(child, skip=_skip)
            texts += [s for s in attempts if s.text.startswith("**試行")]
    return texts


def _wrong(app: AppTest, roots: tuple[Path, ...]) -> list[str]:
    texts = [Shown(s.kind, _without(s.text, roots)) for s in _shown(app)]
    found = leaks(texts, ids=sorted(_plan_ids(app) | {*MODE_IDS, *SCHEMA_NAMES}), allowed=ALLOWED)
    found += [f"{s.kind}: JSON written out: {s.text[:60]!r}" for s in texts if s.kind == "json"]
    found += [f"{s.kind}: class: {m}" for s in texts for m in CLASS_NAME.findall(s.text)]
    return sorted(set(found))


def _without(text: str, roots: tuple[Path, ...]) -> str:
    """The text with the folders the person configured (runs, designs) named as such."""
    for root in roots:
        text = text.replace(str(root), "〈設定したフォルダ〉")
    return text


def _report(found: dict[str, list[str]], total: int) -> str:
    lines = [f"{len(found)} of {total} design flows show names of the code or JSON:"]
    for name, problems in found.items():
        lines += [f"  {name}"] + [f"    {p[:200]}" for p in problems[:6]]
    return "\n".join(lines)


def test_the_design_page_says_plans_checks_and_generations_in_words(
    design_env: Path,
    public_dir: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "0")
    flows = _flows()
    found: dict[str, list[str]] = {}
    for name, flow in flows.items():
        app = flow(monkeypatch)
        assert not app.exception, (name, app.exception)
        if problems := _wrong(app, (design_env / "runs", design_env / "designs", design_env)):
            found[name] = problems
    assert not found, _report(found, len(flows))
