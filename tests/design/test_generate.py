"""Plan generation against the scripted LLM server: first-try success, repair, failure, chat."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.design.chat import DesignChat
from keiri_agent.design.engine import generate_plan
from keiri_agent.design.models import DesignEngineOptions
from keiri_agent.errors import BlockError, LLMError
from keiri_agent.events import read_events
from keiri_agent.plan import validate_text
from tests.support.llm_server import ScriptedLLMServer

REPO = Path(__file__).resolve().parents[2]
EXPENSES = REPO / "examples" / "data" / "expense_policy_check" / "経費明細.xlsx"
INSTRUCTION = (
    "経費明細の Excel を読み込み、金額が 5 万円以上の行だけを抜き出して Excel に出力してください"
)

SKELETON: dict[str, Any] = {
    "plan_id": "expense/high_amount",
    "title": "高額経費の抽出",
    "flow": "経費明細 Excel → 5 万円以上を抽出 → Excel 出力",
    "steps": [
        {"id": "read", "purpose": "経費明細を読む", "block": "excel.read_data"},
        {"id": "pick", "purpose": "5 万円以上を抽出", "block": "table.filter"},
        {"id": "write", "purpose": "Excel に出力", "block": "excel.write_report"},
    ],
    "needs_ui": False,
}


def wiring(
    *, path: Any = "${vars.expense_file}", source: str = "${read.expenses}", **vars_: Any
) -> dict[str, Any]:
    return {
        "id": "expense/high_amount",
        "description": "5 万円以上の経費を抜き出す",
        "vars": {"expense_file": str(EXPENSES), **vars_},
        "graph": [
            {
                "id": "read",
                "block": "excel.read_data",
                "in": {"path": path},
                "out": {"rows": "expenses"},
            },
            {
                "id": "pick",
                "block": "table.filter",
                "in": {
                    "table": source,
                    "conditions": [{"column": "金額", "op": "ge", "value": 50000}],
                },
            },
            {
                "id": "write",
                "block": "excel.write_report",
                "in": {
                    "sheets": [{"name": "高額経費", "rows": "${pick.rows}"}],
                    "output_path": "高額経費.xlsx",
                },
            },
        ],
        "reasoning": "読み込み→抽出→出力",
    }


def script_skeleton_question(llm_server: ScriptedLLMServer) -> None:
    """Stage 1 asks for the threshold; once answered, skeleton and wiring come back valid."""
    asking = {
        **SKELETON,
        "missing_information": [
            {"id": "threshold", "question": "高額とみなす金額（円）は？", "type": "number"}
        ],
    }
    llm_server.add_chat(json=asking)
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())


def last_human(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def events_of(result: Any) -> list[dict[str, Any]]:
    assert result.run_log
    return [e.to_dict() for e in read_events(Path(result.run_log))]


def test_valid_plan_on_first_attempt(design_env: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert len(result.attempts) == 1
    assert result.attempts[0].valid
    assert validate_text(result.yaml or "", default_registry(), env={}).valid
    assert result.dry_run is not None
    assert result.dry_run["ok"]
    assert result.reasoning.startswith("structured")
    # The LLM saw only the retrieved candidates, and the instruction.
    requests = llm_server.chat_requests()
    assert len(requests) == 2
    tools = requests[1]["tools"][0]["function"]["parameters"]
    allowed = json.dumps(tools, ensure_ascii=False)
    for block in result.candidates:
        assert f'"const": "{block}"' in allowed
    assert INSTRUCTION in last_human(requests[0])
    # Without an embedding model, retrieval says it used BM25 only.
    events = events_of(result)
    retrieval = next(e for e in events if e["event"] == "metrics" and e["scope"] == "retrieval")
    assert retrieval["values"]["mode_used"] == "bm25"
    assert "BM25" in retrieval["values"]["note"]
    final = next(e for e in events if e["event"] == "metrics" and e["scope"] == "design.generate")
    assert final["values"]["attempts"] == 1
    assert final["values"]["repair_rounds"] == 0
    assert final["values"]["validation_errors"] == [0]
    assert final["values"]["dry_run_ms"] is not None
    assert final["values"]["chosen_blocks"] == {
        "excel.read_data": 1,
        "table.filter": 1,
        "excel.write_report": 1,
    }
    assert sum(1 for e in events if e["event"] == "llm_call") == 2


def test_invalid_plan_is_repaired_on_the_second_attempt(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${read.deposits}"))  # no such output
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok"
    assert [a.valid for a in result.attempts] == [False, True]
    assert result.attempts[0].errors[0].node_id == "pick"
    assert [c.describe() for c in result.attempts[1].diff] == ["pick: 変更（in）"]
    repair = last_human(llm_server.chat_requests()[2])
    # The error summary, the offending block's spec excerpt and the previous output.
    first_error = result.attempts[0].errors[0]
    assert f"[{first_error.code}] ノード pick" in repair
    assert "${read.deposits}" in repair
    assert "### table.filter" in repair
    assert "conditions (array, 必須)" in repair
    assert "前回の出力" in repair
    final = next(
        e for e in events_of(result) if e["event"] == "metrics" and e["scope"] == "design.generate"
    )
    assert final["values"]["repair_rounds"] == 1
    assert final["values"]["validation_errors"][1] == 0


def test_reply_outside_the_schema_is_repaired(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    bad = wiring()
    bad["graph"][1]["in"]["rows"] = bad["graph"][1]["in"].pop("table")  # not a port of the block
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=bad)
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok"
    # The LLM layer's repair round (keiri_agent.llm.repair) tells the model what was wrong.
    repair = last_human(llm_server.chat_requests()[2])
    assert "定義にない項目" in repair
    assert "rows" in repair


def test_unrepairable_plan_returns_its_errors(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${read.deposits}"))
    llm_server.add_chat(json=wiring(source="${read.deposits}"))

    result = generate_plan(INSTRUCTION, options=DesignEngineOptions(max_attempts=2))

    assert result.status == "failed"
    assert len(llm_server.chat_requests()) == 3  # skeleton + two wiring attempts, no more
    assert result.errors
    assert all(e.node_id == "pick" for e in result.errors)
    assert result.suggestions
    assert result.plan is not None  # the last attempt is kept for the YAML editor
    assert "fallback" not in result.reasoning


def test_missing_information_becomes_requirements_and_a_second_turn_completes(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(expense_file=None))

    chat = DesignChat(INSTRUCTION)
    first = chat.start()

    assert first.status == "needs_input"
    assert [(r.id, r.type) for r in first.requirements] == [("expense_file", "file")]
    field = first.requirements[0].to_field()
    assert field["type"] == "file"

    with pytest.raises(BlockError) as bad:
        chat.answer({"expense_file": str(design_env / "ない.xlsx")})
    assert bad.value.code == "INPUT_VALIDATION_FAILED"
    assert chat.result is first  # nothing changed

    second = chat.answer({"expense_file": str(EXPENSES)})

    assert second.status == "ok", second.errors
    assert second.plan is not None
    assert second.plan["vars"]["expense_file"] == str(EXPENSES)
    assert len(llm_server.chat_requests()) == 2  # filling vars needs no LLM call
    assert [t.role for t in chat.turns] == ["user", "assistant", "user", "assistant"]


def test_skeleton_questions_are_answered_and_generation_continues(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    script_skeleton_question(llm_server)

    chat = DesignChat("高額な経費だけを抜き出して Excel にしてください")
    first = chat.start()
    assert first.status == "needs_input"
    assert first.requirements[0].target.kind == "context"
    assert len(llm_server.chat_requests()) == 1  # no wiring before the question is answered

    second = chat.answer({"threshold": "50000"})

    assert second.status == "ok"
    regenerated = last_human(llm_server.chat_requests()[1])
    assert "確認済みの事項" in regenerated
    assert "threshold: 50000" in regenerated


def test_llm_api_error_is_raised_not_hidden(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_error(500, "upstream down")
    with pytest.raises(LLMError) as raised:
        generate_plan(INSTRUCTION)
    assert raised.value.code == "API_ERROR"


def test_fallback_only_when_enabled_and_marked(
    design_env: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_LLM_FALLBACK", "1")
    llm_server.add_error(500, "upstream down")

    result = generate_plan(INSTRUCTION)

    assert result.status == "fallback"
    assert result.reasoning.startswith("fallback")
    assert result.plan is not None
    assert validate_text(result.yaml or "", default_registry(), env={}).valid


def test_empty_instruction_and_bad_mode_are_refused(design_env: Path) -> None:
    with pytest.raises(BlockError, match="指示テキストが空"):
        generate_plan("  ")
    with pytest.raises(BlockError, match="apply_mode"):
        generate_plan(INSTRUCTION, apply_mode="magic")  # type: ignore[arg-type]
    with pytest.raises(BlockError, match="テンプレート"):
        generate_plan(INSTRUCTION, apply_mode="compose")


RECONCILIATION = ["evidence_zip_invoices", "bank_statement", "invoice_payment"]


def test_compose_mode_builds_a_valid_plan_without_the_llm(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    result = generate_plan(
        "請求書と入金明細を照合する",
        selected_templates=[*RECONCILIATION, "reconciliation_workbook"],
        apply_mode="compose",
        plan_id="keiri/reconcile",
    )

    assert result.status == "ok", result.errors
    assert result.reasoning.startswith("compose")
    assert result.plan is not None
    assert result.plan["id"] == "keiri/reconcile"
    assert validate_text(result.yaml or "", default_registry(), env={}).valid
    assert result.dry_run is not None
    assert result.dry_run["ok"]
    assert llm_server.chat_requests() == []


def test_compose_conflicts_are_returned_not_guessed(design_env: Path) -> None:
    # Two sources of invoices: which one the reconciliation should use is ambiguous.
    result = generate_plan(
        "請求書と入金明細を照合する",
        selected_templates=[
            "evidence_zip_invoices",
            "invoice_list",
            "bank_statement",
            "invoice_payment",
        ],
        apply_mode="compose",
    )

    assert result.status == "failed"
    assert result.plan is None
    assert any(e.code.startswith("COMPOSE_") for e in result.errors)
    assert result.suggestions


def test_hint_mode_sends_the_templates_to_the_llm(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION, selected_templates=["excel_report"], apply_mode="hint")

    assert result.status == "ok"
    prompt = last_human(llm_server.chat_requests()[0])
    assert "選択されたテンプレート" in prompt
    assert "excel_report" in prompt
    # The template's blocks are always candidates.
    assert "excel.write_report" in result.candidates


# --- the repair loop (seed 004 §6): two repairs, the diff, dry-run findings, free-form JSON ---


def _design_metrics(result: Any, scope: str) -> list[dict[str, Any]]:
    return [
        e["values"] for e in events_of(result) if e["event"] == "metrics" and e["scope"] == scope
    ]


def test_two_repairs_and_the_second_repair_prompt_shows_the_diff(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${read.deposits}"))  # no such output
    second = wiring(source="${read.payments}")  # still wrong, and the path changed too
    second["graph"][0]["in"]["sheet"] = "経費"
    llm_server.add_chat(json=second)
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert [a.outcome for a in result.attempts] == ["invalid", "invalid", "valid"]
    requests = llm_server.chat_requests()
    assert len(requests) == 4  # skeleton + the first attempt + two repairs
    first_repair, second_repair = last_human(requests[2]), last_human(requests[3])
    assert "変更点" not in first_repair  # nothing to compare yet
    assert "### 前回（1 回目）からの変更点（ノード単位）" in second_repair
    assert "- pick: 変更（in）" in second_repair
    assert "- read: 変更（in）" in second_repair
    assert "${read.payments}" in second_repair
    final = _design_metrics(result, "design.generate")[0]
    assert final["repair_rounds"] == 2
    assert [d["outcome"] for d in final["attempt_details"]] == ["invalid", "invalid", "valid"]


def test_dry_run_findings_trigger_a_repair(design_env: Path, llm_server: ScriptedLLMServer) -> None:
    # Validates (the output exists) but the dry run cannot follow .nokey into a list.
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${read.expenses.nokey}"))
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok"
    assert [a.outcome for a in result.attempts] == ["dry_run_findings", "valid"]
    assert result.attempts[0].findings[0].code == "UNRESOLVED_REFERENCE"
    repair = last_human(llm_server.chat_requests()[2])
    assert "ドライランで問題が見つかりました" in repair
    assert "${read.expenses.nokey}" in repair


def test_dry_run_findings_that_stay_make_the_generation_fail(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    for _ in range(3):
        llm_server.add_chat(json=wiring(source="${read.expenses.nokey}"))

    result = generate_plan(INSTRUCTION)

    assert result.status == "failed"
    assert result.errors[0].code == "UNRESOLVED_REFERENCE"
    assert result.plan is not None  # kept for the YAML editor, not saved by the CLI


def test_json_in_a_fenced_free_form_reply_is_used(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    """A provider that ignores the tool and answers in prose with a ```json fence."""
    llm_server.add_chat(json=SKELETON)
    fenced = "以下が Plan です。\n```json\n" + json.dumps(wiring(), ensure_ascii=False) + "\n```\n"
    llm_server.add_chat(fenced)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert result.plan is not None
    assert result.plan["graph"][1]["block"] == "table.filter"


def test_a_provider_that_refuses_the_schema_is_asked_for_free_form_json(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_error(400, "This model does not support tools")
    llm_server.add_chat("```json\n" + json.dumps(SKELETON, ensure_ascii=False) + "\n```")
    llm_server.add_chat(
        "承知しました。\n```json\n" + json.dumps(wiring(), ensure_ascii=False) + "\n```"
    )

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert [a.mode for a in result.attempts] == ["free_form"]
    assert "JSON を抽出" in result.reasoning
    refused, skeleton, wired = llm_server.chat_requests()
    assert "tools" in refused
    assert "tools" not in skeleton
    assert "tools" not in wired
    assert "JSON Schema" in last_human(wired)
    assert _design_metrics(result, "design.attempt")[0]["mode"] == "free_form"


def test_every_attempt_records_its_prompt_and_schema_size(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(source="${read.deposits}"))
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION)

    attempts = _design_metrics(result, "design.attempt")
    assert [a["outcome"] for a in attempts] == ["invalid", "valid"]
    sent = llm_server.chat_requests()
    for number, values in enumerate(attempts, start=1):
        text = "".join(str(m["content"]) for m in sent[number]["messages"])
        assert values["prompt_chars"] == len(text)
        assert 0 < values["prompt_tokens_est"] <= len(text)
        schema = sent[number]["tools"][0]["function"]["parameters"]
        assert values["schema_bytes"] == len(
            json.dumps(schema, ensure_ascii=False, separators=(",", ":")).encode()
        )
    assert attempts[1]["prompt_chars"] > attempts[0]["prompt_chars"]  # the repair turn
    retrieval = _design_metrics(result, "retrieval")[0]
    assert retrieval["candidate_count"] <= 12
    assert retrieval["cut"]


def _strict_reply(ui: Any) -> dict[str, Any]:
    """``wiring()`` as a strict-mode reply: every key (null when unused), vars as a list,
    objects as JSON text, ``ui`` as given."""
    plan = wiring()
    nodes = []
    for node in plan["graph"]:
        ports = dict.fromkeys(default_registry().get(node["block"]).inputs)
        ports.update(node["in"])
        for key in ("conditions", "sheets"):
            if key in node["in"]:
                ports[key] = json.dumps(node["in"][key], ensure_ascii=False)
        nodes.append(
            {**node, "in": ports, "description": None, "when": None, "out": node.get("out")}
        )
    strict = {
        **plan,
        "version": None,
        "vars": [{"name": k, "value": v} for k, v in plan["vars"].items()],
        "policy": None,
        "ui": ui,
        "exports": None,
        "graph": nodes,
    }
    return strict


def test_a_strict_mode_reply_is_read_as_the_plan(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    """Strict replies carry every key (null when unused), vars as a list, objects as JSON text."""
    strict = _strict_reply(ui=None)
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=strict)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert result.plan is not None
    assert result.plan["vars"] == {"expense_file": str(EXPENSES)}
    assert result.plan["graph"][1]["in"]["conditions"] == [
        {"column": "金額", "op": "ge", "value": 50000}
    ]
    assert "sheet" not in result.plan["graph"][0]["in"]  # null means not given


def test_compose_conflicts_are_resolved_with_bindings_in_the_api(design_env: Path) -> None:
    templates = ["invoice_list", "duplicate_invoices", "excel_report"]
    stuck = generate_plan("重複請求を Excel に", selected_templates=templates, apply_mode="compose")

    assert stuck.status == "failed"
    (conflict,) = [c for c in stuck.conflicts if c.kind == "ambiguous"]
    assert conflict.binding == "excel_report.table"
    assert "duplicate_invoices.duplicates" in conflict.choices

    done = generate_plan(
        "重複請求を Excel に",
        selected_templates=templates,
        apply_mode="compose",
        bindings={conflict.binding: "duplicate_invoices.duplicates"},
    )

    assert done.status == "ok", done.errors
    assert validate_text(done.yaml or "", default_registry(), env={}).valid


BANK_MEMO = (
    "経費精算の担当: 長谷川 美咲（携帯 090-4412-7788、misaki.hasegawa@example.jp）。\n"
    "高額の経費は 5 万円以上（50,000円）とし、2025年4月1日から適用する。\n"
    "立替金の振込先は 普通 3958211、本人確認のマイナンバー 123456789018 は別途保管。\n"
)


def test_a_reference_memo_full_of_bank_words_does_not_push_out_the_blocks_asked_for(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    # The memo's 振込先・普通 match the bank blocks; the instruction asks for an Excel output.
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    result = generate_plan(INSTRUCTION, documents_text=[BANK_MEMO])

    assert result.status == "ok", result.errors
    assert {"excel.write_report", "file.read_table", "table.filter"} <= set(result.candidates)
    assert len(result.attempts) == 1
    tools = llm_server.chat_requests()[1]["tools"][0]["function"]["parameters"]
    assert '"const": "excel.write_report"' in json.dumps(tools, ensure_ascii=False)


def test_the_generated_plan_keeps_the_labels_it_gives_its_vars(
    design_env: Path, llm_server: ScriptedLLMServer
) -> None:
    """ui.vars from a strict reply (a [{name, label}] list): the plan names its vars in Japanese."""
    strict = _strict_reply(
        ui={"layout": [], "vars": [{"name": "expense_file", "label": "経費明細のファイル"}]}
    )
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=strict)

    result = generate_plan(INSTRUCTION)

    assert result.status == "ok", result.errors
    assert result.plan is not None
    assert result.plan["ui"] == {"vars": {"expense_file": "経費明細のファイル"}}
    assert "ui:\n  vars:\n    expense_file: 経費明細のファイル" in (result.yaml or "")
