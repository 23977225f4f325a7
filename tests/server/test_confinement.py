"""Users are apart inside the workspace, not only at the API's doors (issue 33): the paths an
outside red team used to reach another user's files or the host, each tried here by one user
(suzuki) against another (sato) over real HTTP, are refused -- at the door with a 403 naming
the input where the path can be seen there, in the block otherwise (the task fails with
PERMISSION_DENIED naming the input) -- and nothing of sato's or of the host reaches suzuki's
task. Refusals never name the server's folders. What a user may read still works: their own
uploads and outputs, the example plans with their bundled data, the shared data folders."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from keiri_agent.errors import ConfigurationError
from keiri_agent.file_access import ALLOWED_PLACES
from keiri_agent.server import TaskRegistry
from tests.server.conftest import LiveServer, make_settings
from tests.support import ScriptedLLMServer

KEYS = {"sato": "sato-key-0123456789abcdef", "suzuki": "suzuki-key-0123456789abcdef"}
SECRET_CUSTOMER = "秘密商事"  # in sato's upload and in the host file: never in suzuki's task
SALES = (
    "売上日,伝票番号,得意先,商品区分,金額\n"
    f"2025-01-10,A-001,{SECRET_CUSTOMER},サービス,120000\n"
    f"2025-02-10,A-002,{SECRET_CUSTOMER},OA機器,80000\n"
)
SHOW = """\
  - id: show
    block: report.markdown
    in:
      template: "{% for row in rows %}{{ row.得意先 }} {{ row.金額 }}\\n{% endfor %}"
      data: { rows: "${read.rows}" }
"""
PLANS = {
    # A plan someone made for everyone: its block reads the path given in vars.
    "read_var": f"""\
apiVersion: v1
id: read_var
vars: {{ path: 売上明細.csv }}
graph:
  - id: read
    block: file.read_table
    in: {{ path: "${{vars.path}}" }}
{SHOW}exports:
  - {{ from: show.markdown, as: report }}
""",
    # ... and one whose block reads a path made from vars (not visible before the run).
    "read_in_folder": f"""\
apiVersion: v1
id: read_in_folder
vars: {{ folder: 明細 }}
graph:
  - id: read
    block: file.read_table
    in: {{ path: "${{vars.folder}}/給与.csv" }}
{SHOW}exports:
  - {{ from: show.markdown, as: report }}
""",
    # ... and one that writes a workbook where vars say.
    "write_var": """\
apiVersion: v1
id: write_var
vars: { output: 結果.xlsx }
graph:
  - id: write
    block: excel.write_report
    in:
      sheets: [{ name: 表, rows: [{ 項目: 売上, 金額: 100 }] }]
      output_path: "${vars.output}"
""",
    # An input node inside a subflow.
    "outer": """\
apiVersion: v1
id: outer
graph:
  - id: sub
    type: subflow
    call: { plan_id: inner }
    out:
      exports: [{ from: report, as: report }]
exports:
  - { from: sub.report, as: report }
""",
    "inner": f"""\
apiVersion: v1
id: inner
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: 売上明細を指定してください
      requirements: [{{ id: sales_file, type: file, label: 売上明細 }}]
  - id: read
    block: file.read_table
    in: {{ path: "${{collect.collected_data.sales_file}}" }}
{SHOW}exports:
  - {{ from: show.markdown, as: report }}
""",
}


def _users_file(root: Path) -> Path:
    path = root / "users.yaml"
    lines = ["users:"]
    for name, key in KEYS.items():
        sha = hashlib.sha256(key.encode()).hexdigest()
        lines += [f"  - name: {name}", f"    key_sha256: {sha}", "    role: user"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class World:
    """A server with two users; sato has a waiting task holding an upload and a finished task
    with a result workbook; a secret file lies on the host outside every folder."""

    live: LiveServer
    root: Path
    sato: httpx.Client
    suzuki: httpx.Client
    waiting_id: str  # sato's, its upload 売上明細.csv kept while it waits
    finished_id: str  # sato's, with 重複チェック結果.xlsx among its files
    host_file: Path

    @property
    def workspace(self) -> Path:
        return self.live.settings.keiri_workspace_root.absolute()

    def upload_of_sato(self) -> Path:
        return self.live.registry.get(self.waiting_id).directory / "uploads" / "売上明細.csv"

    def run(self, body: dict[str, Any]) -> httpx.Response:
        return self.suzuki.post("/agent/run", json=body)

    def settle(self, response: httpx.Response) -> dict[str, Any]:
        """suzuki's task, once settled (the request must have been accepted)."""
        assert response.status_code == 202, response.text
        task_id = response.json()["task_id"]
        self.live.wait_finished(task_id)
        task: dict[str, Any] = self.suzuki.get(f"/agent/tasks/{task_id}").json()
        return task

    def leaked(self, task: dict[str, Any]) -> list[str]:
        """What reached suzuki's refused task: sato's or the host's data in its texts, and any
        file at all (a refused task makes none)."""
        found = [item["path"] for item in task.get("files", [])]
        if SECRET_CUSTOMER in json.dumps(task, ensure_ascii=False):
            found.append("text")
        return found

    def speaks_of_no_server_folder(self, said: str, given: str = "") -> None:
        """``said`` names none of the server's folders (beyond the path the user gave)."""
        rest = said.replace(json.dumps(given, ensure_ascii=False)[1:-1], "") if given else said
        assert str(self.root) not in rest, said


@contextmanager
def _world(
    serve: Callable[..., LiveServer], root: Path, llm_server: ScriptedLLMServer
) -> Iterator[World]:
    designs = root / "designs"
    designs.mkdir()
    for name, text in PLANS.items():
        (designs / f"{name}.yaml").write_text(text, encoding="utf-8")
    host = root / "host"
    host.mkdir()
    (host / "給与.csv").write_text(SALES, encoding="utf-8")
    settings = make_settings(root, keiri_api_keys_file=_users_file(root), keiri_designs_dir=designs)
    live = serve(settings)
    with (
        live.client(headers={"Authorization": f"Bearer {KEYS['sato']}"}) as sato,
        live.client(headers={"Authorization": f"Bearer {KEYS['suzuki']}"}) as suzuki,
    ):
        body = {"kind": "plan", "plan": "monthly_sales_report", "answers": {}}
        waiting = sato.post(
            "/agent/run",
            data={"request": json.dumps(body)},
            files=[("files", ("売上明細.csv", SALES.encode(), "text/csv"))],
        )
        assert waiting.status_code == 202, waiting.text
        waiting_id = waiting.json()["task_id"]
        assert live.wait_finished(waiting_id) == "waiting_input"
        finished = sato.post("/agent/run", json={"kind": "plan", "plan": "duplicate_invoice_check"})
        finished_id = finished.json()["task_id"]
        assert live.wait_finished(finished_id) == "success"
        world = World(live, root, sato, suzuki, waiting_id, finished_id, host / "給与.csv")
        assert world.upload_of_sato().is_file()
        yield world


@pytest.fixture
def world(
    serve: Callable[..., LiveServer], tmp_path: Path, llm_server: ScriptedLLMServer
) -> Iterator[World]:
    with _world(serve, tmp_path, llm_server) as found:  # made after llm_server (its settings)
        yield found


def _refused_at_the_door(world: World, response: httpx.Response, field: str, given: str) -> None:
    assert response.status_code == 403, response.text
    error = response.json()
    assert error["code"] == "PERMISSION_DENIED"
    assert error["message"].startswith(f"{field} のパス「")  # names the input
    assert ALLOWED_PLACES in error["message"] + error["hint"] or "このタスクの" in error["hint"]
    world.speaks_of_no_server_folder(response.text, given)


def _failed_in_the_block(world: World, task: dict[str, Any], field: str, given: str) -> None:
    assert task["status"] == "failed", task
    assert task["error"]["code"] == "PERMISSION_DENIED", task["error"]
    assert f"{field} のパス「" in task["error"]["message"]
    world.speaks_of_no_server_folder(json.dumps(task["error"], ensure_ascii=False), given)
    assert world.leaked(task) == []


# --- a conversion walking every user's task folder ------------------------------------------


@pytest.mark.parametrize("pattern", ["*.xlsx", "売上明細.csv"])
def test_a_conversion_of_the_tasks_folder_reads_no_other_users_files(
    world: World, llm_server: ScriptedLLMServer, pattern: str
) -> None:
    job = {"action": "convert", "source": "tasks", "files": [pattern], "target_format": "json"}
    llm_server.add_chat(json=job)
    task = world.settle(world.run({"request": "まとめて JSON にして", "source": "tasks"}))
    assert task["status"] == "failed", task
    assert world.leaked(task) == []
    world.speaks_of_no_server_folder(json.dumps(task, ensure_ascii=False))


def test_the_tasks_folder_named_by_its_path_is_refused_at_the_door_and_in_the_request(
    world: World, llm_server: ScriptedLLMServer
) -> None:
    tasks = str(world.workspace / "tasks")
    response = world.run({"request": "JSON にして", "source": tasks})
    _refused_at_the_door(world, response, "source", tasks)
    # Written only in the request text, the path reaches the pipeline, which refuses it.
    job = {"action": "convert", "source": tasks, "files": ["*.xlsx"], "target_format": "json"}
    llm_server.add_chat(json=job)
    task = world.settle(world.run({"request": f"{tasks} の *.xlsx を JSON にして"}))
    _failed_in_the_block(world, task, "source", tasks)


# --- another user's upload named in one's own answers ---------------------------------------


def test_another_users_upload_named_in_answers_is_refused(world: World) -> None:
    relative = f"tasks/{world.waiting_id}/uploads/売上明細.csv"
    absolute = str(world.upload_of_sato())
    for name in (relative, absolute):
        body = {
            "kind": "plan",
            "plan": "monthly_sales_report",
            "answers": {"collect_inputs": {"sales_file": name}},
        }
        response = world.run(body)
        assert response.status_code in (400, 403), response.text
        assert SECRET_CUSTOMER not in response.text
        if name == absolute:
            _refused_at_the_door(world, response, "collect_inputs.sales_file", name)
        else:  # a relative name is looked up among suzuki's own files only: not there
            assert response.json()["details"]["reason"] == "not_found"
            world.speaks_of_no_server_folder(response.text, name)
    # ... and in the answers that continue one's own waiting task.
    mine = world.run({"kind": "plan", "plan": "monthly_sales_report", "answers": {}})
    paused = world.settle(mine)
    assert paused["status"] == "waiting_input"
    answer = {"answers": {"collect_inputs": {"sales_file": absolute}}}
    continued = world.suzuki.post(f"/agent/tasks/{paused['task_id']}/answers", json=answer)
    _refused_at_the_door(world, continued, "collect_inputs.sales_file", absolute)


# --- vars: a plan's block reads and writes where vars say -----------------------------------


@pytest.mark.parametrize("target", ["host", "sato"])
def test_vars_cannot_lead_a_block_to_read_a_host_file_or_another_users(
    world: World, target: str
) -> None:
    path = str(world.host_file if target == "host" else world.upload_of_sato())
    # Given to a path input as it is: refused at the door, naming the var.
    response = world.run({"kind": "plan", "plan": "read_var", "vars": {"path": path}})
    _refused_at_the_door(world, response, "設定値「path」", path)
    # Made into a path during the run: the block refuses it, naming its input.
    folder = str(Path(path).parent)
    body = {"kind": "plan", "plan": "read_in_folder", "vars": {"folder": folder}}
    if target == "sato":
        (Path(folder) / "給与.csv").write_text(SALES, encoding="utf-8")  # sato's, uploaded
    task = world.settle(world.run(body))
    _failed_in_the_block(world, task, "path", f"{folder}/給与.csv")


def test_vars_cannot_lead_a_block_to_write_outside_the_task(world: World) -> None:
    target = world.root / "host" / "新しいブック.xlsx"
    body = {"kind": "plan", "plan": "write_var", "vars": {"output": str(target)}}
    _refused_at_the_door(world, world.run(body), "設定値「output」", str(target))
    assert not target.exists()
    assert world.live.registry.list(visible=lambda t: t.owner == "suzuki") == []


# --- answers for an input node inside a subflow ---------------------------------------------


def test_an_answer_inside_a_subflow_is_refused_at_the_door(world: World) -> None:
    path = str(world.host_file)
    body = {"kind": "plan", "plan": "outer", "answers": {"sub/collect": {"sales_file": path}}}
    response = world.run(body)
    _refused_at_the_door(world, response, "sub/collect.sales_file", path)
    assert world.live.registry.list(visible=lambda t: t.owner == "suzuki") == []


# --- what a user may read still works --------------------------------------------------------


def test_own_uploads_own_outputs_and_the_bundled_example_data_still_work(world: World) -> None:
    # An upload named in the answers (the example plan also reads back its own chart).
    body = {
        "kind": "plan",
        "plan": "monthly_sales_report",
        "answers": {"collect_inputs": {"sales_file": "自分の売上.csv"}},
    }
    own = world.suzuki.post(
        "/agent/run",
        data={"request": json.dumps(body, ensure_ascii=False)},
        files=[("files", ("自分の売上.csv", SALES.replace(SECRET_CUSTOMER, "自社").encode()))],
    )
    task = world.settle(own)
    assert task["status"] == "success", task["error"]
    assert "自社" in task["answer"]
    # A vars path naming one's own upload, and a subflow answer naming it.
    for plan, extra in (
        ("read_var", {"vars": {"path": "自分の売上.csv"}}),
        ("outer", {"answers": {"sub/collect": {"sales_file": "自分の売上.csv"}}}),
    ):
        response = world.suzuki.post(
            "/agent/run",
            data={"request": json.dumps({"kind": "plan", "plan": plan, **extra})},
            files=[("files", ("自分の売上.csv", SALES.replace(SECRET_CUSTOMER, "自社").encode()))],
        )
        task = world.settle(response)
        assert task["status"] == "success", task["error"]
        assert "自社 120000" in task["answer"]
    # The example plan with its shipped answers reads the bundled example data; its report
    # names its chart beside it, as the user downloads both, not where the server keeps the run.
    task = world.settle(world.run({"kind": "plan", "plan": "monthly_sales_report"}))
    assert task["status"] == "success", task["error"]
    assert "![月別売上](月別売上.png)" in task["answer"]
    world.speaks_of_no_server_folder(task["answer"])
    paths = [f["path"] for f in task["files"]]
    assert "files/write_report/月別売上.png" in paths
    assert "files/write_report/月次売上レポート.md" in paths
    # A plan's outputs are written in the task's own folder, and downloadable.
    body = {"kind": "plan", "plan": "write_var", "vars": {"output": "自分のブック.xlsx"}}
    task = world.settle(world.run(body))
    assert task["status"] == "success", task["error"]
    assert [f["path"] for f in task["files"]] == ["files/write/自分のブック.xlsx"]
    runs = world.live.registry.get(task["task_id"]).directory / "runs"
    assert list(runs.rglob("自分のブック.xlsx"))  # the run itself lives in the task's folder


# --- the shared data setting ------------------------------------------------------------------


def test_a_shared_folder_that_holds_the_tasks_or_does_not_exist_stops_the_start(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "tasks").mkdir(parents=True)
    for folder, said in ((workspace, "重なって"), (tmp_path / "ない", "見つかりません")):
        settings = make_settings(tmp_path, keiri_shared_data_dirs=str(folder))
        with pytest.raises(ConfigurationError) as info:
            TaskRegistry(settings)
        assert said in info.value.message
        assert "KEIRI_SHARED_DATA_DIRS" in info.value.message
