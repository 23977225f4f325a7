"""Schedules over the API: bad input refused with nothing stored, run-now, removal, keys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.schedule.conftest import PLAN_ID, Clock, approved_memo, jst, team_settings
from tests.server.conftest import LiveServer

from keiri_agent.schedule import ScheduleStore
from keiri_agent.users import key_hash


def test_bad_schedules_are_refused_and_run_now_starts_the_approved_version(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = team_settings(tmp_path)
    approved_memo(settings)
    live = serve(settings, clock=Clock(jst("2026-12-07 09:00:00")))
    store = ScheduleStore.of(settings)
    with live.client() as client:
        bad = {
            "cron": client.post(
                "/agent/schedules",
                json={"plan_id": PLAN_ID, "rule": {"kind": "cron", "expr": "99 * * * *"}},
            ),
            "kind": client.post(
                "/agent/schedules", json={"plan_id": PLAN_ID, "rule": {"kind": "weekly"}}
            ),
            "plan": client.post(
                "/agent/schedules",
                json={"plan_id": "keiri/none", "rule": {"kind": "last_business_day"}},
            ),
            "working": client.post(
                "/agent/schedules",
                json={
                    "plan_id": PLAN_ID,
                    "rule": {"kind": "last_business_day"},
                    "version": "working",
                },
            ),
        }
        assert {k: r.status_code for k, r in bad.items()} == {
            "cron": 422,
            "kind": 422,
            "plan": 404,
            "working": 409,
        }
        assert "keiri/none" in bad["plan"].json()["message"]
        assert store.schedules.all() == []

        made = client.post(
            "/agent/schedules",
            json={
                "plan_id": PLAN_ID,
                "rule": {"kind": "day", "day": 25, "if_holiday": "after", "at": "10:00"},
                "vars": {"count": 9},
            },
        ).json()
        assert made["rule_text"] == "毎月25日 10:00（休日なら翌営業日）"
        assert made["next_fire_local"] == "2026-12-25 10:00 JST"
        started = client.post(f"/agent/schedules/{made['id']}/run-now")
        assert started.status_code == 202, started.text
        task_id = started.json()["task_id"]
        assert live.wait_finished(task_id) == "success"
        assert "確認した件数は 9 件です。" in live.registry.get(task_id).answer
        assert store.fires() == []  # run-now is not a fire time
        assert client.delete(f"/agent/schedules/{made['id']}").status_code == 200
        assert client.delete(f"/agent/schedules/{made['id']}").status_code == 404
        assert store.schedules.all() == []


def test_schedules_need_a_key_once_users_are_configured(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    users = tmp_path / "users.yaml"
    users.write_text(
        f"users:\n  - {{name: sato, key_sha256: {key_hash('sato-key')}, role: user}}\n",
        encoding="utf-8",
    )
    settings = team_settings(tmp_path, keiri_api_keys_file=users)
    approved_memo(settings)
    live = serve(settings)
    with (
        live.client() as anonymous,
        live.client(headers={"Authorization": "Bearer sato-key"}) as sato,
    ):
        assert anonymous.get("/agent/schedules").status_code == 401
        body = {"plan_id": PLAN_ID, "rule": {"kind": "business_day", "n": 1}}
        assert anonymous.post("/agent/schedules", json=body).status_code == 401
        made = sato.post("/agent/schedules", json=body)
        assert made.status_code == 201, made.text
        assert made.json()["created_by"] == "sato"
