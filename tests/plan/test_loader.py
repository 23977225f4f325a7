"""Plan YAML: YAML 1.2 booleans, so column names like No/On/Yes survive as written."""

from __future__ import annotations

from pathlib import Path

from keiri_agent.plan import parse_source
from keiri_agent.plan._dsl.migrate import migrate_text
from keiri_agent.plan._run.runstate import AnswersFile


def test_yes_no_on_off_stay_strings_and_true_false_stay_booleans() -> None:
    raw = parse_source(
        "graph:\n"
        "  - id: join\n"
        "    in:\n"
        "      on: 取引先コード\n"
        "      output_schema: {No: integer, Yes: string, off: string}\n"
        "      flags: [true, False, yes, n]\n"
    ).raw
    node_in = raw["graph"][0]["in"]
    assert node_in["on"] == "取引先コード"
    assert list(node_in["output_schema"]) == ["No", "Yes", "off"]
    assert node_in["flags"] == [True, False, "yes", "n"]


def test_positions_are_kept_for_string_keys_that_yaml_1_1_would_have_made_booleans() -> None:
    source = parse_source("id: p\ngraph:\n  - id: a\n    in:\n      No: 1\n")
    assert source.position(("graph", 0, "in", "No")) == (5, 7)


def test_answers_and_migration_read_yaml_the_way_plans_do(tmp_path: Path) -> None:
    """The files that go with a plan keep a requirement id or column named No as written."""
    answers = tmp_path / "answers.yaml"
    answers.write_text("collect:\n  No: 3\n  approved: true\n", encoding="utf-8")
    assert AnswersFile.load(answers).answers_for("collect", "collect") == {
        "No": 3,
        "approved": True,
    }
    plan = "id: p\ngraph:\n  - {id: a, block: ai.process_llm, in: {output_schema: {No: integer}}}\n"
    text, result = migrate_text(plan)
    assert text == plan  # nothing to migrate, and the plan did not become {False: ...}
    assert result.plan["graph"][0]["in"]["output_schema"] == {"No": "integer"}
