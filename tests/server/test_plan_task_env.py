"""A plan task is checked at the door with the one ``PlanEnv`` its run runs with (issue 39).

The registry an operator's server runs plans with (here: one that knows ``test.ask``, an input
block of the operator's own, which the built-in registry does not) also decides which answers
are paths at the door: an answer that names a host file for such a block is refused before a
task exists, for a new request and for the answers that continue a waiting task. A request the
door accepts runs with the env the door built (one per request).
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BUILTIN_SPEC_DIR, BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan import PlanEnv
from keiri_agent.server import TaskRegistry
from keiri_agent.server.plan_catalog import plan_catalog
from keiri_agent.server.runners import PlanRequest
from tests.server.conftest import TASK_TIMEOUT_S, make_settings

SALES = "売上日,金額\n2025-01-10,120000\n"
# ``test.ask`` reads what ``ui.interactive_input`` reads; only the operator's registry has it.
ASK = """\
apiVersion: v1
id: ask
graph:
  - id: approve
    block: ui.interactive_input
    in: { mode: confirm, message: 始めてよいですか }
  - id: ask
    block: test.ask
    in:
      mode: collect
      message: "承認 ${approve.approved}: 売上明細を指定してください"
      requirements: [{ id: sales_file, type: file, label: 売上明細 }]
"""
# ASK's first node alone, as plan ``approve``: built-in blocks only.
APPROVE = ASK.split("  - id: ask", 1)[0].replace("id: ask", "id: approve", 1)


def _operators_registry(root: Path) -> BlockRegistry:
    specs = root / "specs"
    specs.mkdir()
    text = (BUILTIN_SPEC_DIR / "ui" / "ui.interactive_input.yaml").read_text(encoding="utf-8")
    text = text.replace("id: ui.interactive_input", "id: test.ask", 1).replace(
        "blocks/ui/interactive_input.py:", "keiri_agent.blocks.ui.interactive_input:", 1
    )
    (specs / "test.ask.yaml").write_text(text, encoding="utf-8")
    return BlockRegistry([specs])


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[PlanEnv]:
    """Every PlanEnv built, each with the operator's registry."""
    registry = _operators_registry(tmp_path)
    envs: list[PlanEnv] = []
    original = PlanEnv.of.__func__  # type: ignore[attr-defined]

    def of(cls: type[PlanEnv], given: BlockRegistry | None = None, **options: Any) -> PlanEnv:
        env: PlanEnv = original(cls, given if given is not None else registry, **options)
        envs.append(env)
        return env

    monkeypatch.setattr(PlanEnv, "of", classmethod(of))
    return envs


@pytest.fixture
def tasks(tmp_path: Path) -> Iterator[TaskRegistry]:
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "ask.yaml").write_text(ASK, encoding="utf-8")
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "secret.csv").write_text(SALES, encoding="utf-8")
    registry = TaskRegistry(make_settings(tmp_path, keiri_designs_dir=designs))
    yield registry
    registry.runtime.close()


def _settled(tasks: TaskRegistry, task_id: str) -> str:
    deadline = time.monotonic() + TASK_TIMEOUT_S
    while time.monotonic() < deadline:
        task = tasks.get(task_id)
        if not task.active:
            return str(task.status)
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} did not settle in {TASK_TIMEOUT_S} s")


def _refused(raised: pytest.ExceptionInfo[BlockError]) -> None:
    assert raised.value.code == "PERMISSION_DENIED"
    assert raised.value.message.startswith("ask.sales_file のパス「")


def test_an_answer_is_checked_at_the_door_with_the_registry_the_run_uses(
    tasks: TaskRegistry, built: list[PlanEnv], tmp_path: Path
) -> None:
    host = str(tmp_path / "host" / "secret.csv")
    answers = {"approve": {"approved": True}, "ask": {"sales_file": host}}

    with pytest.raises(BlockError) as raised:
        tasks.submit(PlanRequest(kind="plan", plan="ask", answers=answers))

    _refused(raised)
    assert tasks.list() == []  # no task was made


def test_an_accepted_request_runs_with_the_env_its_door_built(
    tasks: TaskRegistry, built: list[PlanEnv]
) -> None:
    answers = {"approve": {"approved": True}, "ask": {"sales_file": "売上.csv"}}
    request = PlanRequest(kind="plan", plan="ask", answers=answers)

    task = tasks.submit(request, [("売上.csv", io.BytesIO(SALES.encode()))])

    assert _settled(tasks, task.id) == "success", tasks.get(task.id).error
    assert len(built) == 1  # one env for the door check and the run
    read = tasks.get(task.id).details
    assert read["plan_status"] == "success"


def test_answers_that_continue_a_task_are_checked_with_the_registry_the_run_uses(
    tasks: TaskRegistry, built: list[PlanEnv], tmp_path: Path
) -> None:
    task = tasks.submit(PlanRequest(kind="plan", plan="ask", answers={}))
    assert _settled(tasks, task.id) == "waiting_input"
    waiting = [w["node_id"] for w in tasks.get(task.id).details["waiting"]]
    assert waiting == ["approve"]  # ``ask`` not reached: its fields are known from the plan
    host = str(tmp_path / "host" / "secret.csv")

    with pytest.raises(BlockError) as raised:
        tasks.answer(task.id, {"approve": {"approved": True}, "ask": {"sales_file": host}})

    _refused(raised)
    assert tasks.get(task.id).status == "waiting_input"
    answered = tasks.answer(
        task.id,
        {"approve": {"approved": True}, "ask": {"sales_file": "売上.csv"}},
        [("売上.csv", io.BytesIO(SALES.encode()))],
    )
    assert _settled(tasks, answered.id) == "success", tasks.get(task.id).error
    assert len(built) == 3  # the request's, the refused answers', the accepted answers'


@pytest.fixture
def configured(tmp_path: Path) -> Iterator[tuple[TaskRegistry, Path]]:
    """A server with ``ask`` and ``approve`` among its plans and a readable plan config, which
    the test may break (the config file is returned beside the registry)."""
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "ask.yaml").write_text(ASK, encoding="utf-8")
    (designs / "approve.yaml").write_text(APPROVE, encoding="utf-8")
    config = tmp_path / "plan_config.yaml"
    config.write_text("tax_rate: 0.1\n", encoding="utf-8")
    registry = TaskRegistry(
        make_settings(tmp_path, keiri_designs_dir=designs, keiri_plan_config=config)
    )
    yield registry, config
    registry.runtime.close()


def _refused_for_the_config(raised: pytest.ExceptionInfo[BlockError]) -> None:
    assert raised.value.code == "CONFIGURATION_ERROR"
    assert "KEIRI_PLAN_CONFIG" in raised.value.hint


def test_a_plan_config_that_cannot_be_read_refuses_the_request_before_a_task_exists(
    configured: tuple[TaskRegistry, Path],
) -> None:
    tasks, config = configured
    config.write_text("start: [1,\n", encoding="utf-8")

    with pytest.raises(BlockError) as raised:
        tasks.submit(PlanRequest(kind="plan", plan="ask", answers={}))

    _refused_for_the_config(raised)
    assert tasks.list() == []


def test_a_retry_after_the_plan_config_broke_is_refused_before_the_task_moves(
    configured: tuple[TaskRegistry, Path],
) -> None:
    """A paused plan task whose server's plan config became unreadable is not put back in the
    queue: ``runner_for`` (what a retry and a restart's recovery continue a task with) builds
    the env and refuses."""
    tasks, config = configured
    task = tasks.submit(PlanRequest(kind="plan", plan="approve", answers={}))
    assert _settled(tasks, task.id) == "waiting_input", tasks.get(task.id).error
    config.write_text("- tax_rate\n", encoding="utf-8")

    with pytest.raises(BlockError) as raised:
        tasks.runner_for(tasks.get(task.id))

    _refused_for_the_config(raised)
    assert tasks.get(task.id).status == "waiting_input"


def test_the_plan_list_knows_the_blocks_of_the_servers_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GET /agent/plans`` reads a plan with the block folders the server's settings name (as
    its runs do), not those of the process environment."""
    monkeypatch.delenv("KEIRI_BLOCK_SPEC_DIRS", raising=False)
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "ask.yaml").write_text(ASK, encoding="utf-8")
    _operators_registry(tmp_path)  # writes tmp_path/specs
    specs = str(tmp_path / "specs")
    settings = make_settings(tmp_path, keiri_designs_dir=designs, keiri_block_spec_dirs=specs)

    [entry] = [e for e in plan_catalog(settings) if e["plan"] == "ask"]

    assert "error" not in entry, entry
    assert list(entry["node_names"]) == ["approve", "ask"]
    assert [r["node_id"] for r in entry["inputs"]] == ["approve"]  # ask's waits for approve's
