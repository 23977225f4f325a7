"""Answers with a typo in a node key or a field key are errors naming the key and the closest
known one (issue 18), for a run, a resume and qualified loop/subflow keys."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.errors import BlockError
from keiri_agent.plan import PlanRunner

WritePlan = Callable[[str, str], Path]

PLAN = """
id: ask
graph:
  - id: collect_inputs
    block: ui.interactive_input
    in:
      mode: collect
      message: 入力してください
      requirements:
        - {id: bank_statement, type: text, label: 入金明細}
        - {id: sheet, type: text, label: シート, default: 入金明細, required: false}
  - id: each
    type: loop
    foreach: {input: [1, 2], itemVar: item}
    body:
      plan:
        graph:
          - id: approve
            block: ui.interactive_input
            in: {mode: confirm, message: 確認してください}
  - id: sub
    type: subflow
    call: {plan_id: inner}
"""

INNER = """
id: inner
graph:
  - id: note
    block: ui.interactive_input
    in:
      mode: collect
      message: メモ
      requirements: [{id: memo, type: text, label: メモ}]
"""

GOOD = {
    "collect_inputs": {"bank_statement": "a.xlsx"},
    "each[1]/approve": {"approved": True},
    "approve": {"approved": True, "response": "ok"},
    "sub/note": {"memo": "x"},
}


@pytest.fixture
def plan(write_plan: WritePlan, ui_registry_runner: PlanRunner) -> Path:
    write_plan("inner", INNER)
    return write_plan("ask", PLAN)


@pytest.fixture
def ui_registry_runner(tmp_path: Path, designs: Path) -> Iterator[PlanRunner]:
    runs = tmp_path / "runs"
    with PlanRunner(default_registry(), runs_dir=runs, designs_dir=designs, config={}) as runner:
        yield runner


@pytest.mark.parametrize(
    ("answers", "named", "suggested"),
    [
        ({"colect_inputs": {"bank_statement": "a.xlsx"}}, "colect_inputs", "collect_inputs"),
        ({"collect_inputs": {"bank_statment": "a.xlsx"}}, "bank_statment", "bank_statement"),
        ({"collect_inputs": {"shet": "x", "bank_statement": "a"}}, "shet", "sheet"),
        ({"each[0]/aprove": {"approved": True}}, "each[0]/aprove", "each[0]/approve"),
        ({"approve": {"aproved": True}}, "aproved", "approved"),
        ({"sub/note": {"meme": "x"}}, "meme", "memo"),
        ({"sub/nothing": {"memo": "x"}}, "sub/nothing", "sub/note"),
    ],
)
def test_unknown_answer_keys_are_named_with_the_closest(
    ui_registry_runner: PlanRunner,
    plan: Path,
    answers: dict[str, dict[str, object]],
    named: str,
    suggested: str,
) -> None:
    with pytest.raises(BlockError) as caught:
        ui_registry_runner.run(plan, answers={**GOOD, **answers})
    error = caught.value
    assert error.code == "INPUT_VALIDATION_FAILED"
    assert f"'{named}'" in error.message
    assert f"もしかして '{suggested}'" in error.message
    assert "collect_inputs" in error.hint
    # Nothing ran: the mistake is reported before the run starts.
    assert not list((ui_registry_runner.runs_dir).rglob("*.jsonl"))


def test_typo_in_answers_file_is_an_error_on_resume(
    ui_registry_runner: PlanRunner, plan: Path, tmp_path: Path
) -> None:
    paused = ui_registry_runner.run(plan)
    assert paused.status == "waiting_input"
    answers = tmp_path / "answers.yaml"
    answers.write_text("collect_inputs:\n  bank_statment: a.xlsx\n", encoding="utf-8")

    with pytest.raises(BlockError) as caught:
        ui_registry_runner.resume(paused.run_id, answers=answers)

    assert "もしかして 'bank_statement'" in caught.value.message
    # The correct answers still work after the mistake.
    resumed = ui_registry_runner.resume(paused.run_id, answers=GOOD)
    assert resumed.status == "success"
    assert resumed.outputs["collect_inputs"]["collected_data"]["bank_statement"] == "a.xlsx"


def test_a_resume_checks_answers_against_the_subflow_its_run_kept(
    ui_registry_runner: PlanRunner, plan: Path, write_plan: WritePlan
) -> None:
    paused = ui_registry_runner.run(plan)
    assert paused.status == "waiting_input"
    # The subflow's file changes while the run waits; the resumed run reads the text it kept.
    write_plan("inner", INNER.replace("id: note", "id: renamed"))

    resumed = ui_registry_runner.resume(paused.run_id, answers=GOOD)

    assert resumed.status == "success", resumed.error
    assert resumed.outputs["collect_inputs"]["collected_data"]["bank_statement"] == "a.xlsx"
