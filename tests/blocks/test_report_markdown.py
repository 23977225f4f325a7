"""report.markdown: templates filled strictly, formatted for accounting, written atomically."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

ROWS = [
    {"取引先": "A社", "件数": 3, "金額": 1234567, "率": 0.125},
    {"取引先": "B|C 商会", "件数": 1, "金額": -5500, "率": 0.0},
]
TEMPLATE = """\
## 支払集計

対象 {{ 件数 | number }} 件、合計 {{ 合計 | yen }}（前月比 {{ 前月比 | percent }}）

{{ 明細 | table(["取引先", "金額"], formats={"金額": "yen"}) }}

{% for row in 明細 %}- {{ row.取引先 }}: {{ row.金額 | number }}
{% endfor %}"""


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("report.markdown")


def test_template_with_filters_and_title(block: Block, make_ctx: ContextFactory) -> None:
    ctx = make_ctx("report")
    data = {"件数": 1234, "合計": 1229067, "前月比": 0.0525, "明細": ROWS}
    out = run_like_runner(
        block, {"template": TEMPLATE, "data": data, "title": "2025年1月 支払報告"}, ctx
    )
    expected = """\
# 2025年1月 支払報告

## 支払集計

対象 1,234 件、合計 ¥1,229,067（前月比 5.3%）

| 取引先 | 金額 |
| --- | ---: |
| A社 | ¥1,234,567 |
| B\\|C 商会 | △¥5,500 |

- A社: 1,234,567
- B|C 商会: △5,500
"""
    assert out["markdown"] == expected
    assert out["path"] == str(ctx.work_dir() / "report.md")
    assert Path(out["path"]).read_text(encoding="utf-8") == expected


def test_table_of_records_object_with_all_columns(
    block: Block, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "結果.md"
    out = run_like_runner(
        block,
        {
            "template": "{{ 結果 | table }}\n{{ 空 | table }}",
            "data": {"結果": {"items": ROWS}, "空": []},
            "output_path": str(target),
        },
        make_ctx(),
    )
    assert out["markdown"] == (
        "| 取引先 | 件数 | 金額 | 率 |\n"
        "| --- | ---: | ---: | ---: |\n"
        "| A社 | 3 | 1,234,567 | 0.125 |\n"
        "| B\\|C 商会 | 1 | △5,500 | 0.0 |\n"
        "（該当なし）\n"
    )
    assert target.read_text(encoding="utf-8") == out["markdown"]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ 1234.5 | yen }}", "¥1,235"),
        ("{{ '¥1,234' | yen }}", "¥1,234"),
        ("{{ '▲500' | yen }}", "△¥500"),
        ("{{ 1234.5 | yen(2) }}", "¥1,234.50"),
        ("{{ 1234567.891 | number }}", "1,234,567.891"),
        ("{{ 1234567.891 | number(1) }}", "1,234,567.9"),
        ("{{ 0.125 | percent }}", "12.5%"),
        ("{{ 1 | percent(0) }}", "100%"),
        ("{{ none | yen }}|{{ none | number }}", "|"),
    ],
)
def test_number_filters(
    block: Block, make_ctx: ContextFactory, template: str, expected: str
) -> None:
    out = run_like_runner(block, {"template": template, "data": {"none": None}}, make_ctx())
    assert out["markdown"] == expected + "\n"


def test_undefined_name_names_it_the_line_and_the_data(
    block: Block, make_ctx: ContextFactory
) -> None:
    ctx = make_ctx()
    template = "# 報告\n\n合計 {{ 合計額 | yen }}\n"
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"template": template, "data": {"合計": 1, "件数": 2}}, ctx)
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "3 行目" in error.message
    assert "「合計額」は data にありません" in error.message
    assert "合計, 件数" in error.hint
    assert error.details["line"] == 3
    assert list(ctx.work_dir().iterdir()) == []  # nothing written


def test_missing_column_in_a_loop_is_reported(block: Block, make_ctx: ContextFactory) -> None:
    template = "明細\n{% for r in rows %}\n{{ r.税額 }}\n{% endfor %}"
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"template": template, "data": {"rows": ROWS}}, make_ctx())
    assert "3 行目" in info.value.message
    assert "列（キー）「税額」がありません" in info.value.message


def test_syntax_error_names_the_line_before_running(block: Block) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"template": "一行目\n{% if 件数 %}\n件数あり\n", "data": {}})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "行目" in info.value.message
    assert "endif" in info.value.message
    assert "閉じタグ" in info.value.hint


ENGLISH = re.compile(r"[A-Za-z]{3,} [a-z]{3,}")
SYNTAX_CASES = [
    (
        "一行目\n{% if 件数 %}\n件数あり\n",
        "{% if %} が閉じられていません（{% endif %} が必要です）",
    ),
    (
        "{% for r in 行 %}{{ r }}{% endif %}",
        "{% endif %} はここに書けません。{% for %} が閉じられて",
    ),
    ("{% endif %}", "{% endif %} に対応する開始タグがありません"),
    ("{% 集計 %}", "{% 集計 %} というタグはありません"),
    ("合計 {{ 合計 ", "閉じられないままテンプレートが終わっています（}} が必要です）"),
    ("{{ 合計 $ }}", "使えない文字「$」があります"),
    ("{{ '合計 }}", "文字列の引用符 ' が閉じられていません"),
    ("{{ 行[1 }}", "「]」が必要です"),
    ("{{ 件数 合計 }}", "「合計」はここに書けません（ここには }} が必要です）"),
    ("{{ }}", "値か式が必要なところに }} があります"),
]


@pytest.mark.parametrize(("template", "expected"), SYNTAX_CASES)
def test_a_template_syntax_error_is_told_in_japanese(
    block: Block, template: str, expected: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"template": template, "data": {}})
    message = info.value.message
    assert expected in message
    assert ENGLISH.findall(message) == []
    assert info.value.details["cause"].startswith("TemplateSyntaxError: ")


def test_a_template_syntax_error_without_a_japanese_wording_names_only_the_line(
    block: Block,
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"template": "一行目\n{% raw %}未完", "data": {}})
    assert info.value.message == "テンプレート 2 行目の書き方に誤りがあります"
    assert "raw" in info.value.details["cause"]


def test_table_filter_names_missing_columns(block: Block, make_ctx: ContextFactory) -> None:
    template = "\n{{ rows | table(['取引先', '部門']) }}"
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"template": template, "data": {"rows": ROWS}}, make_ctx())
    assert "部門" in info.value.message
    assert "2 行目" in info.value.message
    assert "取引先, 件数, 金額, 率" in info.value.hint


def test_non_number_given_to_yen_is_an_error(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"template": "{{ x | yen }}", "data": {"x": "未定"}}, make_ctx())
    assert "yen" in info.value.message
    assert "未定" in info.value.message


@pytest.mark.parametrize(
    "template",
    ["{{ ''.__class__.__mro__ }}", "{{ rows.__class__.__subclasses__() }}"],
)
def test_the_sandbox_refuses_attribute_tricks(
    block: Block, make_ctx: ContextFactory, template: str
) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"template": template, "data": {"rows": []}}, make_ctx())
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED


@pytest.mark.parametrize(
    ("inputs", "field"),
    [({"template": "  "}, "template"), ({"template": "x", "data": ["a"]}, "data")],
)
def test_bad_inputs(block: Block, inputs: dict[str, Any], field: str) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs(inputs)
    assert info.value.details["field"] == field
    assert info.value.hint
