"""What people read for a plan's nodes and tables: the plan's own words or the blocks' labels,
never ids; tables in the order the plan presents them (its workbook's sheets first)."""

from __future__ import annotations

from datetime import UTC, datetime

from keiri_agent.blocks.registry import default_registry
from keiri_agent.events.models import NodeStart
from keiri_agent.examples import example_plan
from keiri_agent.plan import Plan, PlanNames, describe_event, load_source, plan_names


def _names(example: str) -> PlanNames:
    plan = Plan.model_validate(load_source(example_plan(example)).raw)
    return plan_names(plan, default_registry())


def _plan(graph: list[dict[str, object]]) -> PlanNames:
    plan = Plan.model_validate({"apiVersion": "v1", "id": "p", "graph": graph})
    return plan_names(plan, default_registry())


def test_tables_written_to_workbook_sheets_carry_the_sheet_names() -> None:
    names = _names("invoice_reconciliation")
    assert names.table("reconcile", "matched") == "照合結果"
    assert names.table("reconcile", "differences") == "差異"
    assert names.table("reconcile", "unmatched_left") == "未入金"
    assert names.table("reconcile", "unmatched_right") == "不明入金"


def test_a_sheet_in_the_write_settings_names_the_data_and_others_use_the_port_label() -> None:
    names = _names("invoice_reconciliation_llm")
    assert names.table("reconcile", "differences") == "差異一覧"  # excel.write output_config.sheet
    assert names.table("reconcile", "matched") == "一致"  # table.reconcile's port label
    assert names.table("read_bank", "deposits") == "読み込んだ表"  # alias of excel.read_data rows


def test_nodes_are_named_by_their_description_else_by_their_block() -> None:
    names = _names("monthly_sales_report")
    assert names.node("by_month") == "月別の集計"
    assert names.node("loop[2]/by_month") == "月別の集計"
    plain = _plan(
        [
            {"id": "a", "block": "table.sort", "in": {"table": [{"x": 1}], "by": "x"}},
            {"id": "b", "block": "table.sort", "in": {"table": [{"x": 1}], "by": "x"}},
            {"id": "c", "block": "table.sort", "description": "金額の大きい順", "in": {}},
        ]
    )
    assert [plain.node(n) for n in "abc"] == ["表の並べ替え", "表の並べ替え 2", "金額の大きい順"]
    # Two unwritten tables with one label are told apart by their nodes.
    assert plain.table("a", "rows") == "並べ替えた表（表の並べ替え）"
    assert plain.table("b", "rows") == "並べ替えた表（表の並べ替え 2）"


def test_tables_are_ranked_as_the_plan_presents_them() -> None:
    names = _names("duplicate_invoice_check")
    keys = [
        ("read_list", "invoices"),
        ("find_duplicates", "unique"),
        ("find_duplicates", "groups"),
        ("find_duplicates", "duplicates"),
    ]
    ordered = sorted(keys, key=lambda key: names.rank(*key))
    assert [names.table(*key) for key in ordered] == [
        "重複候補",
        "重複グループ",
        "重複除外後",
        "読み込んだ表",
    ]


def test_progress_lines_name_nodes_without_ids_or_blocks() -> None:
    names = _names("monthly_sales_report")
    event = NodeStart(
        id=1,
        run_id="r",
        timestamp=datetime.now(UTC),
        node_id="read_sales",
        block="file.read_table@0.1.0",
    )
    assert describe_event(event, names) == "▶ 売上明細の読み込み 開始"
    assert describe_event(event) == "▶ read_sales 開始（file.read_table@0.1.0）"


def test_a_table_a_later_step_replaces_is_superseded_and_side_by_side_tables_both_stand() -> None:
    names = _plan(
        [
            {"id": "first", "block": "table.sort", "in": {"table": [{"x": 1}], "by": "x"}},
            {"id": "other", "block": "table.sort", "in": {"table": [{"x": 2}], "by": "x"}},
            {"id": "second", "block": "table.sort", "in": {"table": "${first.rows}", "by": "x"}},
        ]
    )
    # second sorts what first sorted: first's table is a step on the way
    assert names.is_superseded("first", "rows")
    assert not names.is_superseded("second", "rows")
    # other stands beside second (neither comes from the other)
    assert not names.is_superseded("other", "rows")
    assert names.table("second", "rows") == "並べ替えた表（表の並べ替え 3）"
    assert names.table("first", "rows") == "並べ替えた表（表の並べ替え）"


def test_the_first_matching_pass_of_payment_matching_is_superseded_by_the_second() -> None:
    names = _names("payment_matching")
    superseded = {output for node, output in names.superseded}
    assert {"matched", "review", "unpaid", "unknown", "questions"} <= superseded
    assert all(not names.is_written(node, output) for node, output in names.superseded)


def test_an_output_marked_result_false_is_no_result_table_unless_written() -> None:
    names = _names("payment_matching")
    questions = [key for key in names.contracts if key[1] == "questions"]
    assert len(questions) == 2  # both matching passes
    assert all(not names.is_result(*key) for key in questions)
    assert names.is_result("apply_answers", "matched")
