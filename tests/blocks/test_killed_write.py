"""A run killed with -9 while writing an output file (issue 18): resuming it removes the
temporary file it left and replaces the file it had already renamed into place, while any
other run still refuses to overwrite that file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook

from keiri_agent.blocks.registry import default_registry
from keiri_agent.errors import BlockError
from keiri_agent.plan import PlanRunner

# The child runs the real plan and kills itself with SIGKILL at one moment of the real write:
# right after the workbook is saved to its temporary file (before the rename), or right after
# the rename (before the block returns, so no node_complete is logged).
CHILD = r"""
import os, signal, sys
from pathlib import Path

moment, plan, runs = sys.argv[1:4]


def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


if moment == "before_rename":
    from openpyxl import Workbook

    save = Workbook.save
    Workbook.save = lambda self, filename: (save(self, filename), die())
else:
    from keiri_agent.blocks.base import BlockContext

    BlockContext.log = die  # write_report logs once the file is in place
from keiri_agent.plan import PlanRunner

with PlanRunner(runs_dir=Path(runs), config={}, env={}) as runner:
    runner.run(plan)
"""

PLAN = """
id: report
graph:
  - id: write
    block: excel.write_report
    in:
      sheets: [{{name: 売上, rows: [{{品目: りんご, 金額: 100}}]}}]
      output_path: {output}
"""


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("moment", ["before_rename", "after_rename"])
def test_resume_after_kill_replaces_own_output_and_removes_temp_files(
    tmp_path: Path, moment: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "report.xlsx"
    plan = tmp_path / "report.yaml"
    plan.write_text(PLAN.format(output=target), encoding="utf-8")
    runs = tmp_path / "runs"

    child = subprocess.run(
        [sys.executable, "-c", CHILD, moment, str(plan), str(runs)],
        capture_output=True,
        timeout=300,
        check=False,
    )

    assert child.returncode == -9, child.stderr.decode()[-2000:]
    if moment == "before_rename":
        assert not target.exists()
        assert hidden(out), "the killed write should have left its temporary file"
    else:
        assert target.exists()
    (log,) = runs.rglob("*.jsonl")

    with PlanRunner(default_registry(), runs_dir=runs, config={}, env={}) as runner:
        resumed = runner.resume(log)

        assert resumed.status == "success", resumed.error
        assert hidden(out) == []
        book = load_workbook(target)
        assert [c.value for c in book["売上"][2]] == ["りんご", 100]
        # Only the resume of that run may replace it: a new run still refuses.
        fresh = runner.run(plan)
    assert fresh.status == "failed"
    assert isinstance(fresh.error, BlockError)
    assert "既にあります" in fresh.error.message
