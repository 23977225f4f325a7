"""A 合計 that does not add up is said in one sentence wherever it is told.

The reader's warning (``read_table``'s ``info.warnings``), the agents' refusal
(``agents.ledger``) and the ``file.read_table`` block's stop each say the same sentence
(``table_totals.mismatch_said``): the total's cell, both sums, which side is larger and what
can cause it. Before, each wrote its own (``差 100`` in one, ``明細の方が 100 多い`` in
another, the sign of the difference turned round in the third).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.agents.ledger import read_ledger
from keiri_agent.documents.tables import read_table
from keiri_agent.errors import BlockError
from keiri_agent.plan import PlanRunner
from tests.blocks.test_read_table_total_check import run, runner, write_ledger

__all__ = ["runner"]  # the plan runner fixture of the block's tests

ROWS = [
    ["日付", "部門", "金額"],
    ["2026/4/1", "営業部", "1,200"],
    ["2026/4/2", "総務部", "300"],
    ["合計", "", "1,400"],
]
# Said the same way by all three (the total's cell, both sums, the side that is larger).
SENTENCE = (
    "経費.csv の 4 行目の列「金額」の合計 1,400 が、明細の行の合計 1,500 と一致しません"
    "（明細の方が 100 多い）。見出しのない小計の行が明細に混ざっているとその金額が二重に"
    "集計され、行が抜けたり金額が読めなかったりすると足りなくなります"
)


def test_the_reader_the_agents_and_the_block_say_one_sentence(
    tmp_path: Path, runner: PlanRunner
) -> None:
    path = tmp_path / "経費.csv"
    write_ledger(path, ROWS)

    warnings = read_table(path).info.warnings
    assert any(w.startswith(SENTENCE) for w in warnings), warnings

    with pytest.raises(BlockError) as refused:
        read_ledger(path)
    assert refused.value.message.startswith(SENTENCE)
    assert refused.value.message.endswith("読み込みを止めました。")

    result = run(runner, tmp_path, path, "金額")
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.message.startswith(SENTENCE)
    assert result.error.message.endswith("読み込みを止めました。")
