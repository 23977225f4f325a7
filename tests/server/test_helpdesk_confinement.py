"""The help desk's knowledge base in server tasks (issue 33's follow-up): the API has no
help-desk question or ingest route, so a server task reaches an index only through
``ai.helpdesk_answer`` in a plan. Its ``index_dir`` is a ``path: read`` input: given by vars it
is checked at the door, made during the run it is checked by the block (``path_value(ctx=)``),
both through the task's ``FileAccess`` -- so one user (suzuki) cannot open another user's
(sato's) folder or any host folder as an index, while an index in a shared data folder, or the
operator's ``KEIRI_HELPDESK_INDEX`` when ``index_dir`` is left out, is read. Nothing in the
helpdesk path writes an index from a server task (ingest is the operator's CLI)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.server.conftest import LiveServer, with_shared_data
from tests.server.test_confinement import (  # noqa: F401 (fixture)
    World,
    _failed_in_the_block,
    _refused_at_the_door,
    world,
)


def _ask(plan_id: str, vars: str, index_dir: str | None) -> str:
    """A plan asking the help desk, its knowledge base at ``index_dir`` (None: left out)."""
    where = "" if index_dir is None else f", index_dir: {index_dir}"
    return f"""\
apiVersion: v1
id: {plan_id}
vars: {vars}
graph:
  - id: ask
    block: ai.helpdesk_answer
    in: {{ question: 経費精算の締め日は？{where} }}
exports:
  - {{ from: ask.answer, as: answer }}
"""


PLANS = {
    # The knowledge base where vars say (seen at the door) ...
    "ask_var": _ask("ask_var", "{ index: ナレッジ }", '"${vars.index}"'),
    # ... in a folder vars name (a path made during the run) ...
    "ask_in_folder": _ask("ask_in_folder", "{ folder: 資料 }", '"${vars.folder}/index"'),
    # ... and left out: the operator's KEIRI_HELPDESK_INDEX.
    "ask_default": _ask("ask_default", "{}", None),
}


@pytest.fixture
def helpdesk_world(world: World) -> World:  # noqa: F811
    designs = Path(world.live.settings.keiri_designs_dir)
    for name, text in PLANS.items():
        (designs / f"{name}.yaml").write_text(text, encoding="utf-8")
    return world


@pytest.mark.parametrize("target", ["host", "sato"])
def test_an_index_in_another_users_folder_or_on_the_host_is_refused(
    helpdesk_world: World, target: str
) -> None:
    user = helpdesk_world
    folder = user.host_file.parent if target == "host" else user.upload_of_sato().parent
    index = folder / "index"
    index.mkdir()
    # Given by vars: refused at the door, naming the var; no task is made.
    body = {"kind": "plan", "plan": "ask_var", "vars": {"index": str(index)}}
    _refused_at_the_door(user, user.run(body), "設定値「index」", str(index))
    # Made into a path during the run: the block refuses it, naming its input.
    body = {"kind": "plan", "plan": "ask_in_folder", "vars": {"folder": str(folder)}}
    task = user.settle(user.run(body))
    _failed_in_the_block(user, task, "index_dir", str(index))


def test_an_index_in_the_shared_data_or_the_operators_is_read(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    designs = tmp_path / "designs"
    designs.mkdir()
    for name, text in PLANS.items():
        (designs / f"{name}.yaml").write_text(text, encoding="utf-8")
    settings = with_shared_data(
        tmp_path,
        {},
        keiri_designs_dir=designs,
        keiri_helpdesk_index=tmp_path / "operator" / "helpdesk_index",
    )
    (tmp_path / "shared" / "ナレッジ").mkdir()  # a folder, but no index ingested in it
    live = serve(settings)
    with live.client() as client:
        for body in (
            {"kind": "plan", "plan": "ask_var", "vars": {"index": "ナレッジ"}},
            {"kind": "plan", "plan": "ask_default"},
        ):
            response = client.post("/agent/run", json=body)
            assert response.status_code == 202, response.text
            task_id = response.json()["task_id"]
            live.wait_finished(task_id)
            task = client.get(f"/agent/tasks/{task_id}").json()
            # Opened (and found to hold no index), not refused; no server folder named.
            assert task["status"] == "failed", task
            assert task["error"]["code"] == "DEPENDENCY_NOT_FOUND", task["error"]
            assert str(tmp_path) not in json.dumps(task, ensure_ascii=False), task["error"]
