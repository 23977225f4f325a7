"""One event's log line, built before the stream numbers it.

An :class:`EventStream` numbers events under its lock; everything else about a line (checking
the fields, summarizing payloads, masking secrets, ``json.dumps``) is done here first, outside
the lock, by :func:`encode`. Under the lock only the id and the timestamp are joined to the
prepared text (:meth:`Encoded.line`) and the typed event is made (:meth:`Encoded.event`).

The events a plan runs emits once per node or item (``node_start``, ``node_complete``,
``loop_iteration``) take a fast path that skips pydantic validation: their fields are checked
by type here and built with ``model_construct``. Every other event, and any of these three with
unexpected fields, is validated by its model as before. Both paths give the same line and an
event equal to the one read back from the log.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from keiri_agent.events.models import (
    LoopIteration,
    NodeComplete,
    NodeStart,
    RunEvent,
    parse_event,
    summarize_value,
)
from keiri_agent.events.redact import Redactor

__all__ = ["Encoded", "encode", "head"]

HEAD = ("id", "event", "run_id", "timestamp")
# json.dumps(value, ensure_ascii=False) without building an encoder per call (same text).
_to_json = json.JSONEncoder(ensure_ascii=False).encode


# How the fast path checks a field (anything else goes to the model's validation).
_STR, _INT, _NUMBER, _DICT, _OPT_DICT, _BOOL, _ANY = range(7)
_MISSING: Any = object()


def _ok(rule: int, value: Any) -> bool:
    kind = type(value)
    if rule == _STR:
        return kind is str
    if rule == _INT:
        return kind is int and value >= 0
    if rule == _NUMBER:
        return (kind is float or kind is int) and math.isfinite(value)
    if rule == _DICT:
        return isinstance(value, Mapping)
    if rule == _OPT_DICT:
        return kind is dict and all(type(k) is str for k in value)
    if rule == _BOOL:
        return kind is bool
    return True


# kind → (model, fields in the model's order: (name, rule, summarized), defaults of given-less
# fields that are logged anyway, the fields that must be given)
Fields = tuple[tuple[str, int, bool], ...]
_COMMON: Fields = (("node_id", _STR, False), ("sub_run_id", _STR, False))
FAST: dict[str, tuple[type[RunEvent], Fields, dict[str, Callable[[], Any]], frozenset[str]]] = {
    "node_start": (NodeStart, (*_COMMON, ("block", _STR, False)), {}, frozenset()),
    "loop_iteration": (
        LoopIteration,
        (*_COMMON, ("iteration", _INT, False), ("item", _ANY, True)),
        {},
        frozenset({"iteration"}),
    ),
    "node_complete": (
        NodeComplete,
        (
            *_COMMON,
            ("outputs", _DICT, True),
            ("duration_ms", _NUMBER, False),
            ("stored", _OPT_DICT, False),
            ("outputs_file", _STR, False),
            ("reused", _BOOL, False),
        ),
        {"outputs": dict, "duration_ms": float},
        frozenset(),
    ),
}


def _defaults(model: type[RunEvent]) -> dict[str, Any]:
    return {name: info.default for name, info in model.model_fields.items()}


# Every field of the fast models at its default (none of them has a mutable default that the
# fast path leaves unset: node_complete's outputs is always given).
_BLANK = {spec[0]: _defaults(spec[0]) for spec in FAST.values()}


def _construct(model: type[RunEvent], head: dict[str, Any], values: dict[str, Any]) -> RunEvent:
    """``model.model_construct(**head, **values)`` without its per-field default look-ups."""
    event = model.__new__(model)
    fields = _BLANK[model].copy()
    fields.update(head)
    fields.update(values)
    object.__setattr__(event, "__dict__", fields)
    object.__setattr__(event, "__pydantic_fields_set__", {*head, *values})
    object.__setattr__(event, "__pydantic_extra__", None)
    object.__setattr__(event, "__pydantic_private__", None)
    return event


class Encoded:
    """An event ready to be numbered: its model, its logged fields and their JSON text."""

    __slots__ = ("body", "model", "text")

    def __init__(self, model: type[RunEvent], body: dict[str, Any]) -> None:
        self.model = model
        self.body = body  # the fields after the head, as logged (None left out)
        text = _to_json(body)
        self.text = ", " + text[1:] if body else "}"

    def line(self, event_id: int, head: str, timestamp: datetime) -> str:
        """The log line; ``head``: :func:`head` of the event's kind and run id."""
        return f'{{"id": {event_id}, {head}"timestamp": "{stamp(timestamp)}"{self.text}'

    def event(self, event_id: int, event: str, run_id: str, timestamp: datetime) -> RunEvent:
        head = {"id": event_id, "event": event, "run_id": run_id, "timestamp": timestamp}
        return _construct(self.model, head, self.body)


# (year, month, day, hour, minute, second) → its ISO text: the events of one second share it.
_SECOND: tuple[tuple[int, ...], str] = ((), "")


def stamp(timestamp: datetime) -> str:
    """``timestamp.isoformat()`` of a UTC time with ``Z`` for ``+00:00`` (as the models write
    it), formatting the date and time once per second: isoformat costs more than the rest of
    a log line."""
    global _SECOND
    t = timestamp
    if t.tzinfo is not UTC:
        return t.isoformat().replace("+00:00", "Z")
    key = (t.year, t.month, t.day, t.hour, t.minute, t.second)
    known, text = _SECOND  # one tuple: threads see a key with its own text
    if key != known:
        text = t.replace(microsecond=0).isoformat().replace("+00:00", "")
        _SECOND = (key, text)
    return f"{text}.{t.microsecond:06d}Z" if t.microsecond else f"{text}Z"


def head(event: str, run_id: str) -> str:
    """The JSON of a line's ``event`` and ``run_id`` (what :meth:`Encoded.line` is given)."""
    kind, run = json.dumps(event, ensure_ascii=False), json.dumps(run_id, ensure_ascii=False)
    return f'"event": {kind}, "run_id": {run}, '


def _fast(kind: str, fields: Mapping[str, Any]) -> Encoded | None:
    spec = FAST.get(kind)
    if spec is None:
        return None
    model, known, defaults, required = spec
    body: dict[str, Any] = {}
    seen = 0
    for name, rule, summarized in known:
        value = fields.get(name, _MISSING)
        if value is _MISSING:
            if name in required:
                return None  # the model reports it
            if name in defaults:
                body[name] = defaults[name]()
            continue
        seen += 1
        if value is None:
            if name in required or name in defaults:
                return None
            continue
        if (type(value) is not str) if rule == _STR else not _ok(rule, value):
            return None
        if summarized:
            value = summarize_value(value)
        elif rule == _NUMBER:
            value = float(value)
        body[name] = value
    if seen != len(fields):
        return None  # an unknown field: the model reports it
    return Encoded(model, body)


def encode(
    kind: str,
    fields: Mapping[str, Any],
    redactor: Redactor,
    *,
    run_id: str,
    now: Callable[[], datetime],
) -> Encoded:
    """The event ``kind`` with ``fields``, checked, summarized, with secrets and personal data
    masked (``Redactor.clean``).

    ``run_id`` and ``now()`` are only used to validate events outside the fast path (the
    stream sets the final ones when it numbers the event). Raises BlockError for invalid fields.
    """
    encoded = _fast(kind, fields)
    if encoded is not None:
        cleaned = redactor.clean(encoded.body)
        if cleaned != encoded.body:
            encoded = Encoded(encoded.model, cleaned)
        return encoded
    data = {"id": 0, "event": kind, "run_id": run_id, "timestamp": now(), **fields}
    draft = parse_event(data)
    dumped = draft.model_dump(mode="json")
    body = {name: value for name, value in dumped.items() if name not in HEAD}
    cleaned = redactor.clean(body)
    if cleaned != body:
        draft = parse_event({**dumped, **cleaned})
    return _Validated(draft)


class _Validated(Encoded):
    """An event outside the fast path: the validated model, renumbered when it is logged."""

    __slots__ = ("draft",)

    def __init__(self, draft: RunEvent) -> None:
        super().__init__(type(draft), {k: v for k, v in draft.to_dict().items() if k not in HEAD})
        self.draft = draft

    def event(self, event_id: int, event: str, run_id: str, timestamp: datetime) -> RunEvent:
        return self.draft.model_copy(update={"id": event_id, "timestamp": timestamp})
