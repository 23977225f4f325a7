"""入金消込 at ledger scale: a 請求一覧 of 100,000 / 1,000,000 rows against a 入金明細 of as many
rows, keyed by 取引先, amounts within a fee's tolerance and dates within days, in a plan
(``table.reconcile``) against the plain pandas script doing the same work, in the same run
(issue 42).

The files are generated as a company's exports: CP932, CRLF, ``2025/01/31`` dates, amounts as
``"110,000"``. 50,000 customers have about 20 invoices each (amounts distinct per customer);
95% of the invoices are paid, by a deposit within three days of the due date, 15% of them less a
440 or 660 yen bank fee; the bank writes the customer's name with full-width digits and a space
after the company form (``株式会社 テスト００１２３``); 5% more deposits are amounts no invoice
has. Each measured command runs in a fresh interpreter, which reports its own wall time and peak
resident set (``VmHWM``):

* **keiri-agent**: ``PlanRunner.run`` of a plan reading both files (``file.read_table``) and
  reconciling them (``table.reconcile``: keys compared after NFKC, whitespace removal and
  casefold, ``tolerance: 1000``, ``tolerance_days: 5``), the run log and stored outputs written
  as a user's run writes them;
* **pandas**: ``read_csv`` of both, the keys normalized with ``.str.normalize("NFKC")``,
  whitespace removed and ``casefold`` (once per distinct name, as the block does: over every
  row it takes seconds), a ``merge`` on key and amount kept within the days, then
  the tolerance pass (the rest merged on the key, kept within both tolerances, the smallest
  difference first), unmatched rows found with ``isin``, the three tables written to Parquet:
  what a person would script (it pairs no differences: the block does that as well).

Both sides must find the same matched pairs (count and total of 差額), or the script stops.
The time of the block alone (its node's duration in the run log) is printed beside the
script's same steps (after reading, before writing).

    python benchmarks/reconcile_scale.py [--rows 100000 1000000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.ledger_scale import (  # noqa: E402
    MEMORY_GOAL,
    TIME_GOAL,
    measure_side,
    print_report,
)

CUSTOMERS = 50_000
TOLERANCE = 1000  # yen: the largest bank fee taken from a payment
TOLERANCE_DAYS = 5
FEES = (440, 660)
_FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
FORMS = ("株式会社", "有限会社", "合同会社")

PLAN = f"""\
apiVersion: v1
id: benchmarks/reconcile_scale
version: 1.0.0
vars:
  invoices: ""
  deposits: ""
graph:
  - id: read_invoices
    block: file.read_table
    in: {{ path: "${{vars.invoices}}" }}
    out: {{ rows: invoices }}
  - id: read_deposits
    block: file.read_table
    in: {{ path: "${{vars.deposits}}" }}
    out: {{ rows: deposits }}
  - id: reconcile
    block: table.reconcile
    in:
      left: "${{read_invoices.invoices}}"
      right: "${{read_deposits.deposits}}"
      keys: [{{ left: 取引先, right: 振込名義 }}]
      amount: {{ left: 請求金額, right: 入金額, tolerance: {TOLERANCE} }}
      date: {{ left: 支払期日, right: 入金日, tolerance_days: {TOLERANCE_DAYS} }}
"""


def make_files(invoices: Path, deposits: Path, rows: int, seed: int = 42) -> None:
    """A 請求一覧 of ``rows`` rows and a 入金明細 of ``rows`` rows (CP932, CRLF)."""
    rng = random.Random(seed)
    customers = min(CUSTOMERS, max(rows // 20, 1))
    issued = [0] * customers
    start = dt.date(2025, 1, 1)
    invoice_lines = ["請求番号,取引先,請求日,支払期日,請求金額"]
    paid: list[tuple[dt.date, str]] = []
    for n in range(rows):
        customer = rng.randrange(customers)
        # The k-th invoice of a customer: 13 is prime to 300, so its amounts are distinct.
        amount = 10_000 * (1 + (customer * 7 + issued[customer] * 13) % 300)
        issued[customer] += 1
        day = start + dt.timedelta(days=rng.randrange(330))
        due = dt.date(day.year + day.month // 12, day.month % 12 + 1, 1) + dt.timedelta(days=27)
        form, number = FORMS[customer % 3], f"{customer:05d}"
        invoice_lines.append(
            f'INV{n + 1:07d},{form}テスト{number},{day:%Y/%m/%d},{due:%Y/%m/%d},"{amount:,}"'
        )
        if len(paid) < rows and rng.random() < 0.95:
            fee = rng.choice(FEES) if rng.random() < 0.15 else 0
            when = due + dt.timedelta(days=rng.randint(-3, 3))
            name = f"{form} テスト{number.translate(_FULL_WIDTH)}"
            paid.append((when, f'{when:%Y/%m/%d},{name},"{amount - fee:,}"'))
    while len(paid) < rows:  # deposits no invoice explains: 5,000 yen off any invoice amount
        customer = rng.randrange(customers)
        when = start + dt.timedelta(days=rng.randrange(365))
        amount = 10_000 * rng.randint(1, 300) + 5_000
        name = f"{FORMS[customer % 3]} テスト{f'{customer:05d}'.translate(_FULL_WIDTH)}"
        paid.append((when, f'{when:%Y/%m/%d},{name},"{amount:,}"'))
    paid.sort(key=lambda item: item[0])  # a bank statement is in date order
    deposit_lines = ["入金日,振込名義,入金額", *(line for _, line in paid)]
    invoices.write_bytes(("\r\n".join(invoice_lines) + "\r\n").encode("cp932"))
    deposits.write_bytes(("\r\n".join(deposit_lines) + "\r\n").encode("cp932"))


def run_keiri(invoices: Path, deposits: Path, work: Path) -> dict[str, Any]:
    from keiri_agent.plan import PlanRunner

    plan = work / "reconcile_scale.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    with PlanRunner(runs_dir=work / "runs", designs_dir=work) as runner:
        result = runner.run(plan, vars={"invoices": str(invoices), "deposits": str(deposits)})
    if result.status != "success" or result.log_path is None:
        raise SystemExit(f"the plan failed: {result.error and result.error.to_dict()}")
    out = result.outputs["reconcile"]
    matched = out["matched"]
    took: dict[str, float] = {}  # node → seconds, from the run log
    reading: list[dt.datetime] = []  # the two reads run side by side: their span
    for line in result.log_path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "node_complete":
            took[event["node_id"]] = event["duration_ms"] / 1000
        if event.get("event") in ("node_start", "node_complete") and event.get(
            "node_id", ""
        ).startswith("read_"):
            reading.append(dt.datetime.fromisoformat(event["timestamp"]))
    return {
        "made": {"matched": len(matched), "difference": int(matched.frame["差額"].sum())},
        "differences": len(out["differences"]),
        "read_s": (max(reading) - min(reading)).total_seconds(),
        "blocks_s": took["reconcile"],
    }


def run_pandas(invoices: Path, deposits: Path, work: Path) -> dict[str, Any]:
    import pandas as pd

    began = time.perf_counter()
    left, right = (
        pd.read_csv(
            path, encoding="cp932", thousands=",", parse_dates=columns, date_format="%Y/%m/%d"
        )
        for path, columns in ((invoices, ["請求日", "支払期日"]), (deposits, ["入金日"]))
    )
    started = time.perf_counter()

    def key(column: pd.Series) -> Any:
        # Once per distinct name (a vectorized pass over a million names costs seconds).
        codes, names = pd.factorize(column)
        text = pd.Series(names).str.normalize("NFKC").str.replace(r"\s+", "", regex=True)
        return text.str.casefold().to_numpy()[codes]

    left["_key"], left["_left"] = key(left["取引先"]), range(len(left))
    right["_key"], right["_right"] = key(right["振込名義"]), range(len(right))
    exact = left.merge(
        right, left_on=["_key", "請求金額"], right_on=["_key", "入金額"], how="inner"
    )
    exact = exact[(exact["入金日"] - exact["支払期日"]).dt.days.abs() <= TOLERANCE_DAYS]
    exact = exact.drop_duplicates("_left").drop_duplicates("_right")
    rest = left[~left["_left"].isin(exact["_left"])].merge(
        right[~right["_right"].isin(exact["_right"])], on="_key", how="inner"
    )
    rest["_amount"] = (rest["入金額"] - rest["請求金額"]).abs()
    rest["_days"] = (rest["入金日"] - rest["支払期日"]).dt.days.abs()
    near = rest[(rest["_amount"] <= TOLERANCE) & (rest["_days"] <= TOLERANCE_DAYS)]
    near = near.sort_values(["_amount", "_days", "_left", "_right"], kind="stable")
    near = near.drop_duplicates("_left").drop_duplicates("_right")
    matched = pd.concat([exact, near.drop(columns=["_amount", "_days"])], ignore_index=True)
    matched = matched.sort_values("_left", kind="stable")
    matched["差額"] = matched["入金額"] - matched["請求金額"]
    matched["日数差"] = (matched["入金日"] - matched["支払期日"]).dt.days
    unmatched_left = left[~left["_left"].isin(matched["_left"])]
    unmatched_right = right[~right["_right"].isin(matched["_right"])]
    blocks = time.perf_counter() - started
    matched.to_parquet(work / "matched.parquet", index=False)
    unmatched_left.to_parquet(work / "unmatched_left.parquet", index=False)
    unmatched_right.to_parquet(work / "unmatched_right.parquet", index=False)
    return {
        "made": {"matched": len(matched), "difference": int(matched["差額"].sum())},
        "read_s": started - began,
        "blocks_s": blocks,
    }


def child(side: str, invoices: Path, deposits: Path, work: Path) -> None:
    run = run_keiri if side == "keiri" else run_pandas
    print_report(run(invoices, deposits, work))


def measure(side: str, invoices: Path, deposits: Path, root: Path) -> dict[str, Any]:
    return measure_side(__file__, side, [side, str(invoices), str(deposits)], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs per side")
    parser.add_argument("--child", nargs=4, metavar=("SIDE", "INVOICES", "DEPOSITS", "WORK"))
    args = parser.parse_args()
    if args.child:
        side, invoices, deposits, work = args.child
        child(side, Path(invoices), Path(deposits), Path(work))
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| rows (each side) | keiri-agent s | keiri-agent MB | pandas s | pandas MB | time ratio "
        "| memory ratio | CPU ratio | reading s (keiri / pandas) | reconcile s (keiri / pandas) "
        "| matched | differences |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rows in args.rows:
            invoices, deposits = root / f"請求一覧_{rows}.csv", root / f"入金明細_{rows}.csv"
            make_files(invoices, deposits, rows)
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side in ("pandas", "keiri"):
                    got = measure(side, invoices, deposits, root)
                    if side not in best or got["process_s"] < best[side]["process_s"]:
                        best[side] = got
            k, p = best["keiri"], best["pandas"]
            if k["made"] != p["made"]:
                raise SystemExit(f"different pairs: keiri-agent {k['made']}, pandas {p['made']}")
            print(
                f"| {rows:,} | {k['process_s']:.1f} | {k['peak_mb']:.0f} | {p['process_s']:.1f} "
                f"| {p['peak_mb']:.0f} | {k['process_s'] / p['process_s']:.2f}x "
                f"| {k['peak_mb'] / p['peak_mb']:.2f}x | {k['cpu_s'] / p['cpu_s']:.2f}x "
                f"| {k['read_s']:.1f} / {p['read_s']:.1f} "
                f"| {k['blocks_s']:.1f} / {p['blocks_s']:.1f} "
                f"| {k['made']['matched']:,} | {k['differences']:,} |",
                flush=True,
            )
    print(
        f"goal at 1,000,000 rows: time <= {TIME_GOAL}x, memory <= {MEMORY_GOAL}x "
        "(whole processes: start-up and imports included on both sides)"
    )


if __name__ == "__main__":
    main()
