"""A plan name that names no plan is one error wherever it is looked up: adding a schedule,
pinning the working copy, and the server's plan tasks (which also accept the sample names)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.schedule.conftest import team_settings

from keiri_agent.errors import BlockError
from keiri_agent.schedule import WORKING, ScheduleRequest, add_schedule, check_pin
from keiri_agent.schedule.rules import CronRule
from keiri_agent.versions import plan_not_found

MESSAGE = "Plan「keiri/nothing」が見つかりません。"
HINT = "KEIRI_DESIGNS_DIR からの相対名（拡張子なし、例: keiri/monthly_close）で指定してください。"


def test_adding_a_schedule_and_pinning_the_working_copy_say_the_same(tmp_path: Path) -> None:
    settings = team_settings(tmp_path, keiri_require_approval="off")
    with pytest.raises(BlockError) as added:
        add_schedule(
            settings,
            ScheduleRequest(plan_id="keiri/nothing", rule=CronRule(expr="0 9 * * *")),
            created_by="sato",
        )
    with pytest.raises(BlockError) as pinned:
        check_pin(settings, "keiri/nothing", WORKING)
    for caught in (added.value, pinned.value):
        assert (caught.code, caught.message, caught.hint) == ("DEPENDENCY_NOT_FOUND", MESSAGE, HINT)
        assert caught.details == {"plan": "keiri/nothing"}


def test_where_sample_names_are_accepted_the_hint_names_them() -> None:
    error = plan_not_found("keiri/nothing", ["first_plan", "expense_check"])
    assert error.message == MESSAGE
    assert error.hint == "サンプル名（first_plan, expense_check）か、" + HINT


@pytest.mark.parametrize(
    "plan_id", ["経理/月次決算", "keiri/月次", "keiri/close.yaml", "keiri//close"]
)
def test_an_id_no_plan_can_have_is_refused_when_the_schedule_is_added(
    tmp_path: Path, plan_id: str
) -> None:
    """A file may sit there (designs/経理/月次決算.yaml), but no plan has such an id: each
    run would fail on it, first seen a month later. Refused at once; nothing is stored."""
    from keiri_agent.schedule import ScheduleStore

    settings = team_settings(tmp_path, keiri_require_approval="off")
    working = Path(settings.keiri_designs_dir) / f"{plan_id}.yaml"
    working.parent.mkdir(parents=True, exist_ok=True)
    working.write_text(f"apiVersion: v1\nid: {plan_id}\ngraph: []\n", encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        add_schedule(
            settings,
            ScheduleRequest(plan_id=plan_id, rule=CronRule(expr="0 9 * * *")),
            created_by="sato",
        )
    assert caught.value.code == "INPUT_VALIDATION_FAILED"
    assert f"Plan の id「{plan_id}」では予定・トリガーを登録できません" in caught.value.message
    assert ScheduleStore.of(settings).schedules.all() == []
