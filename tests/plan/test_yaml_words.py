"""A YAML text that cannot be read is explained in Japanese, with what usually causes it: in
`plan validate`, in a `--vars` file and in a `--var` value; PyYAML's English is not shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.errors import cause_of, reason_of
from keiri_agent.plan import load_yaml
from keiri_agent.yaml_words import yaml_problem

ENGLISH = re.compile(r"[a-z]{3,} [a-z]{3,}")
CASES = [
    ("a: b: c", "ここに「キー: 値」は書けません"),
    ("a:\n  b: 1\n c: 2", "キーのあるはずの位置に別のものがあります（インデントのずれ"),
    ("- a\nb: 1", "リストの要素（「- 」で始まる行）のあるはずの位置"),
    ("a: [1, 2", "リスト [ … ] が閉じていないか"),
    ("a: {x: 1", "マッピング { … } が閉じていないか"),
    ("a: 'abc", "引用符か括弧が閉じないまま"),
    ("\ta: 1", "ここに書けない文字があります（タブ文字か"),
    ("key: @x", "「@」「`」などで始まる値"),
    ("a: *nope", "アンカー &名前 がありません"),
    ("a: 1\n---\nb: 2", "文書が 2 つ以上あります"),
    ('a: "\\q"', "使えない「\\ と文字」の組み合わせがあります"),
    ("[a, b]]", "余分な文字があります"),
    ("a: &x\nb: *", "アンカー（&名前）かエイリアス（*名前）の名前がありません"),
    ("a: !!python/object:os.system x", "! で始まるタグは書けません"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_a_yaml_mistake_is_told_in_japanese(text: str, expected: str) -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(text)
    said = yaml_problem(caught.value)
    assert expected in said
    assert ENGLISH.findall(said) == []


def test_a_problem_without_a_japanese_wording_names_the_place_in_japanese() -> None:
    assert (
        yaml_problem(yaml.YAMLError("something new went wrong")) == "YAML の書き方に誤りがあります"
    )
    mark = yaml.Mark("plan.yaml", 0, 2, 6, None, None)
    exc = yaml.MarkedYAMLError(problem="something new went wrong", problem_mark=mark)
    assert yaml_problem(exc) == "3 行 7 列目あたりの YAML の書き方に誤りがあります"
    assert reason_of(exc) == "3 行 7 列目あたりの YAML の書き方に誤りがあります"
    assert "something new went wrong" in cause_of(exc)


def test_reason_of_says_what_is_wrong_in_the_same_words_as_the_plan_loader() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        yaml.safe_load("users:\n  - name: sato\n    role: user: admin\n")
    said = reason_of(caught.value)
    assert (
        said == f"3 行 15 列目あたりの YAML の書き方に誤りがあります: {yaml_problem(caught.value)}"
    )
    assert "ここに「キー: 値」は書けません" in said
    assert ENGLISH.findall(said) == []


def test_plan_validate_and_vars_files_say_it_in_japanese(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("apiVersion: v1\nid: t\ngraph:\n  - id: a\n   block: x\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["plan", "validate", str(plan)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "YAML として解釈できません: " in result.stdout
    assert "did not find" not in result.stdout
    assert "expected" not in result.stdout

    values = tmp_path / "vars.yaml"
    values.write_text("month: 2024-01\nids: [1, 2\n", encoding="utf-8")
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--vars", str(values)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 2
    assert "リスト [ … ] が閉じていないか" in result.stderr
    assert "expected" not in result.stderr
