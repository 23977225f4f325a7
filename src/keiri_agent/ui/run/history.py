"""The 実行 page's run history: the run logs of a plan (``runs/{plan_id}/*.jsonl``), newest
first, each summarized from its first event and its last ``plan_complete`` (a long run's log is
not read whole), its start shown in ``KEIRI_TIMEZONE``; any of them can be opened again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final
from zoneinfo import ZoneInfo

import pandas as pd
import streamlit as st

from keiri_agent.errors import BlockError
from keiri_agent.events.logfile import first_event, read_backwards
from keiri_agent.events.models import PlanComplete, PlanStart
from keiri_agent.events.runlog import list_runs
from keiri_agent.localtime import shown_time
from keiri_agent.plan import STATUS_LABELS, PlanNames
from keiri_agent.ui.run.shown_run import ShownRun
from keiri_agent.ui.screen_words import shown_table

__all__ = ["HISTORY_LIMIT", "render_history", "run_kind"]

HISTORY_LIMIT: Final = 20


def run_kind(
    shown: ShownRun | None = None,
    start: PlanStart | None = None,
    names: PlanNames | None = None,
) -> str:
    """実行 / 再開（元: run id）/ 再実行（ノード名 から）: of the run on the page (``shown``) or
    of a logged run (its ``start``)."""
    resume_of = start.resume_of if start else shown.resume_of if shown else None
    rerun_from = start.rerun_from if start else shown.rerun_from if shown else None
    if rerun_from:
        return f"再実行（{names.node(rerun_from) if names else rerun_from} から）"
    if resume_of:
        return f"再開（元: {resume_of}）"
    return "実行"


def _seconds(duration_ms: float | None) -> str:
    return "" if duration_ms is None else f"{duration_ms / 1000:,.1f} 秒"


def _summary(log: Path, zone: ZoneInfo, names: PlanNames | None) -> dict[str, Any]:
    # The first event and the last plan_complete: a long run's log is not read whole.
    try:
        first = first_event(log)
        start = first if isinstance(first, PlanStart) else None
        end = next((e for e in read_backwards(log) if isinstance(e, PlanComplete)), None)
    except BlockError as exc:
        return {"開始": "", "状態": f"読めません: {exc.message}", "種類": "", "実行 ID": log.stem}
    status = STATUS_LABELS.get(end.status, end.status) if end else "実行中または中断"
    return {
        "開始": shown_time(start.timestamp, zone) if start else "",
        "状態": status,
        "所要時間": _seconds(end.total_duration_ms if end else None),
        "種類": run_kind(start=start, names=names) if start else "",
        "実行 ID": start.run_id if start else log.stem,
    }


def render_history(
    plan_id: str,
    *,
    runs_dir: Path,
    zone: ZoneInfo,
    key: str,
    current: str | None = None,
    names: PlanNames | None = None,
) -> Path | None:
    """The plan's recent runs, started times in ``zone``; returns the log the person chose to
    open (None otherwise). The choice starts at ``current``, the run on screen."""
    logs = list_runs(plan_id, runs_dir=runs_dir)[:HISTORY_LIMIT]
    if not logs:
        st.caption("この Plan の実行履歴はまだありません。")
        return None
    rows = [_summary(log, zone, names) for log in logs]
    st.dataframe(shown_table(pd.DataFrame(rows), zone), hide_index=True)
    labels = {
        str(log): f"{row['開始']}  {row['状態']}  {row['実行 ID']}"
        for log, row in zip(logs, rows, strict=True)
    }
    pick, shown = f"{key}_pick", f"{key}_shown"
    if st.session_state.get(shown) != current:  # a new run on screen: the choice starts there
        st.session_state[shown] = current
        ids = [row["実行 ID"] for row in rows]
        st.session_state[pick] = str(logs[ids.index(current)]) if current in ids else str(logs[0])
    if st.session_state.get(pick) not in labels:  # its run was removed (gc)
        st.session_state[pick] = str(logs[0])
    chosen = st.selectbox("開く実行", list(labels), format_func=labels.__getitem__, key=pick)
    if st.button("この実行を開く", key=f"{key}_open", icon=":material/history:") and chosen:
        return Path(chosen)
    return None
