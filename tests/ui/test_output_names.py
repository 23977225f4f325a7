"""Result tables are named as the plan's workbook names them, else by their block spec's words:
the names the 実行 page's result tabs carry instead of internal port names."""

from __future__ import annotations

from keiri_agent.blocks.registry import default_registry
from keiri_agent.examples import example_plan
from keiri_agent.plan import Plan, load_source
from keiri_agent.ui.output_names import output_names


def _names(example: str) -> dict[tuple[str, str], str]:
    plan = Plan.model_validate(load_source(example_plan(example)).raw)
    return output_names(plan, default_registry())


def test_tables_written_to_workbook_sheets_carry_the_sheet_names() -> None:
    names = _names("invoice_reconciliation")

    assert names[("reconcile", "matched")] == "照合結果"
    assert names[("reconcile", "differences")] == "差異"
    assert names[("reconcile", "unmatched_left")] == "未入金"
    assert names[("reconcile", "unmatched_right")] == "不明入金"


def test_a_sheet_in_the_write_settings_names_the_data_and_others_use_the_spec() -> None:
    names = _names("invoice_reconciliation_llm")

    assert names[("reconcile", "differences")] == "差異一覧"  # excel.write output_config.sheet
    assert names[("reconcile", "matched")] == "許容範囲内で一致した組 — reconcile"
    # The sheet read_bank reads from is not a name for what it returns (an alias, deposits).
    assert names[("read_bank", "deposits")] == "見出しの下の各行 — read_bank"
