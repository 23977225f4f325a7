"""The 実行 page's view of a run's log (ui.run.digest, ui.run.live) and the history's summary
(events.logfile.read_backwards): what a long run costs the page is bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.events.logfile import read_backwards
from keiri_agent.events.runlog import read_events
from keiri_agent.plan import PlanRunner
from keiri_agent.ui.run import digest as run_digest
from keiri_agent.ui.run import live
from keiri_agent.ui.run.digest import digest
from keiri_agent.ui.run.live import LiveLines
from tests.plan.blockkit import SPEC_DIR

ITEMS = 300
LOOP_PLAN = f"""
id: long_loop
policy: {{on_error: continue}}
graph:
  - {{id: first, block: test.add, in: {{a: 1}}}}
  - id: each
    type: loop
    foreach: {{input: "${{vars.flags}}", itemVar: bad, max_concurrency: 4}}
    body:
      plan:
        graph:
          - {{id: step, block: test.fail, in: {{fail: "${{bad}}", message: 失敗, value: 1}}}}
        exports: [{{from: step.value, as: v}}]
    out: {{collect: v}}
vars: {{flags: {[i == ITEMS - 5 for i in range(ITEMS)]!r}}}
""".replace("True", "true").replace("False", "false")


@pytest.fixture
def long_log(tmp_path: Path) -> Path:
    designs = tmp_path / "designs"
    designs.mkdir()
    plan = designs / "long_loop.yaml"
    plan.write_text(LOOP_PLAN, encoding="utf-8")
    registry = BlockRegistry([SPEC_DIR])
    with PlanRunner(registry, runs_dir=tmp_path / "runs", designs_dir=designs, config={}) as r:
        result = r.run(plan)
    assert result.status == "partial", result.error
    assert result.log_path is not None
    return result.log_path


def test_a_long_run_keeps_every_top_level_node_and_a_bounded_rest(
    long_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_digest, "MAX_NESTED_ROWS", 50)
    monkeypatch.setattr(run_digest, "MAX_LINES", 100)

    seen = digest(long_log)

    nodes = [row["ノード"] for row in seen.rows]
    assert {"first", "each"} <= set(nodes)
    nested = [n for n in nodes if "/" in n]
    assert len(nested) <= 2 * 50
    assert f"each[{ITEMS - 5}]/step" in nested  # the failed item is shown though it came late
    failed = next(row for row in seen.rows if row["ノード"] == f"each[{ITEMS - 5}]/step")
    assert failed["状態"] == "エラー"
    assert seen.truncated
    assert len(seen.lines) == 100
    assert seen.total_lines > 3 * ITEMS  # loop_iteration, node_start, node_complete per item
    assert seen.lines[-1].startswith("✓ each")  # the newest lines are the ones kept


def test_a_short_run_is_shown_whole(long_log: Path) -> None:
    seen = digest(long_log)

    assert not seen.truncated
    assert len([r for r in seen.rows if "/" in r["ノード"]]) == ITEMS
    assert len(seen.lines) == seen.total_lines


def test_live_lines_show_only_the_newest_lines() -> None:
    drawn: list[str] = []

    class Placeholder:
        def code(self, text: str, language: str) -> None:
            drawn.append(text)

    lines = LiveLines(Placeholder())
    for i in range(10_000):
        lines.add(f"行 {i}")
    lines.draw()

    shown = drawn[-1].splitlines()
    assert shown[0] == f"…（前の {10_000 - live.LIVE_LINES:,} 行は省略）"
    assert shown[1:] == [f"行 {i}" for i in range(10_000 - live.LIVE_LINES, 10_000)]
    assert len(drawn) < 100  # redrawn now and then, not once per line


@pytest.mark.parametrize("chunk", [7, 64, 1 << 16])
def test_reading_backwards_gives_the_events_in_reverse(long_log: Path, chunk: int) -> None:
    assert list(read_backwards(long_log, chunk=chunk)) == list(reversed(read_events(long_log)))


def test_reading_backwards_skips_a_torn_tail_and_names_a_broken_line(long_log: Path) -> None:
    whole = read_events(long_log)
    with long_log.open("ab") as log:
        log.write(b'{"id": 99999, "event": "lo')  # a line a crash cut off
    assert next(read_backwards(long_log, chunk=64)) == whole[-1]

    lines = long_log.read_bytes().split(b"\n")
    lines[-3] = b"not json"
    long_log.write_bytes(b"\n".join(lines))
    backwards = read_backwards(long_log, chunk=64)
    assert next(backwards) == whole[-1]
    with pytest.raises(BlockError, match="末尾から 3 行目を読み取れません") as info:
        next(backwards)  # counted with the torn line, as a text editor shows the file
    assert info.value.hint


def test_reading_an_empty_log_backwards_gives_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert list(read_backwards(empty)) == []
