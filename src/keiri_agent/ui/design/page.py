"""設計 page (seed 004 「UI 仕様（Designタブ）」): instruction, documents and templates → 自動生成
→ design chat → 検証/ドライラン → 登録.

The Top-K candidate blocks are shown for the current instruction before anything is generated
(retrieval needs no LLM). 自動生成 starts a ``DesignChat``; when the plan needs input, the
pending requirements are shown with the shared field renderer (``ui.interactive_input``'s inquire
mode) and 回答して続ける calls ``DesignChat.answer``. The generated YAML goes into an editor;
検証/ドライラン shows validation errors and dry-run results next to each node, 登録 saves a valid
plan under ``KEIRI_DESIGNS_DIR`` and keeps it as a version (``keiri_agent.versions``), and the
plan's DAG is drawn from the editor's text. Below, 版と承認 lists the plan's versions, shows what
changed between two of them and approves or rejects one (``keiri_agent.ui.design.versions``).

Session State (prefix ``design_``, keys in ``keiri_agent.ui.design.state``): the chat
(``design_chat``), the documents read from uploads, the last check and save, the chat's answers
(``design_answers``) and a kept copy of each input widget's value; everything survives reruns and
page switches until 新しい設計 resets the page.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry, settings_registry
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.design.chat import DesignChat
from keiri_agent.design.engine import APPLY_MODES
from keiri_agent.design.store import save_plan, saved_at
from keiri_agent.design.templates import TemplateLibrary
from keiri_agent.errors import BlockError
from keiri_agent.localtime import shown_time
from keiri_agent.plan import PlanEnv, dry_run_source, parse_source, validate_text
from keiri_agent.ui import session_state
from keiri_agent.ui.chrome import monospace
from keiri_agent.ui.design import versions
from keiri_agent.ui.design.candidates import candidates, render_candidates, retriever_for
from keiri_agent.ui.design.check import PlanCheck, render_check, render_graph
from keiri_agent.ui.design.generation import render_generation, render_missing, render_turns
from keiri_agent.ui.design.inputs import MODE_LABELS, documents_input, templates_input
from keiri_agent.ui.design.state import (
    ANSWERS_KEY,
    CHAT_KEY,
    CHECK_KEY,
    ERROR_KEY,
    INSTRUCTION_KEY,
    MODE_KEY,
    PAGE,
    PLAN_ID_KEY,
    SAVED_KEY,
    YAML_KEY,
    keep,
    restore,
    session_dir,
    set_widget,
)
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.fields import render_fields, reset_fields
from keiri_agent.ui.llm_notice import llm_problem
from keiri_agent.ui.signin import acting_name
from keiri_agent.versions import SaveNote, VersionStore

__all__ = ["render"]


def _adopt_yaml(text: str | None, registry: BlockRegistry, settings: Settings) -> None:
    """Put a new plan into the editor, checked at once (its errors show next to its nodes)."""
    st.session_state.pop(SAVED_KEY, None)
    st.session_state.pop(CHECK_KEY, None)
    if text is not None:
        set_widget(YAML_KEY, text)
        st.session_state[CHECK_KEY] = _check(text, registry, settings)
    reset_fields(ANSWERS_KEY)  # the next round's questions start empty


def _generate(chat: DesignChat, registry: BlockRegistry, settings: Settings) -> None:
    with st.spinner("Plan を生成しています…"):
        try:
            result = chat.start()
        except BlockError as exc:
            st.session_state[ERROR_KEY] = exc
            return
    st.session_state[CHAT_KEY] = chat
    _adopt_yaml(result.yaml, registry, settings)


def _chat(chat: DesignChat, registry: BlockRegistry, settings: Settings) -> None:
    """The conversation, and the pending requirements as a form (ui.interactive_input inquire)."""
    st.subheader("設計チャット")
    render_turns(chat)
    result = chat.result
    if result is not None:
        render_generation(result, registry)
    if result is None or not result.requirements:
        return
    fields = [r.to_field() for r in result.requirements]
    needs_files = any(f["type"] in ("file", "files", "folder") for f in fields)
    with st.form(session_state.page_key(PAGE, "chat_form")):
        values = render_fields(
            fields,
            store_key=ANSWERS_KEY,
            upload_dir=session_dir(settings, "answers") if needs_files else None,
        )
        submitted = st.form_submit_button("回答して続ける", type="primary", icon=":material/send:")
    if not submitted:
        return
    st.session_state.pop(ERROR_KEY, None)
    with st.spinner("回答を反映しています…"):
        try:
            answered = chat.answer(values)
        except BlockError as exc:  # bad answers change nothing; the fields keep their values
            st.session_state[ERROR_KEY] = exc
            st.rerun()
    _adopt_yaml(answered.yaml, registry, settings)
    st.rerun()


def _check(text: str, registry: BlockRegistry, settings: Settings) -> PlanCheck:
    env = PlanEnv.of(registry, settings=settings)
    report = validate_text(text, env)
    outcome = PlanCheck(text=text, validation=report)
    if report.valid:
        outcome.dry_run = dry_run_source(parse_source(text), env)
    return outcome


def _save(text: str, registry: BlockRegistry, settings: Settings, message: str) -> None:
    """Check, then save a valid plan under ``KEIRI_DESIGNS_DIR`` and keep it as a version
    (author: the signed-in user); an invalid one is refused."""
    check = _check(text, registry, settings)
    st.session_state[CHECK_KEY] = check
    if not check.validation.valid:
        st.session_state[SAVED_KEY] = None
        st.error("検証エラーがあるため登録できません。下の検証結果を直してから登録してください。")
        return
    try:
        path, version = save_plan(
            parse_source(text).raw,
            settings.keiri_designs_dir,
            versions=VersionStore.of(settings),
            note=SaveNote(author=acting_name(settings), source="app", message=message),
        )
    except BlockError as exc:
        render_error(exc)
        return
    st.session_state[SAVED_KEY] = path
    st.session_state[versions.SAVED_VERSION_KEY] = version


def _editor(registry: BlockRegistry, settings: Settings) -> None:
    st.subheader("Plan（YAML）")
    restore(YAML_KEY, "")
    text = keep(
        YAML_KEY,
        st.text_area(
            "生成された Plan（編集できます）",
            key=YAML_KEY,
            height=360,
            placeholder="自動生成するか、Plan の YAML を貼り付けてください。",
        ),
    )
    monospace(YAML_KEY)
    message = st.text_input(
        "変更の説明（登録する版に残すメッセージ、任意）",
        key=session_state.page_key(PAGE, "save_message"),
        placeholder="例: 許容差を 1,000 円に変更",
    )
    check_col, save_col = st.columns(2)
    with check_col:
        checking = st.button(
            "検証/ドライラン",
            key=session_state.page_key(PAGE, "check_button"),
            icon=":material/fact_check:",
        )
    with save_col:
        saving = st.button(
            "登録", key=session_state.page_key(PAGE, "save_button"), icon=":material/save:"
        )
    if (checking or saving) and not text.strip():
        st.warning("Plan の YAML がありません。自動生成するか貼り付けてください。")
        return
    if checking:
        with st.spinner("検証しています…"):
            st.session_state[CHECK_KEY] = _check(text, registry, settings)
    if saving:
        with st.spinner("検証して登録しています…"):
            _save(text, registry, settings, message)
    saved = st.session_state.get(SAVED_KEY)
    if saved is not None:
        when = saved_at(saved)  # the name's stamp is UTC: shown where the person lives
        shown = (
            f"（{shown_time(when, settings.keiri_timezone, seconds=False)} 保存）" if when else ""
        )
        st.success(f"登録しました: {saved}{shown}", icon="💾")
        versions.render_saved(st.session_state.get(versions.SAVED_VERSION_KEY))
    check: PlanCheck | None = st.session_state.get(CHECK_KEY)
    if text.strip():
        st.subheader("グラフ")
        errors = check.validation.errors if check is not None and check.text == text else []
        render_graph(text, errors)
    if check is not None:
        st.subheader("検証/ドライランの結果")
        render_check(check, text, registry)


def _conflicts(chat: DesignChat, registry: BlockRegistry, settings: Settings) -> None:
    """A choice per compose conflict (seed 004 §4: 競合は明示解決), then compose again."""
    result = chat.result
    pending = [c for c in (result.conflicts if result else []) if c.binding and c.choices]
    if not pending:
        return
    st.subheader("合成の競合を解決")
    st.caption("テンプレートの入力に使う出力を選んでください（CLI の --bind と同じです）。")
    with st.form(session_state.page_key(PAGE, "bindings_form")):
        chosen = {
            str(c.binding): st.selectbox(
                f"{c.binding_said or c.binding} に使う出力",
                c.choices,
                format_func=_said(c.choices, c.choices_said),
                key=session_state.page_key(PAGE, f"bind:{c.binding}"),
                help=c.message,
            )
            for c in pending
        }
        submitted = st.form_submit_button(
            "選んだ出力で合成し直す", type="primary", icon=":material/merge:"
        )
    if not submitted:
        return
    options = chat.options.model_copy(update={"bindings": {**chat.options.bindings, **chosen}})
    again = DesignChat(
        chat.instruction,
        chat.documents_text,
        selected_templates=chat.selected_templates,
        apply_mode=chat.apply_mode,
        options=options,
        registry=registry,
        retriever=retriever_for(registry, settings),
        settings=settings,
        plan_id=chat.plan_id,
    )
    st.session_state.pop(ERROR_KEY, None)
    _generate(again, registry, settings)
    st.rerun()


def _said(values: list[str], said: list[str]) -> Callable[[str], str]:
    """How a choice shows: as a person reads it, else as typed."""
    words = dict(zip(values, said, strict=False))
    return lambda value: words.get(value, value)


def _reset() -> None:
    reset_fields(ANSWERS_KEY)
    session_state.reset_with_new_uploaders(PAGE)


def render() -> None:
    """The 設計 page."""
    st.title("設計")
    st.caption(
        "やりたい業務を日本語で書くと、使えるブロックを選んで Plan（業務フロー）を作ります。"
        "足りない情報はチャットで質問します。検証・ドライランで確かめてから登録してください。"
    )
    try:
        settings = load_settings()
        registry = settings_registry(settings)  # the block folders of these settings
        library = TemplateLibrary.load(registry=registry)
    except BlockError as exc:
        render_error(exc)
        return
    if st.button(
        "新しい設計", key=session_state.page_key(PAGE, "reset"), icon=":material/restart_alt:"
    ):
        _reset()
    problem = llm_problem(settings, LLMRole.PLAN)
    restore(INSTRUCTION_KEY, "")
    instruction = keep(
        INSTRUCTION_KEY,
        st.text_area(
            "指示",
            key=INSTRUCTION_KEY,
            placeholder="例: 請求書と入金明細を照合して、差異を Excel に出力してください",
        ),
    )
    documents = documents_input(settings)
    templates = templates_input(library)
    left, right = st.columns(2)
    with left:
        restore(MODE_KEY, "hint")
        mode = keep(
            MODE_KEY,
            st.radio(
                "テンプレートの使い方", APPLY_MODES, key=MODE_KEY, format_func=MODE_LABELS.get
            ),
        )
    with right:
        restore(PLAN_ID_KEY, "")
        plan_id = keep(
            PLAN_ID_KEY,
            st.text_input(
                "Plan ID（任意）",
                key=PLAN_ID_KEY,
                placeholder="例: keiri/invoice_check",
                help="登録するファイル名になります（designs/<ID>_<日時>.yaml）。空欄なら生成に任せます。",
            ),
        )
    if instruction.strip():
        with st.expander("候補ブロック（Top-K）", expanded=True):
            try:
                found = candidates(
                    instruction, documents, [library.get(t) for t in templates], registry, settings
                )
            except BlockError as exc:
                render_error(exc)
            else:
                render_candidates(found, registry)
    needs_llm = mode != "compose"
    if problem is not None and needs_llm:
        without = MODE_LABELS["compose"]
        st.warning(problem + f"\n\nLLM なしでも「{without}」なら Plan を作れます。", icon="⚠️")
    if st.button(
        "自動生成",
        key=session_state.page_key(PAGE, "generate"),
        type="primary",
        icon=":material/auto_awesome:",
        disabled=needs_llm and problem is not None,
    ):
        st.session_state.pop(ERROR_KEY, None)
        if not instruction.strip():
            st.warning("指示を入力してください。")
        else:
            new_chat = DesignChat(
                instruction.strip(),
                documents.texts if documents else [],
                selected_templates=templates,
                apply_mode=mode,
                registry=registry,
                retriever=retriever_for(registry, settings),
                settings=settings,
                plan_id=plan_id.strip() or None,
            )
            _generate(new_chat, registry, settings)
    error: BlockError | None = st.session_state.get(ERROR_KEY)
    if error is not None:
        render_error(error)
    chat: DesignChat | None = st.session_state.get(CHAT_KEY)
    if chat is not None:
        _chat(chat, registry, settings)
        _conflicts(chat, registry, settings)
        if chat.result is not None:
            render_missing(chat.result, st.session_state.get(CHECK_KEY), registry)
    _editor(registry, settings)
    versions.render(settings, _plan_id_of(st.session_state.get(YAML_KEY) or ""))


def _plan_id_of(text: str) -> str | None:
    """The ``id`` of the plan in the editor (None when it has none)."""
    raw = parse_source(text).raw if text.strip() else None
    found = raw.get("id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) else None
