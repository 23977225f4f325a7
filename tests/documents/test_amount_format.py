"""How an amount is shown: one rule (separators, unit in the header, negatives by the setting
KEIRI_NEGATIVE_AMOUNTS, total rows emphasised) for Markdown, Excel, the app and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.documents.amount_format import (
    AmountFormat,
    header_label,
    is_amount_column,
    total_row_flags,
)
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import BlockError

ROWS = [
    {"商品区分": "サービス", "売上金額": 165000, "件数": 3},
    {"商品区分": "返品", "売上金額": -660, "件数": 1},
    {"商品区分": "合計", "売上金額": 164340, "件数": 4},
]


@pytest.mark.parametrize(
    ("style", "text", "excel"),
    [
        ("triangle", "△660", '#,##0;"△"#,##0'),
        ("minus", "-660", "#,##0"),
        ("parens", "(660)", "#,##0;(#,##0)"),
        ("red", "-660", "#,##0;[Red]-#,##0"),
    ],
)
def test_each_negative_style_is_the_same_in_text_and_in_excel(
    style: Any, text: str, excel: str
) -> None:
    shown = AmountFormat(style)
    assert shown.text(-660) == text
    assert shown.text(165000) == "165,000"
    assert shown.excel() == excel
    assert shown.is_red(-660) is (style == "red")


def test_amount_text_rounds_and_keeps_blanks_and_words() -> None:
    shown = AmountFormat()
    assert shown.text(1234.5, 0) == "1,235"
    assert shown.text(-1234.5, 0, prefix="¥") == "△¥1,235"
    assert shown.text(None) == ""
    assert shown.text("未定") == "未定"


def test_the_setting_chooses_the_style(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_NEGATIVE_AMOUNTS", "parens")
    assert AmountFormat.of(Settings()).text(-660) == "(660)"
    assert AmountFormat.of(None).text(-660) == "△660"


def test_an_unknown_style_is_a_japanese_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from keiri_agent.config import load_settings

    monkeypatch.setenv("KEIRI_NEGATIVE_AMOUNTS", "stars")
    with pytest.raises(BlockError) as caught:
        load_settings()
    assert "KEIRI_NEGATIVE_AMOUNTS" in caught.value.message + caught.value.hint


def test_amount_columns_units_and_totals() -> None:
    assert is_amount_column("売上金額", [165000, -660])
    assert not is_amount_column("伝票番号", [1001, 1002])
    assert not is_amount_column("率", [0.5])
    assert header_label("金額", "千円") == "金額（千円）"
    assert header_label("金額（千円）", "千円") == "金額（千円）"
    assert total_row_flags(ROWS) == [False, False, True]


def _ctx(tmp_path: Path, style: str) -> BlockContext:
    return BlockContext(
        run_id="r",
        plan_id="p",
        node_id="n",
        block_version="0.1.0",
        workspace=tmp_path / "run",
        settings=Settings(keiri_negative_amounts=style),  # type: ignore[arg-type]
    )


def test_markdown_tables_show_amounts_units_and_totals_as_the_setting_says(
    tmp_path: Path,
) -> None:
    block = BlockRegistry().load("report.markdown")
    table = Table.from_records(ROWS)
    table = Table(table.frame, units={"売上金額": "千円"})
    out = block.run(
        {"template": "{{ rows | table }}", "data": {"rows": table}}, _ctx(tmp_path, "parens")
    )
    assert out["markdown"] == (
        "| 商品区分 | 売上金額（千円） | 件数 |\n"
        "| --- | ---: | ---: |\n"
        "| サービス | 165,000 | 3 |\n"
        "| 返品 | (660) | 1 |\n"
        "| **合計** | **164,340** | **4** |\n"
    )


def test_excel_shows_negatives_as_the_setting_says_and_totals_in_bold(tmp_path: Path) -> None:
    block = BlockRegistry().load("excel.write_report")
    out = block.run(
        {"sheets": [{"name": "区分別", "rows": ROWS}], "output_path": "r.xlsx"},
        _ctx(tmp_path, "red"),
    )
    sheet = load_workbook(out["report"]["output_path"])["区分別"]
    assert sheet["B3"].number_format == "#,##0;[Red]-#,##0"
    assert [cell.font.b for cell in sheet[4]] == [True, True, True]  # 合計
    assert not any(cell.font.b for cell in sheet[2])
