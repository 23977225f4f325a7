"""Percentages written as text (``10%``, ``８％``) are the fractions a workbook's ``0%`` cells
hold: a CSV of tax rates computes as its workbook does, instead of stopping at ``'10%'``."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.cell_forms import read_amount, read_percent
from keiri_agent.documents.tables import read_table

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
