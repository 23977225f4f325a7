"""server.store.complete_lines: a task log's whole lines counted, a half-written tail cut off."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.server import store
from keiri_agent.server.store import complete_lines


@pytest.mark.parametrize("block", [3, 16, 1 << 20])
def test_whole_lines_are_counted_and_a_torn_tail_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(store, "COUNT_BLOCK", block)  # lines across block edges too
    log = tmp_path / "events.jsonl"
    whole = b"".join(b'{"id": %d, "event": "log"}\n' % i for i in range(1, 41))
    log.write_bytes(whole + b'{"id": 41, "ev')

    assert complete_lines(log) == 40
    assert log.read_bytes() == whole  # the next event starts on a line of its own
    assert complete_lines(log) == 40  # nothing more to cut


def test_a_missing_log_has_no_lines(tmp_path: Path) -> None:
    assert complete_lines(tmp_path / "none.jsonl") == 0
    assert not (tmp_path / "none.jsonl").exists()


def test_a_log_of_only_a_torn_line_becomes_empty(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b'{"id": 1, "ev')
    assert complete_lines(log) == 0
    assert log.read_bytes() == b""
