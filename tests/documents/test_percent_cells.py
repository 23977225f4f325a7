"""Percentages written as text (``10%``, ``８％``) are the fractions a workbook's ``0%`` cells
hold: a CSV of tax rates computes as its workbook does, instead of stopping at ``'10%'``."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.cell_forms import read_amount, read_percent
from keiri_agent.documents.tables import read_table
from keiri_agent.errors import BlockError

PERCENTS = {
    "10%": 0.1,
    "８％": 0.08,
    "１０％": 0.1,
    "120.5%": 1.205,
    "-3%": -0.03,
    "△3%": -0.03,
    "▲2.5 %": -0.025,
    "0%": 0.0,
}


@pytest.mark.parametrize(("written", "value"), PERCENTS.items())
def test_a_percentage_is_its_fraction_and_never_an_amount(written: str, value: float) -> None:
    assert read_percent(written) == value
    assert read_amount(written) is None


@pytest.mark.parametrize("written", ["課税売上10%", "10", "10%%", "%", "10% 増", "1,000%"])
def test_other_texts_are_not_percentages(written: str) -> None:
    assert read_percent(written) is None


RATES = "科目,金額,税率\r\n会議費,1000,10%\r\n新聞図書費,2000,８％\r\n雑費,500,\r\n"


def test_a_csv_column_of_percentages_is_a_number_column_with_a_note(tmp_path: Path) -> None:
    result = read_table(RATES.encode("cp932"), name="税率.csv")

    assert result.info.converted["税率"] == "number"
    assert [r["税率"] for r in result.table().records()] == [0.1, 0.08, None]
    assert "列「税率」: 百分率のセル 2 個を割合の数値として読みました（10% → 0.1）" in (
        result.info.warnings
    )
    ctx = BlockContext(
        run_id="r", plan_id="p", node_id="tax", block_version="0.1.0", workspace=tmp_path
    )
    out = (
        BlockRegistry()
        .load("table.compute")
        .run(
            {"table": result.table(), "columns": [{"name": "税額", "expr": "[金額] * [税率]"}]}, ctx
        )
    )
    assert [r["税額"] for r in out["rows"].records()] == [100, 160, None]


def test_a_column_mixing_percentages_and_other_text_stays_text() -> None:
    data = "科目,税率\r\n会議費,10%\r\n新聞図書費,軽減\r\n".encode()
    result = read_table(data, name="税率.csv")

    assert "税率" not in result.info.converted
    assert [r["税率"] for r in result.table().records()] == ["10%", "軽減"]


# Rate columns drawn by the property below (each one CSV read and one computation).
RATE_CASES = 200


def _rate_column(seed: int) -> tuple[bytes, list[Decimal | None]]:
    """A 税率 column as people type it: mostly percentages, maybe a plain number (``0.1`` or
    ``10``: the writer meant the fraction or the percentage, drawn here), a 0, a dash (no
    rate); with each cell's true fraction (None: no rate)."""
    rng = random.Random(seed)
    cells: list[str] = []
    truths: list[Decimal | None] = []
    for k in range(rng.randint(3, 10)):
        percent = Decimal(rng.choice([8, 10, 12, 5, 3])) + rng.choice([Decimal(0), Decimal("0.5")])
        form = rng.choices(["percent", "full", "plain", "zero", "dash"], [6, 2, 1, 1, 1])[0]
        if k % 2 == 0:  # a column of percentages (at least half its cells): the rule's scope
            form = rng.choice(["percent", "full"])
        if form == "percent":
            cells.append(f"{percent}%")
        elif form == "full":
            cells.append(
                f"{percent}％".translate(str.maketrans("0123456789.", "０１２３４５６７８９．"))
            )
        elif form == "plain":
            fraction = rng.random() < 0.5
            cells.append(str(percent / 100 if fraction else percent))
            percent = percent if fraction else percent / 100  # what the writer meant
        elif form == "zero":
            cells.append("0")
            percent = Decimal(0)
        else:
            cells.append("―")
        truths.append(None if form == "dash" else percent / 100)
    rows = "".join(f"科目{i},1000,{c}\r\n" for i, c in enumerate(cells))
    return ("科目,金額,税率\r\n" + rows).encode(), truths


def test_rate_columns_read_as_meant_or_the_computation_stops(tmp_path: Path) -> None:
    """Seeded rate columns: read as the true fractions, or the doubtful cells are listed and a
    tax computed on the column stops; never a rate silently blank or 100 times off."""
    ctx = BlockContext(
        run_id="r", plan_id="p", node_id="tax", block_version="0.1.0", workspace=tmp_path
    )
    wrong = []
    for seed in range(RATE_CASES):
        data, truths = _rate_column(seed)
        result = read_table(data, name="税率.csv")
        if result.info.converted.get("税率") == "number":
            read = [r["税率"] for r in result.table().records()]
            got = [None if v is None else Decimal(repr(v)) for v in read]
            if got != truths:
                wrong.append(f"{seed}: read {read} for {truths}")
            continue
        if not [u for u in result.info.unreadable if u["column"] == "税率"]:
            wrong.append(f"{seed}: left as text without listing a cell")
        with pytest.raises(BlockError):
            BlockRegistry().load("table.compute").run(
                {"table": result.table(), "columns": [{"name": "税額", "expr": "[金額] * [税率]"}]},
                ctx,
            )
    assert not wrong, f"{len(wrong)} of {RATE_CASES}: " + "; ".join(wrong[:5])
