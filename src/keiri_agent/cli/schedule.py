"""`keiri-agent schedule add|list|remove|run-now`: plans that run on the business calendar.

Schedules are kept in the workspace's SQLite file (``keiri_agent.schedule.ScheduleStore``);
``keiri-agent serve`` fires them. ``add`` takes one rule form (``--cron``, ``--business-day
N``, ``--last-business-day``, ``--day D [--if-holiday before|after|skip | --offset N]``,
``--weekday mon..sun [--nth 1..4|-1] [--if-holiday ...]``); ``list`` shows each
schedule's next fire time in ``KEIRI_TIMEZONE`` and warns when the plan's working copy has
unapproved changes or today's company holidays leave a month ahead without its day; ``run-now`` runs a schedule's plan at once in this terminal, with its
vars and the version its pin names. Exit codes: 0 done, 1 a run that failed, 2 user errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from keiri_agent.cli.common import command_group, console, echo_json, err_console, user_errors
from keiri_agent.cli.plan import JsonFlag, PlanId, VarOptions, VarsFileOption, parse_vars
from keiri_agent.errors import BlockError, input_error

if TYPE_CHECKING:
    from keiri_agent.config import Settings
    from keiri_agent.plan import PlanSource

__all__ = ["VARS_BY_ID", "PinOption", "add", "list_schedules", "remove", "run_now", "schedule_app"]

# Above a schedule's vars when its plan cannot be read, so that they show no label.
VARS_BY_ID = "  （Plan を読めないため、設定値は表示名ではなく ID で示します）"

schedule_app = command_group(
    "schedule",
    "予定: Plan を営業日カレンダー（第N営業日・最終営業日・D日）や cron で自動実行します"
    "（実行は keiri-agent serve）。",
)

ScheduleId = Annotated[str, typer.Argument(metavar="ID", help="予定の ID（schedule list）。")]
PinOption = Annotated[
    str | None,
    typer.Option(
        "--version",
        metavar="latest-approved|working|HASH",
        help="実行する版（既定: 承認が必要なら latest-approved、そうでなければ working）。",
    ),
]


def rule_from_options(
    cron: str | None,
    business_day: int | None,
    last_business_day: bool,
    day: int | None,
    weekday: str | None,
    if_holiday: str | None,
    offset: int | None,
    at: str,
    nth: int | None = None,
) -> Any:
    """The one rule the options name (INPUT_VALIDATION_FAILED for none or several)."""
    from keiri_agent.schedule import parse_rule

    given = [
        ("cron", cron is not None),
        ("business_day", business_day is not None),
        ("last_business_day", last_business_day),
        ("day", day is not None),
        ("weekday", weekday is not None),
    ]
    chosen = [name for name, on in given if on]
    if len(chosen) != 1:
        raise input_error(
            "実行の条件を 1 つだけ指定してください。",
            "--cron '0 9 * * 1-5'、--business-day 3、--last-business-day、"
            "--day 25 --if-holiday before、--weekday mon --if-holiday after、"
            "--weekday wed --nth 2（毎月第2水曜）のどれか 1 つです。",
            given=chosen,
        )
    if nth is not None and chosen != ["weekday"]:
        raise input_error(
            "--nth は --weekday と一緒に指定します（毎月第N曜日）。",
            "例: --weekday wed --nth 2（毎月第2水曜）、--weekday fri --nth -1（毎月最終金曜）。",
            given=chosen,
        )
    fields = {
        "expr": cron,
        "at": at if cron is None else None,
        "n": nth if nth is not None else business_day,
        "day": day,
        "weekday": weekday,
        "if_holiday": if_holiday,
        "offset": offset,
    }
    kind = "nth_weekday" if nth is not None else chosen[0]
    return parse_rule({"kind": kind} | {k: v for k, v in fields.items() if v is not None})


@schedule_app.command("add")
def add(
    plan_id: PlanId,
    cron: Annotated[
        str | None, typer.Option("--cron", metavar="EXPR", help="cron 式（KEIRI_TIMEZONE）。")
    ] = None,
    business_day: Annotated[
        int | None, typer.Option("--business-day", metavar="N", help="毎月第N営業日。")
    ] = None,
    last_business_day: Annotated[
        bool, typer.Option("--last-business-day", help="毎月最終営業日。")
    ] = False,
    day: Annotated[
        int | None, typer.Option("--day", metavar="D", help="毎月D日（31 は末日）。")
    ] = None,
    weekday: Annotated[
        Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"] | None,
        typer.Option("--weekday", help="毎週この曜日（mon 月曜〜sun 日曜）。"),
    ] = None,
    if_holiday: Annotated[
        Literal["before", "after", "skip"] | None,
        typer.Option(
            "--if-holiday",
            help="その日が休日なら: before 前営業日（--day の既定）、after 翌営業日（--weekday の"
            "既定）、skip 実行しない。",
        ),
    ] = None,
    nth: Annotated[
        int | None,
        typer.Option("--nth", metavar="N", help="--weekday と: 毎月第N曜日（1〜4、-1 は最終）。"),
    ] = None,
    offset: Annotated[
        int | None,
        typer.Option(
            "--offset",
            metavar="N",
            help="D日の N 営業日後（負なら前。-1 は前営業日、D日は数えない）。",
        ),
    ] = None,
    at: Annotated[
        str, typer.Option("--at", metavar="HH:MM", help="時刻（営業日の形のとき）。")
    ] = "09:00",
    calendar: Annotated[
        Literal["jp", "none"],
        typer.Option(
            "--calendar", help="jp: 土日・祝日・会社休日を除く、none: 暦日（--cron のみ）。"
        ),
    ] = "jp",
    var_specs: VarOptions = None,
    vars_file: VarsFileOption = None,
    version: PinOption = None,
    misfire: Annotated[
        Literal["run-once", "skip"],
        typer.Option(
            "--misfire", help="サーバー停止中に過ぎた実行: run-once 1 回実行、skip 実行しない。"
        ),
    ] = "run-once",
    as_json: JsonFlag = False,
) -> None:
    """予定を登録します（次回の実行日時を表示します）。"""
    from keiri_agent.cli.identity import acting_name
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import ScheduleRequest, add_schedule, schedule_view

    with user_errors():
        settings = load_settings()
        rule = rule_from_options(
            cron, business_day, last_business_day, day, weekday, if_holiday, offset, at, nth
        )
        request = ScheduleRequest.of(
            {
                "plan_id": plan_id,
                "rule": rule,
                "calendar": calendar,
                "vars": parse_vars(var_specs or [], vars_file),
                "version": version,
                "misfire": "run_once" if misfire == "run-once" else "skip",
            }
        )
        schedule = add_schedule(settings, request, created_by=acting_name(settings))
        view = schedule_view(settings, schedule)
    if as_json:
        echo_json(view)
        return
    console.print(f"予定 {schedule.id} を登録しました。", markup=False, highlight=False)
    _print_view(view)


def _print_view(view: dict[str, Any]) -> None:
    lines = [
        f"{view['id']}  Plan {view['plan_id']}  {view['rule_text']}",
        f"  次回: {view['next_fire_local']}  版: {view['version_text']}  {view['misfire_text']}",
    ]
    lines += _vars_said(view)
    for fire in view["recent_fires"][:1]:
        lines += last_run_lines(
            fire["fire_time_local"], fire["outcome_text"], fire["versions_text"], fire["error"]
        )
    for line in lines:
        console.print(line, markup=False, highlight=False)
    print_warning(view)


def last_run_lines(when: str, outcome: str, versions: str, error: str | None) -> list[str]:
    """The last start of a schedule or a folder trigger: when, what became of it, the versions
    its run ran (as its task's door resolved them) and why it did not run."""
    lines = [f"  前回: {when}（{outcome}）"]
    if versions:
        lines.append(f"    実行した版: {versions}")
    if error:
        lines.append(f"    {error}")
    return lines


def print_warning(view: dict[str, Any]) -> None:
    """A schedule's or trigger's warning (its plan is gone, its version unapproved...)."""
    if view["warning"]:
        err_console.print(f"  警告: {view['warning']}", markup=False, style="yellow")


def echo_views(
    key: str,
    views: list[dict[str, Any]],
    as_json: bool,
    empty: str,
    show: Callable[[dict[str, Any]], None],
) -> None:
    """A list command's output: ``{key: views}`` as JSON, else each view, or ``empty``."""
    if as_json:
        echo_json({key: views})
        return
    if not views:
        console.print(empty, markup=False)
    for view in views:
        show(view)


@schedule_app.command("list")
def list_schedules(as_json: JsonFlag = False) -> None:
    """予定の一覧（次回の実行日時は KEIRI_TIMEZONE で表示）。"""
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import schedule_views

    with user_errors():
        views = schedule_views(load_settings())
    empty = "予定はありません（keiri-agent schedule add で登録します）。"
    echo_views("schedules", views, as_json, empty, _print_view)


@schedule_app.command("remove")
def remove(schedule_id: ScheduleId) -> None:
    """予定を削除します（実行済みの記録は残ります）。"""
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import ScheduleStore

    with user_errors():
        schedule = ScheduleStore.of(load_settings()).schedules.remove(schedule_id)
    console.print(f"予定 {schedule.id}（Plan {schedule.plan_id}）を削除しました。", markup=False)


@schedule_app.command("run-now")
def run_now(schedule_id: ScheduleId, as_json: JsonFlag = False) -> None:
    """予定の Plan をいますぐこの端末で実行します（予定の vars と版で）。"""
    from keiri_agent.cli.plan_run import execute_source
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import WORKING, ScheduleStore

    with user_errors():
        settings = load_settings()
        schedule = ScheduleStore.of(settings).schedules.get(schedule_id)
        source = _pinned_source(settings, schedule.plan_id, schedule.version)
    # A saved version calls saved subflow versions, as the schedule's fires do.
    saved = schedule.version != WORKING
    execute_source(source, vars=schedule.vars, as_json=as_json, saved=saved)


def _pinned_source(settings: Settings, plan_id: str, pin: str) -> PlanSource:
    """The plan a schedule pinned to ``pin`` runs now (its version, or the working copy)."""
    from keiri_agent.plan import load_source, parse_source, resolve_plan_file
    from keiri_agent.schedule import resolve_pin
    from keiri_agent.versions import VersionStore, plan_not_found

    vid = resolve_pin(settings, plan_id, pin)
    if vid is None:
        path = resolve_plan_file(plan_id, Path(settings.keiri_designs_dir))
        if path is None:
            raise plan_not_found(plan_id)
        return load_source(path)
    store = VersionStore.of(settings)
    version = store.get(plan_id, vid)
    assert version is not None  # resolve_pin found it
    return parse_source(store.text(version))


def _vars_said(view: dict[str, Any]) -> list[str]:
    """A schedule's vars as a person reads them, one line each: by its plan's label
    (``ui.vars``, of the version the schedule runs), with its value (``設定値 締め月: 3``). A
    var the plan does not label shows its name; so does every var of a plan that cannot be read
    now (no approved version, the plan removed), under :data:`VARS_BY_ID` saying so (the
    schedule's warning and its run say why)."""
    import json

    from pydantic import ValidationError

    from keiri_agent.config import load_settings
    from keiri_agent.plan import Plan, PlanEnv, PlanNames, plan_names

    names, notes = PlanNames(), []
    try:
        settings = load_settings()
        source = _pinned_source(settings, view["plan_id"], view["version"])
        names = plan_names(Plan.model_validate(source.raw), PlanEnv.of(settings=settings).registry)
    except (BlockError, ValidationError):
        notes = [VARS_BY_ID] if view["vars"] else []
    return notes + [
        f"  設定値 {names.var(name)}: "
        + (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for name, value in view["vars"].items()
    ]
