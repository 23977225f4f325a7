"""The files a run wrote are listed in the plan's node order, whichever of the nodes that ran
side by side finished first: the CLI's summary and the app's 実行 page list the same files the
same way every run."""

from __future__ import annotations

from pathlib import Path

from keiri_agent.events.runlog import open_run
from keiri_agent.plan import PlanNames, written_files

# excel, chart and the loop run side by side in the plan's order: excel, chart, each_month.
NAMES = PlanNames(order={"excel": 0, "chart": 1, "each_month": 2})
WRITES = [  # (node path, file name), in the order the nodes wrote them
    ("excel", "月次売上.xlsx"),
    ("chart", "売上推移.png"),
    ("chart", "得意先別.png"),
    ("each_month[2]/save", "3月.csv"),
    ("each_month[10]/save", "11月.csv"),
]


def _files(runs: Path, order: list[int]) -> list[str]:
    with open_run("sales", runs_dir=runs, fsync=False) as stream:
        for index in order:
            node, name = WRITES[index]
            path = runs / name
            stream.emit("file_write", node_id=node, path=str(path), temp_prefix=".tmp-")
            path.write_bytes(b"x")
    (log,) = (runs / "sales").glob("*.jsonl")
    try:
        return [path.name for path in written_files(log, {}, runs, NAMES)]
    finally:
        log.unlink()


def test_side_by_side_writers_list_their_files_in_plan_order_whoever_wrote_first(
    tmp_path: Path,
) -> None:
    expected = [name for _, name in WRITES]
    # A node's own files keep the order it wrote them; nodes and loop rounds that ran side by
    # side are listed by their place in the plan.
    assert _files(tmp_path, [0, 1, 2, 3, 4]) == expected
    assert _files(tmp_path, [4, 1, 3, 0, 2]) == expected
    assert _files(tmp_path, [3, 4, 1, 2, 0]) == expected


def test_files_of_reused_nodes_follow_in_plan_order(tmp_path: Path) -> None:
    late, early = tmp_path / "b.md", tmp_path / "a.xlsx"
    late.write_text("x", encoding="utf-8")
    early.write_bytes(b"x")
    outputs = {"chart": {"report": str(late)}, "excel": {"path": str(early)}}
    assert written_files(None, outputs, tmp_path, NAMES) == [early, late]
