"""A ledger of 100,000 / 300,000 / 1,000,000 rows through the ``monthly_sales_report`` example,
against a plain pandas script doing the same work, in the same run (issue 42).

The ledger is generated as a company's 売上明細 export: CP932, CRLF, ``2025/01/20`` dates,
amounts as ``"450,000"``, 200 customers, 5 product categories. Each measured command runs in a
fresh interpreter (``subprocess``), which reports its own wall time and peak resident set
(``VmHWM``), so neither side inherits the other's memory:

* **keiri-agent**: ``PlanRunner.run`` of ``designs/examples/monthly_sales_report.yaml`` with the
  ledger as the answer to its input node (read, three aggregations, a chart, Markdown, Excel),
  the run log and stored outputs written as a user's run writes them;
* **pandas**: ``read_csv`` (CP932, thousands separator), month / category / customer totals
  with ``groupby``, a matplotlib bar chart, ``to_markdown`` and ``to_excel`` (openpyxl) of the
  three tables: what a person would script.

The goal: keiri-agent within 3x the script's wall time and 2x its peak RSS at 1,000,000 rows.

    python benchmarks/ledger_scale.py [--rows 100000 300000 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TIME_GOAL = 3.0
MEMORY_GOAL = 2.0
CATEGORIES = ["サービス", "事務用品", "機器", "ソフトウェア", "消耗品"]
PRODUCTS = {
    "サービス": [("保守サポート", 150000), ("設置作業", 30000)],
    "事務用品": [("ボールペン（10本）", 1200), ("コピー用紙", 4500)],
    "機器": [("ノートPC", 180000), ("モニター", 32000)],
    "ソフトウェア": [("会計ソフト年間", 96000), ("ウイルス対策", 6800)],
    "消耗品": [("トナー", 12800), ("インク", 3800)],
}


def make_ledger(path: Path, rows: int, seed: int = 42) -> None:
    """A CP932 売上明細 of ``rows`` rows (same columns as the example's sample data)."""
    rng = random.Random(seed)
    customers = [f"{name}{i:03d}" for i in range(40) for name in ("株式会社", "有限会社")] + [
        f"取引先{i:03d}" for i in range(120)
    ]
    lines = ["売上日,伝票番号,得意先,商品区分,商品名,数量,単価,金額"]
    for n in range(rows):
        month = rng.randint(1, 12)
        day = rng.randint(1, 28)
        category = rng.choice(CATEGORIES)
        product, price = rng.choice(PRODUCTS[category])
        quantity = rng.randint(1, 30)
        amount = price * quantity
        lines.append(
            f"2025/{month:02d}/{day:02d},S{n + 1:07d},{rng.choice(customers)},{category},"
            f'{product},{quantity},{price},"{amount:,}"'
        )
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))


def status_mb(field: str) -> float:
    """A memory figure of this process from ``/proc/self/status`` (``VmHWM``, ``VmRSS``), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"/proc/self/status has no {field} (Linux only)")


def peak_mb() -> float:
    return status_mb("VmHWM")


def print_report(report: dict[str, Any]) -> None:
    """A child side's last line: its report with the process's peak RSS and CPU time (every
    thread; less moved by other load than wall time)."""
    report["peak_mb"] = peak_mb()
    times = os.times()
    report["cpu_s"] = times.user + times.system
    print(json.dumps(report, ensure_ascii=False))


def measure_side(
    script: str, side: str, args: list[str], root: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``script --child *args WORK`` in a fresh process (``WORK``: a new folder under
    ``root``) and return the report it printed last, with ``process_s``: its wall time,
    start-up and imports included. The run log is synced as by default (fsync on)."""
    work = Path(tempfile.mkdtemp(prefix=f"{side}-", dir=root))
    environment = {**os.environ, "KEIRI_RUN_LOG_FSYNC": "true", **(env or {})}
    command = [sys.executable, script, "--child", *args, str(work)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{side} failed:\n{done.stdout}\n{done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report["process_s"] = wall
    return report


def run_keiri(ledger: Path, work: Path) -> dict[str, Any]:
    from keiri_agent.examples import example_plan
    from keiri_agent.plan import PlanRunner

    started = time.perf_counter()
    with PlanRunner(runs_dir=work / "runs", designs_dir=work) as runner:
        result = runner.run(
            example_plan("monthly_sales_report"),
            answers={"collect_inputs": {"sales_file": str(ledger)}},
        )
    seconds = time.perf_counter() - started
    if result.status != "success":
        raise SystemExit(f"the plan failed: {result.error and result.error.to_dict()}")
    months = result.outputs["by_month"]["rows"]
    return {"seconds": seconds, "months": len(months)}


def run_pandas(ledger: Path, work: Path) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    started = time.perf_counter()
    frame = pd.read_csv(
        ledger,
        encoding="cp932",
        thousands=",",
        usecols=["売上日", "伝票番号", "得意先", "商品区分", "金額"],
        parse_dates=["売上日"],
        date_format="%Y/%m/%d",
    )
    frame["月"] = frame["売上日"].dt.strftime("%Y-%m")
    by_month = frame.groupby("月").agg(売上金額=("金額", "sum"), 件数=("伝票番号", "count"))
    by_category = (
        frame.groupby("商品区分")
        .agg(売上金額=("金額", "sum"), 件数=("伝票番号", "count"))
        .sort_values("売上金額", ascending=False)
    )
    by_customer = (
        frame.groupby("得意先")
        .agg(売上金額=("金額", "sum"))
        .sort_values("売上金額", ascending=False)
    )
    figure, axes = plt.subplots(figsize=(8, 4.5))
    axes.bar(by_month.index, by_month["売上金額"])
    figure.savefig(work / "月別売上.png", dpi=150)
    plt.close(figure)
    text = "\n\n".join(t.to_markdown() for t in (by_month, by_category, by_customer))
    (work / "月次売上レポート.md").write_text(text, encoding="utf-8")
    with pd.ExcelWriter(work / "月次売上.xlsx", engine="openpyxl") as writer:
        by_month.to_excel(writer, sheet_name="月別")
        by_category.to_excel(writer, sheet_name="商品区分別")
        by_customer.to_excel(writer, sheet_name="得意先別")
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "months": len(by_month)}


def child(side: str, ledger: Path, work: Path) -> None:
    run = run_keiri if side == "keiri" else run_pandas
    print_report(run(ledger, work))


def measure(side: str, ledger: Path, root: Path) -> dict[str, Any]:
    return measure_side(__file__, side, [side, str(ledger)], root, {"MPLBACKEND": "Agg"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per side")
    parser.add_argument("--child", nargs=3, metavar=("SIDE", "LEDGER", "WORK"))
    args = parser.parse_args()
    if args.child:
        side, ledger, work = args.child
        child(side, Path(ledger), Path(work))
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| rows | keiri-agent s | keiri-agent MB | pandas s | pandas MB | time ratio | memory ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rows in args.rows:
            ledger = root / f"売上明細_{rows}.csv"
            make_ledger(ledger, rows)
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side in ("pandas", "keiri"):
                    got = measure(side, ledger, root)
                    if side not in best or got["process_s"] < best[side]["process_s"]:
                        best[side] = got
            k, p = best["keiri"], best["pandas"]
            if k["months"] != p["months"]:
                raise SystemExit(f"different month counts: {k['months']} vs {p['months']}")
            time_ratio = k["process_s"] / p["process_s"]
            memory_ratio = k["peak_mb"] / p["peak_mb"]
            print(
                f"| {rows:,} | {k['process_s']:.1f} | {k['peak_mb']:.0f} | {p['process_s']:.1f} "
                f"| {p['peak_mb']:.0f} | {time_ratio:.2f}x | {memory_ratio:.2f}x |",
                flush=True,
            )
    print(
        f"goal at 1,000,000 rows: time <= {TIME_GOAL}x, memory <= {MEMORY_GOAL}x "
        "(whole processes: start-up and imports included on both sides)"
    )


if __name__ == "__main__":
    main()
