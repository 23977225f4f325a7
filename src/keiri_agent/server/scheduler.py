"""The scheduler inside ``keiri-agent serve``: schedules fire, triggers start plan tasks.

Schedules live in the workspace's SQLite file (``keiri_agent.schedule.ScheduleStore``), so
they survive restarts and every server process on the workspace sees the same ones. Every
``KEIRI_SCHEDULE_TICK_S`` (and at once when :meth:`Scheduler.wake` is called) each schedule's
newest passed fire time is looked at (``schedule.due``): on time, it starts; missed by more
than ``KEIRI_SCHEDULE_GRACE_S`` (the server was down), it starts once under ``run_once`` and
is recorded as skipped under ``skip``, with the reason, and told to the notify URL. The older
fire times that passed with it are recorded as skipped, each with the reason
(``schedule.missed_reason``), in the same transaction as the claim: every fire time that
passed has one record. Before a start, the fire time is claimed in SQLite (its key is the
schedule id and the fire time): the one process whose claim succeeds starts it, so a fire
time never runs twice, whether two servers share the workspace or one restarts.

A monthly rule's month that the calendar of today's settings leaves without a day (the company
holidays changed after the schedule was added: 第20営業日 in a month left 19 business days) is
recorded once as skipped, with the reason, when the month begins (its first moment is the fire
time claimed), and told to the notify URL: the month does not pass with no run and nobody told.

A process that stops between claiming a fire time and recording its task (SIGKILL, a power cut)
leaves a claim with no task: after ``UNSETTLED_AFTER_S`` another tick takes it over (once, by
the same kind of SQL update), records the task it had started when one carries the fire's label,
and else records the fire time as failed and tells the notify URL. It is never started again
on a guess: the run may have begun (a payment run twice is worse than a person asked to run
it with ``schedule run-now``).

A start is an ordinary plan task (``TaskRegistry.submit``) owned by whoever made the schedule,
running the version its pin names (``schedule.pins``), which calls its subflows' newest
approved versions (a subflow with none refuses the start, recorded as failed with the reason
naming it, at the task's door: ``server.plan_task``); the fire's row keeps the versions that door
resolved (the plan's and every subflow's), so the schedule's history says what each fire ran. A
run that needs a person pauses as
``waiting_input`` like any task. When a started task waits or fails, or a start is refused,
the URL of ``KEIRI_NOTIFY_WEBHOOK_URL`` is told (``notify``).

The clock is a constructor argument (``clock``): the server passes the real one; a test drives
its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.plan import kept_versions
from keiri_agent.schedule import (
    COMPANY_HOLIDAYS_NOTE,
    Schedule,
    ScheduleStore,
    describe,
    due,
    left_out_text,
    missed_reason,
    months_left_out,
    resolve_pin,
)
from keiri_agent.server.errors import ApiError
from keiri_agent.server.folder_trigger import FolderWatcher
from keiri_agent.server.notify import Notifier
from keiri_agent.server.runners import PlanRequest
from keiri_agent.server.tasks import Task, TaskRegistry, Upload

__all__ = ["UNSETTLED_AFTER_S", "Clock", "Scheduler", "fire_label", "utc_now"]

Clock = Callable[[], datetime]
log = logging.getLogger(__name__)

# A claim and its task's start are moments apart (the task's folder is made in between); a
# claim this much older with no task recorded was made by a process that stopped in between.
UNSETTLED_AFTER_S: Final = 120.0
UNSETTLED_SEARCH_TASKS: Final = 1000  # the newest tasks looked through for the claim's task
UNSETTLED_REASON = (
    "サーバーが止まったため、この回の実行を始められたかどうかの記録がありません"
    "（同じ回のタスクも見つかりません）。二重に動かさないよう自動では実行しません。"
    "必要なら keiri-agent schedule run-now で実行してください。"
)


def utc_now() -> datetime:
    return datetime.now(UTC)


def _failure(exc: BlockError | ApiError) -> str:
    return exc.message


def fire_label(schedule: Schedule, fire: datetime, settings: Settings) -> str:
    """What a fire time's task is asked as (its request) and told as: the schedule and the time."""
    local = fire.astimezone(settings.keiri_timezone)
    return f"予定 {schedule.id}（{describe(schedule.rule)}）{local:%Y-%m-%d %H:%M}"


class Scheduler:
    """Fires the workspace's schedules on a thread of its own; starts triggered runs."""

    def __init__(
        self,
        settings: Settings,
        tasks: TaskRegistry,
        *,
        clock: Clock = utc_now,
        store: ScheduleStore | None = None,
    ) -> None:
        self.settings = settings
        self.tasks = tasks
        self.clock = clock
        self.store = store or ScheduleStore.of(settings)
        self.notifier = Notifier(settings)
        tasks.observers.append(self.notifier)
        self.folders = FolderWatcher(settings, self.store, self.start_run, self.notifier)
        self.ticks = 0  # how many ticks have finished (people and tests can watch it move)
        self.runs_started = 0  # runs this process started for schedules and triggers
        # (schedule, when it was made, month) already looked at by _month_left_out: the calendar
        # is this process's settings, so a month's answer does not change while it runs.
        self._months_looked: set[tuple[str, datetime, date]] = set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the loop -----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="keiri-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def wake(self) -> None:
        """Look at the schedules now (after one was added, or the clock moved)."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # one bad tick (a locked or damaged file) must not end the loop
                log.exception("予定の確認に失敗しました")
            self._wake.wait(self.settings.keiri_schedule_tick_s)
            self._wake.clear()

    def tick(self) -> list[str]:
        """Handle every schedule's due fire time, then look at the watched folders; the ids of
        the tasks started."""
        started: list[str] = []
        self._settle_unsettled(self.clock())
        for schedule in self.store.schedules.all():
            if self._stop.is_set() or self.tasks.stopping.is_set():
                return started
            now = self.clock()
            task_id = self._handle(schedule, now)
            if task_id is not None:
                started.append(task_id)
            self._month_left_out(schedule, now)
        started += self.folders.scan()
        self.ticks += 1
        return started

    def _handle(self, schedule: Schedule, now: datetime) -> str | None:
        since = self.store.last_fire(schedule.id) or schedule.created_at
        found = due(schedule, since, now, self.settings)
        if found is None:
            return None
        fire, late, missed = found
        label = fire_label(schedule, fire, self.settings)
        reason = missed_reason(schedule, fire, self.settings)
        skip = late and schedule.misfire == "skip"
        claimed = self.store.claim(
            schedule.id,
            fire,
            "skipped" if skip else "started",
            now=now,
            error=reason if skip else None,
            missed=missed,
            missed_error=reason,
        )
        if not claimed:
            return None  # another process (or an earlier tick) has it
        if skip:
            log.warning("%s: %s", label, reason)
            self.notifier.refused(label, schedule.plan_id, reason)
            return None
        if late:
            label += "（停止中に過ぎた分を 1 回実行）"
        try:
            task = self.start_run(
                schedule.plan_id, schedule.version, schedule.vars, schedule.created_by, label
            )
        except (BlockError, ApiError) as exc:
            self.store.settle(schedule.id, fire, "failed", error=_failure(exc))
            self.notifier.refused(label, schedule.plan_id, _failure(exc))
            return None
        self.store.settle(
            schedule.id, fire, "started", task_id=task.id, versions=kept_versions(task.directory)
        )
        return task.id

    def _settle_unsettled(self, now: datetime) -> None:
        """Record what became of the fire times a stopped process claimed (module docstring)."""
        taken = [
            fire
            for fire in self.store.unsettled(now - timedelta(seconds=UNSETTLED_AFTER_S))
            if self.store.take_over(fire, now=now)  # else another process has it
        ]
        if not taken:
            return
        # The schedules and the newest tasks, read once for every fire time taken over.
        schedules = {schedule.id: schedule for schedule in self.store.schedules.all()}
        kept = any(fire.schedule_id in schedules for fire in taken)
        recent = self.tasks.list(limit=UNSETTLED_SEARCH_TASKS) if kept else []
        for fire in taken:
            schedule = schedules.get(fire.schedule_id)
            if schedule is None:  # removed since: nothing more to say of it
                self.store.settle(
                    fire.schedule_id, fire.fire_time, "failed", error=UNSETTLED_REASON
                )
                continue
            label = fire_label(schedule, fire.fire_time, self.settings)
            task = next(
                (t for t in recent if str(t.request.get("request", "")).startswith(label)), None
            )
            if task is not None:
                ran = kept_versions(task.directory)  # what its door resolved
                self.store.settle(
                    schedule.id, fire.fire_time, "started", task_id=task.id, versions=ran
                )
                continue
            self.store.settle(schedule.id, fire.fire_time, "failed", error=UNSETTLED_REASON)
            log.warning("%s: %s", label, UNSETTLED_REASON)
            self.notifier.refused(label, schedule.plan_id, UNSETTLED_REASON)

    def _month_left_out(self, schedule: Schedule, now: datetime) -> None:
        """Record and tell, once, that the month holding ``now`` has no day for the rule."""
        zone = self.settings.keiri_timezone
        month = now.astimezone(zone).date().replace(day=1)
        looked = (schedule.id, schedule.created_at, month)
        if looked in self._months_looked:
            return  # ticks come every few seconds; the two-year calendar costs tens of ms
        self._months_looked.add(looked)
        missing = months_left_out(schedule, now, self.settings)
        if not missing or missing[0] != month:
            return
        start = datetime.combine(month, time(0), tzinfo=zone)
        reason = left_out_text(schedule.rule, [month]) + COMPANY_HOLIDAYS_NOTE
        if self.store.claim(schedule.id, start, "skipped", now=now, error=reason):
            label = f"予定 {schedule.id}（{describe(schedule.rule)}）{month:%Y年%-m月}"
            log.warning("%s: %s", label, reason)
            self.notifier.refused(label, schedule.plan_id, reason)

    # --- starting runs ------------------------------------------------------------------------

    def start_run(
        self,
        plan_id: str,
        pin: str,
        vars: Mapping[str, Any],
        owner: str | None,
        label: str,
        uploads: Sequence[Upload] = (),
    ) -> Task:
        """Start a plan task for a schedule or trigger: the version its pin names now."""
        version = resolve_pin(self.settings, plan_id, pin)
        request = PlanRequest(
            kind="plan", plan=plan_id, vars=dict(vars), version=version, request=label
        )
        task = self.tasks.submit(request, uploads, owner=owner)
        self.runs_started += 1
        self.notifier.watch(task.id, label)
        log.info("%s: タスク %s を始めました", label, task.id)
        return task

    def run_now(self, schedule_id: str, owner: str | None = None) -> Task:
        """Start a schedule's plan at once (not a fire time: nothing is claimed)."""
        schedule = self.store.schedules.get(schedule_id)
        label = f"予定 {schedule.id}（すぐ実行）"
        return self.start_run(
            schedule.plan_id, schedule.version, schedule.vars, owner or schedule.created_by, label
        )
