"""A plan run started from the 実行 page, followed while it lasts: a worker thread runs it and
the page shows its progress bar and newest progress lines (the CLI's, ``describe_event``), in
one element redrawn at most every :data:`LIVE_EVERY_S`; the run ends as a
:class:`~keiri_agent.ui.run.shown_run.ShownRun`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import streamlit as st

from keiri_agent.errors import BlockError
from keiri_agent.events.follow import LogFollower
from keiri_agent.events.models import RunEvent
from keiri_agent.events.runlog import find_run_log
from keiri_agent.plan import PlanEnv, PlanNames, PlanRunner, RunResult, describe_event
from keiri_agent.ui.run.shown_run import ShownRun
from keiri_agent.ui.signin import acting_name

__all__ = ["LIVE_LINES", "LiveLines", "Start", "execute"]

LIVE_LINES: Final = 40  # lines shown while a run lasts
LIVE_EVERY_S: Final = 0.2  # how often the live lines are redrawn
_FINISHED_EVENTS: Final = frozenset({"node_complete", "node_skipped", "node_waiting"})


Start = Callable[[PlanRunner, Callable[[RunEvent], None]], RunResult]


def execute(
    start: Start,
    env: PlanEnv,
    *,
    plan_id: str,
    total_nodes: int,
    names: PlanNames | None = None,
) -> ShownRun:
    """Run ``start`` in a worker thread, with a runner of the page's ``env``, while its events
    are shown here, line by line (nodes named by ``names``).

    The runner calls ``on_event`` in its own threads, and Streamlit elements can only be updated
    from this (the script's) thread: the listener only notes the newest event, and this thread
    reads the events from the run's log (a page slower than the run holds none in memory).
    """
    box: dict[str, Any] = {}
    runs_dir = Path(env.settings.keiri_runs_dir)
    started_by = acting_name(env.settings)  # read here: Session State is the script thread's

    def locate(first: RunEvent) -> Path:
        return find_run_log(getattr(first, "plan_id", plan_id), first.run_id, runs_dir=runs_dir)

    events = LogFollower(locate)

    def work() -> None:
        try:
            with PlanRunner(env, runs_dir=runs_dir, started_by=started_by) as runner:
                box["result"] = start(runner, events.see)
        except BaseException as exc:  # handed to the script's thread below
            box["error"] = exc
        finally:
            events.finish()

    finished: set[str] = set()
    live = st.empty()  # the bar and the lines, shown while the run lasts
    with live.container():
        bar = st.progress(0.0, text="開始しています…")
        with st.status("実行しています…", expanded=True):
            lines = LiveLines(st.empty())
            worker = threading.Thread(target=work, name="keiri-run-page", daemon=True)
            worker.start()
            for event in events:
                line = describe_event(event, names)
                if line is not None:
                    lines.add(line)
                top = event.node_id is not None and "/" not in event.node_id
                if top and (event.event in _FINISHED_EVENTS or _final_error(event)):
                    finished.add(str(event.node_id))
                    done = min(len(finished) / max(total_nodes, 1), 1.0)
                    bar.progress(done, text=f"{len(finished)} / {total_nodes} ノード")
            lines.draw()
            worker.join()
    live.empty()
    if "error" in box:
        error = box["error"]
        if isinstance(error, BlockError):  # the plan did not start (invalid, unknown run...)
            return ShownRun(plan_id=plan_id, status="invalid", error=error)
        raise error
    result: RunResult = box["result"]
    return ShownRun.from_result(result)


def _final_error(event: RunEvent) -> bool:
    return event.event == "node_error" and not getattr(event, "will_retry", None)


class LiveLines:
    """The newest progress lines of a running run, redrawn in one element at most every
    :data:`LIVE_EVERY_S` (a long run would otherwise add one element per event to the page)."""

    def __init__(self, placeholder: Any) -> None:
        self.placeholder = placeholder
        self.lines: deque[str] = deque(maxlen=LIVE_LINES)
        self.total = 0
        self._drawn = 0.0

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.total += 1
        now = time.monotonic()
        if now - self._drawn >= LIVE_EVERY_S:
            self.draw()
            self._drawn = now

    def draw(self) -> None:
        if not self.lines:
            return
        skipped = self.total - len(self.lines)
        head = [f"…（前の {skipped:,} 行は省略）"] if skipped else []
        self.placeholder.code("\n".join([*head, *self.lines]), language="text")
