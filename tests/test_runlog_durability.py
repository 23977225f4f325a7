"""Run log durability: group-commit fsync before a finished node counts, a setting that turns it
off, and logs that read as their whole events after a crash cut a write anywhere."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.events import EventStream, JsonlSink, RunEvent, open_run, parse_event, read_events
from keiri_agent.events.stream import DURABLE_EVENTS
from keiri_agent.plan import PlanRunner
from tests.plan.blockkit import SPEC_DIR

WAIT_S = 120  # generous: a loaded two-core machine


class FsyncSpy:
    """Replaces os.fsync: counts calls and records how many bytes of each file were synced."""

    def __init__(self, real: Callable[[int], None]) -> None:
        self.real = real
        self.calls = 0
        self.sizes: dict[str, int] = {}
        self.order: list[str] = []  # what was fsynced, in order
        self.lock = threading.Lock()

    def __call__(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        name = os.readlink(f"/proc/self/fd/{fd}")
        self.real(fd)
        with self.lock:
            self.calls += 1
            self.sizes[name] = max(self.sizes.get(name, 0), size)
            self.order.append(name)

    def synced(self, log: Path, event_id: int) -> bool:
        """Whether the whole line of event ``event_id`` was on disk at the last fsync of ``log``."""
        with self.lock:
            size = self.sizes.get(str(log.resolve()), 0)
        data = log.read_bytes()[:size]
        head = f'{{"id": {event_id}, '.encode()
        at = 0 if data.startswith(head) else data.find(b"\n" + head)
        return at >= 0 and data.find(b"\n", at + 1) >= 0


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> FsyncSpy:
    found = FsyncSpy(os.fsync)
    monkeypatch.setattr(os, "fsync", found)
    return found


def test_concurrent_syncs_share_fsyncs_and_return_only_once_on_disk(
    tmp_path: Path, spy: FsyncSpy
) -> None:
    stream = open_run("durable", runs_dir=tmp_path, fsync=True)
    assert stream.log_path is not None
    log = stream.log_path
    late: list[int] = []
    start = threading.Barrier(8)

    def worker(n: int) -> None:
        start.wait()
        for i in range(100):
            event = stream.emit("node_complete", node_id=f"w{n}/{i}", outputs={"i": i})
            stream.sync()  # what the plan runner does for a node that took a while
            if not spy.synced(log, event.id):
                late.append(event.id)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stream.close()
    assert late == []  # every sync returned after the line was fsynced
    assert len(read_events(log)) == 800
    assert spy.calls < 800  # group commit: one fsync covered several lines


def test_the_setting_turns_fsync_off(
    tmp_path: Path, spy: FsyncSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    stream = open_run("throwaway", runs_dir=tmp_path)
    for i in range(20):
        stream.emit("node_complete", node_id=f"n{i}")
    stream.close()
    assert spy.calls == 0
    assert len(read_events(stream.log_path or Path())) == 20


CHAIN = """
id: chain
graph:
  - {id: a, block: test.add, in: {a: 1, b: 2}}
  - {id: big, block: test.sleep, in: {value: "${a.sum}"}}
  - {id: b, block: test.add, in: {a: "${a.sum}", b: 10}}
  - {id: c, block: test.add, in: {a: "${b.sum}", b: 100}}
"""


SLOW_FIRST = """
id: slow_first
graph:
  - {id: slow, block: test.sleep, in: {seconds: 0.05, value: 1}}
  - {id: quick, block: test.add, in: {a: "${slow.value}", b: 2}}
  - {id: last, block: test.add, in: {a: "${quick.sum}", b: 3}}
"""


def _run_checking_sync(
    tmp_path: Path, spy: FsyncSpy, text: str, durable: bool, upstream: dict[str, str]
) -> list[str]:
    """Run the plan; the nodes that started before their upstream's completion was on disk."""
    tmp_path.mkdir(exist_ok=True)
    plan = tmp_path / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    settings = Settings(_env_file=None, keiri_run_log_fsync=durable)  # type: ignore[call-arg]
    completed: dict[str, int] = {}
    missing: list[str] = []
    log: list[Path] = []

    def on_event(event: RunEvent) -> None:
        if event.event == "plan_start":
            log.append(next((tmp_path / "runs").glob("*/*.jsonl")))
        if event.event == "node_complete" and event.node_id:
            completed[event.node_id] = event.id
        needed = upstream.get(event.node_id or "") if event.event == "node_start" else None
        if needed is not None and not spy.synced(log[0], completed[needed]):
            missing.append(event.node_id or "")

    with PlanRunner(
        BlockRegistry([SPEC_DIR]),
        settings=settings,
        runs_dir=tmp_path / "runs",
        designs_dir=tmp_path,
        config={},
    ) as runner:
        result = runner.run(plan, on_event=on_event)
    assert result.status == "success", result.error
    assert result.log_path is not None
    last = read_events(result.log_path)[-1]
    assert last.event == "plan_complete"
    assert spy.synced(result.log_path, last.id) is durable  # the whole log, at the run's end
    return missing


def test_a_durable_run_syncs_the_folders_a_resume_needs(tmp_path: Path, spy: FsyncSpy) -> None:
    _run_checking_sync(tmp_path, spy, SLOW_FIRST, True, {})
    (log,) = (tmp_path / "runs").glob("*/*.jsonl")
    files = str(log.with_name(f"{log.stem}.files").resolve())
    folder = str(log.parent.resolve())
    assert files in spy.order  # the snapshot's folder: its entries
    # ... and the folder that holds it, after it was made: the new folder's own entry.
    assert folder in spy.order[spy.order.index(files) :]


@pytest.mark.parametrize("durable", [True, False])
def test_a_node_that_took_a_while_is_on_disk_before_anything_downstream_starts(
    tmp_path: Path, spy: FsyncSpy, durable: bool
) -> None:
    upstream = {"quick": "slow", "last": "quick"}
    missing = _run_checking_sync(tmp_path, spy, SLOW_FIRST, durable, upstream)
    if durable:
        assert "quick" not in missing  # slow ran 50 ms: synced before quick started
    else:
        assert spy.calls == 0
        assert sorted(missing) == ["last", "quick"]  # nothing was synced: the check can fail


def _quick_chain(nodes: int) -> str:
    lines = ["id: quick_chain", "graph:", "  - {id: n0, block: test.add, in: {a: 1, b: 0}}"]
    lines += [
        f'  - {{id: n{i}, block: test.add, in: {{a: "${{n{i - 1}.sum}}", b: 1}}}}'
        for i in range(1, nodes)
    ]
    return "\n".join(lines) + "\n"


def test_quick_nodes_share_fsyncs_and_wait_at_most_the_bound(
    tmp_path: Path, spy: FsyncSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.plan._run import engine

    nodes = 120
    upstream = {f"n{i}": f"n{i - 1}" for i in range(1, nodes)}
    # Every node counts as quick, and no line waits longer than the run: few fsyncs in all.
    monkeypatch.setattr(engine, "REDO_S", 3600.0)
    monkeypatch.setattr(engine, "MAX_UNSYNCED_S", 3600.0)
    missing = _run_checking_sync(tmp_path / "grouped", spy, _quick_chain(nodes), True, upstream)
    assert len(missing) >= nodes - 2  # dependents started before the quick line was on disk
    assert spy.calls < 20  # plan start, snapshot, vars, plan end: not one per node
    # A bound of zero: every completion is older than the bound when it is logged.
    monkeypatch.setattr(engine, "MAX_UNSYNCED_S", 0.0)
    spy.calls = 0
    missing = _run_checking_sync(tmp_path / "bounded", spy, _quick_chain(nodes), True, upstream)
    assert missing == []
    assert spy.calls >= nodes


def _a_real_log(tmp_path: Path) -> Path:
    """A plan run's log with multi-byte text, large and nested values."""
    stream = open_run("torn", runs_dir=tmp_path / "src", fsync=False)
    stream.emit("plan_start", plan_id="torn", inputs={"vars": {"名前": "経理" * 50}})
    for i in range(25):
        stream.emit("node_start", node_id=f"n{i}", block="test.add")
        payload: dict[str, Any] = {"text": "請求書" * (i * 7), "rows": list(range(i * 3))}
        stream.emit("node_complete", node_id=f"n{i}", outputs=payload, stored=payload)
    stream.emit("plan_complete", status="success")
    stream.close()
    assert stream.log_path is not None
    return stream.log_path


def test_a_log_cut_at_any_offset_reads_as_its_whole_events(tmp_path: Path) -> None:
    log = _a_real_log(tmp_path)
    data = log.read_bytes()
    full = read_events(log)
    ends = [i for i, byte in enumerate(data) if byte == ord("\n")]  # newline of each line
    cut = tmp_path / "cut.jsonl"
    rng = random.Random(25)
    offsets = {0, 1, len(data) - 1, len(data)} | {rng.randrange(len(data)) for _ in range(150)}
    offsets |= {end for end in ends} | {end + 1 for end in ends}  # right before/after a newline
    for offset in sorted(offsets):
        cut.write_bytes(data[:offset])
        whole = sum(1 for end in ends if end <= offset)  # lines whose JSON is complete
        got = read_events(cut)
        assert got == full[:whole], f"offset {offset}"


def test_damage_before_the_last_line_is_still_an_error(tmp_path: Path) -> None:
    log = _a_real_log(tmp_path)
    lines = log.read_bytes().split(b"\n")
    lines[3] = lines[3][: len(lines[3]) // 2]
    log.write_bytes(b"\n".join(lines))
    with pytest.raises(BlockError) as caught:
        read_events(log)
    assert "4 行目" in caught.value.message


def test_a_run_whose_log_was_cut_mid_line_resumes(tmp_path: Path) -> None:
    plan = tmp_path / "chain.yaml"
    plan.write_text(CHAIN, encoding="utf-8")
    settings = Settings(_env_file=None, keiri_run_log_fsync=False)  # type: ignore[call-arg]
    with PlanRunner(
        BlockRegistry([SPEC_DIR]),
        settings=settings,
        runs_dir=tmp_path / "runs",
        designs_dir=tmp_path,
        config={},
    ) as runner:
        first = runner.run(plan)
        assert first.log_path is not None
        data = first.log_path.read_bytes()
        lines = data.split(b"\n")
        # The crash: the log ends inside the node_complete of "b" (c never ran).
        b_done = next(
            i for i, line in enumerate(lines) if b'"node_complete"' in line and b'"b"' in line
        )
        kept = b"\n".join(lines[:b_done]) + b"\n" + lines[b_done][:40]
        first.log_path.write_bytes(kept)
        # big and b both wait only for a: big's line may come before or after b's.
        whole = {
            e.node_id
            for e in map(parse_event, map(json.loads, lines[:b_done]))
            if e.event == "node_complete"
        }
        resumed = runner.resume(first.log_path)
    assert resumed.status == "success", resumed.error
    assert resumed.outputs["c"] == {"sum": 113}
    assert resumed.log_path is not None
    ran = [e.node_id for e in read_events(resumed.log_path) if e.event == "node_start"]
    assert "a" in whole
    # the nodes whose completion was whole in the log were reused, the others ran again
    assert sorted(ran) == sorted({"a", "big", "b", "c"} - whole)
    assert ran[-1] == "c"


class SlowFsync(FsyncSpy):
    """An fsync that takes 20 ms: a reader woken before it returns would see the event early."""

    def __call__(self, fd: int) -> None:
        time.sleep(0.02)
        super().__call__(fd)


@pytest.mark.parametrize("tail", [1024, 4])  # 4: readers fall behind memory into the log
def test_readers_see_a_durable_event_and_those_after_it_only_once_it_is_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: int
) -> None:
    slow = SlowFsync(os.fsync)
    monkeypatch.setattr(os, "fsync", slow)
    log = tmp_path / "held.jsonl"
    stream = EventStream("held", "t", sink=JsonlSink(log, fsync=True), tail=tail)
    early: list[int] = []  # durable events a reader got before they were on disk
    late: list[int] = []  # durable events emit returned before they were on disk
    received: list[int] = []

    def read() -> None:
        # Delivery is in id order: a durable event checked here was also on disk before any
        # event after it was delivered.
        for event in stream.subscribe():
            received.append(event.id)
            if event.event in DURABLE_EVENTS and not slow.synced(log, event.id):
                early.append(event.id)

    reader = threading.Thread(target=read)
    reader.start()

    def worker(n: int) -> None:
        for i in range(10):
            stream.emit("log", msg=f"{n}-{i}")  # quick lines, from several threads at once
            waiting = stream.emit("node_waiting", node_id=f"w{n}/{i}")
            if not slow.synced(log, waiting.id):
                late.append(waiting.id)

    workers = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    stream.close()
    reader.join(timeout=WAIT_S)
    assert received == list(range(1, 81))
    assert late == []
    assert early == []


def test_a_quick_line_shares_an_fsync_and_reaches_the_disk_within_the_bound(
    tmp_path: Path, spy: FsyncSpy
) -> None:
    # A long bound: quick lines are written without an fsync each, and closing syncs them all.
    grouped = EventStream(
        "grouped", "t", sink=JsonlSink(tmp_path / "a.jsonl", fsync=True, max_delay_s=3600)
    )
    for i in range(50):
        grouped.emit("log", msg=f"行 {i}")
    assert str((tmp_path / "a.jsonl").resolve()) not in spy.order
    grouped.close()
    assert spy.synced(tmp_path / "a.jsonl", 50)
    # A short bound: a line nobody syncs is on disk soon after, with no later event or close.
    log = tmp_path / "b.jsonl"
    bounded = EventStream("bounded", "t", sink=JsonlSink(log, fsync=True, max_delay_s=0.05))
    bounded.emit("log", msg="ひとつだけ")
    deadline = time.monotonic() + WAIT_S
    while not spy.synced(log, 1):
        assert time.monotonic() < deadline, "the quick line never reached the disk"
        time.sleep(0.01)
    assert str(log.resolve()) in spy.order
    bounded.close()
