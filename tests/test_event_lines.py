"""The fast path of the per-node events writes the same line and event as model validation."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.errors import BlockError
from keiri_agent.events import EventStream, JsonlSink, Redactor, parse_event, read_events
from keiri_agent.events.lines import _fast, _Validated, encode, head, stamp
from keiri_agent.events.models import RunEvent

WHEN = datetime(2026, 11, 26, 5, 0, 1, 250000, tzinfo=UTC)
CASES: list[tuple[str, dict[str, Any]]] = [
    ("node_start", {"node_id": "a", "block": "test.add@1.0.0"}),
    ("node_start", {"node_id": "loop[3]/a", "block": "x.y", "sub_run_id": "run.sub#1"}),
    ("node_start", {"node_id": "a"}),
    ("loop_iteration", {"node_id": "each", "iteration": 0, "item": {"名前": "経理", "n": 1.5}}),
    ("loop_iteration", {"node_id": "each", "iteration": 7, "item": None}),
    ("loop_iteration", {"node_id": "each", "iteration": 2, "item": list(range(500))}),
    ("loop_iteration", {"node_id": "each", "iteration": 1, "item": ("t", b"\x00", Path("/x"))}),
    ("node_complete", {"node_id": "a", "outputs": {"sum": 3}, "duration_ms": 1.25}),
    ("node_complete", {"node_id": "a", "outputs": {"v": "請" * 5000}, "duration_ms": 2}),
    (
        "node_complete",
        {
            "node_id": "a",
            "outputs": {"v": [1, {"k": None}]},
            "duration_ms": 0.5,
            "stored": {"v": [1, {"k": None}]},
            "outputs_file": None,
            "sub_run_id": "r.sub#2",
        },
    ),
    ("node_complete", {"node_id": "a", "outputs": {}, "outputs_file": "a/o.json"}),
    ("node_complete", {"node_id": "a", "reused": True, "stored": {"x": 1}}),
    ("node_complete", {"node_id": "a"}),
]


def _validated(kind: str, fields: dict[str, Any]) -> _Validated:
    data = {"id": 0, "event": kind, "run_id": "run_1", "timestamp": WHEN, **fields}
    return _Validated(parse_event(data))


@pytest.mark.parametrize(("kind", "fields"), CASES)
def test_the_fast_path_gives_the_validated_line_and_event(
    kind: str, fields: dict[str, Any]
) -> None:
    fast = _fast(kind, fields)
    assert fast is not None, "these fields take the fast path"
    slow = _validated(kind, fields)
    prefix = head(kind, "run_1")
    line = fast.line(42, prefix, WHEN)
    assert line == slow.line(42, prefix, WHEN)
    event = fast.event(42, kind, "run_1", WHEN)
    assert event == slow.event(42, kind, "run_1", WHEN)
    assert event == parse_event(json.loads(line))  # what a reader of the log gets
    assert line == event.to_json()


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("node_start", {"node_id": "a", "extra": 1}),  # unknown field
        ("node_start", {"node_id": 3}),  # wrong type
        ("loop_iteration", {"node_id": "each"}),  # iteration missing
        ("loop_iteration", {"node_id": "each", "iteration": True}),
        ("node_complete", {"node_id": "a", "outputs": None}),
        ("node_complete", {"node_id": "a", "duration_ms": float("nan")}),
        ("node_complete", {"node_id": "a", "stored": {1: "x"}}),
        ("stage", {"step": "s", "status": "running"}),  # not a per-node kind
    ],
)
def test_other_fields_are_left_to_the_model(kind: str, fields: dict[str, Any]) -> None:
    assert _fast(kind, fields) is None
    try:
        expected: RunEvent | None = _validated(kind, fields).event(1, kind, "run_1", WHEN)
    except BlockError:
        expected = None
    if expected is None:  # the model refuses them, through encode too
        with pytest.raises(BlockError):
            encode(kind, fields, Redactor(), run_id="run_1", now=lambda: WHEN)
    else:
        got = encode(kind, fields, Redactor(), run_id="run_1", now=lambda: WHEN)
        assert got.event(1, kind, "run_1", WHEN) == expected


def test_secrets_are_masked_on_the_fast_path_in_the_line_and_the_event(tmp_path: Path) -> None:
    stream = EventStream("run_1", "p", sink=JsonlSink(tmp_path / "log.jsonl"))
    stream.redactor.add("hunter2-secret")
    live = [
        stream.emit("loop_iteration", node_id="each", iteration=0, item="pw=hunter2-secret"),
        stream.emit("node_complete", node_id="a", outputs={"token": "hunter2-secret"}),
        stream.emit("node_start", node_id="hunter2-secret", block="b"),
    ]
    stream.close()
    text = (tmp_path / "log.jsonl").read_text(encoding="utf-8")
    assert "hunter2" not in text
    assert [e.model_dump() for e in read_events(tmp_path / "log.jsonl")] == [
        e.model_dump() for e in live
    ]
    assert live[0].item == "pw=****"  # type: ignore[attr-defined]


def test_timestamps_read_as_the_models_write_them() -> None:
    # The line's timestamp is formatted once per second and completed per event: it must equal
    # isoformat() with Z, also for whole seconds, the same second again, and other seconds.
    rng = random.Random(25)
    moments = [datetime(2026, 11, 26, 8, 0, 0, tzinfo=UTC)]
    for _ in range(2000):
        base = datetime.fromtimestamp(rng.uniform(0, 4e9), UTC)
        moments += [
            base.replace(microsecond=0),
            base,
            base.replace(microsecond=rng.randrange(10**6)),
        ]
    for moment in moments:
        assert stamp(moment) == moment.isoformat().replace("+00:00", "Z")
    tokyo = datetime(2026, 11, 26, 17, 0, 0, 5, tzinfo=timezone(timedelta(hours=9)))
    assert stamp(tokyo) == tokyo.isoformat()
