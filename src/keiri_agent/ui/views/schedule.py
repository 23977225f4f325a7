"""The 予定 page: the schedules and triggers of the workspace, and adding or removing a schedule.

The same store and checks as ``keiri-agent schedule`` (``keiri_agent.schedule``): each schedule
with its rule in words, its next fire time in ``KEIRI_TIMEZONE``, its version pin, its last
fire with the versions it ran (実行した版; a folder trigger's last file likewise) and the
warning when the plan's working copy has unapproved changes or today's company holidays leave
a month ahead without its day (``schedule.views``). Schedules fire only while
``keiri-agent serve`` runs; the page says so. Its Session State is under ``schedule_``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.ui import session_state
from keiri_agent.ui.error_view import render_error, settings_or_error
from keiri_agent.ui.screen_words import shown_table

__all__ = ["FORMS", "render"]

PAGE = "schedule"
(
    PLAN_KEY,
    FORM_KEY,
    N_KEY,
    DAY_KEY,
    HOLIDAY_KEY,
    AT_KEY,
    CRON_KEY,
    MISFIRE_KEY,
    ADD_KEY,
    REMOVE_ID_KEY,
    REMOVE_KEY,
    ERROR_KEY,
    OFFSET_KEY,
    WEEKDAY_KEY,
    NTH_KEY,
) = session_state.page_keys(
    PAGE,
    "plan",
    "form",
    "n",
    "day",
    "if_holiday",
    "at",
    "cron",
    "misfire",
    "add",
    "remove_id",
    "remove",
    "error",
    "offset",
    "weekday",
    "nth",
)
FORMS = {
    "business_day": "第N営業日",
    "last_business_day": "最終営業日",
    "day": "毎月D日",
    "day_offset": "D日のN営業日前・後",
    "weekday": "毎週",
    "nth_weekday": "毎月第N曜日",
    "cron": "cron 式",
}
HOLIDAYS = {"before": "前営業日", "after": "翌営業日", "skip": "実行しない"}
NTHS = {1: "第1", 2: "第2", 3: "第3", 4: "第4", -1: "最終"}
_WEEKLY = ("weekday", "nth_weekday")  # the forms that name a weekday
MISFIRES = {"run_once": "1 回実行", "skip": "実行しない"}


def _rule() -> dict[str, Any]:
    kind = st.session_state.get(FORM_KEY, "business_day")
    if kind == "cron":
        return {"kind": "cron", "expr": st.session_state.get(CRON_KEY, "")}
    at = st.session_state.get(AT_KEY, "09:00")
    if kind == "day_offset":  # the day form with an offset instead of a holiday rule
        day, offset = st.session_state.get(DAY_KEY, 31), st.session_state.get(OFFSET_KEY, -1)
        return {"kind": "day", "day": int(day), "offset": int(offset), "at": at}
    rule: dict[str, Any] = {"kind": kind, "at": at}
    if kind == "business_day":
        rule["n"] = int(st.session_state.get(N_KEY, 1))
    if kind == "day":
        rule["day"] = int(st.session_state.get(DAY_KEY, 25))
    if kind in _WEEKLY:
        rule["weekday"] = st.session_state.get(WEEKDAY_KEY, "mon")
    if kind == "nth_weekday":
        rule["n"] = int(st.session_state.get(NTH_KEY, 1))
    if kind in ("day", *_WEEKLY):
        rule["if_holiday"] = st.session_state.get(_holiday_key(kind), _holiday_default(kind))
    return rule


def _holiday_key(kind: str) -> str:
    """Each form keeps its own choice: 毎月D日 and 毎週 move a holiday different ways by default."""
    return HOLIDAY_KEY if kind == "day" else f"{HOLIDAY_KEY}_{kind}"


def _holiday_default(kind: str) -> str:
    """The rule's own default (毎月D日: 前営業日; 毎週: 翌営業日), as the CLI and the API apply it."""
    from keiri_agent.schedule import DayRule, NthWeekdayRule, WeekdayRule

    if kind in _WEEKLY:
        rule = WeekdayRule if kind == "weekday" else NthWeekdayRule
        return str(rule.model_fields["if_holiday"].default)
    return str(DayRule.model_fields["if_holiday"].default or "before")


def _add(settings: Settings) -> None:
    from keiri_agent.schedule import ScheduleRequest, add_schedule, parse_rule
    from keiri_agent.ui.signin import acting_name

    request = ScheduleRequest.of(
        {
            "plan_id": str(st.session_state.get(PLAN_KEY, "")).strip(),
            "rule": parse_rule(_rule()),
            "misfire": st.session_state.get(MISFIRE_KEY, "run_once"),
        }
    )
    add_schedule(settings, request, created_by=acting_name(settings))


def _render_form(settings: Settings) -> None:
    from keiri_agent.schedule import MAX_OFFSET, WEEKDAYS

    st.subheader("予定を登録")
    st.text_input("Plan の id", key=PLAN_KEY, placeholder="keiri/monthly_close")
    kind = st.radio(
        "実行の条件", list(FORMS), format_func=FORMS.__getitem__, key=FORM_KEY, horizontal=True
    )
    if kind == "cron":
        st.text_input(
            "cron 式（KEIRI_TIMEZONE の時刻、営業日だけ）", key=CRON_KEY, value="0 9 * * *"
        )
    else:
        if kind == "business_day":
            st.number_input("第N営業日", min_value=1, max_value=15, value=3, key=N_KEY)
        if kind in ("day", "day_offset"):
            st.number_input("日（31 は末日）", min_value=1, max_value=31, value=25, key=DAY_KEY)
        if kind == "day_offset":
            st.number_input(
                "営業日のずらし（-1 は前営業日、1 は翌営業日。D日は数えない）",
                min_value=-MAX_OFFSET,
                max_value=MAX_OFFSET,
                value=-1,
                key=OFFSET_KEY,
            )
        if kind == "nth_weekday":
            st.selectbox("第N", list(NTHS), format_func=NTHS.__getitem__, key=NTH_KEY)
        if kind in _WEEKLY:
            st.selectbox(
                "曜日", list(WEEKDAYS), format_func=lambda w: f"{WEEKDAYS[w]}曜", key=WEEKDAY_KEY
            )
        if kind in ("day", *_WEEKLY):
            st.selectbox(
                "休日なら",
                list(HOLIDAYS),
                index=list(HOLIDAYS).index(_holiday_default(kind)),
                format_func=HOLIDAYS.__getitem__,
                key=_holiday_key(kind),
            )
        st.text_input("時刻（HH:MM）", value="09:00", key=AT_KEY)
    st.selectbox(
        "サーバー停止中に過ぎたら",
        list(MISFIRES),
        format_func=MISFIRES.__getitem__,
        key=MISFIRE_KEY,
    )
    if st.button("登録", key=ADD_KEY, type="primary"):
        try:
            _add(settings)
            st.session_state.pop(ERROR_KEY, None)
        except BlockError as exc:
            st.session_state[ERROR_KEY] = exc
    error = st.session_state.get(ERROR_KEY)
    if isinstance(error, BlockError):
        render_error(error)


def _last(rows: list[dict[str, Any]], when: str) -> dict[str, str]:
    """The last start of a schedule (its fires) or a folder trigger (its files), as the CLI
    says it: when, what became of it, and the versions its run ran (``versions_text``: as the
    versions page names them, ``keiri/close v3（1a2b3c4d5e6f）``)."""
    if not rows:
        return {"前回": "", "実行した版": ""}
    last = rows[0]
    return {
        "前回": f"{last[when]}（{last['outcome_text']}）",
        "実行した版": last["versions_text"],
    }


def _render_list(settings: Settings) -> None:
    from keiri_agent.schedule import ScheduleStore, schedule_views, trigger_views

    store = ScheduleStore.of(settings)
    views = schedule_views(settings)
    st.subheader("予定")
    if not views:
        st.info("予定はありません。", icon="🗓️")
    else:
        rows = [
            {
                "ID": v["id"],
                "Plan": v["plan_id"],
                "条件": v["rule_text"],
                "次回": v["next_fire_local"],
                "版": v["version_text"],
                "停止中に過ぎたら": MISFIRES[v["misfire"]],
                **_last(v["recent_fires"], "fire_time_local"),
                "登録者": v["created_by"],
            }
            for v in views
        ]
        st.dataframe(shown_table(rows, settings.keiri_timezone), hide_index=True)
        for view in views:
            if view["warning"]:
                st.warning(f"{view['id']}（{view['plan_id']}）: {view['warning']}")
        ids = [v["id"] for v in views]
        chosen = st.selectbox("削除する予定", ids, key=REMOVE_ID_KEY)
        if st.button("削除", key=REMOVE_KEY) and chosen:
            store.schedules.remove(chosen)
            st.rerun()
    triggers = trigger_views(settings)
    if triggers:
        st.subheader("トリガー")
        rows = [
            {
                "ID": t["id"],
                "Plan": t["plan_id"],
                "種類": "Webhook" if t["kind"] == "webhook" else "フォルダ",
                "場所": t["url"] or t["folder"],
                "版": t["version_text"],
                **_last(t["recent_files"], "claimed_at_local"),
            }
            for t in triggers
        ]
        st.dataframe(shown_table(rows, settings.keiri_timezone), hide_index=True)


def render() -> None:
    st.header("予定")
    st.caption(
        "Plan を営業日カレンダー（土日・祝日・会社休日を除く）や cron で自動実行します。"
        "実行するのは API サーバー（keiri-agent serve）です。"
    )
    settings = settings_or_error()
    if settings is None:
        return
    _render_form(settings)
    try:
        _render_list(settings)
    except BlockError as exc:
        render_error(exc)
