"""The 予定 page says which versions a schedule's last fire and a folder trigger's last file ran
(実行した版), as the versions page names them -- ``v1（1a2b3c4d5e6f）`` -- never a whole hash, as
the CLI and the API say them (``schedule.views.versions_text``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.config import load_settings
from keiri_agent.schedule import ScheduleStore
from keiri_agent.versions import SaveNote, VersionStore
from tests.schedule.conftest import MEMO, PLAN_ID, approved_memo
from tests.schedule.test_trigger_files import folder_trigger
from tests.ui.test_schedule_page import PAGE_TIMEOUT_S, schedule_page

SUB_ID = "double"
HASH = re.compile(r"[0-9a-f]{13,}")  # longer than a version's short id


@pytest.fixture
def page(env: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    return AppTest.from_function(schedule_page, default_timeout=PAGE_TIMEOUT_S)


def test_the_page_says_which_versions_the_last_start_ran(page: AppTest) -> None:
    settings = load_settings()
    plan = approved_memo(settings)
    sub, _ = VersionStore.of(settings).save(
        SUB_ID, MEMO.replace(PLAN_ID, SUB_ID), SaveNote(author="sato", source="cli")
    )
    ran = {PLAN_ID: plan, SUB_ID: sub.id}
    said = f"{PLAN_ID} v1（{plan[:12]}）、{SUB_ID} v1（{sub.id[:12]}）"
    store = ScheduleStore.of(settings)
    page.run()
    page.text_input(key="schedule_plan").set_value(PLAN_ID)
    page.button(key="schedule_add").click().run()
    (schedule,) = store.schedules.all()
    fired = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    assert store.claim(schedule.id, fired, "started", now=fired)
    store.settle(schedule.id, fired, "started", task_id="task-1", versions=ran)
    page.run()
    assert page.dataframe[0].value["実行した版"][0] == said

    trigger = folder_trigger(store)
    assert store.claim_file(trigger.id, "inbox/11月.csv", "c" * 64, now=fired)
    store.settle_file(trigger.id, "inbox/11月.csv", "c" * 64, "task-2", None, ran)

    page.run()

    assert not page.exception
    schedules, triggers = (table.value for table in page.dataframe)
    assert schedules["実行した版"][0] == said
    assert triggers["実行した版"][0] == said
    assert triggers["前回"][0] == "2026-11-30 09:00 JST（実行開始）"
    shown = [str(cell) for table in (schedules, triggers) for cell in table.to_numpy().ravel()]
    assert not [cell for cell in shown if HASH.search(cell)], shown  # no raw hash on screen
