"""データ分析 page (seed 000): upload tables, chat with the analysis agent, read its reports.

Session State (prefix ``analysis_``) holds the whole ``AnalysisSession`` (messages, DataFrames,
workspace) under ``analysis_session``, the chat history as ``ChatTurn`` objects, and which
uploads were already loaded (by name and content, so the files stay listed after a page switch
empties the uploader). One chat input is one ``session.ask`` (one graph invoke); the
agent's question ends the turn and the user's answer is simply the next input. A report that
no code run with visible output backs is labelled unverified (未検証), never 完了しました, and
carries a warning band. Everything survives reruns until the リセット button clears it.

While a turn runs, its 中止 button stops it: the click makes Streamlit stop this script run
(so does any other input, or the tab closing), and a stopped run stops its turn
(``AnalysisSession.stop``: generated code that runs is killed at once, nothing of the turn is
kept) and leaves it in the history as 中止. The elapsed time, redrawn while no event comes, is
where a run waiting on a long step learns it was stopped.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from zoneinfo import ZoneInfo

import streamlit as st
from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis import AnalysisSession, TurnResult, TurnStatus
from keiri_agent.agents.analysis.honesty import (
    NOT_JAPANESE_NOTE,
    UNVERIFIED_HINT,
    UNVERIFIED_LABEL,
    UNVERIFIED_MESSAGE,
)
from keiri_agent.agents.analysis.progress import describe_event
from keiri_agent.agents.analysis.session import STOP_WAIT_S, stopped_error
from keiri_agent.config import LLMRole
from keiri_agent.errors import BlockError
from keiri_agent.events import RunEvent
from keiri_agent.localtime import shown_time
from keiri_agent.ui import session_state
from keiri_agent.ui.chrome import file_uploader
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.llm_notice import warn_llm_problem
from keiri_agent.ui.page import open_page
from keiri_agent.ui.report_view import (
    chart_files,
    render_downloads,
    render_executions,
    render_report,
)
from keiri_agent.ui.screen_words import shown_table
from keiri_agent.workspace import session_started

__all__ = ["HISTORY_KEY", "PAGE", "SESSION_KEY", "ChatTurn", "render"]

PAGE = "analysis"
(
    SESSION_KEY,
    HISTORY_KEY,
    LOADED_KEY,
    RETRY_KEY,
) = session_state.page_keys(
    PAGE,
    "session",
    "history",
    "loaded_files",
    "retry",
)
ANALYSIS_ROLES = (LLMRole.REASON, LLMRole.CODEGEN, LLMRole.REPORT)  # the agent's three models
UPLOAD_TYPES = ["csv", "tsv", "txt", "xlsx", "xlsm", "xls"]
PREVIEW_ROWS = 20
# How a turn ended -> its status label and state. An unverified report is not a success: it
# takes the error state (st.status has no warning state), its band says what was not backed.
_STATUS_LABELS: dict[TurnStatus, tuple[str, Literal["complete", "error"]]] = {
    "success": ("完了しました", "complete"),
    "question": ("質問があります", "complete"),
    "unverified": (UNVERIFIED_LABEL, "error"),
}


@dataclass
class ChatTurn:
    """One user input and what came of it: a result (report or question) or an error."""

    text: str
    result: TurnResult | None = None
    error: BlockError | None = None
    assumptions: list[str] = field(default_factory=list)


def _session() -> AnalysisSession:
    return session_state.get_or_create(SESSION_KEY, AnalysisSession)


def _history() -> list[ChatTurn]:
    return session_state.get_or_create(HISTORY_KEY, list)


def _reset() -> None:
    session_state.reset_with_new_uploaders(PAGE)


def _toolbar(session: AnalysisSession, zone: ZoneInfo) -> None:
    left, right = st.columns([5, 1], vertical_alignment="center")
    with left:
        if session.workspace is not None:
            # The folder's name is the session's start in UTC: the start is shown where we live.
            started = session_started(session.workspace)
            since = f"（開始 {shown_time(started, zone)}）" if started else ""
            st.caption(f"作業ディレクトリ: `{session.workspace}`{since}")
    with right:
        if st.button(
            "リセット",
            key=session_state.page_key(PAGE, "reset"),
            icon=":material/restart_alt:",
            help="会話・データ・結果を消して新しいセッションを始めます（作業ディレクトリのファイルは残ります）。",
        ):
            _reset()
            st.rerun()


def _uploads(session: AnalysisSession) -> None:
    files = file_uploader(
        "データファイル（CSV / TSV / Excel、複数可）",
        UPLOAD_TYPES,
        multiple=True,
        key=session_state.uploader_key(PAGE, "uploader"),
        help="文字コード（UTF-8・Shift_JIS・CP932 など）は自動で判定します。"
        "最初のファイルが df、すべてのファイルが dfs['名前'] として分析に使われます。",
    )
    # Keyed by name and content, not by upload: Streamlit empties the uploader on a page
    # switch, and the same file uploaded again must not become a second table.
    loaded: dict[tuple[str, str], BlockError | str] = session_state.get_or_create(LOADED_KEY, dict)
    current = set()
    for upload in files or []:
        data = upload.getvalue()
        key = (upload.name, hashlib.sha256(data).hexdigest())
        current.add(key)
        if key not in loaded:
            try:
                info = session.add_file(data, name=upload.name)
            except BlockError as exc:
                loaded[key] = exc
            else:
                loaded[key] = info.name
        outcome = loaded[key]
        if isinstance(outcome, BlockError):  # shown while the file stays in the uploader
            render_error(outcome)
    earlier = [
        key[0]
        for key, outcome in loaded.items()
        if key not in current and not isinstance(outcome, BlockError)
    ]
    if earlier:
        st.caption("読み込み済みのファイル: " + "、".join(earlier))


def _tables(session: AnalysisSession) -> None:
    for index, (name, frame) in enumerate(session.frames.items()):
        label = f'df（= dfs["{name}"]）' if index == 0 else f'dfs["{name}"]'
        rows, cols = frame.shape
        with st.expander(f"{label}: {rows:,} 行 × {cols} 列"):
            for note in session.infos[name].notes:  # units made yen, total rows left out...
                st.caption(note)
            st.dataframe(shown_table(frame.head(PREVIEW_ROWS)))


def _render_answer(turn: ChatTurn, index: int, *, latest: bool) -> None:
    """The assistant's side of one turn."""
    if turn.error is not None:
        retry_key = session_state.page_key(PAGE, f"retry_{index}") if latest else None
        if render_error(turn.error, retry_key=retry_key):
            st.session_state[RETRY_KEY] = turn.text
        return
    result = turn.result
    if result is None:
        return
    if result.next_action == "ask" or result.final_report is None:
        st.markdown(result.question or "（エージェントからの返答がありませんでした）")
    else:
        # The report's own flags: not grounded in a run that showed output (the turn is
        # unverified, not a success), not in Japanese.
        if result.status == "unverified":
            st.warning(f"**{UNVERIFIED_MESSAGE}**\n\n{UNVERIFIED_HINT}", icon=":material/report:")
        if result.japanese is False:
            st.warning(NOT_JAPANESE_NOTE, icon=":material/translate:")
        render_report(
            result.final_report,
            result.workspace,
            assumptions=turn.assumptions,
            forced=result.forced_report,
        )
    render_executions(result.execution_results)
    charts = chart_files(result.final_report, result.execution_results, result.workspace)
    report_path = result.report_path if result.final_report is not None else None
    render_downloads(report_path, charts, key=session_state.page_key(PAGE, f"download_{index}"))


def _drop_unanswered(session: AnalysisSession, text: str) -> None:
    """Forget the user message of a failed turn, so a retry does not send it twice."""
    last = session.messages[-1] if session.messages else None
    if isinstance(last, HumanMessage) and last.content == text:
        session.messages.pop()


def _submit(session: AnalysisSession, text: str) -> None:
    history = _history()
    with st.chat_message("user"):
        st.markdown(text)
    turn = ChatTurn(text=text)
    with st.chat_message("assistant"):
        if session.running and not session.stop(STOP_WAIT_S):  # a stopped turn still ending
            st.warning("前の分析がまだ止まっていません。少し待ってからもう一度入力してください。")
            return
        stop = st.empty()  # the button goes once the turn has ended
        stop.button(  # its click stops this script run, which stops the turn (below)
            "中止",
            key=session_state.page_key(PAGE, "stop"),
            icon=":material/stop_circle:",
            help="実行中の分析を止めます。実行中のコードもすぐに止め、このターンのレポートと実行記録は保存しません。",
        )
        with st.status("分析しています…", expanded=True) as status:
            elapsed = st.empty()
            started = time.monotonic()

            def show(event: RunEvent) -> None:
                line = describe_event(event)
                if line is not None:
                    st.text(line.strip())

            def tick() -> None:
                elapsed.caption(f"経過 {time.monotonic() - started:.0f} 秒")

            try:
                turn.result = session.ask(text, on_event=show, on_idle=tick)
            except BlockError as exc:
                _drop_unanswered(session, text)
                turn.error = exc
                status.update(label="エラーが発生しました", state="error", expanded=False)
            except BaseException:
                # Streamlit stopped this script run (中止, another input, the tab closed): the
                # turn must not go on unseen. No element is drawn here; the rerun shows it.
                turn.error = stopped_error(
                    ended=session.stop(STOP_WAIT_S),
                    kept="読み込んだデータとこれまでの結果はそのまま使えます。",
                )
                history.append(turn)
                raise
            else:
                label, state = _STATUS_LABELS[turn.result.status]
                status.update(label=label, state=state, expanded=False)
        stop.empty()
        turn.assumptions = list(session.assumptions)
        history.append(turn)
        _render_answer(turn, len(history) - 1, latest=True)


def render() -> None:
    """The データ分析 page."""
    settings = open_page(
        "データ分析",
        "CSV / Excel ファイルをアップロードして、知りたいことを日本語で質問してください。"
        "エージェントがコードを書いてサンドボックスで実行し、図表つきのレポートにまとめます。",
    )
    if settings is None:
        return
    warn_llm_problem(settings, *ANALYSIS_ROLES)
    session = _session()
    _toolbar(session, settings.keiri_timezone)
    _uploads(session)
    _tables(session)
    history = _history()
    for index, turn in enumerate(history):
        with st.chat_message("user"):
            st.markdown(turn.text)
        with st.chat_message("assistant"):
            _render_answer(turn, index, latest=index == len(history) - 1)
    text = st.chat_input("分析したい内容を入力してください（例: 取引先別の売上を比べて）")
    retry: Any = st.session_state.pop(RETRY_KEY, None)
    if text or retry:
        _submit(session, str(text or retry))
