"""The diff of two plan versions in terms of the plan (plan.diff_plans), not of its YAML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from keiri_agent.plan import Plan, diff_plans

BEFORE = """
apiVersion: v1
id: keiri/reconcile
version: 1.0.0
vars: {tolerance: 1000, month: "2026-03"}
policy: {on_error: halt}
graph:
  - id: read
    block: excel.read_data
    in: {path: "${vars.month}.xlsx", sheet: 入金}
    out: {rows: deposits}
  - id: match
    block: table.reconcile@0.1.0
    in: {left: "${read.deposits}", tolerance: "${vars.tolerance}", options: {mode: exact}}
    when: "${vars.tolerance} > 0"
  - id: note
    block: report.markdown
    in: {template: "照合しました"}
  - id: each
    type: loop
    foreach: {input: "${read.deposits}", max_concurrency: 2}
    body:
      plan:
        graph:
          - {id: check, block: table.filter, in: {table: "${item}"}}
exports:
  - {from: match.result, as: result}
"""


def _plan(text: str) -> Plan:
    return Plan.model_validate(yaml.safe_load(text))


def _after(edit: Callable[[dict[str, Any]], None] | None = None) -> str:
    data = yaml.safe_load(BEFORE)
    match = data["graph"][1]
    match["in"]["tolerance"] = 500  # a changed input
    match["when"] = "${vars.tolerance} >= 0"  # a changed condition
    del data["graph"][2]  # the node "note" removed
    if edit is not None:
        edit(data)
    return yaml.safe_dump(data, allow_unicode=True)


def test_a_changed_input_a_removed_node_and_a_changed_when_are_named_exactly() -> None:
    diff = diff_plans(_plan(BEFORE), _plan(_after()))

    assert [(n.path, n.kind) for n in diff.nodes] == [("note", "removed"), ("match", "changed")]
    changes = {c.name: (c.before, c.after) for c in diff.node("match").changes}
    assert changes == {
        "in.tolerance": ("${vars.tolerance}", 500),
        "when": ("${vars.tolerance} > 0", "${vars.tolerance} >= 0"),
    }
    assert diff.lines() == [
        "ノード note を削除",
        "ノード match を変更（2 項目）",
        "  - 実行条件（when）: ${vars.tolerance} > 0 → ${vars.tolerance} >= 0",
        "  - 入力 tolerance: ${vars.tolerance} → 500",
    ]
    data = diff.to_dict()
    (removed, changed) = data["nodes"]
    assert removed == {
        "node": "note",
        "kind": "removed",
        "type": "block",
        "changes": [],
        "text": "ノード note を削除",
    }
    assert {"field": "in.tolerance", "before": "${vars.tolerance}", "after": 500} in [
        {k: c[k] for k in ("field", "before", "after")} for c in changed["changes"]
    ]


def test_block_versions_loop_settings_vars_exports_policy_and_moves_are_named() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["graph"][1]["block"] = "table.reconcile@0.2.0"
        data["graph"][1]["in"]["options"]["mode"] = "fuzzy"
        data["graph"][2]["foreach"]["max_concurrency"] = 8  # "each" (note was removed)
        data["graph"][2]["body"]["plan"]["graph"].append(data["graph"].pop(0))  # read → loop
        data["vars"]["tolerance"] = 2000
        data["vars"]["fiscal_year"] = 2026
        data["exports"] = [{"from": "match.summary", "as": "result"}]
        data["policy"] = {"on_error": "retry", "retries": 2}

    diff = diff_plans(_plan(BEFORE), _plan(_after(edit)))

    moved = diff.node("each/read")
    assert moved is not None
    assert (moved.kind, moved.old_path) == ("moved", "read")
    match = {c.name: (c.before, c.after) for c in diff.node("match").changes}
    assert match["block.version"] == ("0.1.0", "0.2.0")
    assert match["in.options.mode"] == ("exact", "fuzzy")
    loop = {c.name: (c.before, c.after) for c in diff.node("each").changes}
    assert loop == {"foreach.max_concurrency": (2, 8)}
    assert [c.to_dict() for c in diff.vars] == [
        {
            "field": "vars.tolerance",
            "before": 1000,
            "after": 2000,
            "text": "設定値 tolerance: 1000 → 2000",
        },
        {"field": "vars.fiscal_year", "after": 2026, "text": "設定値 fiscal_year を追加: 2026"},
    ]
    assert [(c.name, c.after) for c in diff.exports] == [("exports.result", "match.summary")]
    assert {c.name for c in diff.plan} == {"policy.on_error", "policy.retries"}
    assert "ノード each/read を移動（元は read）" in diff.lines()
    assert diff.touched("new")["each/read"] == "moved"
    assert diff.touched("old")["read"] == "moved"


def test_the_order_of_siblings_counts_as_a_move() -> None:
    def swap(data: dict[str, Any]) -> None:
        data["graph"][0], data["graph"][1] = data["graph"][1], data["graph"][0]

    diff = diff_plans(_plan(BEFORE), _plan(_after(swap)))
    moved = [n for n in diff.nodes if n.kind == "moved"]
    assert len(moved) == 1
    assert moved[0].path in ("read", "match")
    assert moved[0].old_path == moved[0].path


def test_formatting_comments_and_key_order_are_no_change() -> None:
    data = yaml.safe_load(BEFORE)
    reformatted = "# コメントを足しただけ\n" + yaml.safe_dump(
        data, allow_unicode=True, sort_keys=True
    )
    diff = diff_plans(_plan(BEFORE), _plan(reformatted))
    assert diff.empty
    assert diff.lines() == []
    assert diff.to_dict()["empty"] is True


def test_a_changed_var_label_is_named_in_the_diff() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["ui"] = {"vars": {"tolerance": "一致とみなす差額（円）"}}

    diff = diff_plans(_plan(BEFORE), _plan(_after(edit)))

    (change,) = diff.plan
    assert change.to_dict() == {
        "field": "ui.vars.tolerance",
        "after": "一致とみなす差額（円）",
        "text": "設定値の表示名 tolerance を追加: 一致とみなす差額（円）",
    }
