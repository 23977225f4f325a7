"""Plan versions over the API: saves with their author, the diff, reviews by the four-eyes rules
(role, own version, self-approval for a team of one), and plan tasks refused for an unapproved
version with the very error the CLI gives."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.users import key_hash
from keiri_agent.versions import VersionStore
from tests.server.conftest import LiveServer, make_settings

USERS = {"sato": "user", "suzuki": "approver", "kato": "approver", "ops": "admin"}
MEMO = """\
apiVersion: v1
id: keiri/memo
vars:
  count: 3
graph:
  - id: note
    block: report.markdown
    in:
      title: 月次メモ
      template: "確認した件数は {{ n }} 件です。"
      data: {n: "${vars.count}"}
    when: "${vars.count} > 0"
  - id: extra
    block: report.markdown
    in: {template: 補足}
"""
MEMO_V2 = MEMO.replace("count: 3", "count: 5").replace('"${vars.count} > 0"', '"${vars.count} > 1"')


def _users_file(root: Path) -> Path:
    path = root / "users.yaml"
    lines = ["users:"] + [
        f"  - {{name: {name}, key_sha256: {key_hash(name + '-key')}, role: {role}}}"
        for name, role in USERS.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}-key"}


def _team(tmp_path: Path, **overrides: Any) -> Any:
    return make_settings(
        tmp_path,
        keiri_api_keys_file=_users_file(tmp_path),
        keiri_designs_dir=tmp_path / "designs",
        **overrides,
    )


def test_saves_diffs_and_reviews_follow_the_four_eyes_rules(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(_team(tmp_path))
    base = "/agent/plans/keiri/memo"
    with (
        live.client(headers=_bearer("sato")) as sato,
        live.client(headers=_bearer("suzuki")) as suzuki,
        live.client(headers=_bearer("kato")) as kato,
        live.client(headers=_bearer("ops")) as ops,
        live.client() as anonymous,
    ):
        saved = sato.post(f"{base}/versions", json={"yaml": MEMO, "message": "初版"})
        assert saved.status_code == 201, saved.text
        first = saved.json()["version"]
        assert (first["author"], first["number"], first["message"]) == ("sato", 1, "初版")
        assert first["version"] == hashlib.sha256(MEMO.encode()).hexdigest()
        # Saved as the working copy a plan task runs.
        assert (tmp_path / "designs" / "keiri" / "memo.yaml").read_text(encoding="utf-8") == MEMO
        second = suzuki.post(f"{base}/versions", json={"yaml": MEMO_V2}).json()["version"]
        assert second["author"] == "suzuki"

        diff = sato.get(f"{base}/diff", params={"from": "v1", "to": "v2"}).json()
        (note,) = diff["nodes"]
        assert note["node"] == "note"
        assert [(c["field"], c["before"], c["after"]) for c in note["changes"]] == [
            ("when", "${vars.count} > 0", "${vars.count} > 1")
        ]
        assert diff["vars"][0]["text"] == "設定値 count: 3 → 5"

        refused = {
            "user": sato.post(f"{base}/versions/v2/approve", json={}),
            "admin": ops.post(f"{base}/versions/v2/approve", json={}),
            "own": suzuki.post(f"{base}/versions/v2/approve", json={}),
            "no key": anonymous.post(f"{base}/versions/v2/approve", json={}),
        }
        assert {k: r.status_code for k, r in refused.items()} == {
            "user": 403,
            "admin": 403,
            "own": 403,
            "no key": 401,
        }
        assert "role: approver" in refused["user"].json()["hint"]
        assert "自身が登録した版" in refused["own"].json()["message"]

        approved = kato.post(f"{base}/versions/v2/approve", json={"comment": "確認済み"})
        assert approved.status_code == 200, approved.text
        assert approved.json()["version"]["approval"]["by"] == "kato"
        rejected = suzuki.post(f"{base}/versions/v1/reject", json={"comment": "古い版"}).json()
        assert rejected["version"]["status"] == "rejected"

        listed = ops.get(f"{base}/versions").json()["versions"]
        assert [(v["number"], v["status"]) for v in listed] == [(1, "rejected"), (2, "approved")]


def test_a_team_of_one_approves_its_own_version_recorded_as_self_approval(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(_team(tmp_path, keiri_allow_self_approval=True))
    with live.client(headers=_bearer("suzuki")) as suzuki:
        suzuki.post("/agent/plans/keiri/memo/versions", json={"yaml": MEMO})
        done = suzuki.post("/agent/plans/keiri/memo/versions/v1/approve", json={})
    assert done.status_code == 200, done.text
    assert done.json()["version"]["approval"]["self_approved"] is True


def test_a_server_without_keys_refuses_reviews_and_bad_saves(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    live = serve(make_settings(tmp_path, keiri_designs_dir=tmp_path / "designs"))
    with live.client() as client:
        assert (
            client.post("/agent/plans/keiri/memo/versions", json={"yaml": MEMO}).status_code == 201
        )
        review = client.post("/agent/plans/keiri/memo/versions/v1/approve", json={})
        other_id = client.post("/agent/plans/keiri/other/versions", json={"yaml": MEMO})
        invalid = client.post(
            "/agent/plans/keiri/memo/versions",
            json={"yaml": MEMO.replace("report.markdown", "no.such")},
        )
        unknown = client.get("/agent/plans/keiri/memo/diff", params={"from": "v1", "to": "v9"})
    assert review.status_code == 403
    assert "誰が承認したかを確かめられない" in review.json()["message"]
    assert other_id.status_code == 400
    assert "URL の Plan（keiri/other）と違います" in other_id.json()["message"]
    assert invalid.status_code == 400
    assert invalid.json()["code"] == "PLAN_INVALID"
    assert unknown.status_code == 400
    assert "版「v9」はありません" in unknown.json()["message"]
    store = VersionStore(tmp_path / "designs" / ".versions")
    assert len(store.versions("keiri/memo")) == 1  # only the valid save became a version


def test_a_plan_task_of_an_unapproved_version_is_refused_with_the_cli_s_error(
    serve: Callable[..., LiveServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _team(tmp_path)  # the users file names approvers: approval is required
    live = serve(settings)
    task = {"kind": "plan", "plan": "keiri/memo"}
    with (
        live.client(headers=_bearer("sato")) as sato,
        live.client(headers=_bearer("kato")) as kato,
    ):
        sato.post("/agent/plans/keiri/memo/versions", json={"yaml": MEMO})
        refused = sato.post("/agent/run", json=task)
        # The CLI, on the same working copy and settings, says exactly the same.
        for name, value in {
            "KEIRI_API_KEYS_FILE": str(settings.keiri_api_keys_file),
            "KEIRI_DESIGNS_DIR": str(tmp_path / "designs"),
            "KEIRI_RUNS_DIR": str(tmp_path / "cli-runs"),
        }.items():
            monkeypatch.setenv(name, value)
        cli = CliRunner().invoke(
            app, ["plan", "run", str(tmp_path / "designs" / "keiri" / "memo.yaml"), "--json"]
        )
        kato.post("/agent/plans/keiri/memo/versions/v1/approve", json={})
        accepted = sato.post("/agent/run", json=task)
    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "APPROVAL_REQUIRED"
    short = hashlib.sha256(MEMO.encode()).hexdigest()[:12]
    assert body["message"] == (
        f"Plan keiri/memo の版 {short} は承認されていないため実行できません（承認待ち）。"
    )
    assert "承認できる人: kato、suzuki" in body["hint"]
    cli_error = json.loads(cli.stdout)["error"]
    assert (cli_error["code"], cli_error["message"], cli_error["hint"]) == (
        body["code"],
        body["message"],
        body["hint"],
    )
    assert accepted.status_code == 202, accepted.text
    task_id = accepted.json()["task_id"]
    assert live.wait_finished(task_id) == "success"
    record = live.registry.get(task_id)
    run_id = record.details["run_id"]
    log = next((record.directory / "runs").rglob("*.jsonl"))
    first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert first["run_id"] == run_id
    assert first["started_by"] == "sato"  # the task's owner
    assert first["approval"]["by"] == "kato"
