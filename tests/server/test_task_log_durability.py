"""Server task logs are durable by the run log's rule, watched through a real server: every
``fsync`` is recorded (which file, how many bytes, and for a task record what it said), and
the test checks that nothing a client is told -- an SSE event, a status, the final ``done``
-- and nothing the record counts is ahead of what is on disk; that the task's folder and its
uploads are synced when made; that ``KEIRI_RUN_LOG_FSYNC=false`` turns it all off; and that
a task log cut at any byte goes on with whole events after a restart."""

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

from keiri_agent.config import Settings
from keiri_agent.events import read_events
from keiri_agent.server.store import complete_lines
from keiri_agent.server.task_model import Task
from keiri_agent.server.tasklog import TASK_DURABLE_EVENTS, open_task_log
from tests.server.conftest import TASK_TIMEOUT_S, LiveServer, Message, make_settings, read_messages
from tests.support import ScriptedLLMServer
from tests.test_runlog_durability import FsyncSpy

PLAN = {"kind": "plan", "plan": "duplicate_invoice_check"}


class DiskSpy(FsyncSpy):
    """Also keeps every task record synced: what it said, how much of its task's log was on
    disk at that moment, and what had been synced before it (its place in ``order``)."""

    def __init__(self, real: Callable[[int], None]) -> None:
        super().__init__(real)
        self.records: list[tuple[dict[str, Any], int, int]] = []

    def __call__(self, fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        base = os.path.basename(name)
        record = None
        if base.startswith(".task.") and base.endswith(".tmp"):  # task.json's atomic write
            record = json.loads(os.pread(fd, os.fstat(fd).st_size, 0))
        super().__call__(fd)
        if record is not None:
            with self.lock:
                log = os.path.join(os.path.dirname(name), "events.jsonl")
                self.records.append((record, self.sizes.get(log, 0), len(self.order) - 1))

    def statuses(self, task_id: str) -> list[str]:
        with self.lock:
            return [r["status"] for r, _, _ in self.records if r["task_id"] == task_id]


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> DiskSpy:
    spy = DiskSpy(os.fsync)
    monkeypatch.setattr(os, "fsync", spy)
    return spy


def _line_ends(log: Path) -> list[int]:
    data = log.read_bytes()
    return [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]


def _watch(
    live: LiveServer, task_id: str, disk: DiskSpy, log: Path, until: Callable[[Message], bool]
) -> tuple[threading.Thread, list[str], list[Message]]:
    """Read the task's SSE stream in a thread; note every durable event or ``done`` that
    arrived before the disk held it."""
    early: list[str] = []
    seen: list[Message] = []

    def check(message: Message) -> bool:
        seen.append(message)
        if message.event in TASK_DURABLE_EVENTS and not disk.synced(log, int(message.id or 0)):
            early.append(f"{message.event} {message.id}")
        if message.event == "done" and message.json()["status"] not in disk.statuses(task_id):
            early.append(f"done {message.json()['status']}")
        return until(message)

    def read() -> None:
        with live.client() as client, client.stream("GET", f"/agent/sse?task_id={task_id}") as r:
            read_messages(r, check)

    reader = threading.Thread(target=read)
    reader.start()
    return reader, early, seen


def _wait_status(live: LiveServer, task_id: str, disk: DiskSpy, wanted: str) -> None:
    """Poll as a client does; the first answer with the new status must find it on disk."""
    deadline = time.monotonic() + TASK_TIMEOUT_S
    with live.client() as client:
        while (status := client.get(f"/agent/tasks/{task_id}").json()["status"]) != wanted:
            assert time.monotonic() < deadline, status
            time.sleep(0.01)
    assert wanted in disk.statuses(task_id), "the client saw a status the disk did not hold"


def _records_never_ahead(disk: DiskSpy, task_id: str, log: Path) -> None:
    ends = _line_ends(log)
    with disk.lock:
        records = [(r, size) for r, size, _ in disk.records if r["task_id"] == task_id]
    assert records
    for record, on_disk in records:
        counted = record["last_event_id"]
        assert counted == 0 or ends[counted - 1] <= on_disk, (record["status"], counted)


@pytest.mark.parametrize(
    ("answers", "status"), [({}, "waiting_input"), (None, "success")], ids=["waiting", "done"]
)
def test_nothing_a_client_is_told_is_ahead_of_the_disk(
    serve: Callable[..., LiveServer],
    settings: Settings,
    disk: DiskSpy,
    answers: dict[str, Any] | None,
    status: str,
) -> None:
    live = serve(settings)
    with live.client() as client:
        response = client.post("/agent/run", json={**PLAN, "answers": answers})
    assert response.status_code == 202, response.text
    task_id = response.json()["task_id"]
    task = live.registry.get(task_id)
    log = task.events_path

    def last(message: Message) -> bool:
        if status == "waiting_input":  # a paused task's stream stays open
            return message.event == "stage" and message.json().get("step") == "input"
        return message.event == "done"

    reader, early, seen = _watch(live, task_id, disk, log, last)
    _wait_status(live, task_id, disk, status)
    reader.join(TASK_TIMEOUT_S)
    assert not reader.is_alive()
    kinds = {m.event for m in seen}
    assert kinds >= ({"node_waiting"} if status == "waiting_input" else {"file_write", "done"})
    assert early == []
    _records_never_ahead(disk, task_id, log)
    assert disk.statuses(task_id)[-1] == status
    deadline = time.monotonic() + TASK_TIMEOUT_S
    while live.registry.runtime.get(task_id) is not None:  # until it has settled
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert disk.synced(log, read_events(log)[-1].id)  # the whole log, once the task settled
    # The result files the record names were on disk before it, with their folder's entries.
    record, _, place = next(r for r in disk.records if r[0]["status"] == status)
    # The workbook, the report and the report's page with its images inside.
    assert len(record["files"]) == (3 if status == "success" else 0)
    before = disk.order[:place]
    for name in record["files"]:
        path = task.directory.resolve() / name
        assert str(path) in before, name
        assert disk.sizes[str(path)] == path.stat().st_size
        assert before.index(str(path.parent)) > before.index(str(path))


def test_an_upload_and_the_task_folder_are_on_disk_before_the_task_is_accepted(
    serve: Callable[..., LiveServer], tmp_path: Path, disk: DiskSpy, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_error(500, "upstream exploded")  # the conversion fails: an `error` event
    live = serve(make_settings(tmp_path, keiri_llm_max_retries=0))
    body = {"request": json.dumps({"request": "JSON にして"})}
    upload = {"files": ("売上.csv", "月,売上\n4月,100\n".encode(), "text/csv")}
    with live.client() as client:
        response = client.post("/agent/run", data=body, files=upload, headers={"Origin": live.url})
        assert response.status_code == 202, response.text
        with disk.lock:
            order = list(disk.order)
    task_id = response.json()["task_id"]
    task = live.registry.get(task_id)
    folder = task.directory.resolve()
    made = [str(folder / "uploads" / "売上.csv"), str(folder / "uploads"), str(folder)]
    made.append(str(folder.parent))  # the task's own entry in tasks/
    assert [name for name in order if name in made][:4] == made
    reader, early, seen = _watch(live, task_id, disk, task.events_path, lambda m: m.event == "done")
    _wait_status(live, task_id, disk, "failed")
    reader.join(TASK_TIMEOUT_S)
    assert "error" in {m.event for m in seen}
    assert early == []
    _records_never_ahead(disk, task_id, task.events_path)


def test_the_setting_turns_fsync_off(
    serve: Callable[..., LiveServer], tmp_path: Path, disk: DiskSpy
) -> None:
    live = serve(make_settings(tmp_path, keiri_run_log_fsync=False))
    with live.client() as client:
        task_id = client.post("/agent/run", json=PLAN).json()["task_id"]
    assert live.wait_finished(task_id) == "success"
    assert disk.calls == 0
    assert len(read_events(live.registry.get(task_id).events_path)) > 10


def test_a_task_log_cut_at_any_offset_goes_on_with_its_whole_events(
    serve: Callable[..., LiveServer], settings: Settings, tmp_path: Path
) -> None:
    live = serve(settings)
    with live.client() as client:
        task_id = client.post("/agent/run", json=PLAN).json()["task_id"]
    assert live.wait_finished(task_id) == "success"
    data = live.registry.get(task_id).events_path.read_bytes()
    full = read_events(live.registry.get(task_id).events_path)
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    rng = random.Random(33)
    offsets = {0, 1, len(data) - 1, len(data)} | {rng.randrange(len(data)) for _ in range(150)}
    offsets |= {end for end in ends} | {end - 1 for end in ends} | {end + 1 for end in ends}
    for offset in sorted(o for o in offsets if 0 <= o <= len(data)):
        folder = tmp_path / "cut" / str(offset)
        folder.mkdir(parents=True)
        (folder / "events.jsonl").write_bytes(data[:offset])  # a crash cut the log here
        whole = sum(1 for end in ends if end <= offset)
        task = Task(id="t" * 22, kind="plan", directory=folder, request={}, created_at="")
        # What a restarted server does with the task: count the whole lines, go on after them.
        with open_task_log(task, settings) as stream:
            stream.emit("log", msg="再起動後に続けます。")
        got = read_events(folder / "events.jsonl")
        assert got[:-1] == full[:whole], f"offset {offset}"
        assert got[-1].id == whole + 1, f"offset {offset}"
        assert complete_lines(folder / "events.jsonl") == whole + 1
