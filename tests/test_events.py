"""Run events: numbering under concurrency, whole JSONL lines, live/replay equality, summaries."""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.errors import BlockError, ErrorCode, PathEscapeError
from keiri_agent.events import (
    EventEmitter,
    EventStream,
    EventType,
    JsonlSink,
    LLMCall,
    NodeStart,
    NullEmitter,
    PlanComplete,
    list_runs,
    open_run,
    parse_event,
    read_events,
    replay,
    summarize_llm_usage,
)

WAIT_S = 60.0  # generous: a loaded two-core machine may not run a thread or the loop for long

FIXED_NOW = datetime(2025, 1, 1, 10, 0, 0, tzinfo=UTC)

# Seed 002 §8.4, verbatim.
SEED_LINES = [
    '{"event": "plan_start", "plan_id": "invoice_reconciliation", "run_id": "run_12345", "timestamp": "2025-01-01T10:00:00Z"}',
    '{"event": "node_start", "node_id": "collect_inputs", "block": "ui.interactive_input", "timestamp": "2025-01-01T10:00:01Z"}',
    '{"event": "node_complete", "node_id": "collect_inputs", "outputs": {"collected_data": "{...}"}, "duration_ms": 15234}',
    '{"event": "node_skipped", "node_id": "conditional_process", "reason": "when_condition_false", "condition": "${...} > 0"}',
    '{"event": "loop_iteration", "node_id": "process_each_file", "iteration": 0, "item": "{...}"}',
    '{"event": "node_error", "node_id": "process_llm", "error": {"code": "API_ERROR", "message": "..."}, "retry": 1}',
    '{"event": "plan_complete", "run_id": "run_12345", "status": "success", "total_duration_ms": 45678}',
]


def _dumps(events: list[Any]) -> list[dict[str, Any]]:
    return [e.model_dump() for e in events]


def _stream(tmp_path: Path, name: str = "run.jsonl") -> EventStream:
    return EventStream("run_test", "plan", sink=JsonlSink(tmp_path / name))


def test_ids_strictly_increase_across_threads_and_file_order_matches(tmp_path: Path) -> None:
    stream = _stream(tmp_path)
    n_threads, per_thread = 8, 200
    seen: dict[int, list[int]] = {}
    barrier = threading.Barrier(n_threads)

    def worker(t: int) -> None:
        barrier.wait()
        seen[t] = [
            stream.emit("log", msg=f"t{t}-{i}", node_id=f"n{t}").id for i in range(per_thread)
        ]

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stream.close()

    total = n_threads * per_thread
    for ids in seen.values():
        assert ids == sorted(ids)
        assert len(set(ids)) == per_thread
    assert sorted(i for ids in seen.values() for i in ids) == list(range(1, total + 1))

    lines = (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == total
    decoded = [json.loads(line) for line in lines]
    assert [d["id"] for d in decoded] == list(range(1, total + 1))
    # Every thread's own messages appear in the order it emitted them.
    for t in range(n_threads):
        mine = [d["msg"] for d in decoded if d["node_id"] == f"n{t}"]
        assert mine == [f"t{t}-{i}" for i in range(per_thread)]
    # Timestamps are taken with the id, so they never go backwards in the file.
    stamps = [e.timestamp for e in read_events(tmp_path / "run.jsonl")]
    assert stamps == sorted(stamps)


def _append_lines(path: str, worker: int, count: int) -> None:
    sink = JsonlSink(path)
    for i in range(count):
        # Lines larger than PIPE_BUF, so a non-atomic writer would interleave.
        sink.write_line(json.dumps({"w": worker, "i": i, "pad": str(worker) * 9000}))
    sink.close()


def test_several_processes_appending_to_one_file_write_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "log.jsonl"
    JsonlSink(path).close()  # creates parent dirs and the empty file
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_lines, args=(str(path), w, 100)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 400
    records = [json.loads(line) for line in lines]
    for rec in records:
        assert rec["pad"] == str(rec["w"]) * 9000
    for w in range(4):
        assert [r["i"] for r in records if r["w"] == w] == list(range(100))


def test_replayed_log_equals_live_subscription(tmp_path: Path) -> None:
    stream = open_run("invoice_reconciliation", runs_dir=tmp_path)
    received: list[Any] = []
    consumer = threading.Thread(target=lambda: received.extend(stream.subscribe()))
    consumer.start()
    stream.emit("plan_start", plan_id="invoice_reconciliation", inputs={"月": "2025-01"})
    stream.emit("node_start", node_id="a", block="ui.interactive_input")
    stream.emit("stage", step="fetch", status="start", progress=0.25)
    stream.emit("code_gen", code="print('こんにちは')")
    stream.emit("code_exec", stdout="rows=12000", stderr="", success=True)
    stream.emit("node_complete", node_id="a", outputs={"n": 1, "rows": [1, 2]}, duration_ms=12.5)
    stream.emit("error", step="viz", message="KeyError: AIRTMP")
    stream.emit("plan_complete", status="failed", total_duration_ms=99.0)
    stream.close()
    consumer.join(30)
    assert not consumer.is_alive()

    assert stream.log_path is not None
    from_log = read_events(stream.log_path)
    assert len(from_log) == 8
    assert _dumps(from_log) == _dumps(received) == _dumps(stream.events())
    assert from_log[3].event == EventType.CODE_GEN
    # Japanese text stays readable in the file.
    assert "こんにちは" in stream.log_path.read_text(encoding="utf-8")
    assert [e.id for e in replay(stream.log_path, after_id=6)] == [7, 8]


def test_late_subscriber_gets_the_rest_then_live_events(tmp_path: Path) -> None:
    stream = _stream(tmp_path)
    for i in range(5):
        stream.emit("log", msg=f"m{i}")
    got: list[int] = []
    caught_up = threading.Event()

    def consume() -> None:
        for event in stream.subscribe(after_id=3):
            got.append(event.id)
            if event.id == 5:
                caught_up.set()

    consumer = threading.Thread(target=consume)
    consumer.start()
    assert caught_up.wait(30)
    assert got == [4, 5]
    stream.emit("log", msg="live1")
    stream.emit("log", msg="live2")
    stream.close()
    consumer.join(30)
    assert not consumer.is_alive()
    assert got == [4, 5, 6, 7]
    assert [e.id for e in stream.events(after_id=5)] == [6, 7]


def test_subscribe_returns_after_close_and_on_timeout(tmp_path: Path) -> None:
    stream = _stream(tmp_path)
    started = time.monotonic()
    assert list(stream.subscribe(timeout=0.05)) == []
    assert time.monotonic() - started < 30  # returned on its timeout, did not hang

    done = threading.Event()

    def consume() -> None:
        list(stream.subscribe())
        done.set()

    threading.Thread(target=consume, daemon=True).start()
    assert not done.wait(0.1)  # blocked while the run is open
    stream.close()
    assert done.wait(30)
    assert stream.closed
    stream.close()  # idempotent


def test_emit_after_close_and_invalid_events_raise(tmp_path: Path) -> None:
    stream = _stream(tmp_path)
    with pytest.raises(BlockError) as bad_kind:
        stream.emit("no_such_event", msg="x")
    assert "no_such_event" in bad_kind.value.message
    with pytest.raises(BlockError):
        stream.emit("log")  # msg is required
    with pytest.raises(BlockError):
        stream.emit("log", msg="x", typo_field=1)
    with pytest.raises(TypeError):
        stream.emit("log", msg="x", id=5)
    assert stream.events() == []  # failed emits consume no id
    assert stream.emit("log", msg="ok").id == 1
    with stream:
        pass
    with pytest.raises(BlockError) as closed:
        stream.emit("log", msg="late")
    assert "閉じられています" in closed.value.message
    assert len(read_events(tmp_path / "run.jsonl")) == 1


def test_asubscribe_delivers_replay_and_live_events_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    stream = _stream(tmp_path)
    stream.emit("stage", step="interpret", status="start")

    async def main() -> tuple[list[int], int]:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.005)

        def produce() -> None:
            # each event once the loop has ticked twice more (not after a fixed 30 ms: a loaded
            # machine may not run the loop in that time); a blocked loop ends the wait at last
            for i in range(3):
                ticked_by = time.monotonic() + WAIT_S
                while ticks < 2 * (i + 1) + 1 and time.monotonic() < ticked_by:
                    time.sleep(0.005)
                stream.emit("log", msg=f"from thread {i}")
            stream.close()

        tick_task = asyncio.create_task(ticker())
        producer = threading.Thread(target=produce)
        producer.start()
        ids = [event.id async for event in stream.asubscribe()]
        stop.set()
        await tick_task
        producer.join()
        return ids, ticks

    ids, ticks = asyncio.run(asyncio.wait_for(main(), 2 * WAIT_S))
    assert ids == [1, 2, 3, 4]
    assert ticks >= 5  # the loop kept running while the subscriber waited

    async def late() -> list[int]:
        return [event.id async for event in stream.asubscribe(after_id=2)]

    assert asyncio.run(late()) == [3, 4]


def test_seed_log_lines_round_trip_with_seed_field_names(tmp_path: Path) -> None:
    for i, line in enumerate(SEED_LINES, start=1):
        seed = json.loads(line)
        full = {"id": i, "run_id": "run_12345", "timestamp": "2025-01-01T10:00:00Z", **seed}
        event = parse_event(full)
        out = json.loads(event.to_json())
        # Every seed key comes back with its value; only defaults (e.g. inputs: {}) are added.
        assert {k: out[k] for k in full} == full
        assert set(out) - set(full) <= {"inputs"}
        assert parse_event(out) == event

    # Emitting the seed's payloads gives lines with the seed's keys and values.
    stream = _stream(tmp_path)
    for line in SEED_LINES:
        seed = json.loads(line)
        payload = {k: v for k, v in seed.items() if k not in {"event", "run_id", "timestamp"}}
        stream.emit(seed["event"], **payload)
    stream.close()
    written = (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines()
    for line, out in zip(SEED_LINES, written, strict=True):
        seed, got = json.loads(line), json.loads(out)
        assert {k: v for k, v in got.items() if k in seed and k not in {"run_id", "timestamp"}} == {
            k: v for k, v in seed.items() if k not in {"run_id", "timestamp"}
        }
        assert list(got)[:4] == ["id", "event", "run_id", "timestamp"]
        assert got["timestamp"].endswith("Z")


class DataFrame:  # same shape protocol as pandas, without importing it
    shape = (100, 3)


class Opaque:
    pass


def test_non_json_values_are_summarized_not_crashing(tmp_path: Path) -> None:
    stream = _stream(tmp_path)
    deep: dict[str, Any] = {}
    cursor = deep
    for _ in range(20):
        cursor["next"] = {}
        cursor = cursor["next"]
    event = stream.emit(
        "node_complete",
        node_id="analyze",
        outputs={
            "df": DataFrame(),
            "raw": b"x" * 2048,
            "file": Path("/tmp/report.md"),
            "tags": {"a"},
            "obj": Opaque(),
            "nan": math.nan,
            "long": "あ" * 10_000,
            "rows": list(range(1000)),
            "deep": deep,
            "err": BlockError("失敗しました", code=ErrorCode.API_ERROR, hint="再実行"),
        },
        duration_ms=1,
    )
    stream.emit("loop_iteration", node_id="each", iteration=0, item=DataFrame())
    stream.close()
    out = event.to_dict()["outputs"]
    assert out["df"] == "<DataFrame 100x3>"
    assert out["raw"] == "<bytes 2048>"
    assert out["file"] == "/tmp/report.md"
    assert out["tags"] == ["a"]
    assert out["obj"] == "<Opaque>"
    assert out["nan"] == "nan"
    assert len(out["long"]) <= 4000
    assert "10000" in out["long"]
    assert len(out["rows"]) <= 200
    assert "1000" in out["rows"][-1]
    assert len(json.dumps(out["deep"])) < 400
    assert out["err"]["code"] == "API_ERROR"
    assert out["err"]["hint"] == "再実行"

    events = read_events(tmp_path / "run.jsonl")
    assert _dumps(events) == _dumps(stream.events())  # summaries survive a reload unchanged
    assert events[1].model_dump()["item"] == "<DataFrame 100x3>"


def test_malformed_line_names_the_line(tmp_path: Path) -> None:
    good = _stream(tmp_path, "good.jsonl")
    good.emit("log", msg="ok")
    good.close()
    text = (tmp_path / "good.jsonl").read_text(encoding="utf-8")

    broken = tmp_path / "broken.jsonl"
    broken.write_text(text + '{"id": 2, "event": "log", "ms\n', encoding="utf-8")
    with pytest.raises(BlockError) as exc:
        read_events(broken)
    assert "2 行目" in exc.value.message
    assert exc.value.hint
    assert exc.value.details["line"] == 2

    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(text + "\n" + text.replace('"log"', '"bogus"'), encoding="utf-8")
    with pytest.raises(BlockError) as exc2:
        read_events(wrong)
    assert "3 行目" in exc2.value.message

    with pytest.raises(BlockError) as missing:
        read_events(tmp_path / "nope.jsonl")
    assert "見つかりません" in missing.value.message


def test_open_run_same_second_gets_distinct_files_and_list_runs_is_newest_first(
    tmp_path: Path,
) -> None:
    paths: list[Path] = []
    lock = threading.Lock()
    barrier = threading.Barrier(10)

    def start() -> None:
        barrier.wait()
        stream = open_run("common/validation_flow", runs_dir=tmp_path, now=FIXED_NOW)
        stream.emit("plan_start", plan_id="common/validation_flow")
        stream.close()
        with lock:
            assert stream.log_path is not None
            paths.append(stream.log_path)

    threads = [threading.Thread(target=start) for _ in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(set(paths)) == 10
    directory = tmp_path / "common" / "validation_flow"
    assert {p.name for p in paths} == {"20250101T100000Z.jsonl"} | {
        f"20250101T100000Z-{n}.jsonl" for n in range(2, 11)
    }
    for p in paths:
        assert p.parent == directory
        assert len(read_events(p)) == 1  # nobody shared a file

    later = open_run("common/validation_flow", runs_dir=tmp_path)
    later.close()
    runs = list_runs("common/validation_flow", runs_dir=tmp_path)
    assert runs[0] == later.log_path
    assert [p.name for p in runs[1:4]] == [
        "20250101T100000Z-10.jsonl",
        "20250101T100000Z-9.jsonl",
        "20250101T100000Z-8.jsonl",
    ]
    assert runs[-1].name == "20250101T100000Z.jsonl"
    assert list_runs("never_ran", runs_dir=tmp_path) == []


def test_open_run_defaults_and_rejects_escaping_source_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KEIRI_RUNS_DIR", "my_runs")
    stream = open_run("agent")
    stream.close()
    assert stream.log_path is not None
    assert stream.log_path.parent == tmp_path / "my_runs" / "agent"
    assert stream.run_id.startswith("run_")
    assert len(stream.run_id.split("_")[-1]) == 8
    with open_run("x", runs_dir=tmp_path, run_id="fixed") as fixed:
        assert fixed.run_id == "fixed"
    for bad in ("../outside", "/etc/cron.d", "a/../../b", ""):
        with pytest.raises(PathEscapeError):
            open_run(bad, runs_dir=tmp_path)
    assert not (tmp_path.parent / "outside").exists()


def test_null_emitter_and_protocol(tmp_path: Path) -> None:
    assert NullEmitter().emit("log", msg="dropped") is None
    assert isinstance(NullEmitter(), EventEmitter)
    assert isinstance(_stream(tmp_path), EventEmitter)
    memory_only = EventStream("r", "s")
    assert memory_only.log_path is None
    assert isinstance(memory_only.emit(EventType.NODE_START, node_id="n"), NodeStart)
    complete = memory_only.emit("plan_complete", status="success", total_duration_ms=5)
    assert isinstance(complete, PlanComplete)
    with pytest.raises(BlockError):
        memory_only.emit("plan_complete", status="done")  # not one of the four statuses


def test_summarize_llm_usage_sums_tokens_per_run_and_model(tmp_path: Path) -> None:
    stream = _stream(tmp_path)
    calls = [
        ("openai", "gpt-4.1-mini", 100, 20, 120.0, True),
        ("openai", "gpt-4.1-mini", 50, 5, 80.0, True),
        ("anthropic", "claude-sonnet-4-6", 10, 0, 30.5, False),
    ]
    for provider, model, tin, tout, latency, ok in calls:
        stream.emit(
            "llm_call",
            role="reason",
            provider=provider,
            model=model,
            input_tokens=tin,
            output_tokens=tout,
            latency_ms=latency,
            attempts=1 if ok else 3,
            ok=ok,
            error_code=None if ok else "API_ERROR",
        )
    stream.emit("log", msg="not an llm call")
    stream.close()
    usage = summarize_llm_usage(read_events(tmp_path / "run.jsonl"))
    assert usage["calls"] == 3
    assert usage["failed_calls"] == 1
    assert usage["input_tokens"] == 160
    assert usage["output_tokens"] == 25
    assert usage["total_tokens"] == 185  # defaults to input + output when not given
    assert usage["latency_ms"] == pytest.approx(230.5)
    mini = usage["by_model"]["openai:gpt-4.1-mini"]
    assert (mini["calls"], mini["total_tokens"]) == (2, 175)
    assert usage["by_model"]["anthropic:claude-sonnet-4-6"]["failed_calls"] == 1
    assert isinstance(stream.events()[0], LLMCall)
    assert summarize_llm_usage([])["calls"] == 0


def test_timestamps_are_utc_iso_with_z() -> None:
    naive = parse_event(
        {"id": 1, "event": "log", "run_id": "r", "timestamp": "2025-01-01T19:00:00", "msg": "x"}
    )
    assert naive.to_dict()["timestamp"] == "2025-01-01T19:00:00Z"
    tokyo = parse_event(
        {
            "id": 1,
            "event": "log",
            "run_id": "r",
            "timestamp": "2025-01-01T19:00:00+09:00",
            "msg": "",
        }
    )
    assert tokyo.to_dict()["timestamp"] == "2025-01-01T10:00:00Z"


def test_listeners_see_every_event_in_order_as_it_is_logged(tmp_path: Path) -> None:
    stream = open_run("listened", runs_dir=tmp_path)
    seen: list[tuple[int, str]] = []
    stream.add_listener(lambda event: seen.append((event.id, event.event)))
    stream.emit("plan_start", plan_id="listened")
    stream.emit("node_start", node_id="a")
    stream.close()
    assert seen == [(1, "plan_start"), (2, "node_start")]
    assert [(e.id, e.event) for e in read_events(stream.log_path)] == seen
