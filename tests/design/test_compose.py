"""Composition of templates into plans (seed 004 §4): valid plans, or conflicts instead of guesses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from openpyxl import load_workbook

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.design.compose import ComposeResult, compose
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec, check_template
from keiri_agent.errors import BlockError
from keiri_agent.examples import example_answers, example_plan
from keiri_agent.plan import PlanRunner, dry_run_source, parse_source, validate_text

REGISTRY = BlockRegistry()
TEMPLATES = Path(__file__).resolve().parents[2] / "designs" / "templates"
RECONCILIATION = ["evidence_zip_invoices", "bank_statement", "invoice_payment"]
RECONCILIATION_SHEETS = ["照合結果", "差異", "未入金", "不明入金"]


@pytest.fixture(scope="module")
def library() -> TemplateLibrary:
    return TemplateLibrary.load(TEMPLATES, registry=REGISTRY)


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[PlanRunner]:
    with PlanRunner(REGISTRY, runs_dir=tmp_path / "runs", designs_dir=tmp_path) as plan_runner:
        yield plan_runner


def build(library: TemplateLibrary, ids: list[str], **kwargs: Any) -> ComposeResult:
    return compose([library.get(i) for i in ids], plan_id="generated/test", **kwargs)


def plan_text(result: ComposeResult) -> str:
    assert result.plan is not None, [c.message for c in result.conflicts]
    return yaml.safe_dump(result.plan, allow_unicode=True, sort_keys=False)


def assert_valid_and_dry_runs(result: ComposeResult, tmp_path: Path) -> None:
    text = plan_text(result)
    options: dict[str, Any] = {"designs_dir": tmp_path, "config": {}, "env": {}}
    report = validate_text(text, REGISTRY, **options)
    assert report.errors == [], [i.message for i in report.errors]
    assert report.warnings == [], [i.message for i in report.warnings]
    dry = dry_run_source(parse_source(text), REGISTRY, **options)
    assert dry.ok, [f.message for f in dry.findings]


def template(tid: str, **data: Any) -> TemplateSpec:
    """A small valid template built in the test (checked like a file would be)."""
    body: dict[str, Any] = {"id": tid, "title": f"テスト {tid}", "category": "check"}
    body.setdefault("graph_snippet", [{"id": "pick", "block": "table.filter", "in": {}}])
    body.update(data)
    spec = TemplateSpec.model_validate(body)
    assert check_template(spec, REGISTRY) == []
    return spec


def filter_of(table: str) -> list[dict[str, Any]]:
    return [{"id": "pick", "block": "table.filter", "in": {"table": table}}]


def kinds(result: ComposeResult) -> list[str]:
    return [c.kind for c in result.conflicts]


# --- the invoice reconciliation example, composed ----------------------------------------------


def test_reconciliation_templates_compose_into_a_plan_that_validates_and_dry_runs(
    library: TemplateLibrary, tmp_path: Path
) -> None:
    result = build(library, [*RECONCILIATION, "reconciliation_workbook"])
    assert result.ok
    assert result.conflicts == []
    assert result.unbound_imports == []
    assert result.bindings == {
        "invoice_payment.invoices": "${evidence_zip_invoices_extract_invoices.invoices}",
        "invoice_payment.deposits": "${bank_statement_read_bank.deposits}",
        "reconciliation_workbook.matched": "${invoice_payment_reconcile.matched}",
        "reconciliation_workbook.differences": "${invoice_payment_reconcile.differences}",
        "reconciliation_workbook.unmatched_invoices": "${invoice_payment_reconcile.unmatched_left}",
        "reconciliation_workbook.unmatched_deposits": "${invoice_payment_reconcile.unmatched_right}",
    }
    plan = result.plan
    assert plan is not None
    assert plan["vars"] == {
        "amount_tolerance": 1000,
        "date_tolerance_days": 5,
        "reconciliation_output": "照合結果.xlsx",
    }
    assert plan["ui"]["layout"] == [node["id"] for node in plan["graph"]]
    assert plan["ui"]["layout"][0] == "evidence_zip_invoices_collect_invoices"
    reconcile = next(n for n in plan["graph"] if n["id"] == "invoice_payment_reconcile")
    assert reconcile["in"]["left"] == "${evidence_zip_invoices_extract_invoices.invoices}"
    assert reconcile["in"]["amount"]["tolerance"] == "${vars.amount_tolerance}"
    assert {"from": "reconciliation_workbook_write_result.report", "as": "workbook"} in plan[
        "exports"
    ]
    assert {"from": "invoice_payment_reconcile.summary", "as": "summary"} in plan["exports"]
    assert_valid_and_dry_runs(result, tmp_path)


def test_three_templates_already_make_a_valid_plan(
    library: TemplateLibrary, tmp_path: Path
) -> None:
    assert_valid_and_dry_runs(build(library, RECONCILIATION), tmp_path)


def test_composed_reconciliation_writes_the_same_workbook_as_the_example(
    library: TemplateLibrary, runner: PlanRunner
) -> None:
    result = build(library, [*RECONCILIATION, "reconciliation_workbook"])
    files = example_answers("invoice_reconciliation")["collect_inputs"]
    answers = {
        "evidence_zip_invoices_collect_invoices": {"evidence_zip": files["evidence_zip"]},
        "bank_statement_collect_bank": {"bank_statement": files["bank_statement"]},
    }
    composed = runner.run(parse_source(plan_text(result)), answers=answers)
    assert composed.status == "success", composed.error and composed.error.to_dict()
    example = runner.run(
        example_plan("invoice_reconciliation"), answers=example_answers("invoice_reconciliation")
    )
    assert example.status == "success"
    ours = composed.outputs["reconciliation_workbook_write_result"]["report"]["output_path"]
    theirs = example.outputs["write_result"]["report"]["output_path"]
    for sheet in RECONCILIATION_SHEETS:
        assert sheet_rows(ours, sheet) == sheet_rows(theirs, sheet), sheet
    summary = composed.outputs["invoice_payment_reconcile"]["summary"]
    assert (summary["matched"], summary["differences"]) == (3, 2)


def sheet_rows(path: str, sheet: str) -> list[tuple[Any, ...]]:
    book = load_workbook(path)
    try:
        return [tuple(row) for row in book[sheet].iter_rows(values_only=True)]
    finally:
        book.close()


@pytest.mark.parametrize(
    ("ids", "values"),
    [
        (["invoice_list", "duplicate_invoices"], {"duplicate_keys": ["請求日", "金額"]}),
        (["sales_file", "monthly_sales"], {}),
    ],
)
def test_other_example_flows_compose(
    library: TemplateLibrary, tmp_path: Path, ids: list[str], values: dict[str, Any]
) -> None:
    result = build(library, ids, vars_values=values)
    assert result.unbound_imports == []
    assert_valid_and_dry_runs(result, tmp_path)


def test_each_shipped_template_alone_validates_with_its_imports_as_vars(
    library: TemplateLibrary, tmp_path: Path
) -> None:
    for spec in library.list():
        result = compose([spec], plan_id=f"generated/{spec.id}")
        assert result.ok, (spec.key, result.conflicts)
        assert result.unbound_imports == list(spec.imports)
        plan = result.plan
        assert plan is not None
        assert all(plan["vars"][name] is None for name in spec.imports)
        report = validate_text(plan_text(result), REGISTRY, designs_dir=tmp_path, config={}, env={})
        assert report.errors == [], (spec.key, [i.message for i in report.errors])


# --- binding rules ---------------------------------------------------------------------------


def test_an_explicit_binding_wins_over_the_same_name_export(
    library: TemplateLibrary, tmp_path: Path
) -> None:
    ids = ["evidence_zip_invoices", "duplicate_invoices", "bank_statement", "invoice_payment"]
    automatic = build(library, ids)
    assert automatic.bindings["invoice_payment.invoices"] == (
        "${evidence_zip_invoices_extract_invoices.invoices}"
    )
    chosen = build(
        library, ids, bindings={"invoice_payment.invoices": "duplicate_invoices.unique_invoices"}
    )
    assert chosen.bindings["invoice_payment.invoices"] == (
        "${duplicate_invoices_find_duplicates.unique}"
    )
    assert chosen.plan is not None
    reconcile = next(n for n in chosen.plan["graph"] if n["id"] == "invoice_payment_reconcile")
    assert reconcile["in"]["left"] == "${duplicate_invoices_find_duplicates.unique}"
    assert_valid_and_dry_runs(chosen, tmp_path)


def test_explicit_bindings_to_vars_and_to_references(library: TemplateLibrary) -> None:
    result = build(
        library,
        ["bank_statement", "invoice_payment"],
        bindings={
            "invoice_payment.invoices": "vars.invoice_rows",
            "invoice_payment.deposits": "${bank_statement_read_bank.deposits}",
        },
        vars_values={"invoice_rows": [{"取引先": "A", "請求金額": 1, "支払期限": "2025-01-31"}]},
    )
    assert result.ok
    assert result.unbound_imports == ["invoice_rows"]
    assert result.plan is not None
    assert result.plan["vars"]["invoice_rows"][0]["取引先"] == "A"
    reconcile = next(n for n in result.plan["graph"] if n["id"] == "invoice_payment_reconcile")
    assert reconcile["in"]["left"] == "${vars.invoice_rows}"
    assert reconcile["in"]["right"] == "${bank_statement_read_bank.deposits}"


def test_an_unbound_import_becomes_a_declared_var(library: TemplateLibrary) -> None:
    result = build(library, ["bank_statement", "invoice_payment"], bindings={})
    assert kinds(result) == ["ambiguous"]  # deposits is records too: maybe the invoices?
    result = build(library, ["invoice_payment"], vars_values={"amount_tolerance": 660})
    assert result.ok
    assert result.unbound_imports == ["invoices", "deposits"]
    assert result.bindings == {
        "invoice_payment.invoices": "${vars.invoices}",
        "invoice_payment.deposits": "${vars.deposits}",
    }
    assert result.plan is not None
    assert result.plan["vars"] == {
        "invoices": None,
        "deposits": None,
        "amount_tolerance": 660,
        "date_tolerance_days": 5,
    }
    defaulted = compose(
        [
            template(
                "needs",
                imports={"rows": {"type": "records"}},
                graph_snippet=filter_of("${imports.rows}"),
                vars_defaults={"rows": [{"金額": 1}]},
            )
        ],
        plan_id="generated/defaulted",
    )
    assert defaulted.plan is not None
    assert defaulted.plan["vars"] == {"rows": [{"金額": 1}]}


def test_two_exports_with_the_imports_name_are_ambiguous(library: TemplateLibrary) -> None:
    result = build(library, ["invoice_list", "evidence_zip_invoices", "duplicate_invoices"])
    assert result.plan is None
    assert not result.ok
    assert sorted(kinds(result)) == ["ambiguous", "duplicate_export"]
    ambiguous = next(c for c in result.conflicts if c.kind == "ambiguous")
    assert "invoice_list.invoices" in ambiguous.message
    assert "evidence_zip_invoices.invoices" in ambiguous.message
    assert "--bind duplicate_invoices.invoices=invoice_list.invoices" in ambiguous.hint
    assert ambiguous.templates == ["duplicate_invoices", "invoice_list", "evidence_zip_invoices"]


def test_same_type_exports_under_other_names_are_ambiguous_until_bound(
    library: TemplateLibrary, tmp_path: Path
) -> None:
    result = build(library, ["bank_statement", "excel_report"])
    assert result.plan is None
    assert kinds(result) == ["ambiguous"]
    assert "bank_statement.deposits" in result.conflicts[0].message
    assert "excel_report.table" in result.conflicts[0].hint
    bound = build(
        library,
        ["bank_statement", "excel_report"],
        bindings={"excel_report.table": "bank_statement.deposits"},
    )
    assert_valid_and_dry_runs(bound, tmp_path)


def test_a_same_name_export_of_another_type_is_a_type_mismatch() -> None:
    producer = template(
        "producer",
        exports={"total": {"type": "object", "from": "pick.summary"}},
        graph_snippet=filter_of("$${literal}"),
    )
    consumer = template(
        "consumer",
        imports={"total": {"type": "records"}},
        graph_snippet=filter_of("${imports.total}"),
    )
    result = compose([producer, consumer], plan_id="generated/mismatch")
    assert result.plan is None
    assert kinds(result) == ["type_mismatch"]
    conflict = result.conflicts[0]
    assert conflict.templates == ["consumer", "producer"]
    assert "表型" in conflict.message
    assert "まとまった値型" in conflict.message
    explicit = compose(
        [producer, consumer],
        plan_id="generated/mismatch",
        bindings={"consumer.total": "producer.total"},
    )
    assert kinds(explicit) == ["type_mismatch"]


def test_a_duplicate_export_alias_is_a_conflict_until_renamed(
    library: TemplateLibrary, tmp_path: Path
) -> None:
    ids = [*RECONCILIATION, "reconciliation_workbook", "excel_report"]
    table = {"excel_report.table": "invoice_payment.differences"}
    result = build(library, ids, bindings=table)
    assert result.plan is None
    assert kinds(result) == ["duplicate_export"]
    conflict = result.conflicts[0]
    assert "（workbook）が、Plan の出力として同じ名前" in conflict.message
    assert conflict.templates == ["reconciliation_workbook", "excel_report"]
    assert "rename_exports" in conflict.hint
    assert "使う出力も指定" in conflict.hint
    renamed = build(
        library, ids, bindings=table, rename_exports={"excel_report.workbook": "differences_book"}
    )
    assert renamed.plan is not None
    assert {"from": "excel_report_write_table.report", "as": "differences_book"} in renamed.plan[
        "exports"
    ]
    assert_valid_and_dry_runs(renamed, tmp_path)


def test_different_defaults_for_one_var_are_a_conflict_unless_a_value_is_given() -> None:
    a = template("first", vars_defaults={"limit": 1}, graph_snippet=filter_of("${vars.limit}"))
    b = template("second", vars_defaults={"limit": 2}, graph_snippet=filter_of("${vars.limit}"))
    result = compose([a, b], plan_id="generated/vars")
    assert kinds(result) == ["var_conflict"]
    assert "vars_values" in result.conflicts[0].hint
    decided = compose([a, b], plan_id="generated/vars", vars_values={"limit": 3})
    assert decided.plan is not None
    assert decided.plan["vars"] == {"limit": 3}
    same = compose(
        [
            a,
            template("third", vars_defaults={"limit": 1}, graph_snippet=filter_of("${vars.limit}")),
        ],
        plan_id="generated/v",
    )
    assert same.plan is not None
    assert same.plan["vars"] == {"limit": 1}


def test_bad_bindings_and_repeated_templates_are_conflicts(library: TemplateLibrary) -> None:
    unknown = build(library, ["invoice_payment"], bindings={"invoice_payment.invoice": "vars.x"})
    assert "unknown_binding" in kinds(unknown)
    assert "invoice_payment.invoices" in unknown.conflicts[0].hint
    for expr in (
        "bank_statement.nothing",
        "no dots",
        "${a.b} and ${c.d}",
        "invoice_payment.matched",
    ):
        bad = build(
            library,
            ["bank_statement", "invoice_payment"],
            bindings={"invoice_payment.invoices": expr, "invoice_payment.deposits": "vars.d"},
        )
        assert kinds(bad) == ["invalid_binding"], expr
        assert "bank_statement.deposits" in bad.conflicts[0].hint
    twice = build(library, ["bank_statement", "bank_statement"])
    assert twice.plan is None
    assert kinds(twice) == ["duplicate_template"]


def test_compose_refuses_no_templates_and_bad_plan_ids(library: TemplateLibrary) -> None:
    with pytest.raises(BlockError, match="テンプレートが指定されていません"):
        compose([], plan_id="generated/x")
    with pytest.raises(BlockError, match="Plan の id"):
        compose([library.get("bank_statement")], plan_id="bad id")


# --- structural rewriting ------------------------------------------------------------------


def test_references_are_rewritten_by_scope_not_by_text(tmp_path: Path) -> None:
    """Node ids are prefixed in references, conditions and loop exports; vars, loop variables,
    escapes and plain text that happen to spell a node id are left alone."""
    looped = template(
        "looped",
        imports={"groups": {"type": "any"}},
        vars_defaults={"pick": 0, "label": "pick と item の一覧"},
        exports={"picked": {"type": "any", "from": "each.rows"}},
        graph_snippet=[
            {
                "id": "each",
                "type": "loop",
                "foreach": {"input": "${imports.groups}", "itemVar": "item"},
                "body": {
                    "plan": {
                        "graph": [
                            {
                                "id": "pick",
                                "block": "table.filter",
                                "in": {
                                    "table": "${item}",
                                    "conditions": [
                                        {"column": "金額", "op": "gt", "value": "${vars.pick}"}
                                    ],
                                },
                            }
                        ],
                        "exports": [{"from": "pick.rows", "as": "rows"}],
                    }
                },
                "out": {"collect": "rows"},
            },
            {
                "id": "report",
                "block": "report.markdown",
                "description": "each と pick の結果",
                "when": "${each.rows.length} > 0",
                "in": {
                    "title": "${vars.label}",
                    "template": "each: {{ n }} 件 $${each.rows}",
                    "data": {"n": "${each.rows.length}", "first": "${each.rows.0}"},
                },
            },
        ],
    )
    result = compose([looped], plan_id="generated/looped", vars_values={"groups": [[{"金額": 5}]]})
    plan = result.plan
    assert plan is not None
    loop, report = plan["graph"]
    assert loop["id"] == "looped_each"
    assert loop["foreach"] == {"input": "${vars.groups}", "itemVar": "item"}
    body = loop["body"]["plan"]
    assert body["graph"][0]["id"] == "looped_pick"
    assert body["graph"][0]["in"]["table"] == "${item}"
    assert body["graph"][0]["in"]["conditions"][0]["value"] == "${vars.pick}"
    assert body["exports"] == [{"from": "looped_pick.rows", "as": "rows"}]
    assert loop["out"] == {"collect": "rows"}
    assert report["id"] == "looped_report"
    assert report["description"] == "each と pick の結果"
    assert report["when"] == "${looped_each.rows.length} > 0"
    assert report["in"]["template"] == "each: {{ n }} 件 $${each.rows}"
    assert report["in"]["data"] == {
        "n": "${looped_each.rows.length}",
        "first": "${looped_each.rows.0}",
    }
    assert plan["vars"]["label"] == "pick と item の一覧"
    assert plan["exports"] == [{"from": "looped_each.rows", "as": "picked"}]
    report_issues = validate_text(
        yaml.safe_dump(plan, allow_unicode=True), REGISTRY, designs_dir=tmp_path, config={}, env={}
    )
    assert report_issues.errors == [], [i.message for i in report_issues.errors]


def test_prefix_collisions_and_unparsable_snippets_are_conflicts_not_bad_plans() -> None:
    a = template("a", graph_snippet=[{"id": "b_c", "block": "table.filter", "in": {}}])
    ab = template("a_b", graph_snippet=[{"id": "c", "block": "table.filter", "in": {}}])
    collided = compose([a, ab], plan_id="generated/collide")
    assert collided.plan is None
    assert kinds(collided) == ["duplicate_node"]
    assert "'a_b_c'" in collided.conflicts[0].message
    unchecked = TemplateSpec.model_validate(
        {"id": "raw", "title": "未検証", "category": "check", "graph_snippet": [{"id": "x"}]}
    )
    broken = compose([unchecked], plan_id="generated/raw")
    assert broken.plan is None
    assert kinds(broken) == ["invalid_plan"]
