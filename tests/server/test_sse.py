"""GET /agent/sse over real HTTP: ids, retry, heartbeats, replay after a forced disconnect,
the terminal done event and 204, and a task that runs on without its client."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.events import RunEvent
from keiri_agent.events.logfile import LogCursor
from keiri_agent.events.stream import TAIL_EVENTS
from keiri_agent.server.sse import RETRY_MS
from keiri_agent.server.tasks import TASK_FILE
from tests.plan.blockkit import SPEC_DIR
from tests.server.conftest import (
    LiveServer,
    Message,
    events_of,
    make_settings,
    read_messages,
)
from tests.support import ScriptedLLMServer

PLAN_TASK = {"kind": "plan", "plan": "duplicate_invoice_check"}


def _log_lines(live: LiveServer, task_id: str) -> list[str]:
    path = live.registry.get(task_id).events_path
    return path.read_text(encoding="utf-8").splitlines()


def _start(live: LiveServer, body: dict[str, object]) -> str:
    with live.client() as client:
        response = client.post("/agent/run", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["task_id"])


def _stream(
    live: LiveServer,
    task_id: str,
    *,
    header: str | None = None,
    query: str | None = None,
    stop: Callable[[Message], bool] | None = None,
) -> list[Message]:
    """Read the task's stream; returning before EOF drops the connection (a forced disconnect)."""
    params = {"task_id": task_id} | ({"last_event_id": query} if query is not None else {})
    headers = {"Last-Event-ID": header} if header is not None else {}
    with (
        live.client() as client,
        client.stream("GET", "/agent/sse", params=params, headers=headers) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return read_messages(response, stop)


def _assert_exact_log(received: list[Message], lines: list[str]) -> None:
    """The received events are the log, each once, in order, followed by one done event."""
    *events, done = received
    assert [m.data for m in events] == lines  # nothing lost, nothing duplicated, same content
    assert [int(m.id or 0) for m in events] == list(range(1, len(lines) + 1))
    assert [m.event for m in events] == [json.loads(line)["event"] for line in lines]
    assert done.event == "done"
    assert done.id == str(len(lines) + 1)


def test_every_event_has_an_id_retry_and_the_logged_data(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    task_id = _start(live, PLAN_TASK)
    received = events_of(_stream(live, task_id))
    assert all(m.id is not None and m.retry == RETRY_MS for m in received)
    _assert_exact_log(received, _log_lines(live, task_id))
    done = received[-1].json()
    assert done["status"] == "success"
    assert "二重計上" in done["answer"]
    kinds = {m.event for m in received}
    assert {"stage", "log", "node_start", "node_complete", "done"} <= kinds
    steps = [m.json()["step"] for m in received if m.event == "stage"]
    assert steps[0] == "interpret"
    assert steps[-1] == "finish"
    assert received[-2].json()["progress"] == 1.0


@pytest.mark.parametrize("via", ["header", "query"])
def test_replay_after_a_forced_disconnect_loses_and_repeats_nothing(
    serve: Callable[..., LiveServer], settings: Settings, via: str
) -> None:
    live = serve(settings)
    task_id = _start(live, PLAN_TASK)
    first = events_of(_stream(live, task_id, stop=lambda m: m.id == "3"))
    assert [m.id for m in first] == ["1", "2", "3"]
    assert live.wait_finished(task_id) == "success"  # the task ran on without a client
    last = first[-1].id
    rest = events_of(
        _stream(live, task_id, **({"header": last} if via == "header" else {"query": last}))
    )
    _assert_exact_log(first + rest, _log_lines(live, task_id))


def test_the_header_wins_over_the_query_parameter(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    task_id = _start(live, PLAN_TASK)
    live.wait_finished(task_id)
    rest = events_of(_stream(live, task_id, header="5", query="2"))
    assert rest[0].id == "6"


def test_reconnecting_mid_run_splices_the_log_and_the_live_stream(
    serve: Callable[..., LiveServer], analysis_settings: Settings, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "集計済み"}, delay=0.3)
    report = {
        "title": "売上",
        "conclusion": "5月の売上は4月の2倍です。",
        "evidence": ["4月 100、5月 200"],
        "sections": [],
        "suggestions": [],
    }
    llm_server.add_chat(json=report, delay=1.5)
    live = serve(analysis_settings)
    task_id = _start(live, {"kind": "analysis", "request": "売上を比べて", "files": ["sales.csv"]})
    first = events_of(_stream(live, task_id, stop=lambda m: m.event == "llm_call"))
    seen = int(first[-1].id or 0)
    # Reconnect while the report's LLM call is pending: some events were missed, the rest is live.
    deadline = time.monotonic() + 10
    while live.registry.get(task_id).last_event_id < seen + 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert not live.registry.get(task_id).finished
    rest = events_of(_stream(live, task_id, header=str(seen)))
    # No code ran, so the report is not backed by computed output (issue 33).
    assert live.registry.get(task_id).status == "unverified"
    _assert_exact_log(first + rest, _log_lines(live, task_id))
    assert rest[-1].json()["answer"].endswith("5月の売上は4月の2倍です。")


LONG_PLAN = """
id: long_foreach
vars: {items: []}
graph:
  - id: each
    type: loop
    foreach: {input: "${vars.items}", itemVar: it, max_concurrency: 4}
    body:
      plan:
        graph: [{id: step, block: test.add, in: {a: "${it}"}}]
"""


def _long_task(
    serve: Callable[..., LiveServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, items: int
) -> tuple[LiveServer, str]:
    """A plan task whose foreach over ``items`` items logs about 3 events per item."""
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    designs = tmp_path / "designs"
    designs.mkdir()
    (designs / "long_foreach.yaml").write_text(LONG_PLAN, encoding="utf-8")
    settings = make_settings(tmp_path, keiri_designs_dir=designs, keiri_run_log_fsync=False)
    live = serve(settings)
    body = {"kind": "plan", "plan": "long_foreach", "vars": {"items": list(range(items))}}
    return live, _start(live, body)


def test_readers_attaching_late_to_a_long_plan_task_get_the_whole_log_once(
    serve: Callable[..., LiveServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Far more events than the task's stream keeps in memory: a late reader's start comes
    # from the log, and it goes on with live events without a gap or a repeat.
    items = 3 * TAIL_EVENTS
    live, task_id = _long_task(serve, tmp_path, monkeypatch, items)
    deadline = time.monotonic() + 300
    while live.registry.get(task_id).last_event_id < 2 * TAIL_EVENTS:
        assert time.monotonic() < deadline, "the task did not get going"
        time.sleep(0.02)
    first = events_of(_stream(live, task_id, stop=lambda m: int(m.id or 0) >= TAIL_EVENTS + 10))
    late = _stream(live, task_id)  # from the start, attached mid-run (or just after)
    rest = _stream(live, task_id, header=first[-1].id)  # a reconnect after a cut
    lines = _log_lines(live, task_id)
    assert len(lines) > 3 * items  # loop_iteration, node_start, node_complete per item
    _assert_exact_log(events_of(late), lines)
    _assert_exact_log(first + events_of(rest), lines)
    assert events_of(late)[-1].json()["status"] == "success"


def test_a_finished_long_task_is_sent_from_its_log_a_batch_at_a_time(
    serve: Callable[..., LiveServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client reading a finished task from the start: the server holds at most one batch of
    # the log's events at a time (not the whole log) and reads every line once.
    live, task_id = _long_task(serve, tmp_path, monkeypatch, 2 * TAIL_EVENTS)
    assert live.wait_finished(task_id) == "success"
    batches: list[int] = []
    read = LogCursor.read

    def counting_read(cursor: LogCursor, after_id: int, upto: int, limit: int) -> list[RunEvent]:
        found = read(cursor, after_id, upto, limit)
        batches.append(len(found))
        return found

    monkeypatch.setattr(LogCursor, "read", counting_read)
    lines = _log_lines(live, task_id)

    _assert_exact_log(events_of(_stream(live, task_id)), lines)

    assert len(lines) > 4 * TAIL_EVENTS
    assert max(batches) <= TAIL_EVENTS
    assert sum(batches) == len(lines)  # every line read once


def test_heartbeat_comments_keep_an_idle_stream_open(
    serve: Callable[..., LiveServer], tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "json"}, delay=1.5)
    live = serve(make_settings(tmp_path), ping_s=0.2)  # made after llm_server set the env
    task_id = _start(live, {"request": "data.csv を JSON にして", "source": "data.csv"})
    messages = _stream(live, task_id, stop=lambda m: "ping" in m.comments)
    assert messages[-1].comments == ["ping"]
    assert messages[-1].event is None
    assert not live.registry.get(task_id).finished  # the ping came while the task was busy


def test_done_then_204_once_everything_was_sent(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    task_id = _start(live, PLAN_TASK)
    done = events_of(_stream(live, task_id))[-1]
    with live.client() as client:
        again = client.get(
            "/agent/sse", params={"task_id": task_id}, headers={"Last-Event-ID": done.id or ""}
        )
        by_query = client.get("/agent/sse", params={"task_id": task_id, "last_event_id": done.id})
    assert again.status_code == 204
    assert again.content == b""
    assert by_query.status_code == 204
    # A client that missed only the done event gets just that.
    missed = events_of(_stream(live, task_id, header=str(int(done.id or 0) - 1)))
    assert [m.event for m in missed] == ["done"]
    assert missed[0].id == done.id


def test_a_restarted_server_replays_from_the_persisted_log(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    first = serve(settings)
    task_id = _start(first, PLAN_TASK)
    first.wait_finished(task_id)
    lines = _log_lines(first, task_id)
    second = serve(settings)  # a new process's view: nothing in memory
    _assert_exact_log(events_of(_stream(second, task_id)), lines)
    partial = events_of(_stream(second, task_id, query="10"))
    assert [m.data for m in partial[:-1]] == lines[10:]


def test_a_task_cut_by_a_crash_goes_on_in_the_same_stream_after_a_restart(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    first = serve(settings)
    task_id = _start(first, PLAN_TASK)
    first.wait_finished(task_id)
    record = first.registry.get(task_id).directory / TASK_FILE
    data = json.loads(record.read_text(encoding="utf-8"))
    record.write_text(json.dumps(data | {"status": "running"}), encoding="utf-8")
    lines = _log_lines(first, task_id)
    with first.registry.get(task_id).events_path.open("a", encoding="utf-8") as log:
        log.write('{"id": 99, "event": "lo')  # a line the stopped process never finished
    second = serve(settings)
    received = events_of(_stream(second, task_id))
    assert [m.data for m in received[: len(lines)]] == lines  # nothing lost or duplicated
    later = received[len(lines) :]
    assert [int(m.id or 0) for m in later[:-1]] == list(range(len(lines) + 1, len(received)))
    messages = [m.json().get("msg", "") for m in later[:-1]]
    assert "サーバーが途中で止まったため、タスクは中断されました。" in messages
    assert "サーバーの再起動後、中断したところから再開します。" in messages
    done = received[-1]
    assert done.event == "done"
    assert done.json()["status"] == "success"
    assert "重複の疑いがある請求書は 4 件" in done.json()["answer"]
    assert second.registry.get(task_id).interruptions == 1


def test_bad_last_event_id_and_unknown_task_are_japanese_errors(
    serve: Callable[..., LiveServer], settings: Settings
) -> None:
    live = serve(settings)
    task_id = _start(live, PLAN_TASK)
    with live.client() as client:
        bad = client.get("/agent/sse", params={"task_id": task_id}, headers={"Last-Event-ID": "x"})
        unknown = client.get("/agent/sse", params={"task_id": "A" * 22})
        missing = client.get("/agent/sse")
    assert bad.status_code == 400
    assert bad.json()["code"] == "INVALID_LAST_EVENT_ID"
    assert "整数" in bad.json()["message"]
    assert bad.json()["hint"]
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "TASK_NOT_FOUND"
    assert missing.status_code == 422
    assert "task_id" in missing.json()["message"]
    live.wait_finished(task_id)
