"""Event emitters: the in-process stream with subscribe/replay, over the JSONL sink (``sink``)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, runtime_checkable

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.chain import Seal
from keiri_agent.events.lines import encode, head
from keiri_agent.events.logfile import LogCursor
from keiri_agent.events.models import EventType, RunEvent
from keiri_agent.events.redact import Redactor
from keiri_agent.events.sink import JsonlSink

# --- emitters, sink, stream ------------------------------------------------------------------

# Events a resume or a cleanup relies on: on disk (when the sink fsyncs) before emit returns and
# before any reader sees them. A node_complete is made durable by its emitter (the plan runner's
# rule: _run.engine), or by the next of these: every fsync covers all the lines written before it.
DURABLE_EVENTS = frozenset({"plan_start", "node_waiting", "file_write", "plan_complete"})
_RESERVED = frozenset({"id", "event", "run_id", "timestamp"})  # set by emit() itself
# Events a stream with a log keeps in memory for readers just behind the newest one; older ones
# are read back from the log (a long run's memory does not grow with its events).
TAIL_EVENTS = 1024


@runtime_checkable
class EventEmitter(Protocol):
    """Anything that accepts events: an :class:`EventStream`, or :class:`NullEmitter`."""

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None: ...


class NullEmitter:
    """Drops every event; the default where no one is listening."""

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent | None:
        return None


class _AsyncWaiter:
    __slots__ = ("event", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()

    def wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # the subscriber's loop is already closed
            self.loop.call_soon_threadsafe(self.event.set)


class EventStream:
    """The events of one run: numbered, logged and delivered to subscribers.

    Secrets registered with :attr:`redactor` are masked in each event before anything else
    sees it (log, memory, subscribers, listeners). ``first_id`` continues a log that already
    holds that many events (a task resumed after a restart): ids go on from ``first_id + 1``.

    Memory: a stream with a log keeps only its last ``tail`` events (:data:`TAIL_EVENTS`).
    A reader asking for older ones (:meth:`events`, a subscriber that attached late or fell
    behind) reads them from the log, where every counted event is already whole, then goes
    on from memory: nothing missed, nothing twice. A stream without a log keeps every event
    (it is their only copy).

    Durability (a sink that fsyncs): an event whose kind is in ``durable`` (default
    :data:`DURABLE_EVENTS`) is on disk before :meth:`emit` returns, before its listeners are
    called and before any reader (:meth:`subscribe`, :meth:`events`, :attr:`last_id`) sees it
    or any event after it: what a client is told is never ahead of the disk. Other events are
    seen at once and reach the disk with the next fsync.
    """

    def __init__(
        self,
        run_id: str,
        source_id: str,
        *,
        sink: JsonlSink | None = None,
        redactor: Redactor | None = None,
        first_id: int = 0,
        tail: int = TAIL_EVENTS,
        durable: frozenset[str] = DURABLE_EVENTS,
    ) -> None:
        self.run_id = run_id
        self.first_id = max(first_id, 0)
        self.source_id = source_id
        self.redactor = redactor or Redactor()
        self._sink = sink
        self._durable = durable
        self._last_id = self.first_id  # the id of the newest event
        self._visible = self.first_id  # the newest id readers may see (durable ones synced)
        self._held: deque[int] = deque()  # ids of durable events logged but not yet synced
        self._tail: deque[RunEvent] = deque(maxlen=max(tail, 1) if sink is not None else None)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._sleepers = 0  # threads waiting on _cond (subscribe): only they need a notify
        self._waiters: set[_AsyncWaiter] = set()
        self._listeners: list[Callable[[RunEvent], None]] = []
        self._closed = False
        self._heads: dict[str, str] = {}  # event kind → its line's "event" and "run_id" JSON

    @property
    def log_path(self) -> Path | None:
        return self._sink.path if self._sink is not None else None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def seal(self) -> Seal | None:
        """The lines logged so far and the last one's hash-chain value (``events.chain``);
        None without a chained log. Read after :meth:`close`, it seals the whole run."""
        return self._sink.seal if self._sink is not None else None

    @property
    def last_id(self) -> int:
        """The id of the newest event readers may see (``first_id`` before the first)."""
        return self._visible

    def emit(self, kind: EventType | str, /, **fields: Any) -> RunEvent:
        """Build, number, log and publish one event; returns the typed event."""
        if not _RESERVED.isdisjoint(fields):
            raise TypeError(f"emit() sets {sorted(_RESERVED & fields.keys())} itself")
        name = str(kind)
        # Checked, summarized, masked and turned into JSON outside the lock (events.lines).
        encoded = encode(name, fields, self.redactor, run_id=self.run_id, now=_now)
        prefix = self._heads.get(name)
        if prefix is None:
            prefix = self._heads[name] = head(name, self.run_id)
        with self._lock:  # the lock of self._cond
            if self._closed:
                raise BlockError(
                    f"実行 {self.run_id} のイベントストリームは既に閉じられています"
                    f"（イベント '{kind}' は記録されません）。",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="実行の終了（close）後にイベントを送っていないか確認してください。",
                    details={"run_id": self.run_id, "event": name},
                )
            event_id, now = self._last_id + 1, _now()
            sink, line = self._sink, 0
            if sink is not None:  # under the lock: file order == id order
                line = sink.write_line(encoded.line(event_id, prefix, now))
            event = encoded.event(event_id, name, self.run_id, now)
            self._tail.append(event)
            self._last_id = event_id  # counted once its line is whole in the log
            hold = sink is not None and name in self._durable and not sink.synced(line)
            if hold:  # seen once on disk, and so is every event after it
                self._held.append(event_id)
            elif not self._held:
                self._visible = event_id
                self._notify()
        if hold and sink is not None:
            # Outside the lock, so other threads keep logging and share the next fsync.
            sink.sync(line)
            with self._lock:
                while self._held and self._held[0] <= event_id:  # the fsync covered them
                    self._held.popleft()
                self._visible = self._held[0] - 1 if self._held else self._last_id
                self._notify()
        for listener in self._listeners:  # outside the lock: a listener may emit or read
            listener(event)
        return event

    def sync(self, *, older_than: float | None = None) -> None:
        """Return once every event logged so far is on disk (a no-op when the log is not
        fsynced). ``older_than``: only if the oldest line not yet on disk was written at least
        that many seconds ago; otherwise return at once."""
        sink = self._sink
        if sink is None:
            return
        if older_than is not None:
            age = sink.unsynced_age()
            if age is None or age < older_than:
                return
        sink.sync()

    def add_listener(self, listener: Callable[[RunEvent], None]) -> None:
        """Call ``listener`` with each event, in the emitting thread, right after it is logged."""
        self._listeners.append(listener)

    def _notify(self) -> None:
        if self._sleepers:
            self._cond.notify_all()
        for waiter in self._waiters:
            waiter.wake()

    def _has_news(self, pos: int) -> bool:
        return self._visible > pos or self._closed

    def _from_memory(self, pos: int) -> tuple[list[RunEvent] | None, int]:
        """Under the lock: the visible events after ``pos`` if memory still holds them all
        (else None, to be read from the log), and the newest visible id."""
        hidden = self._last_id - self._visible  # the newest events, held behind a durable one
        wanted = self._visible - pos
        if wanted <= 0:
            return [], self._visible
        if wanted + hidden > len(self._tail) and self._sink is not None:
            return None, self._visible
        # From the newest end: a reader just behind costs what it reads, not the tail's length.
        count = max(min(wanted, len(self._tail) - hidden), 0)
        batch = list(islice(reversed(self._tail), hidden, hidden + count))
        batch.reverse()
        return batch, self._visible

    def _next_batch(
        self, pos: int, cursor: LogCursor | None
    ) -> tuple[list[RunEvent], LogCursor | None]:
        """The events after ``pos`` (at most :data:`TAIL_EVENTS` of them when read from the log)."""
        with self._lock:
            batch, upto = self._from_memory(pos)
        if batch is None:
            assert self._sink is not None
            cursor = cursor or LogCursor(self._sink.path)
            batch = cursor.read(pos, upto, TAIL_EVENTS)
        return batch, cursor

    def events(self, after_id: int = 0) -> list[RunEvent]:
        """A snapshot of the events with ``id > after_id`` (older ones read from the log)."""
        found: list[RunEvent] = []
        cursor: LogCursor | None = None
        with self._lock:
            end = self._visible
        pos = after_id
        while pos < end:
            batch, cursor = self._next_batch(pos, cursor)
            batch = [e for e in batch if e.id <= end]
            if not batch:
                break
            found.extend(batch)
            pos = batch[-1].id
        return found

    def subscribe(self, after_id: int = 0, *, timeout: float | None = None) -> Iterator[RunEvent]:
        """Yield every event with ``id > after_id``: older ones from the log, then live ones.

        Returns once the stream is closed and drained, or when no new event arrived within
        ``timeout`` seconds (``None``: wait until closed).
        """
        pos, cursor = after_id, None
        while True:
            with self._cond:
                self._sleepers += 1
                try:
                    self._cond.wait_for(partial(self._has_news, pos), timeout=timeout)
                finally:
                    self._sleepers -= 1
            batch, cursor = self._next_batch(pos, cursor)
            if not batch:  # woken with nothing new: closed and drained, or timed out
                return
            pos = batch[-1].id
            yield from batch

    async def asubscribe(self, after_id: int = 0) -> AsyncIterator[RunEvent]:
        """Like :meth:`subscribe` for asyncio (SSE); never blocks the event loop (reading the
        log happens in a worker thread)."""
        waiter = _AsyncWaiter(asyncio.get_running_loop())
        with self._lock:
            self._waiters.add(waiter)
        try:
            pos, cursor = after_id, None
            while True:
                waiter.event.clear()  # before the check, so a wake-up in between is kept
                with self._lock:
                    batch, upto = self._from_memory(pos)
                    closed = self._closed
                if batch is None:
                    cursor = cursor or LogCursor(self._sink.path)  # type: ignore[union-attr]
                    batch = await asyncio.to_thread(cursor.read, pos, upto, TAIL_EVENTS)
                if batch:
                    pos = batch[-1].id
                    for event in batch:
                        yield event
                elif closed:
                    return
                else:
                    await waiter.event.wait()
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    def close(self) -> None:
        """Finish the stream: close the log and release subscribers (idempotent)."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            if self._sink is not None:
                self._sink.close()  # every line on disk: nothing is held back any more
            self._held.clear()
            self._visible = self._last_id
            self._notify()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EventStream(run_id={self.run_id!r}, source_id={self.source_id!r})"


def _now() -> datetime:
    return datetime.now(UTC)
