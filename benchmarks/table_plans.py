"""Table-heavy plans on a generated ledger of 1,000,000 rows, against the plain pandas script
doing the same work, in the same run (issue 42: within 3x its wall time and 2x its peak RSS).

Each plan is a YAML plan and the pandas function a person would write instead; ``--plan``
picks them by name (add a plan to ``PLANS`` to measure another block). The ledger is
``ledger_scale.make_ledger``'s CP932 売上明細 (``2025/01/20`` dates, ``"450,000"`` amounts).
Each side runs in a fresh interpreter that reports its wall time and peak resident set
(``VmHWM``); the ratio is of whole processes, start-up and imports included on both sides:

* **filter_sort** -- 上期（4〜9 月）の 10 万円以上の売上を得意先順・金額の大きい順に並べ、全売上の
  金額上位 100 件も出す: ``file.read_table`` → ``table.filter`` (a date range, an amount,
  categories) → ``table.sort`` (text, then amount descending), and ``table.sort`` with
  ``limit: 100`` over the whole ledger. pandas: ``read_csv``, boolean masks, a stable
  ``sort_values``, the two results written as Parquet (the run keeps its outputs as Parquet).

    python benchmarks/table_plans.py [--plan filter_sort] [--rows 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ledger_scale import (  # noqa: E402
    MEMORY_GOAL,
    TIME_GOAL,
    make_ledger,
    measure_side,
    print_report,
)

FILTER_SORT_PLAN = """\
apiVersion: v1
id: bench/filter_sort
version: 1.0.0
vars:
  ledger: 売上明細.csv
graph:
  - id: read_sales
    block: file.read_table
    in:
      path: ${vars.ledger}
      columns: [売上日, 伝票番号, 得意先, 商品区分, 金額]
    out:
      rows: sales

  - id: first_half
    block: table.filter
    in:
      table: ${read_sales.sales}
      conditions:
        - { column: 売上日, op: between, value: ["2025-04-01", "2025-09-30"] }
        - { column: 金額, op: ge, value: 100000 }
        - { column: 商品区分, op: in, value: [機器, ソフトウェア, サービス] }

  - id: by_customer
    block: table.sort
    in:
      table: ${first_half.rows}
      by: [{ column: 得意先 }, { column: 金額, order: desc }]

  - id: top_sales
    block: table.sort
    in:
      table: ${read_sales.sales}
      by: [{ column: 金額, order: desc }]
      limit: 100
"""


def filter_sort_pandas(ledger: Path, work: Path) -> dict[str, Any]:
    import pandas as pd

    frame = pd.read_csv(
        ledger,
        encoding="cp932",
        thousands=",",
        usecols=["売上日", "伝票番号", "得意先", "商品区分", "金額"],
        parse_dates=["売上日"],
        date_format="%Y/%m/%d",
    )
    started = time.perf_counter()
    kept = frame[
        frame["売上日"].between("2025-04-01", "2025-09-30")
        & (frame["金額"] >= 100_000)
        & frame["商品区分"].isin(["機器", "ソフトウェア", "サービス"])
    ]
    by_customer = kept.sort_values(["得意先", "金額"], ascending=[True, False], kind="stable")
    top = frame.sort_values("金額", ascending=False, kind="stable").head(100)
    work_s = time.perf_counter() - started
    by_customer.to_parquet(work / "by_customer.parquet", index=False)
    top.to_parquet(work / "top_sales.parquet", index=False)
    made = {"rows": len(by_customer), "first": str(by_customer["伝票番号"].iloc[0])}
    return {"made": made, "blocks_s": work_s}


def filter_sort_result(outputs: dict[str, Any]) -> dict[str, Any]:
    rows = outputs["by_customer"]["rows"]
    return {"rows": len(rows), "first": str(rows.frame["伝票番号"].iloc[0])}


@dataclass(frozen=True)
class BenchPlan:
    yaml: str
    # The script: {"made": facts to compare, "blocks_s": the time of the blocks' work alone}.
    pandas: Callable[[Path, Path], dict[str, Any]]
    result: Callable[[dict[str, Any]], dict[str, Any]]  # the same facts from the run's outputs
    blocks: tuple[str, ...]  # the nodes whose time is compared with "blocks_s"


PLANS = {
    "filter_sort": BenchPlan(
        FILTER_SORT_PLAN,
        filter_sort_pandas,
        filter_sort_result,
        ("first_half", "by_customer", "top_sales"),
    )
}


def run_keiri(plan: BenchPlan, ledger: Path, work: Path) -> dict[str, Any]:
    from keiri_agent.plan import PlanRunner

    path = work / "plan.yaml"
    path.write_text(plan.yaml, encoding="utf-8")
    with PlanRunner(runs_dir=work / "runs", designs_dir=work) as runner:
        result = runner.run(path, vars={"ledger": str(ledger)})
    if result.status != "success" or result.log_path is None:
        raise SystemExit(f"the plan failed: {result.error and result.error.to_dict()}")
    took: dict[str, float] = {}  # node → seconds, from the run log
    for line in result.log_path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "node_complete":
            took[event["node_id"]] = event["duration_ms"] / 1000
    return {"made": plan.result(result.outputs), "blocks_s": sum(took[n] for n in plan.blocks)}


def child(name: str, side: str, ledger: Path, work: Path) -> None:
    plan = PLANS[name]
    print_report(run_keiri(plan, ledger, work) if side == "keiri" else plan.pandas(ledger, work))


def measure(name: str, side: str, ledger: Path, root: Path) -> dict[str, Any]:
    return measure_side(__file__, side, [name, side, str(ledger)], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", choices=sorted(PLANS), default="filter_sort")
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per side")
    parser.add_argument("--child", nargs=4, metavar=("PLAN", "SIDE", "LEDGER", "WORK"))
    args = parser.parse_args()
    if args.child:
        name, side, ledger, work = args.child
        child(name, side, Path(ledger), Path(work))
        return
    print(f"plan: {args.plan}; load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| rows | keiri-agent s | keiri-agent MB | pandas s | pandas MB | time ratio "
        "| memory ratio | blocks s (keiri / pandas) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rows in args.rows:
            ledger = root / f"売上明細_{rows}.csv"
            make_ledger(ledger, rows)
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side in ("pandas", "keiri"):
                    got = measure(args.plan, side, ledger, root)
                    if side not in best or got["process_s"] < best[side]["process_s"]:
                        best[side] = got
            k, p = best["keiri"], best["pandas"]
            if k["made"] != p["made"]:
                raise SystemExit(f"different results: keiri-agent {k['made']}, pandas {p['made']}")
            print(
                f"| {rows:,} | {k['process_s']:.1f} | {k['peak_mb']:.0f} | {p['process_s']:.1f} "
                f"| {p['peak_mb']:.0f} | {k['process_s'] / p['process_s']:.2f}x "
                f"| {k['peak_mb'] / p['peak_mb']:.2f}x "
                f"| {k['blocks_s']:.2f} / {p['blocks_s']:.2f} |",
                flush=True,
            )
    print(
        f"goal at 1,000,000 rows: time <= {TIME_GOAL}x, memory <= {MEMORY_GOAL}x (whole processes). "
        "blocks s: the plan's nodes of the measured blocks (run log) / the same work in pandas "
        "on the frame it read"
    )


if __name__ == "__main__":
    main()
