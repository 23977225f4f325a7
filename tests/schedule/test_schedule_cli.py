"""`keiri-agent schedule` and `keiri-agent trigger` at the command line: next fire times in
JST, the warning about an unapproved working copy, run-now with the pinned version, and bad
input refused with nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.schedule.conftest import PLAN_ID, approved_memo, team_settings
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.schedule import ScheduleStore

runner = CliRunner()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    settings = team_settings(tmp_path)
    approved_memo(settings)  # the working copy has an unapproved change
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(settings.keiri_workspace_root))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(settings.keiri_designs_dir))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(settings.keiri_runs_dir))
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    return tmp_path


def _store(root: Path) -> ScheduleStore:
    return ScheduleStore.of(team_settings(root))


def test_add_list_run_now_and_remove(workspace: Path) -> None:
    added = runner.invoke(
        app,
        ["schedule", "add", PLAN_ID, "--business-day", "3", "--at", "09:30", "--var", "count=4"],
    )
    assert added.exit_code == 0, added.output
    assert "毎月第3営業日 09:30" in added.stdout
    assert "次回:" in added.stdout
    assert "JST" in added.stdout
    assert "作業コピーに未承認の変更があります" in added.stderr

    listed = runner.invoke(app, ["schedule", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    (view,) = json.loads(listed.stdout)["schedules"]
    assert view["rule"] == {"kind": "business_day", "n": 3, "at": "09:30"}
    assert view["version"] == "latest-approved"
    assert view["vars"] == {"count": 4}
    assert view["next_fire_local"].endswith(" 09:30 JST")

    ran = runner.invoke(app, ["schedule", "run-now", view["id"], "--json"])
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.stdout)
    assert result["status"] == "success"
    assert "確認した件数は 4 件です。" in json.dumps(result, ensure_ascii=False)

    removed = runner.invoke(app, ["schedule", "remove", view["id"]])
    assert removed.exit_code == 0, removed.output
    assert _store(workspace).schedules.all() == []


def test_day_forms_show_their_holiday_rule(workspace: Path) -> None:
    for args, text in [
        (["--day", "25", "--if-holiday", "after"], "毎月25日 09:00（休日なら翌営業日）"),
        (["--last-business-day", "--at", "17:00"], "毎月最終営業日 17:00"),
        (["--cron", "0 8 * * 1-5"], "cron「0 8 * * 1-5」"),
        (["--day", "31", "--offset", "-1"], "毎月末日の前営業日 09:00"),
        (["--day", "25", "--offset", "-3"], "毎月25日の3営業日前 09:00"),
        (["--weekday", "mon"], "毎週月曜 09:00（休日なら翌営業日）"),
        (["--weekday", "fri", "--if-holiday", "before"], "毎週金曜 09:00（休日なら前営業日）"),
        (["--weekday", "wed", "--nth", "2"], "毎月第2水曜 09:00（休日なら翌営業日）"),
        (
            ["--weekday", "fri", "--nth", "-1", "--if-holiday", "before", "--at", "16:00"],
            "毎月最終金曜 16:00（休日なら前営業日）",
        ),
    ]:
        added = runner.invoke(app, ["schedule", "add", PLAN_ID, *args])
        assert added.exit_code == 0, added.output
        assert text in added.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--business-day", "3", "--last-business-day"], "実行の条件を 1 つだけ"),
        ([], "実行の条件を 1 つだけ"),
        (["--business-day", "16"], "実行の条件を読めません"),
        (["--cron", "0 25 * * *"], "実行の条件を読めません"),
        (["--day", "10", "--at", "9時"], "実行の条件を読めません"),
        (["--day", "31", "--offset", "-1", "--if-holiday", "skip"], "一緒には指定できません"),
        (["--day", "25", "--offset", "-11"], "営業日のずらし: -10 以上"),
        (["--business-day", "3", "--offset", "-1"], "営業日のずらし: 定義にない項目"),
        (["--weekday", "mon", "--day", "3"], "実行の条件を 1 つだけ"),
        (["--day", "3", "--nth", "2"], "--nth は --weekday と一緒に指定します"),
        (["--weekday", "wed", "--nth", "5"], "第N（営業日・曜日）"),
        (["--weekday", "wed", "--nth", "0"], "第N（営業日・曜日）"),
        (["--cron", "0 9 * * *", "--version", "working"], "作業コピーを実行できません"),
        (["--cron", "0 9 * * *", "--version", "ffff0000"], "版「ffff0000」はありません"),
        (["--business-day", "2", "--calendar", "none"], "営業日カレンダーが要ります"),
    ],
)
def test_bad_schedules_are_refused_and_nothing_is_stored(
    workspace: Path, args: list[str], message: str
) -> None:
    result = runner.invoke(app, ["schedule", "add", PLAN_ID, *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert _store(workspace).schedules.all() == []


def test_an_unknown_plan_or_schedule_is_named(workspace: Path) -> None:
    result = runner.invoke(app, ["schedule", "add", "keiri/nothing", "--business-day", "1"])
    assert result.exit_code == 2
    assert "keiri/nothing" in result.output
    result = runner.invoke(app, ["schedule", "remove", "s-000000"])
    assert result.exit_code == 2
    assert "予定 s-000000 はありません" in result.output
    assert "keiri-agent schedule list" in result.output
    result = runner.invoke(app, ["trigger", "remove", "t-000000"])
    assert result.exit_code == 2
    assert "トリガー t-000000 はありません" in result.output
    assert "keiri-agent trigger list" in result.output


def test_triggers_at_the_cli(workspace: Path) -> None:
    webhook = runner.invoke(app, ["trigger", "add", PLAN_ID, "--webhook", "--json"])
    assert webhook.exit_code == 0, webhook.output
    made = json.loads(webhook.stdout)
    assert len(made["secret"]) == 64
    folder = runner.invoke(app, ["trigger", "add", PLAN_ID, "--folder", "inbox/bank"])
    assert folder.exit_code == 0, folder.output
    assert (team_settings(workspace).keiri_workspace_root / "inbox" / "bank").is_dir()
    listed = json.loads(runner.invoke(app, ["trigger", "list", "--json"]).stdout)["triggers"]
    assert [t["kind"] for t in listed] == ["webhook", "folder"]
    assert all("secret" not in t for t in listed)
    escape = runner.invoke(app, ["trigger", "add", PLAN_ID, "--folder", "../outside"])
    assert escape.exit_code == 2
    both = runner.invoke(app, ["trigger", "add", PLAN_ID, "--webhook", "--folder", "x"])
    assert both.exit_code == 2
    assert "どちらか 1 つ" in both.output
    assert len(_store(workspace).triggers.all()) == 2


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["trigger", "add", PLAN_ID, "--folder", "inbox/bank", "--file-var", ""], "vars の名前"),
        (["trigger", "add", PLAN_ID, "--folder", "a/" * 501], "フォルダ"),
        (["trigger", "add", PLAN_ID, "--webhook", "--version", "f" * 81], "版"),
        (["schedule", "add", PLAN_ID, "--cron", "0 9 * * *", "--version", "f" * 81], "版"),
        (["schedule", "add", "k/" * 151, "--cron", "0 9 * * *"], "Plan の id"),
    ],
)
def test_the_cli_refuses_what_the_api_refuses(workspace: Path, args: list[str], field: str) -> None:
    """The API's field limits (ScheduleRequest, TriggerRequest) hold at the command line too,
    said in Japanese with the field named, and nothing is stored or created."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "の指定を読めません" in result.output
    assert f"{field}:" in result.output
    assert "文字まで" in result.output  # the hint names the limits
    assert "validation error" not in result.output  # not Pydantic's English
    assert _store(workspace).schedules.all() == []
    assert _store(workspace).triggers.all() == []
    assert not (team_settings(workspace).keiri_workspace_root / "a").exists()
