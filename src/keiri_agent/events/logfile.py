"""Reading a JSONL run log: whole events in file order, from any id, resumable at a byte offset.

The log is the one full copy of a run's events: :func:`keiri_agent.events.runlog.replay` reads
a past run with it, and a live :class:`~keiri_agent.events.stream.EventStream` hands a reader
that attached late (or fell behind its in-memory tail) the events it missed from it through a
:class:`LogCursor`, which goes on from where it stopped instead of reading the file again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from keiri_agent.errors import BlockError, UserFile, input_error, reason_of
from keiri_agent.events.models import RunEvent, parse_event

__all__ = ["LogCursor", "first_event", "open_log", "read_backwards", "read_lines"]


def _bad_line(path: Path, lineno: int, reason: str, *, from_end: bool = False) -> BlockError:
    """A malformed line: its number counted from the start (or from the end, ``from_end``)."""
    where = f"末尾から {lineno}" if from_end else str(lineno)
    return input_error(
        f"実行ログ {path} の {where} 行目を読み取れません: {reason}",
        "ログが途中で切れているか、手で編集された可能性があります。該当行を確認してください。",
        **{"path": str(path), "line_from_end" if from_end else "line": lineno},
    )


RUN_LOG = UserFile(
    "実行ログ {file} が見つかりません。",
    hint="パスを確認してください。過去の実行は `list_runs` で一覧できます。",
    unreadable="実行ログ {file} を読めません",
    missing_key="path",
)


def open_log(path: Path) -> BinaryIO:
    with RUN_LOG.reading(path):
        return path.open("rb")


def read_lines(handle: BinaryIO, path: Path, after_id: int = 0) -> Iterator[RunEvent]:
    """The events with ``id > after_id`` from the start of ``handle``, in file order.

    A last line without its newline that does not parse is the tail a crash cut off while it
    was being written (every line is one write): it ends the reading, so the log reads as the
    events that were whole. A malformed line anywhere else is an error naming the line.
    """
    for _lineno, _end, event in _scan(handle, path, after_id, 1):
        if event is not None:
            yield event


def _scan(
    handle: BinaryIO, path: Path, after_id: int, first_line: int
) -> Iterator[tuple[int, int, RunEvent | None]]:
    """``(line number, offset after the line, event or None when skipped)`` for each whole
    line from the handle's position on (``first_line``: the number of that line)."""
    for lineno, raw in enumerate(iter(handle.readline, b""), start=first_line):
        torn = not raw.endswith(b"\n")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if torn:
                return
            raise _bad_line(path, lineno, reason_of(exc)) from exc
        if not line.strip():
            if not torn:
                yield lineno, handle.tell(), None
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            if torn:
                return
            raise _bad_line(path, lineno, reason_of(exc)) from exc
        if not isinstance(data, dict):
            raise _bad_line(path, lineno, "JSON オブジェクトではありません")
        if isinstance(data.get("id"), int) and data["id"] <= after_id:
            yield lineno, handle.tell(), None  # passed over without building the event
            continue
        try:
            event = parse_event(data)
        except BlockError as exc:
            raise _bad_line(path, lineno, exc.message) from exc
        yield lineno, handle.tell(), event if event.id > after_id else None


class LogCursor:
    """Reads a growing log forwards: each :meth:`read` goes on from the line where the last
    one stopped, so a reader following a long run reads every line once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0  # the start of the first line not read yet
        self._line = 1  # its line number

    def read(self, after_id: int, upto: int, limit: int) -> list[RunEvent]:
        """At most ``limit`` events with ``after_id < id <= upto``, in id order.

        Every line up to event ``upto`` must be whole in the file (the stream writes a line
        before it counts the event); lines after it are never read. ``after_id`` never goes
        back between calls.
        """
        found: list[RunEvent] = []
        if upto <= after_id:
            return found
        with open_log(self.path) as handle:
            handle.seek(self._offset)
            for lineno, end, event in _scan(handle, self.path, after_id, self._line):
                self._line, self._offset = lineno + 1, end
                if event is None:
                    continue
                found.append(event)
                if event.id >= upto or len(found) >= limit:
                    break
        return found


def first_event(path: Path) -> RunEvent | None:
    """The first whole event of a log (a run's log opens with its ``plan_start``), reading
    only its first line; None for an empty log."""
    with open_log(path) as handle:
        return next(read_lines(handle, path), None)


def read_backwards(path: Path, *, chunk: int = 1 << 16) -> Iterator[RunEvent]:
    """The events of a log from the last one backwards, reading only as far as it is iterated
    (the end of a long run without reading its beginning). A torn last line is left out, as
    :func:`read_lines` does; a malformed line is an error counted from the end."""
    with open_log(path) as handle:
        pos = handle.seek(0, os.SEEK_END)
        rest = b""
        last = True  # the piece after the file's last newline: a torn tail if not empty
        from_end = 0
        while pos > 0:
            size = min(chunk, pos)
            pos -= size
            handle.seek(pos)
            pieces = (handle.read(size) + rest).split(b"\n")
            rest = pieces.pop(0) if pos > 0 else b""  # may go on in the previous chunk
            for raw in reversed(pieces):
                torn, last = last, False
                if not raw.strip():
                    continue
                from_end += 1
                try:
                    data = json.loads(raw.decode("utf-8"))
                    event = parse_event(data)
                except (UnicodeDecodeError, json.JSONDecodeError, BlockError) as exc:
                    if torn:
                        continue
                    raise _bad_line(path, from_end, str(exc), from_end=True) from exc
                yield event
