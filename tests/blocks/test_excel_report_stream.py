"""excel.write_report written row by row: the same workbook as the in-memory writer, any size.

``REPORT_GOLDEN`` holds what the writer before streaming (commit d928121: every cell built in
memory) wrote for :func:`report_inputs`: cell values, number formats, bold cells, column widths,
frozen panes, filters and header fills of every sheet. It was recorded by running this module
(``python -m tests.blocks.test_excel_report_stream``) with ``PYTHONPATH`` at that commit's
``src``; the streaming writer must write the same workbook.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from openpyxl import load_workbook
from openpyxl.worksheet.worksheet import Worksheet

from keiri_agent.blocks.base import Block, BlockContext
from keiri_agent.blocks.excel import report_layout
from keiri_agent.blocks.excel.write_report import MAX_ROWS
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents import read_table
from keiri_agent.documents.amount_format import total_row_flags
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

REPORT_GOLDEN = Path(__file__).resolve().parents[1] / "data" / "excel_report_golden.json"
SMALL_CHUNK = 7  # rows per chunk in these tests, so that a table spans several chunks
NAMES = ("ｶ)ﾃｽﾄｼｮｳｼﾞ", "ﾕ)ｻﾝﾌﾟﾙｺｳｷﾞｮｳ", "ｺﾞｳﾄﾞｳｶﾞｲｼｬ ﾐﾄﾞﾘ", "ﾔﾏﾀﾞ ﾀﾛｳ")


def ledger_csv(path: Path, rows: int = 40) -> Path:
    """A CP932 仕訳明細 as a company exports it: slash dates (some blank), amounts with
    separators and negatives in three spellings, half-width kana, 令和 text, blank notes."""
    negatives = ('"△5,500"', '"-1,200"', "(300)")
    lines = ["伝票番号,計上日,支払期日,取引先コード,取引先名カナ,摘要,金額,消費税,率,備考"]
    for n in range(rows):
        day = dt.date(2025, 4, 1) + dt.timedelta(days=n * 9)
        due = "" if n % 4 == 1 else f"{day + dt.timedelta(days=30):%Y/%m/%d}"
        amount = negatives[n % 3] if n % 5 == 2 else f'"{(n + 1) * 12_345:,}"'
        tax = "" if n % 6 == 3 else f"{(n + 1) * 1_234}"
        note = "令和7年度 再発行" if n % 7 == 0 else ""
        lines.append(
            f"J{n + 1:05d},{day:%Y/%m/%d},{due},{1000 + n},{NAMES[n % 4]},"
            f"令和{day.year - 2018}年{day.month}月分 保守料,{amount},{tax},{n / 8},{note}"
        )
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))
    return path


SUMMARY = [
    {"部門": "営業部", "取引先": "ｶ)ﾃｽﾄｼｮｳｼﾞ", "件数": 3, "金額": 1_234_567, "計上": "2025-04-30"},
    {"部門": "営業部", "取引先": None, "件数": 1, "金額": -5_500, "計上": "2025-05-01 09:30:00"},
    {"部門": "営業部 計", "取引先": None, "件数": 4, "金額": 1_229_067, "計上": None},
    {"部門": "管理部", "取引先": "=SUM(A1:A9)", "件数": 2, "金額": 0, "計上": "令和7年5月1日"},
    {"部門": "合計", "取引先": "", "件数": 6, "金額": 1_229_067, "計上": "2025-02-30"},
]


def report_inputs(folder: Path) -> dict[str, Any]:
    """Several sheets: a table read from a ledger file, records with totals, an empty table."""
    table = read_table(ledger_csv(folder / "仕訳明細.csv")).table()
    return {
        "sheets": [
            {"name": "仕訳明細", "title": "令和7年度 仕訳明細", "rows": table},
            {"name": "部門別", "rows": SUMMARY, "number_formats": {"件数": "0件"}},
            {"name": "差異", "title": "差異", "rows": [], "columns": ["取引先", "金額"]},
        ]
    }


def describe(path: Path) -> dict[str, Any]:
    """What a user sees of each sheet: values, number formats, bold cells, widths, panes."""
    book = load_workbook(path)
    sheets = {}
    for ws in book.worksheets:
        assert isinstance(ws, Worksheet)
        cells = [
            [[_shown(c.value), c.number_format, bool(c.font.b), c.data_type] for c in row]
            for row in ws.iter_rows()
        ]
        sheets[ws.title] = {
            "cells": cells,
            "widths": {k: v.width for k, v in sorted(ws.column_dimensions.items()) if v.width},
            "freeze": ws.freeze_panes,
            "filter": ws.auto_filter.ref,
            "fills": [
                c.fill.fgColor.rgb for row in ws.iter_rows() for c in row if c.fill.fill_type
            ],
            "dimensions": ws.dimensions,
        }
    return {"sheets": book.sheetnames, "content": sheets}


def _shown(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date | dt.datetime) else value


def write(block: Block, inputs: dict[str, Any], ctx: BlockContext) -> Path:
    return Path(run_like_runner(block, inputs, ctx)["report"]["output_path"])


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("excel.write_report")


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_layout, "CHUNK_ROWS", SMALL_CHUNK)


def test_streamed_report_is_the_workbook_the_in_memory_writer_made(
    block: Block, make_ctx: ContextFactory, tmp_path: Path, small_chunks: None
) -> None:
    path = write(block, report_inputs(tmp_path), make_ctx())
    got = describe(path)
    assert got == json.loads(REPORT_GOLDEN.read_text(encoding="utf-8"))
    # What the golden file says, spelled out for a reader.
    ledger = got["content"]["仕訳明細"]
    assert ledger["freeze"] == "A3"
    assert ledger["filter"] == "A2:J42"
    first = ledger["cells"][2]
    assert first[1] == ["2025-04-01T00:00:00", "yyyy-mm-dd", False, "d"]  # a real date
    assert first[6] == [12_345, '#,##0;"△"#,##0', False, "n"]  # an amount, △ for negatives
    assert ["令和7年4月分 保守料", "General", False, "s"] in first  # 令和 text untouched
    assert ledger["cells"][3][2] == [None, "General", False, "n"]  # a blank stays empty


def test_a_table_is_not_made_into_records_at_once(
    block: Block, make_ctx: ContextFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records are made a chunk at a time (width sample aside), never the whole table."""
    rows = 3 * 4_096 + 5
    frame = pd.DataFrame({"伝票番号": np.arange(rows), "金額": np.arange(rows) * -7})
    asked: list[int] = []
    records = Table.records

    def counted(self: Table, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        made = records(self, start, stop)
        asked.append(len(made))
        return made

    monkeypatch.setattr(Table, "records", counted)
    path = write(block, {"sheets": [{"name": "表", "rows": Table(frame)}]}, make_ctx())
    assert max(asked) <= max(report_layout.CHUNK_ROWS, report_layout.WIDTH_SAMPLE_ROWS)
    ws = load_workbook(path, read_only=True)["表"]
    last = list(ws.iter_rows(min_row=rows + 1, values_only=True))
    assert last == [(rows - 1, (rows - 1) * -7)]


def test_over_excels_rows_is_refused_before_anything_is_written(
    block: Block, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx()
    big = Table(pd.DataFrame({"金額": np.zeros(MAX_ROWS + 1, dtype=np.int64)}))
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"sheets": [{"name": "全件", "rows": big}]}, ctx)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "行数の上限" in info.value.message
    assert "1,048,575 行" in info.value.message
    assert "複数のシート" in (info.value.hint or "")
    assert not ctx.work_dir().exists() or list(ctx.work_dir().iterdir()) == []


def test_a_failure_mid_write_leaves_no_workbook_and_no_temporary_files(
    block: Block,
    make_ctx: ContextFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_chunks: None,
) -> None:
    """Cancelled after some chunks were written: no report, nothing beside it, no sheet files
    left in the temporary folder."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    ctx = make_ctx()
    target = ctx.work_dir() / "report.xlsx"
    flags = total_row_flags
    chunks: list[int] = []

    def cancel_on_third(*args: Any) -> list[bool]:
        chunks.append(1)
        if len(chunks) == 3:
            ctx.cancel_event.set()  # the next chunk's check raises
        return flags(*args)

    monkeypatch.setattr(f"{report_layout.__name__}.total_row_flags", cancel_on_third)
    with pytest.raises(BlockError) as info:
        run_like_runner(block, report_inputs(tmp_path), ctx)
    assert info.value.code == ErrorCode.CANCELLED
    assert len(chunks) == 3
    assert not target.exists()
    assert list(ctx.work_dir().iterdir()) == []
    assert os.listdir(scratch) == []


def record() -> None:
    """Write ``REPORT_GOLDEN`` with the writer on ``PYTHONPATH`` (see the module docstring)."""
    registry = BlockRegistry()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        ctx = BlockContext(
            run_id="r", plan_id="p", node_id="n", block_version="1", workspace=folder / "run"
        )
        block = registry.load("excel.write_report")
        inputs = report_inputs(folder)
        block.check_inputs(inputs)
        path = Path(block.run(inputs, ctx)["report"]["output_path"])
        text = json.dumps(describe(path), ensure_ascii=False, indent=1)
    # One cell per line.
    text = re.sub(r"\[[^\[\]{}]*\]", lambda m: re.sub(r"\s*\n\s*", " ", m.group()), text)
    REPORT_GOLDEN.write_text(text + "\n", encoding="utf-8")
    print(f"recorded {REPORT_GOLDEN} with {sys.modules['keiri_agent'].__file__}")


if __name__ == "__main__":
    record()
