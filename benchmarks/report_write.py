"""Writing a big table to Excel: ``excel.write_report`` on a 200,000-row, 12-column ledger, the
code of this tree against the code of a baseline commit, in the same run.

A CP932 仕訳明細 is generated as a company's export (``2025/04/01`` dates, ``"110,000"``
amounts, negatives ``-5,500``, half-width kana names, 令和 text in 摘要, blank 支払期日 and 備考
cells) and read with ``documents.read_table`` (what ``file.read_table`` hands to the next
node: a ``Table``). The block then writes it to a report workbook. Each side runs in a fresh
interpreter whose ``PYTHONPATH`` is that side's ``src`` (the baseline is extracted with ``git
archive``), and reports the block's wall time, its process's resident set before the block
(``VmRSS``, the table already read) and its peak (``VmHWM``). The write's own memory is the peak
less the resident set before it.

Both sides must write the same number of rows, or the script stops.

    python benchmarks/report_write.py [--rows 200000] [--baseline d928121] [--repeat 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
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

from benchmarks.ledger_scale import measure_side, print_report, status_mb  # noqa: E402

# The last commit whose excel.write_report built every cell in memory.
BASELINE = "d928121"
DEPARTMENTS = ("営業部", "管理部", "開発部", "製造部")
ACCOUNTS = ("売上高", "仕入高", "支払手数料", "通信費", "旅費交通費", "消耗品費")
NAMES = ("ｶ)ﾃｽﾄｼｮｳｼﾞ", "ﾕ)ｻﾝﾌﾟﾙｺｳｷﾞｮｳ", "ｺﾞｳﾄﾞｳｶﾞｲｼｬ ﾐﾄﾞﾘ", "ﾔﾏﾀﾞ ﾀﾛｳ", "ｽｽﾞｷ ﾊﾅｺ")
HEADER = (
    "伝票番号,計上日,支払期日,取引先コード,取引先名カナ,部門,勘定科目,摘要,金額,消費税,数量,備考"
)


def make_ledger(path: Path, rows: int, seed: int = 7) -> None:
    """A CP932 仕訳明細 of ``rows`` rows and 12 columns (dates, amounts, kana, blanks)."""
    rng = random.Random(seed)
    start = dt.date(2025, 4, 1)
    lines = [HEADER]
    for n in range(rows):
        day = start + dt.timedelta(days=rng.randrange(365))
        due = "" if rng.random() < 0.3 else f"{day + dt.timedelta(days=30):%Y/%m/%d}"
        amount = rng.randrange(1_000, 2_000_000, 10) * (-1 if rng.random() < 0.05 else 1)
        note = "再発行" if rng.random() < 0.02 else ""
        lines.append(
            f"J{n + 1:07d},{day:%Y/%m/%d},{due},C{rng.randrange(5000):05d},"
            f"{rng.choice(NAMES)},{rng.choice(DEPARTMENTS)},{rng.choice(ACCOUNTS)},"
            f"令和{day.year - 2018}年{day.month}月分 取引,"
            f'"{amount:,}","{amount // 10:,}",{rng.randint(1, 99)},{note}'
        )
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))


def child(ledger: Path, work: Path) -> None:
    from keiri_agent.blocks.base import BlockContext
    from keiri_agent.blocks.registry import BlockRegistry
    from keiri_agent.documents.tables import read_table

    table = read_table(ledger).table()
    block = BlockRegistry().load("excel.write_report")
    ctx = BlockContext(
        run_id="bench", plan_id="bench", node_id="report", block_version="1", workspace=work
    )
    inputs = {"sheets": [{"name": "仕訳明細", "title": "令和7年度 仕訳明細", "rows": table}]}
    before = status_mb("VmRSS")
    started, cpu = time.perf_counter(), time.process_time()
    block.check_inputs(inputs)
    report = block.run(inputs, ctx)["report"]
    seconds = time.perf_counter() - started
    print_report(
        {
            "seconds": seconds,
            "write_cpu_s": time.process_time() - cpu,
            "before_mb": before,
            "rows": report["sheets"][0]["rows"],
            "bytes": Path(report["output_path"]).stat().st_size,
        }
    )


def baseline_src(rev: str, root: Path) -> Path:
    """The ``src`` folder of ``rev``, extracted under ``root``."""
    folder = root / f"baseline-{rev}"
    folder.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "src"


def measure(src: Path, side: str, ledger: Path, root: Path) -> dict[str, Any]:
    return measure_side(__file__, side, [str(ledger)], root, {"PYTHONPATH": str(src)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[200_000])
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=1, help="best (CPU) of N runs per side")
    parser.add_argument("--child", nargs=2, metavar=("LEDGER", "WORK"))
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    print(
        "| rows | side | write s | write CPU s | before MB | peak MB | write MB (peak − before) "
        "| xlsx MB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sources = {"baseline": baseline_src(args.baseline, root), "this tree": REPO / "src"}
        for rows in args.rows:
            ledger = root / f"仕訳明細_{rows}.csv"
            make_ledger(ledger, rows)
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side, src in sources.items():
                    got = measure(src, side, ledger, root)
                    if side not in best or got["write_cpu_s"] < best[side]["write_cpu_s"]:
                        best[side] = got
            for side, got in best.items():
                if got["rows"] != rows:
                    raise SystemExit(f"{side} wrote {got['rows']} rows of {rows}")
                print(
                    f"| {rows:,} | {side} | {got['seconds']:.1f} | {got['write_cpu_s']:.1f} "
                    f"| {got['before_mb']:.0f} "
                    f"| {got['peak_mb']:.0f} | {got['peak_mb'] - got['before_mb']:.0f} "
                    f"| {got['bytes'] / 2**20:.1f} |",
                    flush=True,
                )
            old, new = best["baseline"], best["this tree"]
            print(
                f"new/old at {rows:,} rows: time {new['seconds'] / old['seconds']:.2f}x, CPU "
                f"{new['write_cpu_s'] / old['write_cpu_s']:.2f}x, "
                f"peak {new['peak_mb'] / old['peak_mb']:.2f}x, write memory "
                f"{(new['peak_mb'] - new['before_mb']) / (old['peak_mb'] - old['before_mb']):.2f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
