"""The plan runner: parallelism, limits, conditions, loops, subflows, on_error, timeouts."""

from __future__ import annotations

import concurrent.futures as cf
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.events import read_events
from keiri_agent.plan import PlanRunner, RunResult
from tests.plan.blockkit.blocks import Gauge

WritePlan = Callable[[str, str], Path]


def events_of(result: RunResult, kind: str) -> list:
    assert result.log_path is not None
    return [e for e in read_events(result.log_path) if e.event == kind]


def started(result: RunResult) -> list[str]:
    return [e.node_id for e in events_of(result, "node_start")]


def test_independent_nodes_run_in_parallel(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "parallel",
        """
id: parallel
graph:
  - {id: a, block: test.sleep, in: {together: 2, value: 1}}
  - {id: b, block: test.sleep, in: {together: 2, value: 2}}
  - {id: total, block: test.add, in: {a: "${a.value}", b: "${b.value}"}}
""",
    )
    result = runner.run(plan)
    assert result.status == "success"
    assert result.outputs["total"] == {"sum": 3}
    assert Gauge.peak == 2, "the two independent nodes never ran at the same time"


def test_default_max_workers_limits_parallel_nodes(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    nodes = "\n".join(
        f"  - {{id: n{i}, block: test.sleep, in: {{together: 2, seconds: 0.5}}}}" for i in range(6)
    )
    plan = write_plan(
        "limited",
        f"id: limited\npolicy: {{concurrency: {{default_max_workers: 2}}}}\ngraph:\n{nodes}\n",
    )
    assert runner.run(plan).status == "success"
    assert Gauge.peak == 2


def test_foreach_never_exceeds_max_concurrency_and_keeps_order(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "fe",
        """
id: fe
graph:
  - {id: items, block: test.items, in: {count: 9}}
  - id: each
    type: loop
    foreach: {input: "${items.items}", itemVar: it, indexVar: i, max_concurrency: 3}
    body:
      plan:
        graph:
          - {id: wait, block: test.sleep, in: {together: 3, seconds: 0.3, value: "${it.n}"}}
          - {id: double, block: test.add, in: {a: "${wait.value}", b: "${i}"}}
        exports:
          - {from: double.sum, as: doubled}
    out: {collect: doubled}
""",
    )
    result = runner.run(plan)
    assert result.status == "success"
    assert result.outputs["each"]["doubled"] == [2 * n for n in range(9)]
    assert Gauge.peak == 3
    assert len(events_of(result, "loop_iteration")) == 9


def test_per_node_policy_overrides_loop_concurrency(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "pn",
        """
id: pn
policy: {concurrency: {per_node: {each: 2}}}
graph:
  - {id: items, block: test.items, in: {count: 6}}
  - id: each
    type: loop
    foreach: {input: "${items.items}", max_concurrency: 6}
    body:
      plan:
        graph:
          - {id: wait, block: test.sleep, in: {together: 2, seconds: 0.3}}
""",
    )
    assert runner.run(plan).status == "success"
    assert Gauge.peak == 2


def test_while_stops_at_max_iterations(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "wh",
        """
id: wh
graph:
  - id: again
    type: loop
    while:
      condition: "${step.sum} != 100"
      max_iterations: 4
    body:
      plan:
        graph:
          - {id: step, block: test.add, in: {a: 1}}
        exports: [{from: step.sum, as: s}]
""",
    )
    result = runner.run(plan)
    # Stopped by the bound with the condition still true: the outputs are kept, but the run
    # says it is incomplete (issue 18: it used to end as a plain success).
    assert result.status == "partial"
    assert result.outputs["again"]["s"] == [1, 1, 1, 1]
    assert len(events_of(result, "loop_iteration")) == 4
    (warning,) = [e for e in events_of(result, "log") if e.level == "warning"]
    assert warning.code == "LOOP_LIMIT_REACHED"
    assert warning.node_id == "again"


def test_while_exits_when_the_condition_turns_false(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "wh2",
        """
id: wh2
graph:
  - id: again
    type: loop
    while:
      condition: "${step.sum} == null"
      max_iterations: 10
    body:
      plan:
        graph:
          - {id: step, block: test.add, in: {a: 5}}
        exports: [{from: step.sum, as: s}]
""",
    )
    result = runner.run(plan)
    assert result.outputs["again"]["s"] == [5]


def test_required_while_still_true_at_the_limit_fails(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "wh3",
        """
id: wh3
graph:
  - id: again
    type: loop
    while: {condition: "true", max_iterations: 2, required: true}
    body:
      plan:
        graph:
          - {id: step, block: test.add, in: {a: 1}}
""",
    )
    result = runner.run(plan)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "LOOP_LIMIT_REACHED"
    assert result.error.details["node_id"] == "again"


def test_when_false_skips_with_null_outputs(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "wf",
        """
id: wf
vars: {enabled: false}
graph:
  - {id: a, block: test.sleep, when: "${vars.enabled} == true", in: {value: 1}}
  - {id: b, block: test.sleep, when: {left: "${a.value}", op: eq, right: null}, in: {value: 2}}
""",
    )
    result = runner.run(plan)
    assert result.status == "success"
    assert "a" not in result.outputs
    assert result.outputs["b"] == {"value": 2}
    skipped = events_of(result, "node_skipped")
    assert [(e.node_id, e.reason) for e in skipped] == [("a", "when_condition_false")]
    assert runner.run(plan, vars={"enabled": True}).outputs["a"] == {"value": 1}


def test_on_error_halt_stops_downstream(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "halt",
        """
id: halt
graph:
  - {id: boom, block: test.fail, in: {message: 壊れました}}
  - {id: after, block: test.add, in: {a: 1, b: "${boom.value}"}}
""",
    )
    result = runner.run(plan)
    assert result.status == "failed"
    assert result.error is not None
    assert (result.error.code, result.error.message) == ("API_ERROR", "壊れました")
    assert result.error.details["node_id"] == "boom"
    assert "after" not in started(result)


def test_on_error_continue_gives_null_outputs(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "cont",
        """
id: cont
policy: {on_error: continue}
graph:
  - {id: boom, block: test.fail}
  - {id: after, block: test.sleep, in: {value: "${boom.value}"}}
""",
    )
    result = runner.run(plan)
    assert result.status == "partial"
    assert result.outputs["after"] == {"value": None}


def test_on_error_retry_retries_then_succeeds(
    runner: PlanRunner, write_plan: WritePlan, tmp_path: Path
) -> None:
    plan = write_plan(
        "retry",
        f"""
id: retry
policy: {{on_error: retry, retries: 2}}
graph:
  - {{id: flaky, block: test.flaky, in: {{state_dir: "{tmp_path}", key: k, failures: 2}}}}
""",
    )
    result = runner.run(plan)
    assert result.status == "success"
    assert result.outputs["flaky"] == {"calls": 3}
    assert [e.retry for e in events_of(result, "node_error")] == [0, 1]


def test_on_error_retry_gives_up_after_retries(
    runner: PlanRunner, write_plan: WritePlan, tmp_path: Path
) -> None:
    plan = write_plan(
        "retry2",
        f"""
id: retry2
policy: {{on_error: retry, retries: 1}}
graph:
  - {{id: flaky, block: test.flaky, in: {{state_dir: "{tmp_path}", key: k, failures: 5}}}}
""",
    )
    result = runner.run(plan)
    assert result.status == "failed"
    assert (tmp_path / "k.count").read_text() == "2"


# A block that would sleep 60 s under a node timeout of 200 ms.
SLOW_WITH_TIMEOUT = """
id: slow
policy: {timeout_ms: 200}
graph:
  - {id: slow, block: test.sleep, in: {seconds: 60}}
"""


def test_timeout_fails_the_node_and_stops_the_block(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan("slow", SLOW_WITH_TIMEOUT)
    t0 = time.perf_counter()
    result = runner.run(plan)
    assert time.perf_counter() - t0 < 30  # the 200 ms timeout, not the block's 60 s
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "TIMEOUT_ERROR"
    deadline = time.monotonic() + 30
    while Gauge.current and time.monotonic() < deadline:  # the block saw its cancel event
        time.sleep(0.01)
    assert Gauge.current == 0


class _InlineBackend:
    """Runs each block call in the caller's thread: the block has met its deadline (and ended
    CANCELLED) before the runner starts to wait for it, the order a loaded machine can give."""

    name = "threads"
    local = True

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # handed to the future, as a pool does
            future.set_exception(exc)
        return future

    def close(self) -> None:
        pass


def test_a_block_that_meets_its_deadline_first_still_fails_the_node_by_timeout(
    registry: BlockRegistry, tmp_path: Path, designs: Path, write_plan: WritePlan
) -> None:
    plan = write_plan("slow", SLOW_WITH_TIMEOUT)
    with PlanRunner(
        registry,
        runs_dir=tmp_path / "runs",
        designs_dir=designs,
        config={},
        backend=_InlineBackend(),
    ) as runner:
        result = runner.run(plan)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "TIMEOUT_ERROR"


def test_cancel_stops_the_run(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "cancel",
        """
id: cancel
graph:
  - {id: long, block: test.sleep, in: {seconds: 60}}
  - {id: after, block: test.add, in: {a: 1, b: "${long.value}"}}
""",
    )
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    t0 = time.perf_counter()
    result = runner.run(plan, cancel=cancel)
    assert time.perf_counter() - t0 < 30  # the cancel, not the block's 60 s
    assert result.status in ("cancelled", "failed")
    assert "after" not in started(result)


def test_subflow_has_its_own_vars_and_exports(runner: PlanRunner, write_plan: WritePlan) -> None:
    write_plan(
        "common/double",
        """
id: common/double
vars: {x: null, label: サブ}
graph:
  - {id: twice, block: test.add, in: {a: "${vars.x}", b: "${vars.x}"}}
exports:
  - {from: twice.sum, as: doubled}
""",
    )
    plan = write_plan(
        "parent",
        """
id: parent
vars: {x: 100, label: 親}
graph:
  - {id: seed, block: test.add, in: {a: 3}}
  - id: sub
    type: subflow
    call: {plan_id: common/double, inputs: {x: "${seed.sum}"}}
    out: {exports: [{from: doubled, as: result}]}
""",
    )
    result = runner.run(plan)
    assert result.status == "success"
    assert result.outputs["sub"] == {"result": 6}  # the parent's x=100 did not leak in
    sub_events = [e for e in read_events(result.log_path) if e.node_id == "sub/twice"]
    assert sub_events
    assert all(e.sub_run_id == f"{result.run_id}.sub#1" for e in sub_events)


def test_subflow_errors_propagate_to_the_parent(runner: PlanRunner, write_plan: WritePlan) -> None:
    write_plan(
        "broken",
        "id: broken\ngraph:\n  - {id: boom, block: test.fail, in: {message: 内部で失敗}}\n",
    )
    plan = write_plan(
        "caller",
        """
id: caller
graph:
  - {id: sub, type: subflow, call: {plan_id: broken}}
""",
    )
    result = runner.run(plan)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "API_ERROR"
    assert "内部で失敗" in result.error.message
    assert result.error.details["node_id"] == "sub"
    assert result.error.details["inner_node_id"] == "sub/boom"


def test_invalid_plan_never_starts(
    runner: PlanRunner, write_plan: WritePlan, tmp_path: Path
) -> None:
    plan = write_plan("bad", "id: bad\ngraph:\n  - {id: a, block: test.nope}\n")
    with pytest.raises(BlockError) as info:
        runner.run(plan)
    assert info.value.code == "PLAN_INVALID"
    assert info.value.details["errors"][0]["code"] == "UNKNOWN_BLOCK"
    assert not (tmp_path / "runs" / "bad").exists()


def test_unknown_var_override_is_refused(runner: PlanRunner, write_plan: WritePlan) -> None:
    plan = write_plan(
        "v", "id: v\nvars: {a: 1}\ngraph:\n  - {id: n, block: test.add, in: {a: 1}}\n"
    )
    with pytest.raises(BlockError) as info:
        runner.run(plan, vars={"b": 2})
    assert "a" in info.value.hint


def test_block_input_type_errors_are_block_errors(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "types",
        """
id: types
graph:
  - {id: word, block: test.sleep, in: {value: abc}}
  - {id: add, block: test.add, in: {a: "${word.value}"}}
""",
    )
    result = runner.run(plan)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "INPUT_VALIDATION_FAILED"
    assert result.error.details["node_id"] == "add"
    assert result.error.input_snapshot == {"a": "abc", "b": 0}


def test_dask_backend_runs_blocks_on_a_local_cluster(
    registry, tmp_path: Path, write_plan: WritePlan, designs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distributed = pytest.importorskip("distributed")
    import os

    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        monkeypatch.setenv("KEIRI_DASK_SCHEDULER", cluster.scheduler_address)
        plan = write_plan(
            "dask",
            """
id: dask
policy: {executor: dask}
graph:
  - {id: items, block: test.items, in: {count: 6}}
  - id: each
    type: loop
    foreach: {input: "${items.items}", itemVar: it, max_concurrency: 4}
    body:
      plan:
        graph:
          - {id: where, block: test.pid, in: {value: "${it.n}"}}
        exports: [{from: where.pid, as: pid}, {from: where.value, as: value}]
""",
        )
        from keiri_agent.config import load_settings

        with PlanRunner(
            registry,
            settings=load_settings(),
            runs_dir=tmp_path / "runs",
            designs_dir=designs,
            config={},
        ) as runner:
            result = runner.run(plan)
        assert result.status == "success", result.error
        assert result.outputs["each"]["value"] == list(range(6))
        pids = set(result.outputs["each"]["pid"])
        assert os.getpid() not in pids  # ran in the cluster's worker processes
        assert pids <= {w.pid for w in cluster.workers.values()} | pids


def test_a_missing_environment_variable_is_named_without_listing_the_environment(
    registry, tmp_path: Path, write_plan: WritePlan, designs: Path
) -> None:
    plan = write_plan(
        "envs",
        'id: envs\ngraph:\n  - {id: a, block: test.sleep, in: {value: "${env.KEIRI_NOPE}"}}\n',
    )
    env = {"SECRET_TOKEN_NAME": "x", "OTHER": "y"}
    with PlanRunner(
        registry, runs_dir=tmp_path / "runs", designs_dir=designs, config={}, env=env
    ) as r:
        result = r.run(plan)
    assert result.status == "failed"
    assert result.error is not None
    assert "KEIRI_NOPE" in result.error.message
    text = result.error.message + result.error.hint + str(result.error.details)
    assert "SECRET_TOKEN_NAME" not in text


def test_a_null_optional_input_gets_its_default(runner: PlanRunner, write_plan: WritePlan) -> None:
    """null means "not given": b's default (0) is used, as if b were left out."""
    plan = write_plan(
        "nulldefault",
        """
id: nulldefault
vars: {offset: null}
graph:
  - {id: add, block: test.add, in: {a: 5, b: "${vars.offset}"}}
""",
    )
    result = runner.run(plan)
    assert result.status == "success", result.error
    assert result.outputs["add"] == {"sum": 5}
    assert runner.run(plan, vars={"offset": 2}).outputs["add"] == {"sum": 7}


def test_a_refused_var_override_lists_the_vars_with_their_labels(
    runner: PlanRunner, write_plan: WritePlan
) -> None:
    plan = write_plan(
        "v",
        "id: v\nvars: {fee_tolerance: 880, out: r.xlsx}\n"
        "ui:\n  vars: {fee_tolerance: 差し引かれてもよい振込手数料の上限（円）}\n"
        "graph:\n  - {id: n, block: test.add, in: {a: 1}}\n",
    )
    with pytest.raises(BlockError) as info:
        runner.run(plan, vars={"fee_tolerence": 1000})
    assert info.value.hint == (
        "指定できる vars: fee_tolerance（差し引かれてもよい振込手数料の上限（円））, out"
    )
