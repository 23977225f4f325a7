"""One subflow loader and one cycle guard for validate, dry-run and run (issue 23).

The same fixture plans (tests/plan/golden/plans) give the same code in all three phases for a
missing subflow, a subflow with a YAML syntax error and a cycle found by file identity; a
subflow file that changes after the run's validation does not change what the run executes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.events.models import RunEvent
from keiri_agent.plan import PlanRunner, dry_run_source, load_source, validate_file

FIXTURES = Path(__file__).parent / "golden" / "plans"


@pytest.fixture
def designs(tmp_path: Path) -> Path:
    """A copy of the fixtures' designs/ (a test may change a file in it)."""
    target = tmp_path / "designs"
    shutil.copytree(FIXTURES / "designs", target)
    return target


def _codes_of_three_phases(
    plan: Path, registry: BlockRegistry, designs: Path, tmp_path: Path
) -> tuple[set[str], set[str], set[str]]:
    validated = validate_file(plan, registry, designs_dir=designs, config={}, env={})
    dry = dry_run_source(load_source(plan), registry, designs_dir=designs, config={}, env={})
    runs = tmp_path / "runs"
    with (
        PlanRunner(registry, runs_dir=runs, designs_dir=designs, config={}) as r,
        pytest.raises(BlockError) as raised,
    ):
        r.run(plan)
    assert raised.value.code == "PLAN_INVALID"
    run_codes = {e["code"] for e in raised.value.details["errors"]}
    return {i.code for i in validated.errors}, {f.code for f in dry.findings}, run_codes


@pytest.mark.parametrize(
    ("fixture", "code"),
    [
        ("subflow_missing", "SUBFLOW_NOT_FOUND"),
        ("subflow_syntax", "YAML_SYNTAX"),
        ("subflow_cycle", "SUBFLOW_CYCLE"),
    ],
)
def test_validate_dry_run_and_run_give_the_same_code(
    fixture: str, code: str, registry: BlockRegistry, designs: Path, tmp_path: Path
) -> None:
    phases = _codes_of_three_phases(FIXTURES / f"{fixture}.yaml", registry, designs, tmp_path)
    assert phases == ({code}, {code}, {code})


def test_a_cycle_through_a_second_name_for_the_same_file(
    registry: BlockRegistry, designs: Path, tmp_path: Path
) -> None:
    # lib/ping calls lib/pong, which calls the same file again under another plan_id.
    (designs / "lib" / "pong.yaml").write_text(
        "apiVersion: v1\nid: pong\ngraph:\n  - id: back\n    type: subflow\n"
        "    call: {plan_id: lib/ping_alias}\n",
        encoding="utf-8",
    )
    (designs / "lib" / "ping_alias.yaml").symlink_to(designs / "lib" / "ping.yaml")
    phases = _codes_of_three_phases(FIXTURES / "subflow_cycle.yaml", registry, designs, tmp_path)
    assert phases == ({"SUBFLOW_CYCLE"}, {"SUBFLOW_CYCLE"}, {"SUBFLOW_CYCLE"})


CHANGING = """\
apiVersion: v1
id: changing
graph:
  - id: first
    block: test.sleep
    in: {value: 21}
  - id: call
    type: subflow
    call: {plan_id: lib/double, inputs: {x: "${first.value}"}}
    out:
      exports: [{from: result, as: doubled}]
"""


def test_a_subflow_file_changed_after_validation_does_not_change_the_run(
    registry: BlockRegistry, designs: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "changing.yaml"
    plan.write_text(CHANGING, encoding="utf-8")
    sub = designs / "lib" / "double.yaml"

    def break_the_subflow(event: RunEvent) -> None:
        # The run has validated (it has started a node) but not yet called the subflow.
        if event.event == "node_start" and getattr(event, "node_id", None) == "first":
            sub.write_text("apiVersion: v1\nid: double\ngraph: [\n", encoding="utf-8")

    with PlanRunner(registry, runs_dir=tmp_path / "runs", designs_dir=designs, config={}) as r:
        result = r.run(plan, on_event=break_the_subflow)
    assert result.status == "success", result.error and result.error.to_dict()
    assert result.outputs["call"] == {"doubled": 42}  # the validated subflow ran

    # From now on every phase reads the broken file, and says so with one code.
    phases: Any = _codes_of_three_phases(plan, registry, designs, tmp_path)
    assert phases == ({"YAML_SYNTAX"}, {"YAML_SYNTAX"}, {"YAML_SYNTAX"})
