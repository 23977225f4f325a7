"""Dry runs: samples flow through the plan, every problem is a finding, no block ever runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan import DryRunReport, Plan, dry_run_source, parse_source
from keiri_agent.plan._dryrun.dryrun import dry_run


class NeverRun(ProcessingBlock):
    """The entry point of every test block: a dry run that executed one would fail loudly."""

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        raise AssertionError("a dry run executed a block")


class RecordingRegistry(BlockRegistry):
    """Remembers every block it is asked to load (a dry run must ask for none)."""

    def __init__(self, spec_dirs: list[Path]) -> None:
        super().__init__(spec_dirs, builtin=False)
        self.loaded: list[str] = []

    def load(self, ref: str) -> Any:
        self.loaded.append(ref)
        return super().load(ref)


ENTRY = "tests.plan.test_dryrun:NeverRun"
SPECS: dict[str, dict[str, Any]] = {
    "demo.extract": {
        "inputs": {"path": {"type": "string", "required": True, "examples": ["a.pdf"]}},
        "outputs": {
            "records": {
                "type": "array",
                "dry_run": {"samples": [[{"amount": 100}, {"amount": 250}]]},
            },
            # No properties declared: only the sample shows that pages is text.
            "meta": {"type": "object", "dry_run": {"samples": [{"pages": "2", "title": "請求書"}]}},
        },
    },
    "demo.number": {
        "inputs": {"value": {"type": "number", "required": True}},
        "outputs": {"doubled": {"type": "number", "dry_run": {"samples": [200]}}},
    },
    "demo.text": {
        "inputs": {
            "text": {"type": "string", "required": True},
            "style": {"type": "string", "default": "plain"},
        },
        "outputs": {"echoed": {"type": "string", "examples": ["ok"]}},
    },
    "demo.flag": {"outputs": {"flag": {"type": "boolean", "dry_run": {"samples": [False]}}}},
    "demo.empty": {"outputs": {"items": {"type": "array", "dry_run": {"samples": [[]]}}}},
    "demo.nosample": {"outputs": {"raw": {"type": "object"}}},
    "demo.plain": {  # an input without any declared sample
        "inputs": {"path": {"type": "string", "required": True}},
        "outputs": {"done": {"type": "boolean", "default": True}},
    },
}


@pytest.fixture
def registry(tmp_path: Path) -> RecordingRegistry:
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    for block_id, body in SPECS.items():
        spec = {
            "id": block_id,
            "version": "1.0.0",
            "entrypoint": ENTRY,
            "category": "demo",
            "description": "テスト用",
            **body,
        }
        (spec_dir / f"{block_id}.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True))
    return RecordingRegistry([spec_dir])


@pytest.fixture
def designs(tmp_path: Path) -> Path:
    path = tmp_path / "designs"
    path.mkdir()
    return path


def make_plan(graph: list[dict[str, Any]], **extra: Any) -> Plan:
    return Plan.model_validate({"id": "demo", "graph": graph, **extra})


def run(
    plan: Plan,
    registry: RecordingRegistry,
    designs: Path,
    env: dict[str, str] | None = None,
    **kwargs: Any,
) -> DryRunReport:
    report = dry_run(plan, registry, designs_dir=designs, config={}, env=env or {}, **kwargs)
    assert registry.loaded == []  # no block was even imported, let alone run
    return report


EXTRACT = {"id": "extract", "block": "demo.extract", "in": {"path": "in.pdf"}}


def test_success_reports_inputs_and_outputs_of_every_node(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [
            {"id": "show", "block": "demo.text", "in": {"text": "${extract.meta.title}"}},
            {**EXTRACT, "out": {"records": "rows"}},
            {"id": "double", "block": "demo.number", "in": {"value": "${extract.rows.1.amount}"}},
        ]
    )
    report = run(plan, registry, designs)
    assert report.ok, report.findings
    assert [n.node_id for n in report.nodes] == ["extract", "show", "double"]  # by dependency
    extract, show, double = report.nodes
    assert extract.block == "demo.extract@1.0.0"
    assert extract.outputs["rows"] == [{"amount": 100}, {"amount": 250}]  # the alias, not the port
    assert show.inputs == {"text": "請求書", "style": "plain"}  # the port default fills in
    assert double.inputs == {"value": 250}
    assert all(n.status == "ok" for n in report.nodes)
    json.dumps(report.to_dict(), ensure_ascii=False)


def test_the_blocks_themselves_would_fail_if_run(registry: RecordingRegistry) -> None:
    block = registry.load("demo.extract")
    with pytest.raises(AssertionError, match="executed"):
        block.run({}, None)  # type: ignore[arg-type]


def test_an_output_without_sample_fails_explicitly(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [
            {"id": "raw", "block": "demo.nosample"},
            {"id": "show", "block": "demo.text", "in": {"text": "${raw.raw.name}"}},
        ]
    )
    report = run(plan, registry, designs)
    assert not report.ok
    assert report.codes() == ["DRY_RUN_NO_SAMPLE"]  # once, at its source: no cascade below
    finding = report.findings[0]
    assert finding.node_id == "raw"
    assert "raw" in finding.message
    assert "dry_run" in finding.hint
    raw, show = report.nodes
    assert raw.status == "failed"
    assert raw.outputs["raw"] != {}  # labelled unknown, never an invented value
    assert any("検査していません" in note for note in show.notes)


def test_a_reference_into_a_sample_without_that_key(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [EXTRACT, {"id": "show", "block": "demo.text", "in": {"text": "${extract.meta.vendor}"}}]
    )
    report = run(plan, registry, designs)
    assert report.codes() == ["UNRESOLVED_REFERENCE"]
    finding = report.findings[0]
    assert finding.node_id == "show"
    assert "${extract.meta.vendor}" in finding.message
    assert "pages" in finding.hint  # the keys the sample does have
    assert report.node("show").status == "failed"  # type: ignore[union-attr]


def test_a_sample_of_the_wrong_type_for_the_next_input(
    registry: RecordingRegistry, designs: Path
) -> None:
    text = yaml.safe_dump(
        {
            "id": "demo",
            "graph": [
                EXTRACT,
                {"id": "double", "block": "demo.number", "in": {"value": "${extract.meta.pages}"}},
            ],
        }
    )
    # The static validator cannot see it (meta declares no properties); the samples can.
    report = dry_run_source(parse_source(text), registry, designs_dir=designs, config={}, env={})
    assert report.codes() == ["TYPE_MISMATCH"]
    assert report.findings[0].node_id == "double"
    assert '文字列 "2" です' in report.findings[0].message
    assert "number" in report.findings[0].message


def test_when_false_on_samples_skips_the_node(registry: RecordingRegistry, designs: Path) -> None:
    plan = make_plan(
        [
            {"id": "check", "block": "demo.flag"},
            {
                "id": "show",
                "block": "demo.text",
                "when": "${check.flag} == true",
                "in": {"text": "x"},
            },
        ]
    )
    report = run(plan, registry, designs)
    assert report.ok
    show = report.node("show")
    assert show is not None
    assert show.status == "skipped"
    assert show.outputs == {"echoed": None}
    assert any("サンプル値" in note for note in show.notes)


def test_an_invalid_condition_is_a_finding_not_a_crash(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [
            {"id": "check", "block": "demo.flag"},
            {"id": "show", "block": "demo.text", "when": "${check.flag} > 1", "in": {"text": "x"}},
        ]
    )
    report = run(plan, registry, designs)
    assert report.codes() == ["INVALID_EXPRESSION"]
    assert report.node("show").status == "failed"  # type: ignore[union-attr]


def test_foreach_runs_the_body_once_on_the_first_sample_element(
    registry: RecordingRegistry, designs: Path
) -> None:
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${extract.records}", "itemVar": "rec", "indexVar": "i"},
        "body": {
            "plan": {
                "graph": [
                    {"id": "double", "block": "demo.number", "in": {"value": "${rec.amount}"}}
                ],
                "exports": [{"from": "double.doubled", "as": "d"}],
            }
        },
        "out": {"collect": "d"},
    }
    after = {"id": "show", "block": "demo.text", "in": {"text": "合計 ${each.d}"}}
    report = run(make_plan([after, loop, EXTRACT]), registry, designs)
    assert report.ok, report.findings
    assert [n.node_id for n in report.nodes] == ["extract", "each", "each/double", "show"]
    assert report.node("each/double").inputs == {"value": 100}  # type: ignore[union-attr]
    each = report.node("each")
    assert each is not None
    assert each.outputs == {"d": [200]}
    assert any("2 件中" in note for note in each.notes)
    assert report.node("show").inputs["text"] == "合計 [200]"  # type: ignore[union-attr]


def test_foreach_over_an_empty_sample_cannot_exercise_the_body(
    registry: RecordingRegistry, designs: Path
) -> None:
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": "${source.items}", "itemVar": "it"},
        "body": {
            "plan": {"graph": [{"id": "show", "block": "demo.text", "in": {"text": "${it}"}}]}
        },
    }
    report = run(make_plan([{"id": "source", "block": "demo.empty"}, loop]), registry, designs)
    assert report.codes() == ["DRY_RUN_NO_SAMPLE"]
    assert report.findings[0].node_id == "each"


def test_while_body_once_and_the_condition_in_the_report(
    registry: RecordingRegistry, designs: Path
) -> None:
    loop = {
        "id": "retry",
        "type": "loop",
        "while": {"condition": {"expr": "${approve.flag} != true"}, "max_iterations": 3},
        "body": {"plan": {"graph": [{"id": "approve", "block": "demo.flag"}]}},
    }
    report = run(make_plan([loop]), registry, designs)
    assert report.ok, report.findings
    assert [n.node_id for n in report.nodes] == ["retry", "retry/approve"]
    notes = " ".join(report.nodes[0].notes)
    assert "初回判定（本体の出力は null）: 真" in notes


def test_subflow_under_the_designs_dir(registry: RecordingRegistry, designs: Path) -> None:
    (designs / "common").mkdir()
    sub = {
        "id": "common/echo",
        "vars": {"text": None},
        "graph": [{"id": "echo", "block": "demo.text", "in": {"text": "${vars.text}"}}],
        "exports": [{"from": "echo.echoed", "as": "result"}],
    }
    (designs / "common" / "echo.yaml").write_text(yaml.safe_dump(sub, allow_unicode=True))
    call = {
        "id": "call",
        "type": "subflow",
        "call": {"plan_id": "common/echo", "inputs": {"text": "${extract.meta.title}"}},
        "out": {
            "exports": [{"from": "result", "as": "r"}, {"from": "echo.echoed", "as": "direct"}]
        },
    }
    after = {"id": "show", "block": "demo.text", "in": {"text": "${call.r}/${call.direct}"}}
    report = run(make_plan([EXTRACT, call, after]), registry, designs)
    assert report.ok, report.findings
    assert [n.node_id for n in report.nodes] == ["extract", "call", "call/echo", "show"]
    assert report.node("call/echo").inputs["text"] == "請求書"  # type: ignore[union-attr]
    assert report.node("call").outputs == {"r": "ok", "direct": "ok"}  # type: ignore[union-attr]
    assert report.node("show").inputs["text"] == "ok/ok"  # type: ignore[union-attr]


def test_a_missing_subflow_is_a_finding(registry: RecordingRegistry, designs: Path) -> None:
    call = {"id": "call", "type": "subflow", "call": {"plan_id": "nowhere"}}
    report = run(make_plan([call]), registry, designs)
    assert report.codes() == ["SUBFLOW_NOT_FOUND"]


def test_vars_override_and_null_vars_use_the_input_sample(
    registry: RecordingRegistry, designs: Path
) -> None:
    graph = [{"id": "extract", "block": "demo.extract", "in": {"path": "${vars.file}"}}]
    plan = make_plan(graph, vars={"file": None})
    sampled = run(plan, registry, designs)
    assert sampled.ok
    assert sampled.nodes[0].inputs == {"path": "a.pdf"}  # the port's declared example
    assert any("vars.file" in note for note in sampled.nodes[0].notes)
    given = run(plan, registry, designs, vars_override={"file": "b.pdf"})
    assert given.ok
    assert given.nodes[0].inputs == {"path": "b.pdf"}
    typo = run(plan, registry, designs, vars_override={"fiel": "b.pdf"})
    assert typo.codes() == ["UNKNOWN_VAR"]


def test_a_null_var_into_an_input_without_sample(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [{"id": "p", "block": "demo.plain", "in": {"path": "${vars.file}"}}], vars={"file": None}
    )
    report = run(plan, registry, designs)
    assert report.codes() == ["DRY_RUN_NO_SAMPLE"]
    # A node without a description is named by its block's (「テスト用」), never by its id.
    assert "「テスト用」の入力 'path' に値もサンプルもありません" in report.findings[0].message


def test_env_values_resolve_hidden_and_missing_ones_are_findings(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [
            {"id": "a", "block": "demo.text", "in": {"text": "${vars.token}"}},
            {"id": "b", "block": "demo.text", "in": {"text": "${env.MISSING_ONE}"}},
        ],
        vars={"token": "${env.DEMO_TOKEN}"},
    )
    report = run(plan, registry, designs, env={"DEMO_TOKEN": "s3cret"})
    assert report.codes() == ["UNRESOLVED_REFERENCE"]
    assert report.findings[0].node_id == "b"
    assert "MISSING_ONE" in report.findings[0].message
    assert "s3cret" not in json.dumps(report.to_dict(), ensure_ascii=False)


def test_vars_resolve_up_front_like_the_runner(registry: RecordingRegistry, designs: Path) -> None:
    graph = [{"id": "a", "block": "demo.text", "in": {"text": "x"}}]
    plan = make_plan(graph, vars={"unused": "${config.missing.key}"})
    report = run(plan, registry, designs)
    assert report.codes() == ["UNRESOLVED_REFERENCE"]  # the runner fails on it before any node
    assert report.findings[0].node_id is None
    assert report.findings[0].path == "vars.unused"


def test_a_validation_error_short_circuits(registry: RecordingRegistry, designs: Path) -> None:
    text = "id: demo\ngraph:\n  - id: x\n    block: demo.unknown\n"
    report = dry_run_source(parse_source(text), registry, designs_dir=designs, config={}, env={})
    assert not report.ok
    assert report.codes() == ["UNKNOWN_BLOCK"]
    assert report.findings[0].line == 4
    assert report.nodes == []
    assert registry.loaded == []


def test_a_cycle_reaching_the_dry_run_is_reported(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [
            {"id": "a", "block": "demo.text", "in": {"text": "${b.echoed}"}},
            {"id": "b", "block": "demo.text", "in": {"text": "${a.echoed}"}},
        ]
    )
    report = run(plan, registry, designs)
    assert report.codes()[0] == "PLAN_INVALID"
    assert "循環" in report.findings[0].message
    assert len(report.nodes) == 2  # still walked, every node reported


UI_PLAN = """
apiVersion: v1
id: ui_dry
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - { id: ledger, type: file, label: 台帳, accept: .xlsx }
        - { id: month, type: select, options: ["2025-01", "2025-02"] }
        - { id: sheet, type: text, default: 明細 }
    out:
      collected_data: got
  - id: use
    block: excel.write
    in:
      workbook: ${ask.got.ledger}
      data: [{ month: "${ask.got.month}", sheet: "${ask.got.sheet}" }]
"""


def test_a_ui_nodes_collected_data_has_exactly_the_plans_requirement_ids(tmp_path: Path) -> None:
    registry = BlockRegistry()
    options: dict[str, Any] = {"designs_dir": tmp_path, "config": {}, "env": {}}
    report = dry_run_source(parse_source(UI_PLAN), registry, **options)
    assert report.ok, report.findings
    ask = report.node("ask")
    assert ask is not None
    assert ask.outputs["got"] == {
        "ledger": "path/to/file.xlsx",
        "month": "2025-01",
        "sheet": "明細",
    }
    # A reference to an id the node does not ask for is caught by the dry run.
    broken = dry_run_source(
        parse_source(UI_PLAN.replace("${ask.got.ledger}", "${ask.got.workbook}")),
        registry,
        **options,
    )
    assert not broken.ok
    (finding,) = broken.findings
    assert finding.code == "UNRESOLVED_REFERENCE"
    assert "workbook" in finding.message


def test_a_finding_about_a_var_names_it_by_its_ui_vars_label(
    registry: RecordingRegistry, designs: Path
) -> None:
    plan = make_plan(
        [{"id": "p", "block": "demo.plain", "in": {"path": "${vars.file}"}}],
        vars={"file": None},
        ui={"vars": {"file": "読み込む請求書"}},
    )
    report = run(plan, registry, designs)
    (finding,) = report.findings
    assert finding.code == "DRY_RUN_NO_SAMPLE"
    assert "設定値「読み込む請求書」（vars.file） が null です" in finding.message
    assert finding.hint.startswith("設定値「読み込む請求書」（vars.file） に値を与える")
    typo = run(plan, registry, designs, vars_override={"fiel": "b.pdf"})
    (unknown,) = [f for f in typo.findings if f.code == "UNKNOWN_VAR"]
    assert "定義されている vars: file（読み込む請求書）" in unknown.hint
