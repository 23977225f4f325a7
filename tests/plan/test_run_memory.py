"""A long foreach does not keep its events in memory: peak memory grows little with the items.

Two fresh processes do the same set-up (imports, registry, plan, items); one of them also runs
a 20,000-item foreach at concurrency 8. Each reports its own peak (VmHWM, tests/plan/measure.py).
Keeping every event for the whole run cost about 4 KB per item (80 MB here); the bound below is
generous against the ~0.5 KB per item measured since (benchmarks/runner_memory.py has the
100,000-item figure).
"""

from __future__ import annotations

from pathlib import Path

from tests.plan.measure import run_measured

ITEMS = 20_000
GROWTH_LIMIT_MB = 40.0
ROOT = Path(__file__).resolve().parents[2]

SETUP = """
import sys, tempfile
from pathlib import Path
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.plan import PlanRunner, parse_source
from tests.plan.blockkit import SPEC_DIR

items = int(sys.argv[2])
PLAN = '''
id: long_foreach
vars: {items: []}
graph:
  - id: each
    type: loop
    foreach: {input: "${vars.items}", itemVar: it, max_concurrency: 8}
    body:
      plan:
        graph: [{id: step, block: test.add, in: {a: "${it}", b: 1}}]
        exports: [{from: step.sum, as: total}]
    out: {collect: total}
'''
registry = BlockRegistry([SPEC_DIR], builtin=False)
source = parse_source(PLAN)
values = list(range(items))
root = Path(tempfile.mkdtemp())
settings = Settings(_env_file=None, keiri_run_log_fsync=False)
runner = PlanRunner(
    registry, settings=settings, runs_dir=root / "runs", designs_dir=root, config={}
)
if sys.argv[1] == "run":
    result = runner.run(source, vars={"items": values})
    assert result.status == "success", (result.status, result.error)
    assert result.outputs["each"]["total"] == [v + 1 for v in values]
    print("ran", result.log_path.stat().st_size)
runner.close()
"""


def test_a_long_foreach_grows_peak_memory_by_far_less_than_its_events() -> None:
    base = run_measured(SETUP, "baseline", str(ITEMS), cwd=ROOT)
    assert base.returncode == 0, base.stderr[-3000:]
    run = run_measured(SETUP, "run", str(ITEMS), cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("ran ")
    growth = run.peak_rss_mb - base.peak_rss_mb
    assert growth < GROWTH_LIMIT_MB, (
        f"peak {run.peak_rss_mb:.0f} MB against {base.peak_rss_mb:.0f} MB without the run"
    )
