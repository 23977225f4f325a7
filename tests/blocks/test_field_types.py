"""The field types of ui.interactive_input are one list (issue 23): the block's spec and its
requirement checks, the plan validator, plan generation's schema and models, and the Session
State contract accept the same set, each taken from ``blocks.ui.field_types.FIELD_TYPES``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.answer_state import EMPTY_VALUES
from keiri_agent.blocks.ui.field_types import FIELD_TYPES, normalize_requirements
from keiri_agent.design.models import Requirement, RequirementTarget
from keiri_agent.design.schema import MissingInfo
from keiri_agent.errors import BlockError
from keiri_agent.plan import validate_text

REGISTRY = BlockRegistry()
TARGET = RequirementTarget(kind="var", var="f")


def _spec_enum() -> set[str]:
    port: Any = REGISTRY.get("ui.interactive_input").inputs["requirements"]
    return set(port["items"]["properties"]["type"]["enum"])


def test_every_place_accepts_the_same_set() -> None:
    expected = set(FIELD_TYPES)
    assert len(expected) == 10
    assert _spec_enum() == expected
    design_schema = MissingInfo.model_json_schema()["properties"]["type"]["enum"]
    assert set(design_schema) == expected
    assert set(Requirement.model_json_schema()["properties"]["type"]["enum"]) == expected
    assert set(EMPTY_VALUES) == expected


@pytest.mark.parametrize("kind", FIELD_TYPES)
def test_each_type_is_accepted_by_block_design_and_validator(kind: str) -> None:
    options = ["a", "b"] if kind in ("select", "enum") else []
    (req,) = normalize_requirements(
        [{"id": "f", "type": kind, "label": "項目", "options": options}]
    )
    assert req["type"] == kind
    assert Requirement(id="f", type=kind, target=TARGET).type == kind  # type: ignore[arg-type]
    assert MissingInfo(id="f", question="?", type=kind).type == kind  # type: ignore[arg-type]
    plan = (
        "apiVersion: v1\nid: p\ngraph:\n  - id: ask\n    block: ui.interactive_input\n"
        f"    in:\n      mode: collect\n      requirements:\n        - {{id: f, type: {kind}, "
        f"label: 項目, options: {options}}}\n"
    )
    report = validate_text(plan, REGISTRY, designs_dir=None, config={}, env={})
    assert [i.code for i in report.errors] == []


def test_an_unknown_type_is_refused_everywhere() -> None:
    with pytest.raises(BlockError):
        normalize_requirements([{"id": "f", "type": "photo", "label": "写真"}])
    with pytest.raises(ValidationError):
        Requirement(id="f", type="photo", target=TARGET)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        MissingInfo(id="f", question="?", type="photo")  # type: ignore[arg-type]
