"""A retry of a run that began with a subflow version whose approval was withdrawn since is refused
at the request (409), as an answer is -- naming the subflow, its version, who rejected it and
who can approve it -- and the task stays interrupted, never failing later inside its job.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.schedule.conftest import team_settings
from tests.schedule.test_door_record import _request, _team
from tests.schedule.test_subflow_door import CALL, SUB_ID

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import PlanRunner, load_source
from keiri_agent.server.errors import STATUS_BY_CODE
from keiri_agent.server.runners import prepare
from keiri_agent.server.task_model import Task, TaskStatus, now
from keiri_agent.server.tasks import TaskRegistry
from keiri_agent.versions import VersionStore


@pytest.mark.parametrize("required", ["on", "off"])  # off: the approved plan version holds it
def test_a_retry_after_a_withdrawn_approval_is_refused_at_the_request(
    required: str, tmp_path: Path
) -> None:
    settings = team_settings(tmp_path, keiri_require_approval=required)
    plan, sub = _team(settings, pauses=True)
    registry = TaskRegistry(settings)
    directory = registry.root / "cut-task-0123456789"
    directory.mkdir(parents=True)
    files = registry._files(directory)
    env, vars, path, answers = prepare(_request(plan), settings, files).args
    with PlanRunner(env, runs_dir=files.runs, started_by="sato") as runner:
        began = runner.run(load_source(path), vars=vars, answers=answers)
    assert began.status == "waiting_input", began.error
    task = Task(
        id="cut-task-0123456789",
        kind="plan",
        directory=directory,
        request=_request(plan).model_dump(mode="json"),
        created_at=now(),
        status=TaskStatus.INTERRUPTED,  # the server stopped after the run began
        details={"run_id": began.run_id},
    )
    registry.store.save(task)
    VersionStore.of(settings).decide(SUB_ID, sub, "reject", by="kato")

    with pytest.raises(BlockError) as refused:
        registry.retry(task.id)

    said = f"{refused.value.message} {refused.value.hint}"
    assert refused.value.code == ErrorCode.APPROVAL_REQUIRED
    assert STATUS_BY_CODE[refused.value.code] == 409
    assert CALL in said, said  # the subflow, as the plan calls it
    assert sub[:12] in said, said  # its version
    assert "却下（kato）" in said, said  # who rejected it
    assert "承認できる人" in said, said
    assert registry.get(task.id).status == TaskStatus.INTERRUPTED  # as it was
