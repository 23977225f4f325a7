"""ヘルプデスク page (seed 001): ask the help-desk agent, watch its plan and subtasks, read the
answer with its sources and the tool results behind it.

Session State (prefix ``helpdesk_``) holds the index folder, the last question and its outcome
(an ``AgentResult`` or a ``BlockError``); the inputs keep their values across page switches
(``session_state.restore``/``keep``). While the agent runs, its events are folded into a
per-subtask progress view inside ``st.status``; the result stays on the page across reruns
until the next question.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from keiri_agent.agents.helpdesk.grounding import UNRESOLVED_REASONS
from keiri_agent.agents.helpdesk.models import AgentResult, Subtask
from keiri_agent.agents.helpdesk.progress import Progress, describe_event
from keiri_agent.agents.helpdesk.prompts import render_tool_result
from keiri_agent.config import LLMRole, Settings
from keiri_agent.errors import BlockError
from keiri_agent.events import RunEvent
from keiri_agent.ui import session_state
from keiri_agent.ui.llm_notice import warn_llm_problem
from keiri_agent.ui.page import action_requested, open_page, render_retryable_error
from keiri_agent.ui.views.helpdesk_eval import render_eval_panel

__all__ = ["INDEX_KEY", "OUTCOME_KEY", "PAGE", "QUESTION_KEY", "AskedQuestion", "render"]

PAGE = "helpdesk"
(
    INDEX_KEY,
    QUESTION_KEY,
    OUTCOME_KEY,
    ASK_KEY,
    RETRY_KEY,
    PENDING_KEY,
) = session_state.page_keys(
    PAGE,
    "index_dir",
    "question",
    "outcome",
    "ask",
    "retry",
    "pending",  # 再実行 asks the same question again
)


STATUS_DONE_LABELS = {
    "answered": "完了しました",
    "partial": "完了しました（資料で確認できなかった項目があります）",
    "unresolved": "完了しました（資料に該当する記述がありません）",
}


@dataclass
class AskedQuestion:
    """One question and what came of it."""

    question: str
    result: AgentResult | None = None
    error: BlockError | None = None


def _ask(question: str, index_dir: Path, settings: Settings) -> AskedQuestion:
    from keiri_agent.agents.helpdesk.agent import run_agent

    outcome = AskedQuestion(question=question)
    progress = Progress()
    with st.status("回答を作成しています…", expanded=True) as status:
        board = st.empty()

        def show(event: RunEvent) -> None:
            line = describe_event(event)
            if line is not None:
                st.text(line.strip())
            if progress.add(event):
                board.markdown("\n".join(f"- {line}" for line in progress.lines()) or " ")

        try:
            outcome.result = run_agent(
                question, index_dir=index_dir, settings=settings, on_event=show
            )
        except BlockError as exc:
            outcome.error = exc
            status.update(label="エラーが発生しました", state="error", expanded=False)
        else:
            label = STATUS_DONE_LABELS[outcome.result.status]
            status.update(label=label, state="complete", expanded=False)
    return outcome


def _render_subtask(subtask: Subtask) -> None:
    state = "✅ 解決" if subtask.is_completed else "⚠️ 未解決"
    label = (
        f"サブタスク {subtask.index + 1}: {subtask.task_name}"
        f"（{state}、試行 {subtask.challenge_count} 回）"
    )
    with st.expander(label):
        for attempt, results in enumerate(subtask.tool_results, start=1):
            st.markdown(f"**試行 {attempt}**")
            for result in results:
                st.code(render_tool_result(result), language=None, wrap_lines=True)
            if attempt <= len(subtask.reflection_results):
                reflection = subtask.reflection_results[attempt - 1]
                verdict = "完了" if reflection.is_completed else "不十分"
                st.caption(f"内省: {verdict} — {reflection.advice}")
        if subtask.removed_citations:
            st.caption(
                "削除した出典（検索結果に無いもの）: " + "、".join(subtask.removed_citations)
            )
        if subtask.is_completed:
            st.markdown("**サブタスクの回答**")
        else:
            reason = UNRESOLVED_REASONS.get(subtask.unresolved_reason or "", "")
            st.markdown(
                f"**サブタスクの回答（資料で裏付けられていないため、回答には使っていません: {reason}）**"
            )
        st.markdown(subtask.subtask_answer)


def _render_result(result: AgentResult) -> None:
    st.subheader("計画")
    st.markdown(
        "\n".join(
            f"{s.index + 1}. {s.task_name} — {'✅ 解決' if s.is_completed else '⚠️ 未解決'}"
            for s in result.subtasks
        )
    )
    st.subheader("回答")
    if result.status == "unresolved":
        st.warning("資料に該当する記述が見つからなかったため、回答できませんでした。", icon="⚠️")
    elif result.unresolved:
        st.warning("資料で確認できなかった内容があります: " + "、".join(result.unresolved))
    st.markdown(result.answer)
    if result.removed_citations:
        st.caption(
            "回答から削除した出典（検索結果に無いもの）: " + "、".join(result.removed_citations)
        )
    if result.omitted_subtasks:
        st.caption("上限を超えたため調べなかったサブタスク: " + "、".join(result.omitted_subtasks))
    st.subheader("出典")
    if result.sources:
        st.markdown("\n".join(f"- {source.citation}" for source in result.sources))
    else:
        st.caption("資料から該当する記述は見つかりませんでした。")
    st.subheader("ツールの実行結果")
    for subtask in result.subtasks:
        _render_subtask(subtask)
    usage = result.usage
    st.caption(
        f"LLM {usage.calls} 回、{usage.total_tokens:,} トークン"
        f"（入力 {usage.input_tokens:,} / 出力 {usage.output_tokens:,}）"
        + (f"  \n実行ログ: `{result.run_log}`" if result.run_log else "")
    )


def _render_outcome(outcome: AskedQuestion) -> None:
    if outcome.error is not None:
        render_retryable_error(outcome.error, retry_key=RETRY_KEY, pending_key=PENDING_KEY)
        return
    if outcome.result is not None:
        _render_result(outcome.result)


def render() -> None:
    """The ヘルプデスク page."""
    settings = open_page(
        "ヘルプデスク",
        "XYZ システムについて質問してください。エージェントが質問をサブタスクに分け、"
        "マニュアルと過去の Q&A を並行して調べて、出典つきで回答します。",
    )
    if settings is None:
        return
    problem = warn_llm_problem(settings, LLMRole.HELPDESK)
    default_index = str(settings.keiri_helpdesk_index)
    index_text = session_state.kept_widget(
        PAGE,
        INDEX_KEY,
        st.text_input,
        "ナレッジベースのフォルダ",
        default=default_index,
        help="keiri-agent helpdesk ingest で作成したフォルダ（既定: KEIRI_HELPDESK_INDEX）。",
    )
    index_dir = Path(index_text.strip() or default_index).expanduser()
    if not index_dir.is_dir():
        st.info(
            f"ナレッジベース {index_dir} がまだありません。"
            " `keiri-agent helpdesk ingest マニュアルのフォルダ` で作成してください。",
            icon="💡",
        )
    question = session_state.kept_widget(
        PAGE,
        QUESTION_KEY,
        st.text_area,
        "質問",
        default="",
        placeholder="例: パスワードを忘れたときの再設定方法は？",
    )
    blocked, icon = problem is not None, ":material/send:"
    if action_requested(
        "質問する", key=ASK_KEY, pending_key=PENDING_KEY, blocked=blocked, icon=icon
    ):
        if not question.strip():
            st.warning("質問を入力してください。")
        else:
            st.session_state[OUTCOME_KEY] = _ask(question.strip(), index_dir, settings)
    outcome: AskedQuestion | None = st.session_state.get(OUTCOME_KEY)
    if outcome is not None:
        _render_outcome(outcome)
    if index_dir.is_dir():
        render_eval_panel(index_dir)
