"""``plan_dot``: a plan's graph as DOT, with edges from ``${node...}`` references."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan import GraphShape, Plan, graph_shape, validate_text
from keiri_agent.ui.plan_graph import MAX_LABEL_CHARS, plan_dot
from tests.plan.blockkit import SPEC_DIR

REPO = Path(__file__).resolve().parents[2]
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"( \[style=dashed\])?;$', re.MULTILINE)


def edges(dot: str) -> set[tuple[str, str]]:
    return {(a, b) for a, b, _ in EDGE.findall(dot)}


def dashed(dot: str) -> set[tuple[str, str]]:
    return {(a, b) for a, b, style in EDGE.findall(dot) if style}


def node_line(dot: str, name: str) -> str:
    return next(line for line in dot.splitlines() if line.strip().startswith(f'"{name}" ['))


def test_an_example_plan_draws_each_node_and_its_references() -> None:
    plan = yaml.safe_load(
        (REPO / "designs" / "examples" / "invoice_reconciliation.yaml").read_text("utf-8")
    )

    dot = plan_dot(plan)

    assert dot.startswith("digraph plan {")
    assert dot.rstrip().endswith("}")
    for node in plan["graph"]:
        assert f'"{node["id"]}" [label="{node["id"]}\\n{node["block"]}"' in dot
    assert edges(dot) == {
        ("collect_inputs", "parse_evidence"),
        ("parse_evidence", "extract_invoices"),
        ("collect_inputs", "read_bank"),
        ("extract_invoices", "reconcile"),
        ("read_bank", "reconcile"),
        ("reconcile", "write_result"),
    }


def test_references_in_when_and_interpolated_text_are_edges_and_vars_are_not() -> None:
    plan: dict[str, Any] = {
        "id": "demo/refs",
        "vars": {"limit": 3},
        "graph": [
            {"id": "a", "block": "demo.number", "in": {"value": "${vars.limit}"}},
            {"id": "b", "block": "demo.text", "in": {"text": "合計 ${a.doubled} 円"}},
            {"id": "c", "block": "demo.text", "when": {"expr": "${b.text} != ''"}},
        ],
    }

    dot = plan_dot(plan)

    assert edges(dot) == {("a", "b"), ("b", "c")}
    assert "when: ${b.text} != ''" in node_line(dot, "c")
    assert "dashed" in node_line(dot, "c")  # conditional nodes have a dashed border


def test_loop_bodies_are_clusters_with_qualified_names() -> None:
    plan: dict[str, Any] = {
        "id": "demo/loop",
        "graph": [
            {"id": "extract", "block": "demo.records"},
            {
                "id": "each",
                "type": "loop",
                "foreach": {"input": "${extract.records}", "itemVar": "rec"},
                "body": {
                    "plan": {
                        "graph": [
                            {"id": "double", "block": "demo.number", "in": {"value": "${rec.n}"}},
                            {"id": "show", "block": "demo.text", "in": {"text": "${double.v}"}},
                        ],
                        "exports": [{"from": "show.text", "as": "texts"}],
                    }
                },
                "out": {"collect": "texts"},
            },
            {"id": "after", "block": "demo.text", "in": {"text": "${each.texts}"}},
        ],
    }

    dot = plan_dot(plan)

    assert 'subgraph "cluster_each" {' in dot
    assert "shape=hexagon" in node_line(dot, "each")
    assert "foreach（rec）" in node_line(dot, "each")
    assert edges(dot) == {
        ("extract", "each"),  # the loop's foreach input
        ("each", "each/double"),  # double depends on nothing in the body: the loop drives it
        ("each/double", "each/show"),
        ("each", "after"),
    }
    assert dashed(dot) == {("each", "each/double")}
    # The cluster closes before the edges, and its nodes are inside it.
    cluster = dot[dot.index('subgraph "cluster_each"') :]
    cluster = cluster[: cluster.index("\n  }")]
    assert '"each/double" [' in cluster
    assert '"after" [' not in cluster


def test_a_while_condition_resolves_to_its_body_first() -> None:
    plan: dict[str, Any] = {
        "id": "demo/while",
        "graph": [
            {"id": "approve", "block": "demo.flag"},  # same id outside: the body's wins
            {
                "id": "retry",
                "type": "loop",
                "while": {"condition": {"expr": "${approve.flag} != true"}, "max_iterations": 3},
                "body": {"plan": {"graph": [{"id": "approve", "block": "demo.flag"}]}},
            },
        ],
    }

    dot = plan_dot(plan)

    assert ("retry/approve", "retry") in edges(dot)
    assert ("approve", "retry") not in edges(dot)
    assert "while（最大 3 回）" in node_line(dot, "retry")


def test_subflows_highlight_and_escaping() -> None:
    plan: dict[str, Any] = {
        "id": "demo/sub",
        "graph": [
            {"id": "first", "block": 'demo."q"\\x'},
            {
                "id": "child",
                "type": "subflow",
                "call": {"plan_id": "common/child", "inputs": {"x": "${first.text}"}},
                "when": "${first.text} == 'a'" + " or true" * 20,
            },
        ],
    }

    dot = plan_dot(plan, highlight={"child"})

    line = node_line(dot, "child")
    assert "shape=component" in line
    assert "subflow: common/child" in line
    assert "#ffe0e0" in line  # the error colour
    assert "#ffe0e0" not in node_line(dot, "first")
    assert ("first", "child") in edges(dot)
    label = re.search(r'label="((?:[^"\\]|\\.)*)"', line)
    assert label is not None
    when_line = label.group(1).split("\\n")[-1]
    assert when_line.startswith("when: ${first.text} == 'a' or true")
    assert len(when_line) == len("when: ") + MAX_LABEL_CHARS
    assert when_line.endswith("…")
    assert 'label="first\\ndemo.\\"q\\"\\\\x"' in node_line(dot, "first")  # DOT escapes


def test_something_that_is_not_a_plan_is_refused_with_a_clear_error() -> None:
    with pytest.raises(BlockError) as raised:
        plan_dot({"id": "x", "graph": []})
    assert raised.value.code == "PLAN_INVALID"
    assert "グラフを描けません" in raised.value.message


def _shape_edges(shape: GraphShape) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The solid and dashed edges a picture of ``shape`` must have."""
    solid = {
        (source, shape.prefix + node)
        for node, sources in shape.sources.items()
        for source in sources
        if source != shape.prefix + node
    }
    dashed_edges: set[tuple[str, str]] = set()
    for loop_id, body in shape.bodies.items():
        inner_solid, inner_dashed = _shape_edges(body)
        solid |= inner_solid
        dashed_edges |= inner_dashed
        starts = {body.prefix + n for n, deps in body.deps.items() if not deps - {n}}
        dashed_edges |= {(shape.prefix + loop_id, start) for start in starts}
    return solid, dashed_edges


@pytest.mark.parametrize(
    "path", sorted((REPO / "designs" / "examples").glob("*.yaml")), ids=lambda p: p.stem
)
def test_the_picture_draws_the_edges_of_the_plans_graph_shape(path: Path) -> None:
    raw = yaml.safe_load(path.read_text("utf-8"))
    solid, dashed_edges = _shape_edges(graph_shape(Plan.model_validate(raw).graph))

    dot = plan_dot(raw)

    assert edges(dot) == solid | dashed_edges
    assert dashed(dot) == dashed_edges


LOOP_READS_ITS_BODY = {
    "apiVersion": "v1",
    "id": "demo/inside",
    "graph": [
        {
            "id": "each",
            "type": "loop",
            "foreach": {"input": "${double.sum}", "itemVar": "it"},
            "body": {
                "plan": {
                    "graph": [{"id": "double", "block": "test.add", "in": {"a": "${it}"}}],
                    "exports": [{"from": "double.sum", "as": "doubled"}],
                }
            },
            "out": {"collect": "doubled"},
        }
    ],
}


def test_a_loop_input_reads_the_graph_around_the_loop_as_the_validator_does() -> None:
    text = yaml.safe_dump(LOOP_READS_ITS_BODY)
    report = validate_text(text, BlockRegistry([SPEC_DIR]), config={}, env={})
    hidden = [i for i in report.errors if i.code == "UNRESOLVED_REFERENCE"]
    assert [i.message for i in hidden] == [  # the body's nodes are not visible outside
        "${double.sum}: ノード 'double' はループ 'each' の本体の中にあり、外からは参照できません。"
    ]

    dot = plan_dot(LOOP_READS_ITS_BODY)

    assert ("each/double", "each") not in edges(dot)  # no edge the validator does not see
    assert dashed(dot) == {("each", "each/double")}


def test_a_reference_that_does_not_parse_draws_no_edge_and_the_rest_is_drawn() -> None:
    plan: dict[str, Any] = {
        "id": "demo/typo",
        "graph": [
            {"id": "a", "block": "demo.number"},
            {"id": "b", "block": "demo.text", "in": {"text": "${a.value", "n": "${a.value}"}},
            {"id": "c", "block": "demo.text", "in": {"text": "${b.text}"}},
        ],
    }

    dot = plan_dot(plan, highlight={"b"})

    assert edges(dot) == {("a", "b"), ("b", "c")}  # b's other input still reads a
    assert "#ffe0e0" in node_line(dot, "b")
