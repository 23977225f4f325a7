"""The requirements builder's mapping rules (seed 004 §7), answers, and saving plans."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.ui.field_types import normalize_requirements
from keiri_agent.design.repair import node_diff, spec_excerpts, summarize_errors
from keiri_agent.design.requirements import SCHEMA_TEMPLATES, apply_answers, build_requirements
from keiri_agent.design.store import save_plan, saved_at
from keiri_agent.errors import BlockError
from keiri_agent.plan import load_yaml, validate_text
from keiri_agent.versions import SaveNote, VersionStore

REGISTRY = default_registry()


def plan_with(*nodes: dict[str, Any], **vars_: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "id": "t/req", "vars": dict(vars_), "graph": list(nodes)}


def test_unresolved_var_becomes_a_field_typed_by_its_port() -> None:
    plan = plan_with(
        {"id": "read", "block": "excel.read_data", "in": {"path": "${vars.book}"}},
        {
            "id": "pick",
            "block": "table.filter",
            "in": {
                "table": "${read.rows}",
                "conditions": [{"column": "金額", "op": "ge", "value": "${vars.limit}"}],
                "normalize": "${vars.normalize}",
            },
        },
        limit=None,
    )
    found = {r.id: r for r in build_requirements(plan, registry=REGISTRY)}

    assert found["book"].type == "file"  # undeclared, feeds a path
    assert found["book"].target.var == "book"
    assert found["limit"].type == "text"  # inside a list: no port type to go by
    assert found["normalize"].type == "boolean"
    # Every requirement is a valid ui.interactive_input field (the chat reuses that block).
    normalize_requirements([r.to_field() for r in found.values()])


def test_declared_vars_with_values_are_not_asked() -> None:
    plan = plan_with(
        {"id": "read", "block": "excel.read_data", "in": {"path": "${vars.book}"}}, book="a.xlsx"
    )
    assert build_requirements(plan, registry=REGISTRY) == []


def test_read_data_without_path_asks_for_file_sheet_and_range() -> None:
    plan = plan_with({"id": "read", "block": "excel.read_data", "in": {}})
    found = build_requirements(plan, registry=REGISTRY)

    assert [(r.id, r.type, r.required) for r in found] == [
        ("read_path", "file", True),
        ("read_sheet", "text", False),
        ("read_range", "text", False),
    ]
    assert found[0].accept == ".xlsx,.xlsm"


def test_process_llm_without_schema_offers_schema_templates(tmp_path: Path) -> None:
    plan = plan_with({"id": "ask", "block": "ai.process_llm", "in": {}})
    found = {r.id: r for r in build_requirements(plan, registry=REGISTRY)}

    assert found["ask_output_schema"].type == "enum"
    assert found["ask_output_schema"].options == list(SCHEMA_TEMPLATES)
    assert found["ask_prompt"].type == "text"

    updated, context = apply_answers(
        plan,
        list(found.values()),
        {"ask_output_schema": "判定と理由", "ask_prompt": "規程違反かどうか判定してください"},
    )
    assert context == {}
    node = updated["graph"][0]
    assert node["in"]["output_schema"] == SCHEMA_TEMPLATES["判定と理由"]
    assert node["in"]["prompt"].startswith("規程違反")
    assert plan["graph"][0]["in"] == {}  # the original is not modified
    report = validate_text(yaml.safe_dump(updated, allow_unicode=True), REGISTRY, env={})
    assert not [e for e in report.errors if e.code.startswith("PROCESS_LLM")]


def test_bad_answers_are_all_reported_and_nothing_applied(tmp_path: Path) -> None:
    plan = plan_with({"id": "read", "block": "excel.read_data", "in": {}})
    found = build_requirements(plan, registry=REGISTRY)
    with pytest.raises(BlockError) as raised:
        apply_answers(plan, found, {"read_path": str(tmp_path / "missing.xlsx")})
    assert raised.value.code == "INPUT_VALIDATION_FAILED"
    assert "read_path" in str(raised.value.details["problems"])
    with pytest.raises(BlockError, match="回答がありません"):
        apply_answers(plan, found, {})


def test_errors_alone_give_requirements() -> None:
    report = validate_text(
        "apiVersion: v1\nid: t\ngraph:\n  - {id: r, block: excel.read_data, in: {path: '${vars.src}'}}\n",
        REGISTRY,
        env={},
    )
    found = build_requirements(report.errors, registry=REGISTRY)
    assert [r.id for r in found] == ["src"]


def test_repair_material() -> None:
    before = plan_with(
        {"id": "read", "block": "excel.read_data", "in": {"path": "a.xlsx"}},
        {"id": "old", "block": "table.dedupe", "in": {}},
    )
    after = plan_with(
        {"id": "read", "block": "excel.read_data", "in": {"path": "b.xlsx"}},
        {"id": "new", "block": "table.filter", "in": {}},
    )
    assert [c.describe() for c in node_diff(before, after)] == [
        "read: 変更（in）",
        "new: 追加",
        "old: 削除",
    ]
    excerpt = spec_excerpts(REGISTRY, ["table.filter", "no.such_block"])
    assert "### table.filter" in excerpt
    assert "table (array | object, 必須)" in excerpt
    assert "登録されていないブロック" in excerpt
    report = validate_text(
        "apiVersion: v1\nid: t\ngraph:\n  - {id: f, block: table.filter, in: {}}\n",
        REGISTRY,
        env={},
    )
    summary = summarize_errors(report.errors)
    assert "[MISSING_REQUIRED_INPUT] ノード f" in summary


def _save(plan: dict[str, Any], designs: Path, now: datetime | None = None) -> Path:
    """``save_plan`` as ``plan generate`` calls it (each save also kept as a version)."""
    versions = VersionStore(designs / ".versions", durable=False)
    return save_plan(
        plan, designs, versions=versions, note=SaveNote(author="taro", source="generate"), now=now
    )[0]


def test_save_plan_names_files_by_id_and_minute_and_never_overwrites(tmp_path: Path) -> None:
    plan = plan_with({"id": "read", "block": "excel.read_data", "in": {"path": "a.xlsx"}})
    plan["id"] = "keiri/invoice_check"
    now = datetime(2026, 11, 23, 9, 5, tzinfo=UTC)

    first = _save(plan, tmp_path, now=now)
    second = _save(plan, tmp_path, now=now)

    assert first == tmp_path / "keiri" / "invoice_check_202611230905.yaml"
    assert second.name == "invoice_check_202611230905-2.yaml"
    assert load_yaml(first.read_text(encoding="utf-8"))["id"] == "keiri/invoice_check"
    assert not list(tmp_path.rglob(".saving-*"))  # no temporary files left behind


def test_a_saved_plan_is_stamped_in_utc_and_its_time_read_back(tmp_path: Path) -> None:
    """09:05 in Tokyo is 00:05 UTC: the name is the stored (UTC) time, like run logs."""
    plan = plan_with({"id": "read", "block": "excel.read_data", "in": {"path": "a.xlsx"}})
    plan["id"] = "month_end_close"  # an id with "_" of its own
    now = datetime(2026, 11, 23, 9, 5, tzinfo=ZoneInfo("Asia/Tokyo"))

    first = _save(plan, tmp_path, now=now)
    second = _save(plan, tmp_path, now=now)

    assert first.name == "month_end_close_202611230005.yaml"
    assert saved_at(first) == saved_at(second) == now
    assert saved_at(tmp_path / "month_end_close.yaml") is None  # not a saved version


@pytest.mark.parametrize("bad_id", ["../escape", "", None, "a b"])
def test_save_plan_refuses_ids_that_are_not_plan_ids(tmp_path: Path, bad_id: Any) -> None:
    plan = plan_with({"id": "read", "block": "excel.read_data", "in": {}})
    plan["id"] = bad_id
    designs = tmp_path / "designs"
    with pytest.raises(BlockError):
        _save(plan, designs)
    assert not designs.exists()
