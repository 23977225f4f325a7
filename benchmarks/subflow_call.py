"""Which plan a subflow call of a self-started run runs: the cost of one resolution
(``plan._graph.saved.call_plan_id``) in a store of many plans with long histories.

A store of ``--plans`` plans, each with ``--versions`` saved versions (each saved from its own
file under ``designs/``, kept absolute as ``plan save`` keeps it), one of them saved from
``designs/lib/double.yaml``; the call is ``lib/double``. The source tree of ``--before REF``
(exported with ``git archive``) and this tree each resolve the call ``--runs`` times in a child
process of their own on the same store, alternating; printed: the median per resolution of
each and their ratio (one run, one machine, one load).

Run: ``python -m benchmarks.subflow_call [--plans 200] [--versions 20] [--runs 5] [--before integ]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
from keiri_agent.config import Settings
from keiri_agent.plan._graph.saved import call_plan_id
settings = Settings(keiri_designs_dir=sys.argv[1], keiri_run_log_fsync=False)
start = time.perf_counter()
found = call_plan_id("lib/double", settings)
print(json.dumps({"s": time.perf_counter() - start, "id": found}))
"""


def build(designs: Path, plans: int, versions: int) -> None:
    from keiri_agent.versions import SaveNote, VersionStore

    store = VersionStore(designs / ".versions", durable=False)
    for p in range(plans):
        plan_id = "double" if p == plans // 2 else f"keiri/plan_{p:03d}"
        file = designs / ("lib/double.yaml" if plan_id == "double" else f"{plan_id}.yaml")
        for v in range(versions):
            text = f"id: {plan_id}\nnodes: []\n# 改訂 {v}\n"
            store.save(plan_id, text, SaveNote(author="sato", source="cli", file=str(file)))


def resolve(src: Path, designs: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src), "KEIRI_WORKSPACE_ROOT": str(designs.parent)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(designs)], env=env, capture_output=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plans", type=int, default=200)
    parser.add_argument("--versions", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", default="integ")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        before = root / "before"
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(HERE), "archive", args.before, "src"], capture_output=True, check=True
        ).stdout
        archive_path = root / "before.tar"
        archive_path.write_bytes(archive)
        with tarfile.open(archive_path) as tar:
            tar.extractall(before, filter="data")
        designs = root / "designs"
        build(designs, args.plans, args.versions)
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(args.runs):
            for side, src in (("before", before / "src"), ("after", HERE / "src")):
                result = resolve(src, designs)
                assert result["id"] == "double", result
                times[side].append(float(str(result["s"])))
        b, a = (statistics.median(times[s]) for s in ("before", "after"))
        print(f"{args.plans} plans x {args.versions} versions, call lib/double -> double")
        print(f"{args.before}: {b * 1000:.1f} ms  this tree: {a * 1000:.1f} ms  ratio {b / a:.1f}x")


if __name__ == "__main__":
    main()
