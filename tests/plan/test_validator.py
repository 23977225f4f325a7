"""The validator: one failing plan per rule (code, node id and line), all errors at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import validate_text

VALID = """\
apiVersion: v1
id: ok
graph:
  - {id: a, block: test.add, in: {a: 1}}
  - {id: b, block: test.add, in: {a: "${a.sum}"}}
"""

# (rule, plan text, expected code, node id, line of the problem)
CASES = [
    ("yaml syntax", "id: x\ngraph: [\n", "YAML_SYNTAX", None, 3),
    (
        "plan schema",
        "id: x\ngraph:\n  - {id: a, block: test.add, bogus: 1}\n",
        "PLAN_SCHEMA",
        "a",
        3,
    ),
    ("node type", "id: x\ngraph:\n  - {id: a, type: magic}\n", "UNKNOWN_NODE_TYPE", "a", 3),
    (
        "api version",
        "apiVersion: v9\nid: x\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n",
        "UNSUPPORTED_API_VERSION",
        None,
        1,
    ),
    ("unknown block", "id: x\ngraph:\n  - id: a\n    block: test.nope\n", "UNKNOWN_BLOCK", "a", 4),
    (
        "unknown version",
        "id: x\ngraph:\n  - id: a\n    block: test.add@9.0.0\n    in: {a: 1}\n",
        "UNKNOWN_BLOCK_VERSION",
        "a",
        4,
    ),
    (
        "unknown input",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in:\n      a: 1\n      c: 2\n",
        "UNKNOWN_INPUT",
        "a",
        7,
    ),
    (
        "unknown output",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in: {a: 1}\n    out:\n      total: t\n",
        "UNKNOWN_OUTPUT",
        "a",
        7,
    ),
    (
        "missing input",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in:\n      b: 1\n",
        "MISSING_REQUIRED_INPUT",
        "a",
        5,
    ),
    (
        "literal type",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in:\n      a: abc\n",
        "INVALID_INPUT_VALUE",
        "a",
        6,
    ),
    (
        "unresolved node",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in:\n      a: ${zz.sum}\n",
        "UNRESOLVED_REFERENCE",
        "a",
        6,
    ),
    (
        "unresolved alias",
        "id: x\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n  - id: b\n    block: test.add\n    in:\n      a: ${a.total}\n",
        "UNRESOLVED_REFERENCE",
        "b",
        7,
    ),
    (
        "unresolved var",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in:\n      a: ${vars.n}\n",
        "UNRESOLVED_REFERENCE",
        "a",
        6,
    ),
    (
        "malformed reference",
        "id: x\ngraph:\n  - id: a\n    block: test.add\n    in:\n      a: ${a..b}\n",
        "INVALID_REFERENCE",
        "a",
        6,
    ),
    (
        "type mismatch",
        "id: x\ngraph:\n  - {id: i, block: test.items, in: {count: 1}}\n  - id: a\n    block: test.add\n    in:\n      a: ${i.items}\n",
        "TYPE_MISMATCH",
        "a",
        7,
    ),
    (
        "cycle",
        'id: x\ngraph:\n  - id: a\n    block: test.add\n    in: {a: "${b.sum}"}\n  - id: b\n    block: test.add\n    in: {a: "${a.sum}"}\n',
        "CYCLE",
        "a",
        3,
    ),
    (
        "duplicate id",
        "id: x\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n  - {id: a, block: test.add, in: {a: 2}}\n",
        "DUPLICATE_NODE_ID",
        "a",
        4,
    ),
    (
        "when syntax",
        'id: x\ngraph:\n  - id: a\n    block: test.add\n    when: "1 >"\n    in: {a: 1}\n',
        "INVALID_EXPRESSION",
        "a",
        5,
    ),
    (
        "while without limit",
        'id: x\ngraph:\n  - id: w\n    type: loop\n    while:\n      condition: "true"\n    body: {plan: {graph: [{id: s, block: test.add, in: {a: 1}}]}}\n',
        "WHILE_MAX_ITERATIONS",
        "w",
        5,
    ),
    (
        "foreach not array",
        "id: x\ngraph:\n  - {id: n, block: test.add, in: {a: 1}}\n  - id: l\n    type: loop\n    foreach:\n      input: ${n.sum}\n    body: {plan: {graph: [{id: s, block: test.add, in: {a: 1}}]}}\n",
        "TYPE_MISMATCH",
        "l",
        7,
    ),
    (
        "loop body hidden",
        "id: x\ngraph:\n  - id: l\n    type: loop\n    foreach: {input: [1, 2]}\n    body: {plan: {graph: [{id: s, block: test.add, in: {a: 1}}]}}\n  - id: after\n    block: test.add\n    in:\n      a: ${s.sum}\n",
        "UNRESOLVED_REFERENCE",
        "after",
        10,
    ),
    (
        "loop export",
        "id: x\ngraph:\n  - id: l\n    type: loop\n    foreach: {input: [1]}\n    body:\n      plan:\n        graph: [{id: s, block: test.add, in: {a: 1}}]\n        exports:\n          - {from: q.sum, as: r}\n",
        "LOOP_UNKNOWN_EXPORT",
        None,
        10,
    ),
    (
        "loop collect",
        "id: x\ngraph:\n  - id: l\n    type: loop\n    foreach: {input: [1]}\n    body: {plan: {graph: [{id: s, block: test.add, in: {a: 1}}]}}\n    out:\n      collect: nothing\n",
        "LOOP_UNKNOWN_COLLECT",
        "l",
        8,
    ),
    (
        "loop var clash",
        "id: x\ngraph:\n  - id: l\n    type: loop\n    foreach:\n      input: [1]\n      itemVar: vars\n    body: {plan: {graph: [{id: s, block: test.add, in: {a: 1}}]}}\n",
        "LOOP_VAR_CONFLICT",
        "l",
        5,
    ),
    (
        "cycle through loop",
        'id: x\ngraph:\n  - id: l\n    type: loop\n    foreach: {input: [1]}\n    body: {plan: {graph: [{id: s, block: test.add, in: {a: "${l.r}"}}], exports: [{from: s.sum, as: r}]}}\n',
        "CYCLE",
        "l",
        3,
    ),
    (
        "subflow missing",
        "id: x\ngraph:\n  - id: s\n    type: subflow\n    call:\n      plan_id: nowhere\n",
        "SUBFLOW_NOT_FOUND",
        "s",
        6,
    ),
    (
        "policy node",
        "id: x\npolicy:\n  concurrency:\n    per_node:\n      ghost: 2\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n",
        "UNKNOWN_POLICY_NODE",
        None,
        5,
    ),
    (
        "var reference",
        "id: x\nvars:\n  v: ${a.sum}\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n",
        "INVALID_VAR_REFERENCE",
        None,
        3,
    ),
    (
        "config missing",
        "id: x\nvars:\n  v: ${config.nothing.here}\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n",
        "UNRESOLVED_REFERENCE",
        None,
        3,
    ),
    (
        "layout",
        "id: x\nui:\n  layout: [a, ghost]\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n",
        "UI_LAYOUT_UNKNOWN_NODE",
        "ghost",
        3,
    ),
    (
        "requirement duplicate",
        "id: x\ngraph:\n  - id: ask\n    block: ui.interactive_input\n    in:\n      mode: collect\n      requirements:\n        - {id: f, type: file, label: A}\n        - {id: f, type: file, label: B}\n",
        "DUPLICATE_REQUIREMENT_ID",
        "ask",
        9,
    ),
    (
        "requirement type",
        "id: x\ngraph:\n  - id: ask\n    block: ui.interactive_input\n    in:\n      mode: collect\n      requirements:\n        - {id: f, type: video, label: A}\n",
        "INVALID_REQUIREMENT",
        "ask",
        8,
    ),
    (
        "requirement conflict",
        "id: x\ngraph:\n  - id: ask1\n    block: ui.interactive_input\n    in:\n      mode: collect\n      requirements: [{id: f, type: file, label: A}]\n  - id: ask2\n    block: ui.interactive_input\n    in:\n      mode: collect\n      requirements:\n        - {id: f, type: text, label: B}\n",
        "REQUIREMENT_TYPE_CONFLICT",
        "ask2",
        13,
    ),
    (
        "process_llm schema",
        "id: x\ngraph:\n  - id: llm\n    block: ai.process_llm\n    in:\n      prompt: 要約\n      output_schema: {}\n",
        "PROCESS_LLM_SCHEMA",
        "llm",
        7,
    ),
    (
        "process_llm prompt",
        "id: x\ngraph:\n  - id: llm\n    block: ai.process_llm\n    in:\n      output_schema: {total: number}\n",
        "PROCESS_LLM_PROMPT",
        "llm",
        5,
    ),
]


@pytest.mark.parametrize(("rule", "text", "code", "node", "line"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_reports_code_node_and_line(
    registry: BlockRegistry,
    designs: Path,
    rule: str,
    text: str,
    code: str,
    node: str | None,
    line: int,
) -> None:
    assert validate_text(VALID, registry, designs_dir=designs, config={}, env={}).valid
    report = validate_text(text, registry, designs_dir=designs, config={}, env={})
    matching = [e for e in report.errors if e.code == code]
    assert matching, f"{rule}: expected {code}, got {[e.describe() for e in report.errors]}"
    issue = matching[0]
    assert issue.node_id == node
    assert issue.line == line, issue.describe()
    assert issue.message, "every error has a Japanese message"
    assert issue.hint, "and a hint"
    assert not report.valid


def test_all_errors_are_reported_at_once(registry: BlockRegistry, designs: Path) -> None:
    text = """\
id: many
graph:
  - {id: a, block: test.nope}
  - {id: b, block: test.add, in: {a: "${zz.x}", c: 1}}
  - {id: c, block: test.add, bogus: 1}
  - {id: d, block: test.add, in: {a: "${c.sum}"}}
"""
    report = validate_text(text, registry, designs_dir=designs, config={}, env={})
    codes = report.codes()
    assert {"UNKNOWN_BLOCK", "UNRESOLVED_REFERENCE", "UNKNOWN_INPUT", "PLAN_SCHEMA"} <= set(codes)
    # c failed its schema: its own error is reported, not again at every reference to it.
    assert not [e for e in report.errors if e.node_id == "d"]


def test_unused_outputs_and_missing_env_are_warnings(
    registry: BlockRegistry, designs: Path
) -> None:
    text = """\
id: warn
graph:
  - id: a
    block: test.add
    in: {a: 1}
    out: {sum: total}
  - {id: b, block: test.sleep, in: {value: "${env.KEIRI_TEST_UNSET}"}}
"""
    report = validate_text(text, registry, designs_dir=designs, config={}, env={})
    assert report.valid
    assert {w.code for w in report.warnings} == {"UNUSED_OUTPUT", "ENV_NOT_SET"}
    unused = next(w for w in report.warnings if w.code == "UNUSED_OUTPUT")
    assert (unused.node_id, unused.line) == ("a", 6)


def test_subflow_rules(registry: BlockRegistry, designs: Path) -> None:
    (designs / "sub.yaml").write_text(
        'id: sub\nvars: {x: null}\ngraph:\n  - {id: s, block: test.add, in: {a: "${vars.x}"}}\n'
        "exports: [{from: s.sum, as: total}]\n",
        encoding="utf-8",
    )
    (designs / "loop_a.yaml").write_text(
        "id: loop_a\ngraph:\n  - {id: call_b, type: subflow, call: {plan_id: loop_b}}\n",
        encoding="utf-8",
    )
    (designs / "loop_b.yaml").write_text(
        "id: loop_b\ngraph:\n  - {id: call_a, type: subflow, call: {plan_id: loop_a}}\n",
        encoding="utf-8",
    )
    text = """\
id: parent
graph:
  - id: s1
    type: subflow
    call: {plan_id: sub, inputs: {y: 1}}
    out: {exports: [{from: nothing, as: r}]}
  - {id: s2, type: subflow, call: {plan_id: loop_a}}
"""
    report = validate_text(text, registry, designs_dir=designs, config={}, env={})
    codes = report.codes()
    assert "SUBFLOW_UNKNOWN_INPUT" in codes
    assert "MISSING_REQUIRED_INPUT" in codes  # x has no default and is not passed
    assert "SUBFLOW_UNKNOWN_EXPORT" in codes
    assert "SUBFLOW_CYCLE" in codes


SEED_EXAMPLE = """\
apiVersion: v1
id: invoice_reconciliation
version: 0.2.0
vars:
  instruction: "請求書・入金明細を照合し差異を出力"
  output_config: ${config.task_configs.accounting_task_1.output_config}
policy:
  on_error: halt
  retries: 0
  concurrency:
    default_max_workers: 4
ui:
  layout: [collect_inputs, parse_evidence, process_llm, write_excel]
graph:
  - id: collect_inputs
    block: ui.interactive_input
    in:
      mode: mixed
      message: "照合に必要な入力を提供してください"
      requirements:
        - { id: evidence_zip, type: file,   label: "証跡ZIP",    accept: ".zip" }
        - { id: workbook,    type: file,   label: "Excel",      accept: ".xlsx" }
        - { id: proceed,     type: boolean, label: "実行してよい" }
    out:
      collected_data: collected
  - id: parse_evidence
    block: file.parse_zip_2tier
    when:
      expr: "${collect_inputs.collected.evidence_zip} != null"
    in:
      zip_bytes: ${collect_inputs.collected.evidence_zip}
    out:
      evidence_data: evidence
  - id: process_llm
    block: ai.process_llm
    in:
      evidence_data: ${parse_evidence.evidence}
      prompt: ${vars.instruction}
      output_schema:
        results:
          type: object
          properties:
            items:
              type: array
              items:
                type: object
                properties:
                  file: string
                  count: integer
        summary:
          type: object
          properties:
            total_files: integer
    out:
      results: results
      summary: summary
  - id: write_excel
    block: excel.write
    in:
      workbook: ${collect_inputs.collected.workbook}
      data: ${process_llm.results}
      output_config: ${vars.output_config}
    out:
      write_summary: write_summary
"""


def test_the_seed_invoice_example_validates(registry: BlockRegistry, designs: Path) -> None:
    config = {"task_configs": {"accounting_task_1": {"output_config": {"sheet": "差異"}}}}
    report = validate_text(SEED_EXAMPLE, registry, designs_dir=designs, config=config, env={})
    assert report.valid, [e.describe() for e in report.errors]
    # The final outputs nobody reads inside the plan: process_llm.summary, write_excel.write_summary.
    assert sorted((w.code, w.node_id) for w in report.warnings) == [
        ("UNUSED_OUTPUT", "process_llm"),
        ("UNUSED_OUTPUT", "write_excel"),
    ]
    without_config = validate_text(SEED_EXAMPLE, registry, designs_dir=designs, config={}, env={})
    assert without_config.codes() == ["UNRESOLVED_REFERENCE"]
    assert without_config.errors[0].line == 6


@pytest.mark.parametrize(
    ("node", "words"),
    [
        ("{id: c, block: test.add, bogus: 1}", "定義にない項目"),
        ("{block: test.add}", "必須の項目がありません"),
        ("{id: [1, 2], block: test.add}", "文字列"),
        (
            "{id: l, type: loop, foreach: {input: '${vars.xs}', max_concurrency: many},"
            " body: {plan: {graph: []}}}",
            "整数",
        ),
    ],
)
def test_a_plan_that_breaks_the_dsl_is_told_in_japanese(
    registry: BlockRegistry, designs: Path, node: str, words: str
) -> None:
    """Pydantic's English (Field required, Extra inputs…) never reaches the person."""
    report = validate_text(
        f"id: p\ngraph:\n  - {node}\n", registry, designs_dir=designs, config={}, env={}
    )
    schema = [e for e in report.errors if e.code in ("PLAN_SCHEMA", "UNKNOWN_NODE_TYPE")]
    assert schema, report.errors
    messages = " ".join(e.message for e in schema)
    assert words in messages
    assert not any(
        english in messages
        for english in ("Field required", "Extra inputs", "Input should", "valid")
    )
