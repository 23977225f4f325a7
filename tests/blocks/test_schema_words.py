"""A value that does not fit a port's schema is explained in Japanese, naming the value, the
place and what is allowed (what `plan validate`, the design page and a failed run show)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.blocks.schema import check_value
from keiri_agent.cli import app

ENGLISH = re.compile(r"\b(is not|is a required|is too|is less|is greater|does not|property)\b")
AGGREGATIONS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["func"],
        "additionalProperties": False,
        "properties": {
            "column": {"type": "string"},
            "func": {"enum": ["sum", "count", "mean"]},
            "as": {"type": "string", "minLength": 1},
        },
    },
    "minItems": 1,
}


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        (
            [{"func": "total"}],
            AGGREGATIONS,
            '0/func: "total" は使えません（使える値: "sum"、"count"、"mean"）',
        ),
        ([{"column": "金額"}], AGGREGATIONS, "0: 必須の項目 func がありません"),
        (
            [{"func": "sum", "colum": "金額"}],
            AGGREGATIONS,
            "0: 使えない項目 colum があります（使える項目: as、column、func）",
        ),
        ([{"func": "sum", "as": ""}], AGGREGATIONS, '0/as: "" は 1 文字以上にしてください'),
        ([], AGGREGATIONS, "要素を 1 個以上にしてください（いま 0 個）"),
        ("金額", AGGREGATIONS, 'リストが必要ですが、文字列 "金額" です'),
        (-1, {"type": "integer", "minimum": 0}, "-1 は 0 以上にしてください"),
        ("2025/1/1", {"type": "string", "pattern": "^\\d{4}-"}, "正規表現 ^\\d{4}-"),
    ],
)
def test_a_misfit_is_told_in_japanese(value: Any, schema: dict[str, Any], expected: str) -> None:
    problem = check_value(value, schema)
    assert problem is not None
    assert expected in problem
    assert ENGLISH.findall(problem) == []


def test_a_long_value_is_cut_with_its_length() -> None:
    problem = check_value("あ" * 500, {"type": "integer"})
    assert problem is not None
    assert "（502 文字）" in problem  # the quoted value, with its quotes


def test_plan_validate_says_a_wrong_choice_in_japanese(tmp_path: Path) -> None:
    plan = tmp_path / "集計.yaml"
    plan.write_text(
        "apiVersion: v1\nid: t\ngraph:\n  - id: a\n    block: table.aggregate\n"
        "    in:\n      table: [{x: 1}]\n      group_by: [x]\n"
        "      aggregations:\n        - {column: x, func: total}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["plan", "validate", str(plan)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert '"total" は使えません（使える値: "sum"' in result.stdout
    assert "is not one of" not in result.stdout


BROKEN_SCHEMAS = [
    (
        {"type": "strng"},
        'スキーマ自体が不正です: type に書けない値 "strng" があります（使える型: string、',
    ),
    (
        {"type": "object", "properties": {"金額": {"type": "int"}}},
        'スキーマ自体が不正です: properties/金額 の type に書けない値 "int" があります',
    ),
    ({"type": "object", "required": "金額"}, 'required に書けない値 "金額" があります'),
    ({"type": "number", "minimum": "0"}, 'minimum に書けない値 "0" があります'),
    ({"enum": 5}, "enum に書けない値 5 があります"),
]


@pytest.mark.parametrize(("schema", "expected"), BROKEN_SCHEMAS)
def test_a_broken_schema_names_its_keyword_and_place_in_japanese(
    schema: dict[str, Any], expected: str
) -> None:
    said = check_value({"金額": 1}, schema)
    assert said is not None
    assert expected in said
    assert ENGLISH.findall(said) == []
    assert "valid under" not in said
