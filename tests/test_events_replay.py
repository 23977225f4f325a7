"""A run's event stream keeps a bounded tail in memory; late or slow readers catch up from the log.

Readers attach while several threads are emitting; each must see every event exactly once, in
id order, equal to what the log holds, wherever it switched from the log to memory.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from pathlib import Path
from typing import Any

from keiri_agent.events import EventStream, JsonlSink, RunEvent, open_run, read_events
from keiri_agent.events.follow import LogFollower
from keiri_agent.events.runlog import find_run_log

WAIT_S = 120  # generous: a loaded two-core machine


def _stream(tmp_path: Path, tail: int) -> EventStream:
    return EventStream("run_replay", "plan", sink=JsonlSink(tmp_path / "run.jsonl"), tail=tail)


def _dumps(events: list[Any]) -> list[dict[str, Any]]:
    return [e.model_dump() for e in events]


def _wait_for(condition: Any) -> None:
    done = threading.Event()

    def poll() -> None:
        while not condition():
            done.wait(0.005)
        done.set()

    threading.Thread(target=poll, daemon=True).start()
    assert done.wait(WAIT_S), "condition not reached"


def test_readers_attaching_mid_run_get_every_event_once_in_order(tmp_path: Path) -> None:
    stream = _stream(tmp_path, tail=16)
    writers, per_writer = 4, 600
    total = writers * per_writer
    go = threading.Event()

    def write(w: int) -> None:
        go.wait()
        for i in range(per_writer):
            stream.emit("log", msg=f"w{w} #{i}")

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    go.set()

    got: dict[str, list[RunEvent]] = {"late": [], "slow": [], "async": [], "resumed": []}
    slow_may_go_on = threading.Event()

    def late() -> None:  # attaches mid-run and reads from the first event
        got["late"].extend(stream.subscribe())

    def slow() -> None:  # stalls after its first event until it is far behind the tail
        for event in stream.subscribe():
            got["slow"].append(event)
            if len(got["slow"]) == 1:
                slow_may_go_on.wait(WAIT_S)

    def resumed() -> None:  # a reconnect: everything after the id it saw last
        got["resumed"].extend(stream.subscribe(after_id=total // 3))

    async def follow() -> None:
        async for event in stream.asubscribe():
            got["async"].append(event)

    _wait_for(lambda: stream.last_id >= total // 4)
    readers = [threading.Thread(target=f) for f in (late, slow, resumed)]
    readers.append(threading.Thread(target=lambda: asyncio.run(follow())))
    for reader in readers:
        reader.start()
    _wait_for(lambda: stream.last_id >= total // 4 + 100)  # 100 > the tail of 16
    slow_may_go_on.set()
    for thread in threads:
        thread.join(WAIT_S)
    stream.close()
    for reader in readers:
        reader.join(WAIT_S)
        assert not reader.is_alive()

    assert stream.log_path is not None
    logged = read_events(stream.log_path)
    assert [e.id for e in logged] == list(range(1, total + 1))
    for name in ("late", "slow", "async"):
        assert _dumps(got[name]) == _dumps(logged), name
    assert _dumps(got["resumed"]) == _dumps(logged[total // 3 :])
    # Every writer's events arrive in the order it emitted them.
    for w in range(writers):
        mine = [e.msg for e in got["late"] if e.msg.startswith(f"w{w} ")]  # type: ignore[attr-defined]
        assert mine == [f"w{w} #{i}" for i in range(per_writer)]


def test_a_stream_with_a_log_keeps_at_most_its_tail_in_memory(tmp_path: Path) -> None:
    stream = _stream(tmp_path, tail=8)
    alive = weakref.WeakSet[RunEvent]()
    for i in range(200):
        alive.add(stream.emit("log", msg=f"m{i}"))
    gc.collect()
    assert len(alive) == 8  # the newest eight; the rest are only in the log
    assert sorted(e.id for e in alive) == list(range(193, 201))
    # Readers of older events get them from the log, equal to the live ones.
    assert [e.id for e in stream.events(after_id=150)] == list(range(151, 201))
    assert [e.msg for e in stream.events()] == [f"m{i}" for i in range(200)]  # type: ignore[attr-defined]
    stream.close()
    assert [e.id for e in stream.subscribe(after_id=10)] == list(range(11, 201))


def test_a_stream_without_a_log_keeps_every_event() -> None:
    stream = EventStream("run_mem", "plan", tail=8)
    for i in range(50):
        stream.emit("log", msg=f"m{i}")
    stream.close()
    assert [e.id for e in stream.events()] == list(range(1, 51))
    assert [e.id for e in stream.subscribe(after_id=40)] == list(range(41, 51))


def test_a_continued_log_replays_the_earlier_process_events(tmp_path: Path) -> None:
    first = _stream(tmp_path, tail=4)
    for i in range(10):
        first.emit("log", msg=f"before {i}")
    first.close()
    again = EventStream(
        "run_replay", "plan", sink=JsonlSink(tmp_path / "run.jsonl"), first_id=10, tail=4
    )
    for i in range(10):
        again.emit("log", msg=f"after {i}")
    again.close()
    ids = [e.id for e in again.subscribe(after_id=5)]
    assert ids == list(range(6, 21))


def test_a_log_follower_hands_every_event_once_to_a_reader_slower_than_the_run(
    tmp_path: Path,
) -> None:
    stream = open_run("plans/long", runs_dir=tmp_path)
    other = open_run("plans/long", runs_dir=tmp_path)  # another run of the same plan
    other.emit("plan_start", plan_id="plans/long")
    follower = LogFollower(
        lambda first: find_run_log("plans/long", first.run_id, runs_dir=tmp_path)
    )
    stream.add_listener(follower.see)
    total = 3000

    def run() -> None:
        stream.emit("plan_start", plan_id="plans/long")
        for i in range(total - 1):
            stream.emit("log", msg=f"m{i}")
        follower.finish()

    worker = threading.Thread(target=run)
    worker.start()
    got: list[RunEvent] = []
    for event in follower:
        got.append(event)
        if len(got) == 1:  # the reader stalls until the run is far ahead of it
            _wait_for(lambda: stream.last_id >= 500)
    worker.join(WAIT_S)
    stream.close()
    other.close()
    assert stream.log_path is not None
    assert _dumps(got) == _dumps(read_events(stream.log_path))
    assert [e.id for e in got] == list(range(1, total + 1))


def test_a_log_follower_of_a_run_that_never_started_ends_empty() -> None:
    follower = LogFollower(lambda first: Path("/nonexistent"))
    follower.finish()
    assert list(follower) == []
