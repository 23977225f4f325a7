"""A plan's vars in the user's words: ``ui.vars`` gives each var a Japanese label (the 実行
page's field, the messages naming it), validated strictly (a label for a var the plan does not
declare is UI_VAR_UNKNOWN, an empty one a schema error in Japanese), and every bundled example
labels all its vars."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from keiri_agent.blocks.registry import default_registry
from keiri_agent.examples import example_names, example_plan
from keiri_agent.plan import Plan, load_source, plan_names, validate_text
from keiri_agent.plan._dsl.models import MAX_VAR_LABEL_CHARS

FEE = "差し引かれてもよい振込手数料の上限（円）"


def _plan(ui_vars: Any, vars: Any = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "id": "labels",
            "vars": {"fee_tolerance": 880, "out": "r.xlsx"} if vars is None else vars,
            "ui": {"vars": ui_vars},
            "graph": [{"id": "sort", "block": "table.sort", "in": {"table": [], "by": "x"}}],
        },
        allow_unicode=True,
    )


def test_labelled_vars_validate_and_name_the_vars() -> None:
    report = validate_text(_plan({"fee_tolerance": f"  {FEE} "}), default_registry())
    assert report.valid, report.errors
    assert report.plan is not None
    names = plan_names(report.plan, default_registry())
    assert names.var("fee_tolerance") == FEE  # stripped
    assert names.var("out") == "out"  # an unlabelled var keeps its name
    assert report.plan.var_text("fee_tolerance") == f"設定値「{FEE}」（vars.fee_tolerance）"
    assert report.plan.var_text("out") == "vars.out"


@pytest.mark.parametrize(
    ("vars", "listed"),
    [
        (None, "fee_tolerance（手数料の上限）, out"),
        ({}, "なし"),
    ],
)
def test_a_label_for_an_undeclared_var_is_an_error_in_japanese(vars: Any, listed: str) -> None:
    text = _plan({"fee_tolerence": "手数料の上限", "fee_tolerance": "手数料の上限"}, vars)
    if vars == {}:
        text = _plan({"fee_tolerence": "手数料の上限"}, vars)
    report = validate_text(text, default_registry())
    assert not report.valid
    codes = [issue.code for issue in report.errors]
    assert "UI_VAR_UNKNOWN" in codes
    (issue,) = [
        i for i in report.errors if i.code == "UI_VAR_UNKNOWN" and "fee_tolerence" in i.message
    ]
    assert issue.message == "ui.vars の 'fee_tolerence' は vars で定義されていません。"
    assert issue.path == "ui.vars.fee_tolerence"
    assert issue.line is not None
    assert issue.hint == f"vars の名前: {listed}。綴りを直すか、vars に定義してください。"


@pytest.mark.parametrize("label", ["", "   ", 880, None, ["a"]])
def test_an_empty_or_non_text_label_is_a_schema_error_in_japanese(label: Any) -> None:
    report = validate_text(_plan({"fee_tolerance": label}), default_registry())
    assert not report.valid
    (issue,) = report.errors
    assert issue.code == "PLAN_SCHEMA"
    assert issue.path == "ui.vars.fee_tolerance"
    assert not any(word in issue.message for word in ("String", "should", "Input"))


def test_ui_vars_must_be_a_mapping() -> None:
    report = validate_text(_plan(["fee_tolerance"]), default_registry())
    assert [issue.code for issue in report.errors] == ["PLAN_SCHEMA"]


@pytest.mark.parametrize("example", example_names())
def test_every_bundled_example_labels_every_var(example: str) -> None:
    plan = Plan.model_validate(load_source(example_plan(example)).raw)
    assert set(plan.ui.vars) == set(plan.vars)
    assert all(label.strip() for label in plan.ui.vars.values())


def test_a_label_longer_than_the_limit_is_refused() -> None:
    report = validate_text(_plan({"out": "あ" * (MAX_VAR_LABEL_CHARS + 1)}), default_registry())
    assert [issue.code for issue in report.errors] == ["PLAN_SCHEMA"]
    assert validate_text(_plan({"out": "あ" * MAX_VAR_LABEL_CHARS}), default_registry()).valid
