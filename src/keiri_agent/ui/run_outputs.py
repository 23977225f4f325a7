"""What a plan run shows on the 実行 page: node states, result tables, files, run history.

Tables are every node output that is a list of records (or a DataFrame), newest node first,
named as the plan's workbook names them (``output_names``), amounts with thousands separators;
files are the paths in the outputs that the run wrote under the runs directory (inputs are not
offered for download). The history lists the run logs of a plan (``runs/{plan_id}/*.jsonl``),
newest first: each summarized from its first event and its last ``plan_complete``, its start
shown in ``KEIRI_TIMEZONE`` with the zone named (``keiri_agent.localtime``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final
from zoneinfo import ZoneInfo

import pandas as pd
import streamlit as st

from keiri_agent.documents.amount_format import is_amount_column
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import BlockError
from keiri_agent.events.logfile import first_event, read_backwards
from keiri_agent.events.models import PlanComplete, PlanStart, summarize_value
from keiri_agent.events.runlog import list_runs
from keiri_agent.localtime import shown_time
from keiri_agent.plan import STATUS_LABELS
from keiri_agent.ui.output_names import OutputNames
from keiri_agent.ui.report_view import render_downloads
from keiri_agent.ui.run_view import Outcome

__all__ = [
    "HISTORY_LIMIT",
    "amount_columns",
    "output_files",
    "output_tables",
    "render_history",
    "render_outputs",
    "run_kind",
]

HISTORY_LIMIT: Final = 20
IMAGE_SUFFIXES: Final = frozenset({".png", ".jpg", ".jpeg", ".svg", ".gif"})
MAX_WALK: Final = 50_000  # values looked at when searching outputs for written files


def run_kind(outcome: Outcome | None = None, start: PlanStart | None = None) -> str:
    """実行 / 再開（元: run id）/ 再実行（ノード から）."""
    resume_of = start.resume_of if start else outcome.resume_of if outcome else None
    rerun_from = start.rerun_from if start else outcome.rerun_from if outcome else None
    if rerun_from:
        return f"再実行（{rerun_from} から）"
    if resume_of:
        return f"再開（元: {resume_of}）"
    return "実行"


def output_tables(
    outputs: Mapping[str, Mapping[str, Any]], names: OutputNames | None = None
) -> list[tuple[str, pd.DataFrame]]:
    """(label, table) for each output that is a table, the last finished node first; the label
    is the table's Japanese name (see ``output_names``) and its row count."""
    tables = []
    for node_id in reversed(list(outputs)):
        for port, value in outputs[node_id].items():
            frame = _as_frame(value)
            if frame is not None:
                name = (names or {}).get((node_id, port), f"{node_id} › {port}")
                tables.append((f"{name}（{len(frame):,} 行）", frame))
    return tables


def amount_columns(frame: pd.DataFrame) -> dict[str, Any]:
    """Column settings that show amount columns with thousands separators (the rule the
    workbook uses, ``is_amount_column``)."""
    return {
        str(column): st.column_config.NumberColumn(format="localized")
        for column in frame.columns
        if is_amount_column(str(column), frame[column].tolist())
    }


def _as_frame(value: Any) -> pd.DataFrame | None:
    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, Table):
        return pd.DataFrame(value.records(), columns=value.columns)
    if isinstance(value, list) and all(isinstance(row, Mapping) for row in value):
        return pd.DataFrame([dict(row) for row in value])
    return None


def _strings(value: Any, budget: list[int]) -> Iterator[str]:
    budget[0] -= 1
    if budget[0] < 0:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item, budget)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, budget)


def output_files(outputs: Mapping[str, Mapping[str, Any]], runs_dir: Path) -> list[Path]:
    """Files named in the outputs that runs wrote (under ``runs_dir``), in output order."""
    base = runs_dir.resolve()
    prefix = str(base)
    found: dict[Path, None] = {}
    for text in _strings(dict(outputs), [MAX_WALK]):
        if not text.startswith(prefix) or "\n" in text:
            continue
        path = Path(text)
        if path.is_file() and path.resolve().is_relative_to(base):
            found[path] = None
    return list(found)


def render_outputs(
    outcome: Outcome, *, runs_dir: Path, key: str, names: OutputNames | None = None
) -> None:
    """Result tables, written files (with downloads) and every node's outputs as JSON."""
    tables = output_tables(outcome.outputs, names)
    files = output_files(outcome.outputs, runs_dir)
    if tables:
        st.subheader("結果の表")
        tabs = st.tabs([label for label, _ in tables])
        for tab, (_, frame) in zip(tabs, tables, strict=True):
            with tab:
                if frame.empty:
                    st.caption("該当する行はありません。")
                else:
                    st.dataframe(frame, hide_index=True, column_config=amount_columns(frame))
    if files:
        st.subheader("出力ファイル")
        for path in files:
            if path.suffix.lower() == ".md":
                with st.container(border=True):
                    st.markdown(path.read_text(encoding="utf-8"))
            elif path.suffix.lower() in IMAGE_SUFFIXES:
                st.image(str(path), caption=path.name)
        render_downloads(None, files, key=f"{key}_download")
    if outcome.outputs:
        with st.expander("ノードごとの出力（JSON）"):
            for node_id, outputs in outcome.outputs.items():
                st.markdown(f"**{node_id}**")
                st.json(summarize_value(dict(outputs)), expanded=False)


def _summary(log: Path, zone: ZoneInfo) -> dict[str, Any]:
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
        "種類": run_kind(start=start) if start else "",
        "実行 ID": start.run_id if start else log.stem,
        "時間(ms)": round(end.total_duration_ms) if end else None,
    }


def render_history(plan_id: str, *, runs_dir: Path, zone: ZoneInfo, key: str) -> Path | None:
    """The plan's recent runs, started times in ``zone``; returns the log the person chose to
    open (None otherwise)."""
    logs = list_runs(plan_id, runs_dir=runs_dir)[:HISTORY_LIMIT]
    if not logs:
        st.caption("この Plan の実行履歴はまだありません。")
        return None
    rows = [_summary(log, zone) for log in logs]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    labels = {
        str(log): f"{row['開始']}  {row['状態']}  {row['実行 ID']}"
        for log, row in zip(logs, rows, strict=True)
    }
    chosen = st.selectbox(
        "開く実行", list(labels), format_func=labels.__getitem__, key=f"{key}_pick"
    )
    if st.button("この実行を開く", key=f"{key}_open", icon=":material/history:") and chosen:
        return Path(chosen)
    return None
