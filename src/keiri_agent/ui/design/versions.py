"""The 設計 page's 版と承認 section: a plan's versions, what changed between two of them, and
承認 / 却下.

The versions come from the settings' ``VersionStore`` (``keiri_agent.versions``): every 登録 of
the page, ``keiri-agent plan save`` and ``plan generate``, and the API's saves. The diff is the
plan engine's (``keiri_agent.plan.diff_plans`` through ``control.changes.compare``), listed in
Japanese, with the newer version's DAG drawn and its added, changed and moved nodes coloured
(the removed ones on the older version's DAG). 承認 and 却下 act as the signed-in user (the OS
user when the app is open) by the rules of ``versions.review``: only an approver, never on their
own version unless self-approval is allowed; a refusal is shown as the error it is.

Session State: the keys below (prefix ``design_``) keep the chosen plan and versions.
"""

from __future__ import annotations

from typing import Any, Final

import streamlit as st

from keiri_agent.config import Settings
from keiri_agent.control.changes import compare
from keiri_agent.errors import BlockError
from keiri_agent.localtime import shown_time
from keiri_agent.plan import parse_source
from keiri_agent.ui import session_state
from keiri_agent.ui.design.state import PAGE
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.plan_graph import plan_dot
from keiri_agent.ui.screen_words import shown_table
from keiri_agent.ui.signin import current_user
from keiri_agent.versions import STATUS_LABELS, Version, VersionStore, review, reviewer_for

__all__ = [
    "PLAN_KEY",
    "REVIEWED_KEY",
    "SAVED_VERSION_KEY",
    "render",
    "render_saved",
    "version_rows",
]

SAVED_VERSION_KEY: Final = session_state.page_key(PAGE, "saved_version")
PLAN_KEY: Final = session_state.page_key(PAGE, "versions_plan")
OLD_KEY: Final = session_state.page_key(PAGE, "diff_from")
NEW_KEY: Final = session_state.page_key(PAGE, "diff_to")
REVIEW_VERSION_KEY: Final = session_state.page_key(PAGE, "review_version")
COMMENT_KEY: Final = session_state.page_key(PAGE, "review_comment")
APPROVE_KEY: Final = session_state.page_key(PAGE, "approve_button")
REJECT_KEY: Final = session_state.page_key(PAGE, "reject_button")
REVIEWED_KEY: Final = session_state.page_key(PAGE, "reviewed")  # the last review's outcome


def render_saved(version: Version | None) -> None:
    """What 登録 made of the plan: its version and its state."""
    if version is None:
        return
    st.success(
        f"版 {version.label}として登録しました（{STATUS_LABELS[version.status]}）。"
        "下の「版と承認」で違いを確かめ、承認者が承認します。",
        icon="🗂️",
    )


def version_rows(versions: list[Version], settings: Settings) -> list[dict[str, Any]]:
    """One row per version, newest first, as the table shows them."""
    zone = settings.keiri_timezone
    rows = []
    for version in reversed(versions):
        last = version.decisions[-1] if version.decisions else None
        rows.append(
            {
                "版": f"v{version.number}",
                "ハッシュ": version.short,
                "登録日時": shown_time(version.saved_at, zone),
                "作成者": version.author,
                "状態": STATUS_LABELS[version.status],
                "承認・却下": (
                    f"{last.by}（{shown_time(last.at, zone)}）"
                    + ("・自己承認" if last.self_approved else "")
                    if last
                    else ""
                ),
                "コメント": last.comment if last else "",
                "メッセージ": version.message,
            }
        )
    return rows


def _label(versions: list[Version]) -> Any:
    by_id = {v.id: v for v in versions}
    return lambda vid: f"{by_id[vid].label}・{STATUS_LABELS[by_id[vid].status]}"


def _diff(settings: Settings, plan_id: str, versions: list[Version]) -> None:
    st.markdown("**版の違い**")
    if len(versions) < 2:
        st.caption("版が 2 つ以上になると、ここで違いを比べられます。")
        return
    ids = [v.id for v in versions]
    left, right = st.columns(2)
    with left:
        old = st.selectbox(
            "比べる元の版",
            ids,
            index=len(ids) - 2,
            key=OLD_KEY,
            format_func=_label(versions),
        )
    with right:
        new = st.selectbox(
            "比べる先の版", ids, index=len(ids) - 1, key=NEW_KEY, format_func=_label(versions)
        )
    try:
        found = compare(settings, plan_id, old, new)
    except BlockError as exc:
        render_error(exc)
        return
    if found.diff.empty:
        st.info("Plan としての違いはありません（書式・コメント・キーの順序だけの違いです）。")
        return
    st.markdown("\n".join(f"- {line.strip()}" for line in found.diff.lines()))
    st.caption(f"{found.new.label} のグラフ（緑: 追加、橙: 変更・移動）")
    st.graphviz_chart(plan_dot(parse_source(found.new.text).raw, changes=found.diff.touched("new")))
    removed = {path: kind for path, kind in found.diff.touched("old").items() if kind == "removed"}
    if removed:
        with st.expander(f"{found.old.label} のグラフ（灰色: 削除したノード）"):
            st.graphviz_chart(plan_dot(parse_source(found.old.text).raw, changes=removed))


def _review(settings: Settings, store: VersionStore, plan_id: str, versions: list[Version]) -> None:
    st.markdown("**承認・却下**")
    users, user = current_user(settings)
    who = user.name if user is not None else "この環境の利用者"
    st.caption(
        f"{who} として承認・却下します。承認できるのは承認者（role: approver）だけで、"
        "自分が登録した版は承認できません。"
    )
    ids = [v.id for v in versions]
    chosen = st.selectbox(
        "版", ids, index=len(ids) - 1, key=REVIEW_VERSION_KEY, format_func=_label(versions)
    )
    comment = st.text_input("コメント（任意、記録に残ります）", key=COMMENT_KEY)
    approve_col, reject_col, _ = st.columns([1, 1, 4])
    with approve_col:
        approving = st.button("承認", key=APPROVE_KEY, type="primary", icon=":material/verified:")
    with reject_col:
        rejecting = st.button("却下", key=REJECT_KEY, icon=":material/block:")
    if approving or rejecting:
        try:
            reviewer = reviewer_for(users, user)
            done = review(
                store,
                plan_id,
                chosen,
                "approve" if approving else "reject",
                reviewer,
                settings,
                comment=comment,
            )
        except BlockError as exc:
            st.session_state[REVIEWED_KEY] = exc
        else:
            st.session_state[REVIEWED_KEY] = done
        st.rerun()
    outcome = st.session_state.get(REVIEWED_KEY)
    if isinstance(outcome, BlockError):
        render_error(outcome)
    elif isinstance(outcome, Version) and outcome.plan_id == plan_id:
        last = outcome.decisions[-1]
        note = "（自己承認として記録しました）" if last.self_approved else ""
        st.success(f"版 {outcome.label}を{STATUS_LABELS[outcome.status]}にしました{note}。")


def render(settings: Settings, editing: str | None) -> None:
    """The 版と承認 section; ``editing`` is the id of the plan in the editor (chosen first)."""
    st.subheader("版と承認")
    store = VersionStore.of(settings)
    plans = store.plans()
    if not plans:
        st.caption("登録された版はまだありません。「登録」すると、その内容が版として残ります。")
        return
    session_state.restore(PAGE, PLAN_KEY, allowed=plans)
    if PLAN_KEY not in st.session_state and editing in plans:
        st.session_state[PLAN_KEY] = editing
    plan_id = session_state.keep(PAGE, PLAN_KEY, st.selectbox("Plan", plans, key=PLAN_KEY))
    try:
        versions = store.versions(plan_id)
    except BlockError as exc:
        render_error(exc)
        return
    st.dataframe(
        shown_table(version_rows(versions, settings), settings.keiri_timezone),
        hide_index=True,
        width="stretch",
    )
    _diff(settings, plan_id, versions)
    _review(settings, store, plan_id, versions)
