"""``table.compute`` on a 1,000,000-row ledger in a plan, against the same pandas code (issue 42).

The ledger is ``ledger_scale.py``'s generated CP932 売上明細. Each measured command runs in a
fresh interpreter, which reports its own wall time and peak resident set (``VmHWM``):

* **keiri-agent**: ``PlanRunner.run`` of a plan that reads the ledger (``file.read_table``),
  computes seven columns with ``table.compute`` -- 消費税 (rounddown of 10 %), 税込, 税抜 (a
  quotient rounded to the yen), a check of 数量 × 単価 against 金額, 区分 (an ``if`` with text),
  経過日数 (days from a date column) and a text concatenation -- and totals them by 区分 with
  ``table.aggregate``; the run log and stored outputs are written as a user's run writes them;
* **pandas**: ``read_csv`` (CP932, thousands separator, dates), the same seven columns with
  vectorized pandas / numpy, and ``groupby`` totals: what a person would script.

Both sides' totals must agree. The goal: keiri-agent within 3x the script's wall time and 2x its
peak RSS. ``file.read_table`` dominates the plan; ``--step`` measures the computing alone: each
child loads the same typed ledger (Parquet written by the parent) and times only the seven
columns -- ``table.compute`` as the runner calls a block (input schema, ``check_inputs``, ``run``,
output schema check by columns) against the seven pandas lines -- and reports its peak RSS.

    python benchmarks/compute_scale.py [--rows 100000 1000000] [--repeat 1] [--step]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import ledger_scale

COLUMNS = [
    {"name": "消費税", "expr": "rounddown([金額] * 0.1, 0)"},
    {"name": "税込", "expr": "[金額] + [消費税]"},
    {"name": "税抜", "expr": "round([金額] / 1.1, 0)"},
    {"name": "照合", "expr": "[数量] * [単価] = [金額]"},
    {"name": "区分", "expr": 'if([金額] >= 1000000, "大口", "通常")'},
    {"name": "経過日数", "expr": 'days("2025-12-31", [売上日])'},
    {"name": "宛名", "expr": '[得意先] & " 様"'},
]
PLAN = {
    "apiVersion": "v1",
    "id": "bench/ledger_compute",
    "version": "1.0.0",
    "graph": [
        {
            "id": "collect_inputs",
            "block": "ui.interactive_input",
            "in": {
                "mode": "collect",
                "message": "売上明細",
                "requirements": [{"id": "sales_file", "type": "file", "label": "売上明細"}],
            },
            "out": {"collected_data": "collected"},
        },
        {
            "id": "read_sales",
            "block": "file.read_table",
            "in": {"path": "${collect_inputs.collected.sales_file}"},
            "out": {"rows": "sales"},
        },
        {
            "id": "compute",
            "block": "table.compute",
            "in": {"table": "${read_sales.sales}", "columns": COLUMNS},
        },
        {
            "id": "by_class",
            "block": "table.aggregate",
            "in": {
                "table": "${compute.rows}",
                "group_by": ["区分"],
                "aggregations": [
                    {"column": "消費税", "func": "sum", "as": "消費税"},
                    {"column": "税込", "func": "sum", "as": "税込"},
                    {"column": "税抜", "func": "sum", "as": "税抜"},
                    {"column": "経過日数", "func": "sum", "as": "経過日数"},
                    {"column": "照合", "func": "count", "as": "件数"},
                ],
            },
        },
    ],
}


def run_keiri(ledger: Path, work: Path) -> dict[str, Any]:
    from keiri_agent.plan import PlanRunner

    plan = work / "ledger_compute.yaml"
    plan.write_text(json.dumps(PLAN, ensure_ascii=False), encoding="utf-8")  # JSON is YAML
    started = time.perf_counter()
    with PlanRunner(runs_dir=work / "runs", designs_dir=work) as runner:
        result = runner.run(plan, answers={"collect_inputs": {"sales_file": str(ledger)}})
    seconds = time.perf_counter() - started
    if result.status != "success":
        raise SystemExit(f"the plan failed: {result.error and result.error.to_dict()}")
    rows = result.outputs["by_class"]["rows"]
    totals = {
        str(r["区分"]): [int(r[k]) for k in ("消費税", "税込", "税抜", "経過日数")] for r in rows
    }
    return {"seconds": seconds, "totals": totals}


def run_pandas(ledger: Path, work: Path) -> dict[str, Any]:
    started = time.perf_counter()
    frame = read_ledger(ledger)
    pandas_columns(frame)
    by_class = frame.groupby("区分").agg(
        消費税=("消費税", "sum"),
        税込=("税込", "sum"),
        税抜=("税抜", "sum"),
        経過日数=("経過日数", "sum"),
        件数=("照合", "count"),
    )
    seconds = time.perf_counter() - started
    totals = {
        str(name): [int(row[k]) for k in ("消費税", "税込", "税抜", "経過日数")]
        for name, row in by_class.iterrows()
    }
    return {"seconds": seconds, "totals": totals}


def pandas_columns(frame: Any) -> None:
    """The seven columns of COLUMNS, as a person writes them in pandas."""
    import numpy as np
    import pandas as pd

    amount = frame["金額"]
    frame["消費税"] = np.floor(amount * 0.1).astype("int64")
    frame["税込"] = amount + frame["消費税"]
    frame["税抜"] = np.floor(amount / 1.1 + 0.5).astype("int64")
    frame["照合"] = frame["数量"] * frame["単価"] == amount
    frame["区分"] = np.where(amount >= 1_000_000, "大口", "通常")
    frame["経過日数"] = (pd.Timestamp("2025-12-31") - frame["売上日"]).dt.days
    frame["宛名"] = frame["得意先"] + " 様"


def read_ledger(ledger: Path) -> Any:
    import pandas as pd

    return pd.read_csv(
        ledger, encoding="cp932", thousands=",", parse_dates=["売上日"], date_format="%Y/%m/%d"
    )


def step_keiri(stored: Path) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    from keiri_agent.blocks.registry import BlockRegistry
    from keiri_agent.blocks.schema import check_value, resolve_port
    from keiri_agent.documents.table_value import Table, TableOrigin

    frame = pd.read_parquet(stored)
    table = Table(frame, origin=TableOrigin("売上明細.csv"), positions=np.arange(len(frame)) + 2)
    block = BlockRegistry().load("table.compute")
    ctx = _context(stored.parent)
    inputs = {"table": table, "columns": COLUMNS, "zero_division": "error"}
    started = time.perf_counter()
    for name, value in inputs.items():
        assert check_value(value, resolve_port(block.spec.inputs[name])) is None
    block.check_inputs(inputs)
    rows = block.run(inputs, ctx)["rows"]
    assert check_value(rows, resolve_port(block.spec.outputs["rows"])) is None
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "totals": _totals(rows.frame)}


def _context(work: Path) -> Any:
    from keiri_agent.blocks.base import BlockContext

    return BlockContext(
        run_id="bench", plan_id="bench", node_id="compute", block_version="0.1.0", workspace=work
    )


def step_pandas(stored: Path) -> dict[str, Any]:
    import pandas as pd

    frame = pd.read_parquet(stored)
    started = time.perf_counter()
    pandas_columns(frame)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "totals": _totals(frame)}


def _totals(frame: Any) -> dict[str, list[int]]:
    grouped = frame.groupby("区分")[["消費税", "税込", "税抜", "経過日数"]].sum()
    return {str(k): [int(v) for v in row] for k, row in grouped.iterrows()}


def child(side: str, ledger: Path, work: Path) -> None:
    if side.startswith("step-"):
        ledger_scale.print_report((step_keiri if side == "step-keiri" else step_pandas)(ledger))
        return
    ledger_scale.print_report((run_keiri if side == "keiri" else run_pandas)(ledger, work))


def measure(side: str, ledger: Path, root: Path) -> dict[str, Any]:
    return ledger_scale.measure_side(
        __file__, side, [side, str(ledger)], root, {"MPLBACKEND": "Agg"}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per side")
    parser.add_argument("--step", action="store_true", help="time the computing alone")
    parser.add_argument("--child", nargs=3, metavar=("SIDE", "LEDGER", "WORK"))
    args = parser.parse_args()
    if args.child:
        side, ledger, work = args.child
        child(side, Path(ledger), Path(work))
        return
    what = "the seven columns alone (s in-process)" if args.step else "the plan (whole processes)"
    print(f"load average at start: {os.getloadavg()[0]:.2f}; measured: {what}")
    print(
        "| rows | keiri-agent s | keiri-agent MB | pandas s | pandas MB | time ratio | memory ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rows in args.rows:
            ledger = root / f"売上明細_{rows}.csv"
            ledger_scale.make_ledger(ledger, rows)
            source = ledger
            if args.step:
                source = root / f"売上明細_{rows}.parquet"
                read_ledger(ledger).to_parquet(source, index=False)
            sides = ("step-pandas", "step-keiri") if args.step else ("pandas", "keiri")
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side in sides:
                    got = measure(side, source, root)
                    key = "seconds" if args.step else "process_s"
                    if side not in best or got[key] < best[side][key]:
                        best[side] = got
            p, k = (best[side] for side in sides)
            if k["totals"] != p["totals"]:
                raise SystemExit(f"different totals: {k['totals']} vs {p['totals']}")
            key = "seconds" if args.step else "process_s"
            time_ratio = k[key] / p[key]
            memory_ratio = k["peak_mb"] / p["peak_mb"]
            print(
                f"| {rows:,} | {k[key]:.2f} | {k['peak_mb']:.0f} | {p[key]:.2f} "
                f"| {p['peak_mb']:.0f} | {time_ratio:.2f}x | {memory_ratio:.2f}x |",
                flush=True,
            )
    print(
        f"goal at 1,000,000 rows: time <= {ledger_scale.TIME_GOAL}x, "
        f"memory <= {ledger_scale.MEMORY_GOAL}x "
        "(whole processes: start-up and imports included on both sides; with --step, the "
        "computing alone and each process's peak)"
    )


if __name__ == "__main__":
    main()
