"""table.filter and table.sort at ledger scale: a 200,000-row ledger is filtered and sorted by
its columns (its rows are never made records), the result keeps each row's file line, and an
unreadable cell is named by its file line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.schema import check_value, resolve_port
from keiri_agent.documents.table_value import Table, TableOrigin
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory

ROWS = 200_000
FIRST_LINE = 2  # the CSV's header is line 1


class RecordCountingTable(Table):
    """A table that counts the rows turned into records (a row-by-row block makes them all)."""

    __slots__ = ("rows_read",)

    def records(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        out = super().records(start, stop)
        self.rows_read = getattr(self, "rows_read", 0) + len(out)
        return out


def run_counted(block: Block, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """What the runner does around a block (tests.blocks.conftest.run_like_runner), except the
    input port check, which takes only a Table itself, not this counting subclass."""
    resolved = {
        name: port["default"]
        for name, port in block.spec.inputs.items()
        if "default" in port and name not in inputs
    }
    resolved.update(inputs)
    block.check_inputs(resolved)
    outputs = block.run(resolved, ctx)
    for name, value in outputs.items():
        assert check_value(value, resolve_port(block.spec.outputs[name])) is None, name
    return outputs


def ledger(amounts: pd.Series | None = None) -> RecordCountingTable:
    """A 売上明細 as file.read_table gives it: typed columns, one CSV line per row."""
    rng = np.random.default_rng(42)
    frame = pd.DataFrame(
        {
            "売上日": pd.Timestamp("2025-01-01")
            + pd.to_timedelta(rng.integers(0, 365, ROWS), unit="D"),
            "伝票番号": pd.Series([f"S{n:07d}" for n in range(ROWS)], dtype="str"),
            "得意先": pd.Series(
                [f"取引先{n:03d}" for n in rng.integers(0, 200, ROWS)], dtype="str"
            ),
            "金額": rng.integers(1, 500, ROWS) * 1000 if amounts is None else amounts,
        }
    )
    return RecordCountingTable(
        frame,
        origin=TableOrigin("売上明細.csv"),
        positions=np.arange(FIRST_LINE, ROWS + FIRST_LINE),
    )


@pytest.fixture
def filter_block(registry: BlockRegistry) -> Block:
    return registry.load("table.filter")


@pytest.fixture
def sort_block(registry: BlockRegistry) -> Block:
    return registry.load("table.sort")


def test_a_large_ledger_is_filtered_by_columns_and_keeps_file_lines(
    filter_block: Block, make_ctx: ContextFactory
) -> None:
    table = ledger()
    conditions = [
        {"column": "金額", "op": "ge", "value": "¥300,000"},
        {"column": "売上日", "op": "between", "value": ["2025/4/1", "2025年9月30日"]},
        {"column": "得意先", "op": "in", "value": ["取引先007", "取引先０４２"]},  # NFKC
    ]
    out = run_counted(filter_block, {"table": table, "conditions": conditions}, make_ctx("filter"))
    frame = table.frame
    wanted = (
        (frame["金額"] >= 300_000)
        & frame["売上日"].between("2025-04-01", "2025-09-30")
        & frame["得意先"].isin(["取引先007", "取引先042"])
    ).to_numpy()
    rows = out["rows"]
    assert 0 < len(rows) < ROWS // 100
    assert rows.positions.tolist() == (np.flatnonzero(wanted) + FIRST_LINE).tolist()
    assert out["summary"]["excluded_rows"] == ROWS - len(rows)
    assert getattr(table, "rows_read", 0) == 0  # never read row by row


def test_cells_a_large_ledger_cannot_compare_are_named_by_file_line(
    filter_block: Block, make_ctx: ContextFactory
) -> None:
    amounts = pd.Series(np.arange(ROWS) * 10, dtype=object)
    amounts[[999, 150_000]] = ["未定", None]
    table = ledger(amounts)
    conditions = [{"column": "金額", "op": "gt", "value": 0}]
    with pytest.raises(BlockError) as caught:
        run_counted(filter_block, {"table": table, "conditions": conditions}, make_ctx())
    error = caught.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.message.startswith("2 行に大小を比較できない値があります")
    assert "売上明細.csv の 1001 行目の列「金額」（値: '未定'" in error.message
    assert "売上明細.csv の 150002 行目の列「金額」（値: 空欄" in error.message
    assert getattr(table, "rows_read", 0) == 0


def test_a_large_ledger_is_sorted_by_columns_stably_and_keeps_file_lines(
    sort_block: Block, make_ctx: ContextFactory
) -> None:
    table = ledger()
    by = [{"column": "得意先"}, {"column": "金額", "order": "desc"}]
    out = run_counted(sort_block, {"table": table, "by": by, "limit": 500}, make_ctx())
    expected = table.frame.sort_values(["得意先", "金額"], ascending=[True, False], kind="stable")
    rows = out["rows"]
    assert rows.positions.tolist() == (expected.index[:500] + FIRST_LINE).tolist()
    assert [k["as"] for k in out["summary"]["keys"]] == ["text", "number"]
    assert getattr(table, "rows_read", 0) == 0


def test_a_column_of_codes_sorts_as_text_and_a_typo_in_amounts_is_named_by_file_line(
    sort_block: Block, make_ctx: ContextFactory
) -> None:
    table = ledger()
    out = run_counted(
        sort_block, {"table": table, "by": [{"column": "伝票番号", "order": "desc"}]}, make_ctx()
    )
    assert out["rows"].positions[:2].tolist() == [ROWS + 1, ROWS]
    assert out["summary"]["keys"][0]["as"] == "text"

    amounts = pd.Series(np.arange(ROWS) * 10, dtype=object)
    amounts[[5, 70_000]] = ["1O,000", "未定"]  # a letter O typed for a zero
    table = ledger(amounts)
    with pytest.raises(BlockError) as caught:
        run_counted(sort_block, {"table": table, "by": "金額"}, make_ctx())
    message = caught.value.message
    assert "数値の列に数値として読めない値があります" in message
    assert "売上明細.csv の 7 行目（'1O,000'）、売上明細.csv の 70002 行目（'未定'）。" in message
    assert caught.value.details["positions"] == [7, 70_002]
    assert getattr(table, "rows_read", 0) == 0
