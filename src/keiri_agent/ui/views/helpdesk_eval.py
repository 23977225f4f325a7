"""The retrieval-test panel of the ヘルプデスク page: recall@k, MRR and the misses of the
knowledge base on a question file, the same measurement as ``keiri-agent helpdesk eval``.

The panel needs no LLM: it searches the knowledge base question by question (relevance floor
included) and shows the figures and every question whose answer was not in the first k hits,
with what came first instead. Its inputs and last report stay in Session State (prefix
``helpdesk_``) across reruns and page switches.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from keiri_agent.errors import BlockError
from keiri_agent.ui import session_state
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.screen_words import shown_table

__all__ = ["EVAL_FILE_KEY", "EVAL_REPORT_KEY", "render_eval_panel"]

PAGE = "helpdesk"
(
    EVAL_FILE_KEY,
    EVAL_TOOL_KEY,
    EVAL_K_KEY,
    EVAL_RUN_KEY,
    EVAL_REPORT_KEY,
) = session_state.page_keys(
    PAGE,
    "eval_questions",
    "eval_tool",
    "eval_k",
    "eval_run",
    "eval_report",
)
TOOL_LABELS = {"hybrid": "hybrid（両方）", "manual": "manual（マニュアル）", "qa": "qa（Q/A）"}


def _run(questions: Path, index_dir: Path, tool: str, k: int) -> object:
    from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
    from keiri_agent.agents.helpdesk.knowledge.evaluate import evaluate, read_questions

    cases = read_questions(questions)
    with KnowledgeBase.open(index_dir) as kb:
        bar = st.progress(0.0, text="検索しています…")

        def advance(done: int, total: int) -> None:
            bar.progress(done / total)

        report = evaluate(kb, cases, tool=tool, k=k, progress=advance)
        bar.empty()
    return report


def render_eval_panel(index_dir: Path) -> None:
    """The 検索の評価 panel for the knowledge base at ``index_dir``."""
    with st.expander("検索の評価（recall@k・MRR）", expanded=EVAL_REPORT_KEY in st.session_state):
        st.caption(
            "質問と答えの場所（CSV / JSONL: question と file・page・row・passage）の一覧で、"
            "このナレッジベースの検索が答えを上位 k 件に出せるかを測ります（LLM は使いません）。"
        )
        path_text = session_state.keep(
            PAGE,
            EVAL_FILE_KEY,
            st.text_input(
                "質問ファイル",
                key=session_state.restore(PAGE, EVAL_FILE_KEY, ""),
                placeholder="例: examples/helpdesk_eval/questions.jsonl",
            ),
        )
        left, right = st.columns(2)
        tool = session_state.keep(
            PAGE,
            EVAL_TOOL_KEY,
            left.selectbox(
                "検索方法",
                list(TOOL_LABELS),
                format_func=TOOL_LABELS.__getitem__,
                key=session_state.restore(PAGE, EVAL_TOOL_KEY, "hybrid"),
            ),
        )
        k = session_state.keep(
            PAGE,
            EVAL_K_KEY,
            right.number_input(
                "上位 k 件", min_value=1, max_value=10, step=1,
                key=session_state.restore(PAGE, EVAL_K_KEY, 3),
            ),
        )  # fmt: skip
        if st.button("評価する", key=EVAL_RUN_KEY, icon=":material/analytics:"):
            if not path_text.strip():
                st.warning("質問ファイルのパスを入力してください。")
            else:
                try:
                    st.session_state[EVAL_REPORT_KEY] = _run(
                        Path(path_text.strip()).expanduser(), index_dir, str(tool), int(k)
                    )
                except BlockError as exc:
                    st.session_state.pop(EVAL_REPORT_KEY, None)
                    render_error(exc)
        report = st.session_state.get(EVAL_REPORT_KEY)
        if report is not None:
            _render_report(report)


def _render_report(report: object) -> None:
    from keiri_agent.agents.helpdesk.knowledge.evaluate import EvalReport

    assert isinstance(report, EvalReport)
    a, b, c = st.columns(3)
    a.metric(f"recall@{report.k}", f"{report.recall_at_k:.3f}", help="上位 k 件に答えがあった割合")
    b.metric("MRR", f"{report.mrr:.3f}", help="最初に答えが出た順位の逆数の平均")
    c.metric("該当なし", f"{report.no_match:,} 件", help="資料が扱っていないと判断した質問")
    floor = f"関連度の下限 {report.min_relevance:g}"
    if report.min_margin is not None:
        floor += f"・意味検索の下限 {report.min_margin:g}"
    st.caption(f"{report.tool}・質問 {report.questions:,} 件・{floor}")
    if not report.misses:
        st.success(f"すべての質問で上位 {report.k} 件に答えがありました。")
        return
    st.markdown(f"**上位 {report.k} 件に答えがなかった質問（{len(report.misses):,} 件）**")
    st.dataframe(
        shown_table(
            [
                {
                    "質問": miss.question,
                    "答えの場所": " / ".join(miss.expected),
                    "順位": "圏外" if miss.rank is None else str(miss.rank),
                    f"上位 {report.k} 件": " / ".join(miss.top) or "（該当なし）",
                }
                for miss in report.misses
            ]
        ),
        hide_index=True,
    )
