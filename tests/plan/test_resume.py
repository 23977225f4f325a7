"""Humans in the loop without a screen: pause, answers files, resume, and rerun from a node."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from keiri_agent.errors import BlockError
from keiri_agent.events import RunEvent, read_events
from keiri_agent.plan import PlanRunner, RunResult, load_run

WritePlan = Callable[[str, str], Path]


def executed(result: RunResult) -> list[str]:
    assert result.log_path is not None
    return [e.node_id for e in read_events(result.log_path) if e.event == "node_start"]


def reused(result: RunResult) -> list[str]:
    assert result.log_path is not None
    return [
        e.node_id
        for e in read_events(result.log_path)
        if e.event == "node_complete" and getattr(e, "reused", False)
    ]


ASK = """{id: ask, block: ui.interactive_input, in: {mode: collect, message: 金額を入力, requirements: [{id: amount, type: number, label: 金額}]}}"""

FOREACH_PLAN = f"""
id: approve_each
graph:
  - {{id: items, block: test.items, in: {{count: 3}}}}
  - id: each
    type: loop
    foreach: {{input: "${{items.items}}", itemVar: it, indexVar: i, max_concurrency: 3}}
    body:
      plan:
        graph:
          - {ASK}
          - {{id: total, block: test.add, in: {{a: "${{ask.collected_data.amount}}", b: "${{it.n}}"}}}}
        exports: [{{from: total.sum, as: total}}]
  - {{id: grand, block: test.sleep, in: {{value: "${{each.total}}"}}}}
"""


def test_pause_and_resume_inside_a_foreach(
    runner: PlanRunner, write_plan: WritePlan, tmp_path: Path
) -> None:
    plan = write_plan("approve_each", FOREACH_PLAN)
    first = runner.run(plan)
    assert first.status == "waiting_input"
    assert sorted(w["node_id"] for w in first.waiting) == [f"each[{i}]/ask" for i in range(3)]
    assert first.waiting[0]["request"]["requirements"][0]["id"] == "amount"

    # Answer one iteration only: the run pauses again, but that iteration is now done.
    second = runner.resume(first.run_id, answers={"each[1]/ask": {"amount": 10}})
    assert second.status == "waiting_input"
    assert sorted(w["node_id"] for w in second.waiting) == ["each[0]/ask", "each[2]/ask"]
    assert "items" not in executed(second)
    assert "items" in reused(second)

    answers = tmp_path / "answers.yaml"
    answers.write_text("ask:\n  amount: 100\n", encoding="utf-8")
    third = runner.resume(second.run_id, answers=answers)
    assert third.status == "success", third.error
    assert third.outputs["each"]["total"] == [100, 11, 102]  # iteration 1 kept its answer 10
    assert "each[1]/ask" in reused(third)
    assert "each[1]/total" in reused(third)
    assert {"each[0]/ask", "each[2]/ask", "grand"} <= set(executed(third))
    assert "items" not in executed(third)


def test_pause_and_resume_inside_a_subflow(runner: PlanRunner, write_plan: WritePlan) -> None:
    write_plan(
        "common/confirm",
        f"""
id: common/confirm
vars: {{base: null}}
graph:
  - {ASK}
  - {{id: total, block: test.add, in: {{a: "${{ask.collected_data.amount}}", b: "${{vars.base}}"}}}}
exports: [{{from: total.sum, as: total}}]
""",
    )
    plan = write_plan(
        "outer",
        """
id: outer
graph:
  - {id: seed, block: test.add, in: {a: 7}}
  - id: sub
    type: subflow
    call: {plan_id: common/confirm, inputs: {base: "${seed.sum}"}}
    out: {exports: [{from: total, as: total}]}
""",
    )
    first = runner.run(plan)
    assert first.status == "waiting_input"
    assert [w["node_id"] for w in first.waiting] == ["sub/ask"]
    done = runner.resume(first.run_id, answers={"sub/ask": {"amount": 5}})
    assert done.status == "success"
    assert done.outputs["sub"] == {"total": 12}
    assert "seed" not in executed(done)


def test_bad_answers_fail_with_every_problem_and_can_be_resumed(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan("one", f"id: one\ngraph:\n  - {ASK}\n")
    result = runner.run(plan, answers={"ask": {"amount": "たくさん"}})
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "INPUT_VALIDATION_FAILED"
    assert result.error.recoverable
    fixed = runner.resume(result.run_id, answers={"ask": {"amount": 3}})
    assert fixed.status == "success"


CHAIN = """
id: chain
graph:
  - {id: a, block: test.add, in: {a: 1}}
  - {id: b, block: test.add, in: {a: "${a.sum}", b: 10}}
  - {id: c, block: test.add, in: {a: "${b.sum}", b: 100}}
  - {id: side, block: test.add, in: {a: 5}}
"""


def test_rerun_from_a_node_reuses_upstream_outputs(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan("chain", CHAIN)
    first = runner.run(plan)
    assert first.outputs["c"] == {"sum": 111}
    again = runner.rerun(first.run_id, "b")
    assert again.status == "success"
    assert executed(again) == ["b", "c"]
    assert sorted(reused(again)) == ["a", "side"]
    assert again.outputs["c"] == {"sum": 111}
    start = next(e for e in read_events(again.log_path) if e.event == "plan_start")
    assert start.rerun_from == "b"


def test_rerun_after_a_failure_with_a_fixed_plan(
    runner: PlanRunner, write_plan: WritePlan, designs: Path
) -> None:
    broken = write_plan(
        "fix",
        """
id: fix
graph:
  - {id: a, block: test.add, in: {a: 1}}
  - {id: b, block: test.fail, in: {fail: true, value: "${a.sum}"}}
""",
    )
    first = runner.run(broken)
    assert first.status == "failed"
    assert first.error is not None
    failed_node = first.error.details["node_id"]
    fixed = write_plan("fix_v2", broken.read_text().replace("fail: true", "fail: false"))
    again = runner.rerun(first.run_id, failed_node, plan=fixed)
    assert again.status == "success"
    assert executed(again) == ["b"]
    assert again.outputs["b"] == {"value": 1}


def test_rerun_one_iteration_of_a_foreach(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan("approve_each", FOREACH_PLAN)
    answers = {"ask": {"amount": 1}}
    first = runner.run(plan, answers=answers)
    assert first.status == "success"
    again = runner.rerun(first.run_id, "each[2]/ask", answers={"ask": {"amount": 50}})
    assert again.outputs["each"]["total"] == [1, 2, 52]
    assert set(executed(again)) == {"each", "each[2]/ask", "each[2]/total", "grand"}


def test_rerun_of_an_unknown_node_names_the_nodes(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    first = runner.run(write_plan("chain", CHAIN))
    with pytest.raises(BlockError) as info:
        runner.rerun(first.run_id, "zzz")
    assert "a" in info.value.hint
    assert info.value.code == "INPUT_VALIDATION_FAILED"


def test_rerun_from_a_node_the_fixed_plan_does_not_have_is_refused(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    """A fixed plan that renamed the node: nothing runs, rather than the whole other plan run
    with the old run's outputs reused wherever an id happens to match."""
    first = runner.run(write_plan("chain", CHAIN))
    text = CHAIN.replace("{id: b,", "{id: b2,").replace("${b.sum}", "${b2.sum}")
    renamed = write_plan("chain_v2", text)
    with pytest.raises(BlockError) as info:
        runner.rerun(first.run_id, "b", plan=renamed)
    assert info.value.code == "INPUT_VALIDATION_FAILED"
    assert "ノード b が" in info.value.message
    assert "b2" in info.value.hint
    assert len(list(runner.runs_dir.rglob("*.jsonl"))) == 1  # no second run was logged


@pytest.mark.parametrize("text", ["", "# 直したところ\n", "id: chain\ngraph: []\n", "[1, 2]\n"])
def test_rerun_with_a_fixed_plan_that_is_no_plan_is_a_plan_error(
    runner: PlanRunner, write_plan: WritePlan, tmp_path: Path, text: str
) -> None:
    """Through the API and the app too (the CLI checks the file first): a Japanese error, not
    Pydantic's English, and no run logged."""
    first = runner.run(write_plan("chain", CHAIN))
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(text, encoding="utf-8")
    with pytest.raises(BlockError) as info:
        runner.rerun(first.run_id, "b", plan=fixed)
    assert info.value.code == "PLAN_INVALID"
    assert len(list(runner.runs_dir.rglob("*.jsonl"))) == 1


def test_resume_of_an_unknown_run(runner: PlanRunner) -> None:
    with pytest.raises(BlockError) as info:
        runner.resume("run_nope")
    assert "実行 ID" in info.value.hint


def test_large_and_binary_outputs_are_stored_beside_the_log(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "big",
        """
id: big
graph:
  - {id: many, block: test.items, in: {count: 2000}}
  - {id: n, block: test.add, in: {a: "${many.count}"}}
""",
    )
    first = runner.run(plan)
    complete = next(
        e for e in read_events(first.log_path) if e.event == "node_complete" and e.node_id == "many"
    )
    assert complete.stored is None
    assert complete.outputs_file
    assert (first.log_path.parent / complete.outputs_file).is_file()
    again = runner.rerun(first.run_id, "n")
    assert executed(again) == ["n"]
    assert again.outputs["many"]["count"] == 2000
    assert len(again.outputs["many"]["items"]) == 2000


@pytest.mark.parametrize("how", ["resume", "rerun"])
def test_a_resumed_or_rerun_run_can_be_cancelled(
    runner: PlanRunner, write_plan: WritePlan, how: str
) -> None:
    plan = write_plan(
        "ask_then_wait",
        f"""
id: ask_then_wait
graph:
  - {ASK}
  - {{id: long, block: test.sleep, in: {{seconds: 120, value: "${{ask.collected_data}}"}}}}
  - {{id: after, block: test.add, in: {{a: 1}}, when: "${{long.value}} != null"}}
""",
    )
    first = runner.run(plan)
    assert first.status == "waiting_input"
    cancel = threading.Event()

    def cancel_once_long_runs(event: RunEvent) -> None:
        if event.event == "node_start" and event.node_id == "long":
            cancel.set()

    started = time.monotonic()
    answers = {"ask": {"amount": 5}}
    if how == "resume":
        result = runner.resume(
            first.run_id, answers=answers, on_event=cancel_once_long_runs, cancel=cancel
        )
    else:
        result = runner.rerun(
            first.run_id, "ask", answers=answers, on_event=cancel_once_long_runs, cancel=cancel
        )

    assert time.monotonic() - started < 60  # the cancel, not the block's 120 s
    assert result.status == "cancelled"
    assert result.error is not None
    assert result.error.code == "CANCELLED"
    assert "long" in executed(result)
    assert "after" not in executed(result)
    assert result.log_path is not None
    end = read_events(result.log_path)[-1]
    assert end.event == "plan_complete"
    assert end.status == "cancelled"  # type: ignore[attr-defined]


def test_a_run_record_reads_the_runs_facts_from_its_start_and_end(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    """What resume and rerun read of a run (its id, plan, vars, status) comes from the
    logged ``plan_start`` and ``plan_complete``: the record keeps no second copy to drift."""
    plan = write_plan(
        "add_vars",
        'id: add_vars\nvars: {n: 2}\ngraph:\n  - {id: add, block: test.add, in: {a: "${vars.n}", b: 1}}\n',
    )
    result = runner.run(plan, vars={"n": 5})
    assert result.status == "success", result.error
    assert result.log_path is not None
    record = load_run(result.log_path)

    start = record.start
    assert (record.run_id, record.plan_id, record.status) == (result.run_id, "add_vars", "success")
    assert record.vars == record.exact_vars() == {"n": 5}
    assert (record.vars_file, record.vars_saved) == (start.vars_file, True)
    assert start.plan_file is not None
    assert record.plan_file == result.log_path.parent / start.plan_file
    assert record.plan_file.is_file()
    assert replace(record, end=None).status is None  # a record without plan_complete: not ended
