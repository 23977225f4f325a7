"""The 予定 page: a schedule added on the page is stored with its next fire time in JST, the
warning about an unapproved working copy is shown, bad input shows the error and stores nothing,
and a schedule can be removed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.config import load_settings
from keiri_agent.schedule import ScheduleStore
from keiri_agent.ui.views import PAGES
from tests.schedule.conftest import PLAN_ID, approved_memo

PAGE_TIMEOUT_S = 120


def schedule_page() -> None:
    from keiri_agent.ui.views.schedule import render

    render()


@pytest.fixture
def page(env: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    approved_memo(load_settings())
    return AppTest.from_function(schedule_page, default_timeout=PAGE_TIMEOUT_S)


def test_add_and_remove_a_schedule_on_the_page(page: AppTest) -> None:
    assert "予定" in [spec.title for spec in PAGES]
    page.run()
    assert any("予定はありません" in i.value for i in page.info)
    page.text_input(key="schedule_plan").set_value(PLAN_ID)
    page.radio(key="schedule_form").set_value("last_business_day").run()
    page.text_input(key="schedule_at").set_value("17:00")
    page.button(key="schedule_add").click().run()
    assert not page.exception
    store = ScheduleStore.of(load_settings())
    (schedule,) = store.schedules.all()
    assert schedule.rule.model_dump() == {"kind": "last_business_day", "at": "17:00"}
    table = page.dataframe[0].value
    assert table["条件"][0] == "毎月最終営業日 17:00"
    assert table["次回"][0].endswith(" 17:00 JST")
    assert any("作業コピーに未承認の変更があります" in w.value for w in page.warning)

    # the last fire in words (those of schedule.views, as the CLI and the API say it)
    fired = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)  # 17:00 JST
    missed = datetime(2026, 10, 30, 8, 0, tzinfo=UTC)
    assert store.claim(
        schedule.id, fired, "started", now=fired, missed=[missed], missed_error="停止中"
    )
    page.run()
    assert page.dataframe[0].value["前回"][0] == "2026-11-30 17:00 JST（実行開始）"

    page.selectbox(key="schedule_remove_id").set_value(schedule.id)
    page.button(key="schedule_remove").click().run()
    assert store.schedules.all() == []


def test_the_offset_and_weekday_forms_on_the_page(page: AppTest) -> None:
    page.run()
    page.text_input(key="schedule_plan").set_value(PLAN_ID)
    page.radio(key="schedule_form").set_value("day_offset").run()
    page.number_input(key="schedule_day").set_value(31)
    page.number_input(key="schedule_offset").set_value(-1)
    page.button(key="schedule_add").click().run()
    page.radio(key="schedule_form").set_value("weekday").run()
    page.selectbox(key="schedule_weekday").set_value("mon")
    # 毎週 moves a holiday to the next business day unless told otherwise, as the CLI and API do
    assert page.selectbox(key="schedule_if_holiday_weekday").value == "after"
    page.button(key="schedule_add").click().run()
    page.radio(key="schedule_form").set_value("nth_weekday").run()
    page.selectbox(key="schedule_nth").set_value(-1)
    page.selectbox(key="schedule_weekday").set_value("fri")
    assert page.selectbox(key="schedule_if_holiday_nth_weekday").value == "after"
    page.selectbox(key="schedule_if_holiday_nth_weekday").set_value("before")
    page.button(key="schedule_add").click().run()
    assert not page.exception
    assert not page.error
    table = page.dataframe[0].value
    assert sorted(table["条件"]) == [
        "毎月最終金曜 09:00（休日なら前営業日）",
        "毎月末日の前営業日 09:00",
        "毎週月曜 09:00（休日なら翌営業日）",
    ]
    assert all(str(fire).endswith(" 09:00 JST") for fire in table["次回"])


def test_bad_input_shows_the_error_and_stores_nothing(page: AppTest) -> None:
    page.run()
    page.text_input(key="schedule_plan").set_value(PLAN_ID)
    page.radio(key="schedule_form").set_value("cron").run()
    page.text_input(key="schedule_cron").set_value("0 25 * * *")
    page.button(key="schedule_add").click().run()
    assert any("実行の条件を読めません" in e.value for e in page.error)
    page.text_input(key="schedule_plan").set_value("keiri/none")
    page.text_input(key="schedule_cron").set_value("0 9 * * *")
    page.button(key="schedule_add").click().run()
    assert any("keiri/none" in e.value for e in page.error)
    assert ScheduleStore.of(load_settings()).schedules.all() == []


def test_the_page_refuses_what_the_api_refuses(page: AppTest) -> None:
    """An empty Plan id is refused by the same rule as the API's (ScheduleRequest), with the
    field named in Japanese, not as an unknown plan."""
    page.run()
    page.text_input(key="schedule_plan").set_value("  ")
    page.radio(key="schedule_form").set_value("last_business_day").run()
    page.button(key="schedule_add").click().run()
    assert not page.exception
    shown = " ".join(e.value for e in page.error)
    assert "予定の指定を読めません（Plan の id:" in shown
    assert ScheduleStore.of(load_settings()).schedules.all() == []
