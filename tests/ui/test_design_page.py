"""The 設計 page driven with Streamlit's AppTest: Top-K candidates, 自動生成 against the scripted
LLM server, the design chat, the YAML editor, 検証/ドライラン next to each node, 登録, the graph,
and compose mode without any LLM (the page is run on its own; ``PAGES`` is checked separately)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Node

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.design.chat import DesignChat
from keiri_agent.ui.design.check import DETAILS_TITLE
from keiri_agent.ui.design.state import (
    ANSWERS_KEY,
    CHAT_KEY,
    CHECK_KEY,
    INSTRUCTION_KEY,
    KEPT_KEY,
    MODE_KEY,
    PLAN_ID_KEY,
    SAVED_KEY,
    TAGS_KEY,
    TEMPLATES_KEY,
    YAML_KEY,
)
from keiri_agent.ui.fields import widget_key
from keiri_agent.ui.views import PAGES
from tests.design.test_generate import (
    EXPENSES,
    INSTRUCTION,
    SKELETON,
    script_skeleton_question,
    wiring,
)
from tests.plan.blockkit import SPEC_DIR
from tests.support import ScriptedLLMServer

PAGE_TIMEOUT_S = 120
GENERATE = "design_generate"
CHECK = "design_check_button"
SAVE = "design_save_button"
RECONCILIATION = ["evidence_zip_invoices", "bank_statement", "invoice_payment"]


def design_page() -> None:
    from keiri_agent.ui.design.page import render

    render()


def switching_app() -> None:
    """The design page, or another page when ``test_elsewhere`` is set (a page switch)."""
    import streamlit as st

    from keiri_agent.ui.design.page import render

    if st.session_state.get("test_elsewhere"):
        st.write("別のページ")
    else:
        render()


def _app() -> AppTest:
    return AppTest.from_function(design_page, default_timeout=PAGE_TIMEOUT_S)


@pytest.fixture
def page(design_env: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The page with the scripted LLM server (see ``design_env``)."""
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    return _app()


@pytest.fixture
def offline_page(tmp_path: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The page with no LLM provider configured at all."""
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    return _app()


def plan_yaml(**changes: Any) -> str:
    plan = wiring()
    plan.pop("reasoning")
    plan.update(changes)
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


def _generate(page: AppTest, instruction: str = INSTRUCTION) -> AppTest:
    page.run()
    page.text_area(key=INSTRUCTION_KEY).set_value(instruction).run()
    return page.button(key=GENERATE).click().run()


def _blocks(node: Node) -> Iterator[Block]:
    if isinstance(node, Block):
        yield node
        for child in node.children.values():
            yield from _blocks(child)


def _node_box(page: AppTest, node_id: str) -> Block:
    """The bordered container of a node in the check results (its 詳細 expander gives the id
    the YAML is written with; the header names the node in words)."""
    for block in _blocks(page.main):
        for child in block.children.values():
            if getattr(child, "type", "") != "expander" or child.label != DETAILS_TITLE:  # type: ignore[attr-defined]
                continue
            texts = [str(getattr(m, "value", "")) for m in child.children.values()]  # type: ignore[attr-defined]
            if any(f"`{node_id}`" in text for text in texts):
                return block
    raise AssertionError(f"no box for {node_id}")


def _errors_in(block: Block) -> list[str]:
    return [str(c.value) for c in block.children.values() if getattr(c, "type", "") == "error"]


def _block_ids(app: AppTest) -> dict[str, str]:
    """The candidate blocks' ids, from the 詳細 expander under the candidates: name → id."""
    (table,) = [
        frame.value
        for expander in app.expander
        if expander.label == DETAILS_TITLE
        for frame in expander.dataframe
        if "YAML での名前" in frame.value.columns
    ]
    return dict(zip(table["ブロック"], table["YAML での名前"], strict=True))


def test_the_page_comes_first_after_home_in_the_navigation() -> None:
    assert PAGES[1].title == "設計"
    assert PAGES[1].url_path == "design"


def test_candidates_are_listed_for_the_instruction_without_an_llm(offline_page: AppTest) -> None:
    offline_page.run()
    assert not offline_page.dataframe  # nothing to rank before there is an instruction
    offline_page.text_area(key=INSTRUCTION_KEY).set_value(INSTRUCTION).run()

    assert not offline_page.exception, offline_page.exception
    table = offline_page.dataframe[0].value
    assert list(table.columns) == [
        "順位", "ブロック", "カテゴリ", "入力", "出力", "説明", "スコア"
    ]  # fmt: skip
    ids = _block_ids(offline_page)  # the 詳細 expander: block → the id the YAML writes
    rows = table.set_index(table["ブロック"].map(ids))
    assert {"excel.read_data", "table.filter", "ui.interactive_input"} <= set(rows.index)
    # Ports by their labels, * for required; no port name, no JSON Schema type.
    assert "Excel ブック*" in rows.loc["excel.read_data", "入力"].split("、")
    assert "string" not in rows.loc["excel.read_data", "入力"]
    assert rows.loc["excel.read_data", "ブロック"] == "Excel の読み込み"
    assert rows.loc["excel.read_data", "カテゴリ"] == "Excel"
    assert rows.loc["excel.read_data", "説明"]
    assert len(rows) <= 12
    # What Top-K left out, and why.
    cut = offline_page.dataframe[1].value
    assert list(cut.columns) == ["ブロック", "順位", "除外の理由"]
    assert not set(cut["ブロック"].map(ids)) & set(rows.index)
    assert len(cut) + len(rows) == len(BlockRegistry().list())  # every block, ranked or cut
    assert any(
        c.value.startswith("トークン予算") and "除外" in c.value for c in offline_page.caption
    )
    assert any("BM25 のみ" in i.value for i in offline_page.info)  # no embedding model
    # No provider: the page explains how to configure one and 自動生成 waits for it.
    (warning,) = offline_page.warning
    for provider in ("OPENAI_API_KEY", "Azure OpenAI", "Anthropic", "Ollama", "vLLM"):
        assert provider in warning.value
    assert offline_page.button(key=GENERATE).disabled


def test_the_blocks_offered_are_those_of_the_pages_settings(
    offline_page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's settings name the block folders: a block defined only in a folder of those
    settings is ranked (or cut) with the others, whatever the process environment says."""
    monkeypatch.delenv("KEIRI_BLOCK_SPEC_DIRS", raising=False)
    settings = Settings(_env_file=None, keiri_block_spec_dirs=str(SPEC_DIR))
    monkeypatch.setattr("keiri_agent.ui.design.page.load_settings", lambda: settings)
    offline_page.run()
    offline_page.text_area(key=INSTRUCTION_KEY).set_value(INSTRUCTION).run()

    assert not offline_page.exception, offline_page.exception
    offered = set(_block_ids(offline_page).values())
    assert "test.add" in offered
    assert len(offered) == len(BlockRegistry([SPEC_DIR]).list())


def test_generation_fills_the_editor_and_the_yaml_survives_reruns(
    page: AppTest, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())

    _generate(page)

    assert not page.exception, page.exception
    generated = page.text_area(key=YAML_KEY).value
    assert generated is not None
    assert "id: expense/high_amount" in generated
    assert [m.name for m in page.chat_message] == ["user", "assistant"]
    assert "Plan を生成しました" in page.chat_message[1].markdown[0].value
    assert any("不足している項目はありません" in s.value for s in page.success)
    # The generated plan is checked at once: every node has its dry-run result.
    assert any("ドライランも問題ありません" in s.value for s in page.success)
    for node in ("read", "pick", "write"):
        assert not _errors_in(_node_box(page, node))
    assert "graphviz_chart" in [e.type for e in page.main]
    assert isinstance(page.session_state[CHAT_KEY], DesignChat)
    # A rerun (any click) keeps the plan, the chat and the table; an edit is kept too.
    page.run()
    assert page.text_area(key=YAML_KEY).value == generated
    edited = generated.replace("高額経費.xlsx", "高額な経費.xlsx")
    page.text_area(key=YAML_KEY).set_value(edited).run()
    page.run()
    assert page.text_area(key=YAML_KEY).value == edited
    assert len(page.chat_message) == 2
    assert len(llm_server.chat_requests()) == 2
    # 新しい設計 is the one way to start over.
    assert page.file_uploader[0].key == "design_uploads_0"
    page.button(key="design_reset").click().run()
    assert page.file_uploader[0].key == "design_uploads_1"  # a fresh, empty uploader
    assert not page.text_area(key=YAML_KEY).value
    assert not page.text_area(key=INSTRUCTION_KEY).value
    assert CHAT_KEY not in page.session_state
    assert not page.chat_message


def test_values_come_back_after_a_page_switch(
    design_env: Path,
    llm_server: ScriptedLLMServer,
    public_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())
    page = AppTest.from_function(switching_app, default_timeout=PAGE_TIMEOUT_S)
    _generate(page)
    page.text_input(key=PLAN_ID_KEY).set_value("expense/mine").run()
    generated = page.text_area(key=YAML_KEY).value

    # Streamlit drops the state of widgets that a run did not draw (another page's run).
    page.session_state["test_elsewhere"] = True
    page.run()
    assert INSTRUCTION_KEY not in page.session_state
    page.session_state["test_elsewhere"] = False
    page.run()

    assert page.text_area(key=INSTRUCTION_KEY).value == INSTRUCTION
    assert page.text_input(key=PLAN_ID_KEY).value == "expense/mine"
    assert page.text_area(key=YAML_KEY).value == generated
    assert page.session_state[KEPT_KEY][YAML_KEY] == generated
    assert len(page.chat_message) == 2
    assert page.dataframe  # the candidates of the kept instruction


def test_missing_values_are_asked_in_the_chat_and_the_answer_completes_the_plan(
    page: AppTest, llm_server: ScriptedLLMServer, design_env: Path
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring(expense_file=None))

    _generate(page)

    assert not page.exception, page.exception
    assert "次の項目を教えてください" in page.chat_message[-1].markdown[0].value
    summary = "\n".join(m.value for m in page.markdown)
    assert "未解決の設定値（${vars.*}）" in summary
    assert "expense_file" in summary
    path_box = page.text_input(key=widget_key(ANSWERS_KEY, "expense_file", "path"))
    # A path that does not exist is refused and nothing changes.
    path_box.set_value(str(design_env / "ない.xlsx"))
    submit = next(b for b in page.button if b.label == "回答して続ける")
    submit.click().run()
    assert page.error, "a bad answer shows an error"
    chat = page.session_state[CHAT_KEY]
    assert chat.result.status == "needs_input"

    page.text_input(key=widget_key(ANSWERS_KEY, "expense_file", "path")).set_value(str(EXPENSES))
    next(b for b in page.button if b.label == "回答して続ける").click().run()

    assert not page.exception, page.exception
    assert chat.result.status == "ok"
    assert [m.name for m in page.chat_message] == ["user", "assistant", "user", "assistant"]
    assert str(EXPENSES) in page.text_area(key=YAML_KEY).value
    assert not any(b.label == "回答して続ける" for b in page.button)  # nothing left to ask
    assert len(llm_server.chat_requests()) == 2  # filling a variable needs no LLM call


def test_a_skeleton_question_is_answered_and_generation_continues(
    page: AppTest, llm_server: ScriptedLLMServer
) -> None:
    script_skeleton_question(llm_server)

    _generate(page, "高額な経費だけを抜き出して Excel にしてください")
    assert not page.text_area(key=YAML_KEY).value  # no plan before the question is answered
    page.number_input(key=widget_key(ANSWERS_KEY, "threshold")).set_value(50000)
    next(b for b in page.button if b.label == "回答して続ける").click().run()

    assert not page.exception, page.exception
    assert page.session_state[CHAT_KEY].result.status == "ok"
    assert page.session_state[CHAT_KEY].vars_preview == {"threshold": 50000}
    assert "threshold: 50000" in str(llm_server.chat_requests()[1]["messages"][-1]["content"])
    assert "id: expense/high_amount" in page.text_area(key=YAML_KEY).value


def test_checking_an_edited_invalid_plan_shows_the_error_next_to_its_node(
    offline_page: AppTest,
) -> None:
    plan = wiring()
    plan.pop("reasoning")
    broken = copy.deepcopy(plan)
    broken["graph"][1]["in"]["table"] = "${read.deposits}"  # read has no such output
    offline_page.run()
    offline_page.text_area(key=YAML_KEY).set_value(yaml.safe_dump(broken, allow_unicode=True))
    offline_page.button(key=CHECK).click().run()

    assert not offline_page.exception, offline_page.exception
    check = offline_page.session_state[CHECK_KEY]
    assert not check.validation.valid
    (pick_error,) = _errors_in(_node_box(offline_page, "pick"))
    assert "deposits" in pick_error
    assert "行目" in pick_error  # the YAML line of the offending value
    assert not _errors_in(_node_box(offline_page, "read"))
    # The graph marks the node with the error.
    dot = next(e for e in offline_page.main if e.type == "graphviz_chart").proto.spec
    pick_line = next(line for line in dot.splitlines() if line.strip().startswith('"pick" ['))
    assert "#ffe0e0" in pick_line

    # Fixed, it validates and dry-runs: every node gets its result.
    offline_page.text_area(key=YAML_KEY).set_value(yaml.safe_dump(plan, allow_unicode=True))
    offline_page.button(key=CHECK).click().run()
    assert any("ドライランも問題ありません" in s.value for s in offline_page.success)
    for node in ("read", "pick", "write"):
        assert not _errors_in(_node_box(offline_page, node))


def test_register_saves_a_valid_plan_and_refuses_an_invalid_one(
    offline_page: AppTest, tmp_path: Path
) -> None:
    designs = tmp_path / "designs"
    offline_page.run()
    offline_page.text_area(key=YAML_KEY).set_value(
        plan_yaml(graph=[{"id": "x", "block": "no.such"}])
    )
    offline_page.button(key=SAVE).click().run()
    assert any("登録できません" in e.value for e in offline_page.error)
    assert not designs.exists() or not list(designs.rglob("*.yaml"))

    offline_page.text_area(key=YAML_KEY).set_value(plan_yaml())
    offline_page.button(key=SAVE).click().run()

    assert not offline_page.exception, offline_page.exception
    saved = offline_page.session_state[SAVED_KEY]
    assert saved.parent == designs / "expense"
    assert saved.name.startswith("high_amount_")
    assert saved.suffix == ".yaml"
    assert yaml.safe_load(saved.read_text("utf-8"))["id"] == "expense/high_amount"
    # The name's stamp is UTC; the message says when it was saved in Tokyo time, labelled.
    utc = datetime.strptime(saved.stem.rsplit("_", 1)[1][:12], "%Y%m%d%H%M").replace(tzinfo=UTC)
    local = utc.astimezone(ZoneInfo("Asia/Tokyo"))
    (message,) = [s.value for s in offline_page.success if str(saved) in s.value]
    assert message == f"登録しました: {saved}（{local:%Y-%m-%d %H:%M} JST 保存）"


def test_compose_mode_builds_a_plan_from_templates_without_an_llm(
    offline_page: AppTest,
) -> None:
    offline_page.run()
    offline_page.text_area(key=INSTRUCTION_KEY).set_value("請求書と入金明細を照合する").run()
    offline_page.multiselect(key=TAGS_KEY).set_value(["照合"]).run()
    shown = offline_page.multiselect(key=TEMPLATES_KEY).options
    assert shown
    assert all("照合" in option or "消込" in option for option in shown)
    offline_page.multiselect(key=TAGS_KEY).set_value([]).run()
    offline_page.multiselect(key=TEMPLATES_KEY).set_value(
        [*RECONCILIATION, "reconciliation_workbook"]
    )
    offline_page.radio(key=MODE_KEY).set_value("compose")
    offline_page.text_input(key=PLAN_ID_KEY).set_value("keiri/reconcile").run()
    assert not offline_page.warning  # compose needs no LLM: no provider notice
    offline_page.button(key=GENERATE).click().run()

    assert not offline_page.exception, offline_page.exception
    result = offline_page.session_state[CHAT_KEY].result
    assert result.status == "ok", result.errors
    assert "id: keiri/reconcile" in offline_page.text_area(key=YAML_KEY).value
    # The templates' blocks are among the candidates shown.
    ids = _block_ids(offline_page)
    blocks = {ids[name] for name in offline_page.dataframe[0].value["ブロック"]}
    assert {"file.parse_zip_2tier", "table.reconcile"} <= blocks


def test_uploaded_documents_are_read_and_sent_with_the_instruction(
    page: AppTest, llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    llm_server.add_chat(json=SKELETON)
    llm_server.add_chat(json=wiring())
    page.run()
    manual = "経費精算の規程: 5 万円以上の経費は部長の承認が必要です。"
    page.file_uploader[0].set_value(("規程.md", manual.encode(), "text/markdown")).run()
    assert any("規程.md" in c.value for c in page.caption)
    saved = list((public_dir / "workspace").rglob("規程.md"))
    assert len(saved) == 1

    page.text_area(key=INSTRUCTION_KEY).set_value(INSTRUCTION).run()
    page.button(key=GENERATE).click().run()

    assert not page.exception, page.exception
    assert "部長の承認" in str(llm_server.chat_requests()[0]["messages"][-1]["content"])


def test_a_plan_that_stays_invalid_shows_its_errors_at_the_node_and_suggestions(
    page: AppTest, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=SKELETON)
    for _ in range(3):  # the first attempt and two repairs
        llm_server.add_chat(json=wiring(source="${read.deposits}"))

    _generate(page)

    assert not page.exception, page.exception
    assert page.session_state[CHAT_KEY].result.status == "failed"
    (pick_error,) = _errors_in(_node_box(page, "pick"))
    assert "UNRESOLVED_REFERENCE" in pick_error
    assert "Plan を完成できませんでした" in page.chat_message[-1].markdown[0].value
    assert any("テンプレート" in i.value for i in page.info)  # seed 004 §6: what to try next
    assert any(e.label.startswith("生成の経過（試行 3 回）") for e in page.expander)
    summary = "\n".join(m.value for m in page.markdown)
    assert "不整合（検証エラー）" in summary


def test_a_generation_error_is_shown_not_hidden(
    page: AppTest, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_error(500, "upstream down")

    _generate(page)

    assert not page.exception, page.exception
    assert page.error
    assert CHAT_KEY not in page.session_state
    assert not page.text_area(key=YAML_KEY).value


def test_a_compose_conflict_is_resolved_by_a_choice_on_the_page(offline_page: AppTest) -> None:
    """invoice_list + duplicate_invoices + excel_report: which table goes to the report?"""
    offline_page.run()
    offline_page.text_area(key=INSTRUCTION_KEY).set_value("重複請求を調べて Excel にする").run()
    offline_page.multiselect(key=TEMPLATES_KEY).set_value(
        ["invoice_list", "duplicate_invoices", "excel_report"]
    )
    offline_page.radio(key=MODE_KEY).set_value("compose").run()
    offline_page.button(key=GENERATE).click().run()

    assert not offline_page.exception, offline_page.exception
    stuck = offline_page.session_state[CHAT_KEY].result
    assert stuck.status == "failed"
    assert any(e.code == "COMPOSE_AMBIGUOUS" for e in stuck.errors)
    choice = offline_page.selectbox(key="design_bind:excel_report.table")
    # each choice said by its template's title, its typed name after it
    assert any(o.endswith("（duplicate_invoices.duplicates）") for o in choice.options)
    assert all(o.startswith(("「", "設定値")) for o in choice.options), choice.options
    choice.set_value("duplicate_invoices.duplicates")
    offline_page.button(
        key="FormSubmitter:design_bindings_form-選んだ出力で合成し直す"
    ).click().run()

    assert not offline_page.exception, offline_page.exception
    result = offline_page.session_state[CHAT_KEY].result
    assert result.status == "ok", result.errors
    assert "${duplicate_invoices_" in offline_page.text_area(key=YAML_KEY).value
    assert not offline_page.selectbox  # nothing left to choose
