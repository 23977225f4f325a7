"""Plan YAML: YAML 1.2 booleans, so column names like No/On/Yes survive as written."""

from __future__ import annotations

from keiri_agent.plan.loader import parse_source


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
