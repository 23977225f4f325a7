"""The JSONL sink: one line per event, appended whole, on disk by group commit when asked.

Every log of the package goes through :class:`JsonlSink`: a plan run's log
(``runs/{source_id}/{timestamp}.jsonl``) and a server task's (``tasks/<id>/events.jsonl``).
Whoever decides that a line must be on disk calls :meth:`JsonlSink.sync`; concurrent callers
share one ``fsync``. A line nobody syncs explicitly is synced by the next sync of any later
line (every fsync covers every line written before it), or, with ``max_delay_s``, at most that
long after it was written by a timer of the sink's own.

A run log's sink is chained (``chain=True``): each line gets the hash-chain value of
``events.chain`` as it is written, in file order, and :attr:`JsonlSink.seal` is the number of
lines and the last value, which the run's record keeps.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.chain import GENESIS, Seal, chain_line
from keiri_agent.events.models import RunEvent
from keiri_agent.workspace import fsync_path

__all__ = ["JsonlSink"]


class JsonlSink:
    """Appends one JSON line per event to ``path``.

    Each line is written by one ``os.write`` on an ``O_APPEND`` descriptor, so writers in other
    threads or processes appending to the same file never interleave inside a line, and a crash
    can only cut the last line (readers drop such a torn tail). ``exclusive=True`` fails with
    FileExistsError if the file already exists.

    Durability: with ``fsync=True``, :meth:`sync` returns once every line written before it is
    on disk. Concurrent callers share one ``fsync`` (group commit): whoever finds no sync in
    progress syncs everything written so far, the others wait for it. The file's name is
    synced in its folder when the sink opens it. ``max_delay_s`` bounds how long a line may
    wait for someone else's sync: the first line not on disk starts a timer that syncs it (and
    every line written meanwhile) that many seconds later.

    ``chain=True`` adds the hash-chain value (``events.chain``) to every line, computed under
    the write lock so the chain follows the file's order; it needs a new file
    (``exclusive=True``): a chain cannot go on from lines it did not write.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        exclusive: bool = False,
        fsync: bool = False,
        max_delay_s: float | None = None,
        chain: bool = False,
    ) -> None:
        if chain and not exclusive:
            raise ValueError("a chained log must be a new file (exclusive=True)")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if exclusive:
            flags |= os.O_EXCL
        self._fd: int | None = os.open(self.path, flags, 0o644)
        self._lock = threading.Lock()
        self.fsync = fsync
        self.max_delay_s = max_delay_s if fsync else None
        self._written = 0  # lines written
        self._synced = 0  # lines known to be on disk
        self._pending_since: float | None = None  # when the first line not on disk was written
        self._syncing = False
        self._sync_done = threading.Condition(threading.Lock())
        self._chain: str | None = GENESIS if chain else None  # the last line's chain value
        if fsync:
            fsync_path(self.path.parent, directory=True)  # the new file's name survives a crash

    def write(self, event: RunEvent, *, sync: bool = False) -> int:
        return self.write_line(event.to_json(), sync=sync)

    def write_line(self, line: str, *, sync: bool = False) -> int:
        """Append one line; its number (for :meth:`sync`). ``sync``: return once it is on disk."""
        text = line.rstrip("\n")
        data = b"" if self._chain is not None else (text + "\n").encode("utf-8")
        first_pending = False
        with self._lock:
            if self._fd is None:
                raise BlockError(
                    f"実行ログ {self.path} は既に閉じられています。",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="実行が終了した後にイベントを書き込もうとしていないか確認してください。",
                )
            value = self._chain
            if value is not None:  # under the lock: the chain follows the file's order
                text, value = chain_line(text, value)
                data = (text + "\n").encode("utf-8")
            written = os.write(self._fd, data)
            # Regular files only write short on errors such as a full disk; finish the line.
            while written < len(data):
                written += os.write(self._fd, data[written:])
            self._chain = value  # only once the line is whole in the file
            self._written += 1
            mine = self._written
            if self._pending_since is None and self.fsync:
                self._pending_since = time.monotonic()
                first_pending = True
        if sync:
            self.sync(mine)
        elif first_pending and self.max_delay_s is not None:
            self._sync_later(self.max_delay_s)
        return mine

    def _sync_later(self, delay: float) -> None:
        """Sync whatever is not on disk ``delay`` seconds from now (a no-op if someone did)."""
        timer = threading.Timer(delay, self.sync)
        timer.daemon = True  # a sink closed meanwhile has synced everything itself
        timer.start()

    def sync(self, upto: int | None = None) -> None:
        """Return once line ``upto`` (default: every line written so far) is on disk; a no-op
        when the sink does not fsync."""
        if not self.fsync:
            return
        with self._sync_done:
            target = self._written if upto is None else upto
            while self._synced < target:
                if self._syncing:  # someone else's fsync may cover our line: wait for it
                    self._sync_done.wait()
                    continue
                self._syncing = True
                self._pending_since = None  # lines written from now on start a new wait
                batch = self._written  # everything written so far goes in this fsync
                fd = self._fd
                self._sync_done.release()
                try:
                    if fd is not None:
                        os.fsync(fd)
                finally:
                    self._sync_done.acquire()
                    self._syncing = False
                    self._synced = max(self._synced, batch)
                    self._sync_done.notify_all()

    def synced(self, line: int) -> bool:
        """Whether line ``line`` is known to be on disk (always true when the sink does not
        fsync: there is nothing to wait for)."""
        return not self.fsync or self._synced >= line

    def unsynced_age(self) -> float | None:
        """Seconds since the oldest line not yet on disk was written (None: all are, or the
        sink does not fsync)."""
        since = self._pending_since
        return None if since is None else time.monotonic() - since

    @property
    def seal(self) -> Seal | None:
        """The lines written so far and the last one's chain value (None: not chained)."""
        with self._lock:
            return Seal(self._written, self._chain) if self._chain is not None else None

    def close(self) -> None:
        self.sync()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None
