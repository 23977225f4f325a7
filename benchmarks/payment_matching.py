"""入金消込 at scale: 100,000 open invoices against 100,000 bank lines in a plan, against a
pandas merge on a normalized name and amount, in the same run (issue 35).

The data is a company's month at scale: ``--customers`` customers (default 10,000; kanji names
such as 株式会社東京山田商事 with a 取引先名カナ for 80% of them, the rest read by SudachiPy),
their open invoices (請求一覧.csv, ``--invoices``), and the bank's statement of the deposits
(入出金明細.csv, ``--lines`` lines, the payer inside the 摘要 as Internet banking exports it),
written as payers' banks write them (half-width kana, the 全銀協 form abbreviations first or
last, a code put first, fees of 440 / 660 / 880 円, two or three invoices in one transfer,
part payments, payers nobody knows). Each side runs in a fresh interpreter, which reports its
wall time, its CPU time (user + system: what the load of the machine does not change) and peak
resident set (``VmHWM``):

* **keiri-agent**: ``PlanRunner.run`` of a plan reading the three files
  (``file.read_bank_statement``, ``file.read_table`` twice) and matching them
  (``table.match_payments``), outputs stored as a user's run stores them; the match node's
  own time is taken from the run log;
* **pandas**: ``read_csv`` of the three files, the payer taken out of the 摘要, both names
  normalized with vectorized string methods (NFKC, the form abbreviations removed by one
  regex, small kana made large, the dashes one mark) and one ``merge`` on name and amount: the
  script a person would write, which matches exact amounts of known kana names only.

The goal: under 60 s and 2 GB for keiri-agent's whole process at 100,000 × 100,000, and
nothing quadratic in the number of customers (``--customers`` 1,000 / 10,000 / 30,000 give
times that grow with the lines, not the customers).

    python benchmarks/payment_matching.py [--customers 10000] [--invoices 100000] [--lines 100000]
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

from tests.support.bank_names import ABBREVIATIONS, STEMS, WORDS, half_width  # noqa: E402

from benchmarks.ledger_scale import measure_side, print_report  # noqa: E402

TIME_GOAL_S = 60.0
MEMORY_GOAL_MB = 2048.0
FEES = (440, 660, 880)
REGIONS = [
    ("東京", "トウキョウ"), ("大阪", "オオサカ"), ("名古屋", "ナゴヤ"), ("札幌", "サッポロ"),
    ("福岡", "フクオカ"), ("仙台", "センダイ"), ("広島", "ヒロシマ"), ("神戸", "コウベ"),
    ("京都", "キョウト"), ("横浜", "ヨコハマ"), ("千葉", "チバ"), ("埼玉", "サイタマ"),
    ("静岡", "シズオカ"), ("新潟", "ニイガタ"), ("金沢", "カナザワ"), ("岡山", "オカヤマ"),
    ("熊本", "クマモト"), ("長野", "ナガノ"), ("奈良", "ナラ"), ("沖縄", "オキナワ"),
    ("", ""),
]  # fmt: skip
FORMS = ["株式会社"] * 7 + ["有限会社"] * 2 + ["合同会社"]
PEOPLE = ["ﾀﾅｶ ﾀﾛｳ", "ｽｷﾞﾓﾄ ﾊﾅｺ", "ﾜﾀﾅﾍﾞ ｹﾝｼﾞ", "ｺﾊﾞﾔｼ ﾕﾐ", "ﾉﾑﾗ ｻﾄｼ"]

PLAN = """\
apiVersion: v1
id: benchmarks/payment_matching
version: 1.0.0
vars:
  bank: ""
  invoices: ""
  customers: ""
graph:
  - id: bank
    block: file.read_bank_statement
    in: { path: "${vars.bank}" }
  - id: invoices
    block: file.read_table
    in: { path: "${vars.invoices}" }
  - id: customers
    block: file.read_table
    in: { path: "${vars.customers}" }
  - id: match
    block: table.match_payments
    in:
      invoices: "${invoices.rows}"
      deposits: "${bank.deposits}"
      customers: "${customers.rows}"
      use_learned: false
"""


def make_data(root: Path, customers: int, invoices: int, lines: int, seed: int = 35) -> None:
    """The master, the invoices and the bank statement (see the module docstring)."""
    rng = random.Random(seed)
    names = [(r, s, w) for r in REGIONS for s in STEMS for w in WORDS]
    if customers > len(names):
        raise SystemExit(f"at most {len(names):,} customers")
    chosen = rng.sample(names, customers)
    master = ["取引先コード,取引先名,取引先名カナ"]
    people: list[tuple[str, str, str]] = []  # code, reading, form
    for number, ((region, region_kana), (stem, stem_kana), (word, word_kana)) in enumerate(chosen):
        code = str(100_000 + number)
        form = rng.choice(FORMS)
        reading = region_kana + stem_kana + word_kana
        kana = reading if rng.random() < 0.8 else ""
        master.append(f"{code},{form}{region}{stem}{word},{kana}")
        people.append((code, reading, form))
    (root / "取引先マスタ.csv").write_text("\r\n".join(master) + "\r\n", encoding="utf-8")

    start = dt.date(2026, 1, 31)
    rows = ["請求番号,取引先コード,請求金額,支払期日"]
    open_by: dict[str, list[tuple[str, int, dt.date]]] = {}
    for number in range(invoices):
        code, _, _ = people[number % customers]
        due = start + dt.timedelta(days=28 * rng.randrange(3))
        amount = rng.randrange(5_000, 3_000_000)
        invoice = (f"INV-{number:07d}", amount, due)
        open_by.setdefault(code, []).append(invoice)
        rows.append(f"{invoice[0]},{code},{amount},{due.isoformat()}")
    (root / "請求一覧.csv").write_text("\r\n".join(rows) + "\r\n", encoding="utf-8")

    deposits: list[tuple[dt.date, int, str]] = []
    queues = {code: sorted(items, key=lambda i: (i[2], i[0])) for code, items in open_by.items()}
    by_code = {code: (reading, form) for code, reading, form in people}
    active = list(queues)  # customers with invoices still to pay
    while len(deposits) < lines:
        if rng.random() < 0.03 or not active:
            deposits.append((_day(rng), rng.randrange(3_000, 900_000), rng.choice(PEOPLE)))
            continue
        at = rng.randrange(len(active))
        code = active[at]
        queue = queues[code]
        reading, form = by_code[code]
        kind = rng.random()
        take = 2 if kind < 0.07 and len(queue) > 1 else 1
        paid = [queue.pop(0) for _ in range(take)]
        amount = sum(a for _, a, _ in paid)
        if 0.07 <= kind < 0.2:
            amount -= rng.choice(FEES)
        elif 0.2 <= kind < 0.23:
            amount //= 2
            queue.insert(0, (paid[0][0], paid[0][1] - amount, paid[0][2]))
        deposits.append((_day(rng), amount, _payer(code, reading, form, rng)))
        if not queue:
            active[at] = active[-1]
            active.pop()
    deposits.sort(key=lambda d: d[0])
    lines_out = ["取引日,お取引内容,お預り金額,お引出し金額,残高"]
    for day, amount, payer in deposits:
        lines_out.append(f'{day.year}/{day.month}/{day.day},振込\u3000{payer},"{amount:,}",,')
    (root / "入出金明細.csv").write_bytes(("\r\n".join(lines_out) + "\r\n").encode("cp932"))


def _day(rng: random.Random) -> dt.date:
    return dt.date(2026, 2, 2) + dt.timedelta(days=rng.randrange(26))


def _payer(code: str, reading: str, form: str, rng: random.Random) -> str:
    """As the payer's bank writes it: half-width, the form abbreviated first or last, a code."""
    kana = half_width(reading)
    abbreviation = ABBREVIATIONS[form]
    text = f"{abbreviation}){kana}" if rng.random() < 0.7 else f"{kana}({abbreviation}"
    if rng.random() < 0.1:
        text = code + text
    return text[:48]


def run_keiri(root: Path, work: Path) -> dict[str, Any]:
    from keiri_agent.plan import PlanRunner

    plan = work / "payment_matching.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    files = {
        "bank": root / "入出金明細.csv",
        "invoices": root / "請求一覧.csv",
        "customers": root / "取引先マスタ.csv",
    }
    started = time.perf_counter()
    with PlanRunner(runs_dir=work / "runs", designs_dir=work) as runner:
        result = runner.run(plan, vars={k: str(v) for k, v in files.items()})
    seconds = time.perf_counter() - started
    if result.status != "success":
        raise SystemExit(f"the plan failed: {result.error and result.error.to_dict()}")
    summary = result.outputs["match"]["summary"]
    return {
        "seconds": seconds,
        "match_s": _node_seconds(result.log_path, "match"),
        "lines": summary["lines"],
        "matched": summary["matched"],
        "review": summary["review"],
        "unknown": summary["unknown"],
    }


def _node_seconds(log: Path | None, node: str) -> float:
    if log is None:
        raise SystemExit("the run wrote no log")
    for line in log.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("event") == "node_complete" and event.get("node_id") == node:
            return float(event["duration_ms"]) / 1000
    raise SystemExit(f"no node_complete of {node}")


def run_pandas(root: Path, work: Path) -> dict[str, Any]:
    import pandas as pd

    started = time.perf_counter()
    bank = pd.read_csv(root / "入出金明細.csv", encoding="cp932", thousands=",")
    invoices = pd.read_csv(root / "請求一覧.csv", dtype={"取引先コード": str})
    master = pd.read_csv(root / "取引先マスタ.csv", dtype={"取引先コード": str}).fillna("")
    read = time.perf_counter()
    forms = "|".join(sorted({a for a in ABBREVIATIONS.values()}, key=len, reverse=True))
    forms = pd.Series([forms]).str.normalize("NFKC")[0]
    small = str.maketrans("ァィゥェォッャュョヮ", "アイウエオツヤユヨワ")

    def key(column: pd.Series) -> pd.Series:
        text = column.str.normalize("NFKC").str.replace(r"\s+", "", regex=True)
        text = text.str.replace(rf"^\d*\(?(?:{forms})\)|\((?:{forms})\)?$", "", regex=True)
        return text.str.translate(small).str.replace(r"[-‐ｰー]", "ー", regex=True)

    payer = bank["お取引内容"].str.replace(r"^振込\s*", "", regex=True)
    bank["_key"] = key(payer)
    master["_key"] = key(master["取引先名カナ"])
    invoices = invoices.merge(master[["取引先コード", "_key"]], on="取引先コード", how="left")
    merged = bank.merge(
        invoices, left_on=["_key", "お預り金額"], right_on=["_key", "請求金額"], how="inner"
    )
    matched = merged.drop_duplicates(subset=["取引日", "お取引内容", "お預り金額"])
    merge_s = time.perf_counter() - read
    merged.to_parquet(work / "matched.parquet", index=False)
    return {
        "seconds": time.perf_counter() - started,
        "match_s": merge_s,
        "lines": len(bank),
        "matched": len(matched),
        "review": 0,
        "unknown": len(bank) - len(matched),
    }


def child(side: str, root: Path, work: Path) -> None:
    print_report((run_keiri if side == "keiri" else run_pandas)(root, work))


def measure(side: str, root: Path) -> dict[str, Any]:
    return measure_side(__file__, side, [side, str(root)], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--customers", type=int, nargs="+", default=[10_000])
    parser.add_argument("--invoices", type=int, default=100_000)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--child", nargs=3, metavar=("SIDE", "ROOT", "WORK"))
    args = parser.parse_args()
    if args.child:
        side, root, work = args.child
        child(side, Path(root), Path(work))
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| customers | invoices × lines | keiri-agent s | keiri-agent CPU s | keiri-agent MB "
        "| match node s | pandas s | pandas MB | merge s | time ratio | memory ratio "
        "| matched keiri (review / unknown) | matched pandas | load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for customers in args.customers:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            make_data(root, customers, args.invoices, args.lines)
            p = measure("pandas", root)
            k = measure("keiri", root)
            print(
                f"| {customers:,} | {args.invoices:,} × {args.lines:,} | {k['process_s']:.1f} "
                f"| {k['cpu_s']:.1f} | {k['peak_mb']:.0f} | {k['match_s']:.1f} | {p['process_s']:.1f} "
                f"| {p['peak_mb']:.0f} | {p['match_s']:.1f} "
                f"| {k['process_s'] / p['process_s']:.2f}x | {k['peak_mb'] / p['peak_mb']:.2f}x "
                f"| {k['matched']:,} ({k['review']:,} / {k['unknown']:,}) | {p['matched']:,} "
                f"| {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
            ok = k["process_s"] < TIME_GOAL_S and k["peak_mb"] < MEMORY_GOAL_MB
            print(
                f"goal (< {TIME_GOAL_S:.0f} s, < {MEMORY_GOAL_MB:.0f} MB): {'met' if ok else 'NOT met'}"
            )


if __name__ == "__main__":
    main()
