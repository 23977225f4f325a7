"""The elastic crew of a foreach (plan._run.workers.Crew): helpers join only while items block."""

from __future__ import annotations

import threading
import time

import pytest

from keiri_agent.plan._run import workers
from keiri_agent.plan._run.workers import HELP_AFTER_S, Crew, Workers

WAIT_S = 60.0  # generous: a loaded machine may take long to schedule a thread


class Tally:
    """Which indexes ran, on which threads, and the most running at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done: list[int] = []
        self.threads: set[int] = set()
        self.current = 0
        self.peak = 0

    def enter(self) -> None:
        with self.lock:
            self.current += 1
            self.peak = max(self.peak, self.current)
            self.threads.add(threading.get_ident())

    def leave(self, index: int) -> None:
        with self.lock:
            self.current -= 1
            self.done.append(index)


def test_items_that_block_bring_helpers_up_to_the_limit() -> None:
    limit = 4
    tally = Tally()
    together = threading.Barrier(limit, timeout=WAIT_S)  # broken unless `limit` run at once

    def item(index: int) -> None:
        tally.enter()
        try:
            if index < limit:
                together.wait()
        finally:
            tally.leave(index)

    crew = Crew(Workers(16), item, 3 * limit, limit)
    crew.run()

    assert sorted(tally.done) == list(range(3 * limit))
    assert tally.peak == limit
    assert len(crew.helpers) == limit - 1


def test_quick_items_stay_on_the_calling_thread() -> None:
    # A clock that never moves: no item ever looks long, so no helper ever joins.
    tally = Tally()

    def item(index: int) -> None:
        tally.enter()
        time.sleep(0.001)
        tally.leave(index)

    crew = Crew(Workers(16), item, 50, 8, clock=lambda: 0.0)
    crew.run()

    assert sorted(tally.done) == list(range(50))
    assert crew.helpers == []
    assert tally.threads == {threading.get_ident()}


def test_items_are_taken_in_order_and_once_each() -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def item(index: int) -> None:
        time.sleep(HELP_AFTER_S * 2)  # long enough to bring helpers in
        with lock:
            seen.append(index)

    Crew(Workers(16), item, 40, 8).run()

    assert sorted(seen) == list(range(40))


def test_without_a_thread_for_the_watcher_workers_add_helpers_between_items() -> None:
    workers = Workers(3)
    release = threading.Event()

    def hold() -> None:
        release.wait(WAIT_S)

    holders = [workers.try_submit(hold) for _ in range(3)]  # every slot taken: no watcher
    assert all(h is not None for h in holders)
    tally = Tally()

    def item(index: int) -> None:
        tally.enter()
        if index == 0:  # the loop has started without a watcher: free the slots now
            release.set()
            for holder in holders:
                assert holder is not None
                holder.result(WAIT_S)
        time.sleep(HELP_AFTER_S * 3)  # every item is long
        tally.leave(index)

    crew = Crew(workers, item, 30, 3)
    crew.run()

    assert sorted(tally.done) == list(range(30))
    assert 1 <= len(crew.helpers) <= 2
    assert tally.peak >= 2


def test_a_failing_item_is_raised_by_run() -> None:
    def item(index: int) -> None:
        if index == 3:
            raise ValueError("三件目の失敗")

    with pytest.raises(ValueError, match="三件目の失敗"):
        Crew(Workers(4), item, 10, 4).run()


@pytest.mark.parametrize(
    ("elapsed", "cpu_used", "clock", "blocked"),
    [
        (HELP_AFTER_S / 2, 0.0, 7, False),  # not long yet
        (HELP_AFTER_S * 3, HELP_AFTER_S * 3 * 0.9, 7, False),  # computing (or collecting)
        (HELP_AFTER_S * 3, HELP_AFTER_S * 3 * 0.1, 7, True),  # waiting
        (HELP_AFTER_S * 3, 0.0, None, True),  # no CPU clock: the time alone decides
    ],
)
def test_an_item_is_blocked_when_long_and_mostly_off_the_cpu(
    monkeypatch: pytest.MonkeyPatch,
    elapsed: float,
    cpu_used: float,
    clock: int | None,
    blocked: bool,
) -> None:
    monkeypatch.setattr(workers, "_cpu", lambda c: 100.0 + cpu_used if c is not None else 0.0)
    assert workers._blocked(elapsed, 100.0, clock) is blocked


def test_items_that_compute_for_long_bring_no_helper(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every item is long (the clock jumps 1 s per reading), but its thread keeps computing (its
    # CPU clock moves as fast): no helper joins.
    ticks = iter(range(10**6))
    monkeypatch.setattr(workers, "_cpu", lambda c: float(next(ticks)))
    crew = Crew(Workers(16), lambda i: time.sleep(0.001), 40, 8, clock=lambda: float(next(ticks)))
    crew.run()
    assert crew.helpers == []
