"""Triggers: a signed webhook call starts a run (bad or replayed signatures are refused); a new
file in a watched folder runs once, even when it is rewritten in place while being copied."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from tests.schedule.conftest import (
    PLAN_ID,
    Clock,
    approved_memo,
    jst,
    plan_start,
    team_settings,
    wait_for,
)
from tests.server.conftest import LiveServer

from keiri_agent.schedule import ScheduleStore, TriggerRequest, add_trigger
from keiri_agent.server.scheduler import Scheduler
from keiri_agent.server.webhook import SIGNATURE_HEADER, TIMESTAMP_HEADER, sign
from keiri_agent.versions import SaveNote, VersionStore

BANK = """\
apiVersion: v1
id: keiri/bank
vars:
  file: ""
graph:
  - id: read
    block: file.read_table
    in: {path: "${vars.file}"}
  - id: note
    block: report.markdown
    in:
      template: "金額: {% for r in rows %}{{ r['金額'] }};{% endfor %}"
      data: {rows: "${read.rows}"}
exports:
  - {from: note.markdown, as: memo}
"""


def _scheduler(live: LiveServer) -> Scheduler:
    scheduler: Scheduler = live.server.config.app.state.scheduler  # type: ignore[union-attr]
    return scheduler


def _signed(secret: str, body: bytes, at: float) -> dict[str, str]:
    stamp = str(int(at))
    return {
        TIMESTAMP_HEADER: stamp,
        SIGNATURE_HEADER: sign(secret, stamp, body),
        "Content-Type": "application/json",
    }


def test_a_webhook_call_runs_once_and_bad_or_replayed_signatures_are_refused(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = team_settings(tmp_path)
    approved = approved_memo(settings)
    clock = Clock(jst("2026-12-07 09:00:00"))
    live = serve(settings, clock=clock)
    now = clock().timestamp()
    with live.client() as client:
        made = client.post("/agent/triggers", json={"kind": "webhook", "plan_id": PLAN_ID})
        assert made.status_code == 201, made.text
        trigger, secret = made.json(), made.json()["secret"]
        assert "secret" not in client.get("/agent/triggers").json()["triggers"][0]
        url = f"/agent/triggers/{trigger['id']}"
        body = b'{"vars": {"count": 7}}'

        refusals = {
            "no signature": client.post(
                url, content=body, headers={"Content-Type": "application/json"}
            ),
            "wrong secret": client.post(url, content=body, headers=_signed("0" * 64, body, now)),
            "body changed": client.post(
                url, content=b'{"vars": {"count": 8}}', headers=_signed(secret, body, now)
            ),
            "too old": client.post(url, content=body, headers=_signed(secret, body, now - 301)),
        }
        assert {k: r.status_code for k, r in refusals.items()} == dict.fromkeys(refusals, 401)
        assert refusals["too old"].json()["code"] == "SIGNATURE_INVALID"
        assert "5 分" in refusals["too old"].json()["message"]

        headers = _signed(secret, body, now - 30)
        accepted = client.post(url, content=body, headers=headers)
        assert accepted.status_code == 202, accepted.text
        replayed = client.post(url, content=body, headers=headers)
        assert replayed.status_code == 409
        assert replayed.json()["code"] == "SIGNATURE_REPLAYED"

        task_id = accepted.json()["task_id"]
        assert live.wait_finished(task_id) == "success"
        task = live.registry.get(task_id)
        assert "確認した件数は 7 件です。" in task.answer  # the body's vars
        assert plan_start(task.directory)["plan_hash"] == approved
        # Only the accepted call made a task.
        assert [t.id for t in live.registry.list(100)] == [task_id]


def test_a_folder_file_runs_once_even_when_rewritten_in_place_while_copied(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    settings = team_settings(tmp_path, keiri_trigger_settle_s=3.0)
    versions = VersionStore.of(settings)
    version, _ = versions.save("keiri/bank", BANK, SaveNote(author="sato", source="cli"))
    versions.decide("keiri/bank", version.id, "approve", by="kato")
    live = serve(settings)
    trigger = add_trigger(
        settings,
        TriggerRequest(kind="folder", plan_id="keiri/bank", folder="inbox/bank"),
        created_by="sato",
    )
    watcher = _scheduler(live).folders
    folder = Path(settings.keiri_workspace_root) / "inbox" / "bank"

    def seen_twice() -> None:
        scans = watcher.scans
        wait_for(lambda: watcher.scans >= scans + 2, "the watcher to look again")

    target = folder / "bank-2026-12.csv"
    final = "日付,金額\n2026-12-01,1000\n2026-12-02,2000\n"
    with target.open("w", encoding="utf-8") as handle:  # a copy in progress: the first part
        handle.write(final[:10])
        handle.flush()
        seen_twice()
        handle.seek(0)  # rewritten in place, twice, while the copy goes on
        handle.write("X" * 10)
        handle.flush()
        seen_twice()
        handle.seek(0)
        handle.write(final)
        handle.flush()
    store = ScheduleStore.of(settings)
    (claim,) = wait_for(lambda: [f for f in store.files(trigger.id) if f["task_id"]], "a run")
    assert claim["path"] == "inbox/bank/bank-2026-12.csv"
    assert live.wait_finished(claim["task_id"]) == "success"
    task = live.registry.get(claim["task_id"])
    assert "金額: 1000;2000;" in task.answer  # the settled content, whole
    assert claim["sha256"] == hashlib.sha256(final.encode()).hexdigest()
    assert plan_start(task.directory)["plan_hash"] == version.id

    # The same content again (touched, rewritten identically) is not a new file.
    target.write_text(final, encoding="utf-8")
    scans = watcher.scans
    wait_for(lambda: watcher.scans >= scans + 40, "the watcher past the settle time")
    assert len(store.files(trigger.id)) == 1
    assert len(live.registry.list(100)) == 1
