"""A ledger of 100,000 / 300,000 / 1,000,000 rows joined to a customer master and checked for
double entries in a plan (``table.join``, ``table.dedupe``), against a plain pandas script
doing the same work, in the same run (issue 42).

The ledger is ``ledger_scale.make_ledger``'s 売上明細 (CP932, ``2025/01/20`` dates, amounts as
``"450,000"``); the master names the same customers the way a second system does, with
full-width digits (``株式会社００１``), and gives each a 担当者 and 地域. Each measured command
runs in a fresh interpreter, which reports its own wall time and peak resident set (``VmHWM``):

* **keiri-agent**: ``PlanRunner.run`` of a plan reading both files (``file.read_table``),
  joining them on 得意先 (``table.join``, how: left; keys compared after NFKC, trimming and
  casefold) and looking for double entries (``table.dedupe``: the same 売上日 and 金額 and a
  customer name alike at 90, company forms aside), the run log and stored outputs written as a
  user's run writes them;
* **pandas**: ``read_csv`` of both, the keys normalized with ``.str.normalize("NFKC")``,
  ``strip`` and ``casefold``, ``merge(how="left")``, then ``duplicated`` on 売上日, 金額 and the
  name without company forms (exact: the plan does more, a similarity within each block), the
  unique and duplicate rows written to Parquet: what a person would script.

The goal: keiri-agent within 3x the script's wall time and 2x its peak RSS at 1,000,000 rows.
The CPU time of each process (user + system, all threads) is printed too: on a machine shared
with other work the wall times move with the load, CPU times much less. So is the time of the
two blocks alone (their nodes' durations in the run log) beside the script's same steps (keys,
merge, duplicates: after reading, before writing), which sets the blocks apart from reading
the file and storing outputs.

    python benchmarks/ledger_join_dedupe.py [--rows 100000 300000 1000000] [--repeat 1]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ledger_scale import make_ledger, measure_side, print_report  # noqa: E402

TIME_GOAL = 3.0
MEMORY_GOAL = 2.0
THRESHOLD = 90  # the plan's fuzzy.threshold
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
COMPANY_FORMS = r"株式会社|有限会社|\(株\)|\(有\)"

PLAN = f"""\
apiVersion: v1
id: benchmarks/ledger_join_dedupe
version: 1.0.0
vars:
  ledger: ""
  master: ""
graph:
  - id: read_ledger
    block: file.read_table
    in: {{ path: "${{vars.ledger}}" }}
    out: {{ rows: sales }}
  - id: read_master
    block: file.read_table
    in: {{ path: "${{vars.master}}" }}
    out: {{ rows: customers }}
  - id: join
    block: table.join
    in: {{ left: "${{read_ledger.sales}}", right: "${{read_master.customers}}", on: 得意先, how: left }}
    out: {{ rows: joined }}
  - id: dedupe
    block: table.dedupe
    in:
      table: "${{join.joined}}"
      keys: [売上日, 金額]
      fuzzy: {{ column: 得意先, threshold: {THRESHOLD} }}
"""


def make_master(path: Path) -> None:
    """The customers of ``make_ledger`` (same names, in full-width digits), with a 担当者 and 地域."""
    names = [f"{form}{i:03d}" for i in range(40) for form in ("株式会社", "有限会社")]
    names += [f"取引先{i:03d}" for i in range(120)]
    lines = ["得意先,担当者,地域"]
    for n, name in enumerate(names):
        lines.append(f"{name.translate(_FULL_WIDTH)},担当{n % 9},{('東日本', '西日本')[n % 2]}")
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))


def run_keiri(ledger: Path, master: Path, work: Path) -> dict[str, Any]:
    from keiri_agent.plan import PlanRunner

    plan = work / "ledger_join_dedupe.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    started = time.perf_counter()
    with PlanRunner(runs_dir=work / "runs", designs_dir=work) as runner:
        result = runner.run(plan, vars={"ledger": str(ledger), "master": str(master)})
    seconds = time.perf_counter() - started
    if result.status != "success":
        raise SystemExit(f"the plan failed: {result.error and result.error.to_dict()}")
    joined = result.outputs["join"]["summary"]
    found = result.outputs["dedupe"]["summary"]
    return {
        "seconds": seconds,
        "blocks_s": _node_seconds(result.log_path, ("join", "dedupe")),
        "joined": joined["output_rows"],
        "matched": joined["matched"],
        "duplicates": found["duplicate_rows"],
    }


def _node_seconds(log: Path | None, nodes: tuple[str, ...]) -> float:
    """How long ``nodes`` ran, from their ``node_complete`` events in the run log."""
    if log is None:
        raise SystemExit("the run wrote no log")
    total = 0.0
    for line in log.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "node_complete" and event.get("node_id") in nodes:
            total += event["duration_ms"] / 1000
    return total


def run_pandas(ledger: Path, master: Path, work: Path) -> dict[str, Any]:
    import pandas as pd

    started = time.perf_counter()
    sales = pd.read_csv(
        ledger,
        encoding="cp932",
        thousands=",",
        parse_dates=["売上日"],
        date_format="%Y/%m/%d",
    )
    customers = pd.read_csv(master, encoding="cp932")
    read = time.perf_counter()

    def key(column: pd.Series) -> pd.Series:
        return column.str.normalize("NFKC").str.strip().str.casefold()

    sales["_key"] = key(sales["得意先"])
    customers["_key"] = key(customers.pop("得意先"))
    joined = sales.merge(customers, on="_key", how="left").drop(columns="_key")
    name = (
        joined["得意先"]
        .str.normalize("NFKC")
        .str.replace(COMPANY_FORMS, "", regex=True)
        .str.replace(r"\s+", "", regex=True)
        .str.casefold()
    )
    twice = joined.assign(_name=name).duplicated(subset=["売上日", "金額", "_name"])
    unique, duplicates = joined[~twice], joined[twice]
    blocks = time.perf_counter() - read
    unique.to_parquet(work / "unique.parquet", index=False)
    duplicates.to_parquet(work / "duplicates.parquet", index=False)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "blocks_s": blocks,
        "joined": len(joined),
        "matched": int(joined["担当者"].notna().sum()),
        "duplicates": int(twice.sum()),
    }


def child(side: str, ledger: Path, master: Path, work: Path) -> None:
    run = run_keiri if side == "keiri" else run_pandas
    print_report(run(ledger, master, work))


def measure(side: str, ledger: Path, master: Path, root: Path) -> dict[str, Any]:
    return measure_side(__file__, side, [side, str(ledger), str(master)], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per side")
    parser.add_argument("--child", nargs=4, metavar=("SIDE", "LEDGER", "MASTER", "WORK"))
    args = parser.parse_args()
    if args.child:
        side, ledger, master, work = args.child
        child(side, Path(ledger), Path(master), Path(work))
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| rows | keiri-agent s | keiri-agent MB | pandas s | pandas MB | time ratio "
        "| memory ratio | CPU ratio | join + dedupe s (keiri / pandas) | duplicates (keiri / pandas) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        master = root / "得意先マスタ.csv"
        make_master(master)
        for rows in args.rows:
            ledger = root / f"売上明細_{rows}.csv"
            make_ledger(ledger, rows)
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side in ("pandas", "keiri"):
                    got = measure(side, ledger, master, root)
                    if side not in best or got["process_s"] < best[side]["process_s"]:
                        best[side] = got
            k, p = best["keiri"], best["pandas"]
            if (k["joined"], k["matched"]) != (p["joined"], p["matched"]):
                raise SystemExit(f"different joins: {k} vs {p}")
            print(
                f"| {rows:,} | {k['process_s']:.1f} | {k['peak_mb']:.0f} | {p['process_s']:.1f} "
                f"| {p['peak_mb']:.0f} | {k['process_s'] / p['process_s']:.2f}x "
                f"| {k['peak_mb'] / p['peak_mb']:.2f}x | {k['cpu_s'] / p['cpu_s']:.2f}x "
                f"| {k['blocks_s']:.1f} / {p['blocks_s']:.1f} "
                f"| {k['duplicates']:,} / {p['duplicates']:,} |",
                flush=True,
            )
    print(
        f"goal at 1,000,000 rows: time <= {TIME_GOAL}x, memory <= {MEMORY_GOAL}x "
        "(whole processes: start-up and imports included on both sides)"
    )


if __name__ == "__main__":
    main()
