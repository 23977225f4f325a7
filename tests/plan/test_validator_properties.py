"""Property tests: whatever a plan file holds, the validator answers with structured errors."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import ValidationReport, validate_text
from tests.plan.blockkit import SPEC_DIR

REGISTRY = BlockRegistry([SPEC_DIR])
DESIGNS = Path(__file__).parent / "no_designs_here"

BASE: dict[str, Any] = {
    "apiVersion": "v1",
    "id": "base",
    "vars": {"n": 3, "flag": True},
    "policy": {"on_error": "halt", "concurrency": {"default_max_workers": 2}},
    "ui": {"layout": ["ask"]},
    "graph": [
        {"id": "items", "block": "test.items", "in": {"count": "${vars.n}"}},
        {
            "id": "ask",
            "block": "ui.interactive_input",
            "in": {"mode": "collect", "requirements": [{"id": "x", "type": "text"}]},
        },
        {
            "id": "each",
            "type": "loop",
            "foreach": {"input": "${items.items}", "itemVar": "it", "max_concurrency": 2},
            "body": {
                "plan": {
                    "graph": [{"id": "add", "block": "test.add", "in": {"a": "${it.n}"}}],
                    "exports": [{"from": "add.sum", "as": "s"}],
                }
            },
            "out": {"collect": "s"},
        },
        {
            "id": "last",
            "block": "test.sleep",
            "when": "${vars.flag} and len(${each.s}) > 0",
            "in": {"value": "${each.s}"},
        },
    ],
}

fragments = st.sampled_from(
    [
        "${",
        "}",
        "${items.items}",
        "${vars.n}",
        "${each.s.length}",
        "${a..b}",
        "${zz.q}",
        "${env.HOME}",
        "${config.x}",
        "${ask.collected_data.x}",
        ">",
        "and",
        "(",
        "'",
        "null",
        "",
    ]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=20),
    st.lists(fragments, max_size=4).map("".join),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "block",
                    "in",
                    "out",
                    "type",
                    "when",
                    "graph",
                    "body",
                    "plan",
                    "foreach",
                    "while",
                    "call",
                    "exports",
                    "input",
                    "from",
                    "as",
                    "mode",
                    "a",
                    "b",
                    "x",
                ]
            )
            | st.text(max_size=6),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=25,
)


def _check(report: ValidationReport) -> None:
    assert isinstance(report, ValidationReport)
    for issue in [*report.errors, *report.warnings]:
        assert issue.code
        assert issue.message
        assert issue.line is None or issue.line >= 1


def _paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*at, i))
    return out


def _mutate(plan: dict[str, Any], choice: int, path_index: int, replacement: Any, op: str) -> Any:
    doc = copy.deepcopy(plan)
    paths = [p for p in _paths(doc) if p]
    path = paths[path_index % len(paths)]
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    key = path[-1]
    if op == "delete":
        del parent[key]
    elif op == "replace":
        parent[key] = replacement
    elif op == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    else:
        parent[key] = [parent[key], replacement] if choice % 2 else {"x": parent[key]}
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 10),
    st.integers(0, 10_000),
    values,
    st.sampled_from(["delete", "replace", "duplicate", "wrap"]),
    st.integers(1, 3),
)
def test_mutated_plans_only_give_structured_errors(
    choice: int, path_index: int, replacement: Any, op: str, rounds: int
) -> None:
    doc: Any = BASE
    for r in range(rounds):
        if not isinstance(doc, dict):
            break
        doc = _mutate(doc, choice + r, path_index + 7 * r, replacement, op)
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    _check(validate_text(text, REGISTRY, designs_dir=DESIGNS, config={}, env={}))


@settings(max_examples=150, deadline=None)
@given(values)
def test_random_documents_only_give_structured_errors(doc: Any) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True)
    report = validate_text(text, REGISTRY, designs_dir=DESIGNS, config={}, env={})
    _check(report)
    assert not report.valid or isinstance(doc, dict)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_random_text_only_gives_structured_errors(text: str) -> None:
    _check(validate_text(text, REGISTRY, designs_dir=DESIGNS, config={}, env={}))


def test_the_base_plan_is_valid() -> None:
    text = yaml.safe_dump(BASE, allow_unicode=True, sort_keys=False)
    report = validate_text(text, REGISTRY, designs_dir=DESIGNS, config={}, env={})
    assert report.valid, [e.describe() for e in report.errors]
