"""What a plan run shows on the 実行 page: result tables, reports, files.

Tables are the run's result tables (``plan.result_tables``), named and ordered as the plan
presents them (its workbook's sheets first), each a tab: amounts as they are shown everywhere
(``documents.amount_format``: separators, the unit in the header, negatives by
``KEIRI_NEGATIVE_AMOUNTS``), total rows in bold. Files are those the run wrote
(``plan.written_files``): Markdown reports drawn with their charts, other images shown, every
file downloadable, a report also as one HTML page and as a ZIP with its images. Every node's
raw outputs stay in a details expander, the only place node ids appear.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from keiri_agent.documents.amount_format import (
    AmountFormat,
    header_label,
    is_amount_column,
    total_row_flags,
)
from keiri_agent.events.models import summarize_value
from keiri_agent.plan import PlanNames, ResultTable, result_tables, written_files
from keiri_agent.ui.run.files import IMAGE_SUFFIXES, render_file_downloads, render_report
from keiri_agent.ui.run.shown_run import ShownRun
from keiri_agent.ui.screen_words import shown_styler

__all__ = ["MAX_SHOWN_ROWS", "render_outputs", "table_view"]

MAX_SHOWN_ROWS: Final = 10_000  # rows of one table drawn on the page (all are in the files)
BOLD: Final = "font-weight: bold"
RED: Final = "color: #d32f2f"


def table_view(table: ResultTable, amounts: AmountFormat) -> Styler:
    """The table as the page draws it: units in the headers, amounts shown by ``amounts``,
    total rows in bold (at most :data:`MAX_SHOWN_ROWS` rows)."""
    columns = table.columns
    records = table.table.records(0, MAX_SHOWN_ROWS)
    headers = {c: header_label(c, table.table.units.get(c)) for c in columns}
    frame = pd.DataFrame(records, columns=columns).rename(columns=headers)
    money = [headers[c] for c in columns if is_amount_column(c, (r.get(c) for r in records))]
    totals = total_row_flags(records, columns)
    styler = shown_styler(frame).format({c: amounts.text for c in money}, na_rep="")
    if any(totals):
        styler = styler.apply(
            lambda row: [BOLD if totals[int(row.name)] else ""] * len(row), axis=1
        )
    if amounts.negative == "red" and money:
        styler = styler.map(lambda v: RED if amounts.is_red(v) else "", subset=pd.Index(money))
    return styler


def _render_table(table: ResultTable, amounts: AmountFormat) -> None:
    if table.rows == 0:
        st.caption("該当する行はありません。")
        return
    st.dataframe(table_view(table, amounts), hide_index=True)
    if table.rows > MAX_SHOWN_ROWS:
        st.caption(
            f"先頭の {MAX_SHOWN_ROWS:,} 行を表示しています（全 {table.rows:,} 行は"
            "出力ファイルにあります）。"
        )


def _render_tables(tables: Sequence[ResultTable], amounts: AmountFormat) -> None:
    """The tables that stand as tabs; those a later step replaced apart, in 途中の表."""
    standing = [table for table in tables if not table.superseded]
    replaced = [table for table in tables if table.superseded]
    st.subheader("結果の表")
    if standing:
        tabs = st.tabs([f"{t.name}（{t.rows:,} 行）" for t in standing])
        for tab, table in zip(tabs, standing, strict=True):
            with tab:
                _render_table(table, amounts)
    if replaced:
        with st.expander(f"途中の表（{len(replaced)} 件、後の手順の表に置き換わったもの）"):
            for table in replaced:
                st.markdown(f"**{table.name}**（{table.rows:,} 行）")
                _render_table(table, amounts)


def render_outputs(
    outcome: ShownRun,
    *,
    runs_dir: Path,
    key: str,
    names: PlanNames | None,
    amounts: AmountFormat,
) -> None:
    """Result tables, reports with their charts, other images, downloads, and (in details)
    every node's outputs."""
    tables = result_tables(outcome.outputs, names)
    if tables:
        _render_tables(tables, amounts)
    files = written_files(outcome.log_path, outcome.outputs, runs_dir, names)
    reports = [path for path in files if path.suffix.lower() == ".md"]
    shown: set[Path] = set()
    for number, path in enumerate(reports):
        shown |= render_report(path, key=f"{key}_report{number}")
    images = [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES and p.resolve() not in shown]
    if images:
        st.subheader("グラフ・画像")
        for path in images:
            st.image(str(path), caption=path.name)
    if files:
        st.subheader("出力ファイル")
        render_file_downloads(files, key=f"{key}_download")
    if outcome.outputs:
        with st.expander("詳細: ノードごとの出力（JSON）"):
            for node_id, outputs in outcome.outputs.items():
                name = names.node(node_id) if names else node_id
                st.markdown(f"**{name}**（ノード ID: `{node_id}`）")
                st.json(summarize_value(dict(outputs)), expanded=False)
