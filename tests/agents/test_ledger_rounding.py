"""A report kept in 千円 rounds each row and its 合計 on its own: the agents read it (a note
says the difference is rounding), and still refuse a doubled group whatever the unit.

Drawn the way such reports are made: yen amounts per department, each shown in 千円 rounded
to the nearest or cut (千円未満切り捨て), the 合計 the rounded or cut sum of the yen amounts.
"""

from __future__ import annotations

import math
import random

import pytest

from keiri_agent.agents.ledger import read_ledger
from keiri_agent.documents.tables import read_table
from keiri_agent.errors import BlockError, ErrorCode

SEEDS = range(200)
DEPARTMENTS = ["営業一部", "営業二部", "総務部", "経理部", "人事部", "開発部", "製造部", "物流部"]


def _report(seed: int, *, doubled: bool = False) -> tuple[bytes, int]:
    """A 部門別経費 CSV in 千円 and the sum of its rows in 千円 as shown (what an agent must
    see, times 1,000). ``doubled``: an unlabelled 小計 (its amount alone) under the first half."""
    rng = random.Random(seed)
    cut = rng.random() < 0.5
    shown = math.floor if cut else round
    yen = [rng.randrange(3_000, 90_000_000) for _ in range(rng.randrange(2, len(DEPARTMENTS)))]
    rows = [(name, shown(amount / 1000)) for name, amount in zip(DEPARTMENTS, yen, strict=False)]
    lines = ["部門別経費（2026年4月）", "（単位：千円）" if cut else "単位：千円", "部門,金額"]
    lines += [f"{name},{amount}" for name, amount in rows]
    if doubled:
        half = max(1, len(rows) // 2)
        lines.insert(3 + half, f",{sum(a for _, a in rows[:half])}")
    lines.append(f"合計,{shown(sum(yen) / 1000)}")
    return ("\n".join(lines) + "\n").encode("cp932"), sum(amount for _, amount in rows)


@pytest.mark.parametrize("chunk", range(4))
def test_rounded_reports_read_with_a_note_and_their_rows_in_yen(chunk: int) -> None:
    differed = 0
    for seed in SEEDS[chunk::4]:
        data, shown_sum = _report(seed)
        table = read_ledger(data, name=f"report{seed}.csv")
        assert int(table.frame["金額（円）"].sum()) == shown_sum * 1000, seed
        rounding = [note for note in table.notes if "端数処理" in note]
        warnings = [w for w in read_table(data, name="r.csv").info.warnings if "一致しません" in w]
        assert len(rounding) == len(warnings) <= 1, seed
        if rounding:
            differed += 1
            assert "千円未満の端数処理" in rounding[0]
            assert "端数処理の差の範囲" in warnings[0]
    assert differed >= 10  # the property was exercised: many drawn reports do not add up


@pytest.mark.parametrize("chunk", range(2))
def test_a_doubled_group_is_refused_in_thousands_too(chunk: int) -> None:
    for seed in SEEDS[chunk::8]:
        data, _ = _report(seed, doubled=True)
        with pytest.raises(BlockError) as caught:
            read_ledger(data, name=f"report{seed}.csv")
        assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
        assert "見出しのない小計" in caught.value.message
        assert "端数処理" not in caught.value.message


def test_a_yen_report_that_does_not_add_up_is_refused_even_by_one_yen() -> None:
    data = "部門,金額\n営業部,1000\n総務部,2000\n合計,3001\n".encode()
    with pytest.raises(BlockError) as caught:
        read_ledger(data, name="yen.csv")
    assert "明細の方が 1 少ない" in caught.value.message
