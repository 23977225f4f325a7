"""Reading a 100,000-row ledger CSV with ``read_table``: this checkout against a baseline
revision of the same repository, in the same run, on the same files.

The ledgers are drawn by ``tests/support/ledger_rows.py`` (a year's 仕訳帳 export: dates in
seven forms, amounts with ¥ ￥ 円 △ ▲ ( ) and full width, free-text 摘要 and 取引先), once per
style of the dash after an amount (none, the end mark on every yen amount, a system's
trailing minus, the end mark on some). The baseline's ``src`` is taken with ``git archive``
into a temporary folder; each reading runs in a fresh interpreter with that ``src`` (or this
checkout's) first on ``PYTHONPATH``, rounds alternating, and reports the wall time of
``read_table`` alone and a digest of everything it gave back (every column's dtype and
values, the positions, the total rows and ``info``): the two must be identical.

    python benchmarks/table_read.py [--rows 100000] [--baseline main] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.ledger_rows import STYLES, ledger_csv  # noqa: E402

# Run in the child: read one file, print the wall time and the digest of the result.
_CHILD = """
import json, sys, time
from keiri_agent.documents.tables import read_table
from tests.support.ledger_rows import digest
data = open(sys.argv[1], "rb").read()
start = time.perf_counter()
result = read_table(data, name="仕訳帳.csv")
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "digest": digest(result)}))
"""


def _baseline_src(revision: str, folder: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "src"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def _read(src: Path, path: Path) -> dict[str, object]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join((str(src), str(REPO)))}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--baseline", default="main", help="a git revision of this repository")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"rows {args.rows:,}, baseline {args.baseline}, best of {args.repeat}; load",
        os.getloadavg(),
    )
    print(f"{'style':10} {'baseline s':>10} {'this s':>8} {'speed-up':>9}  same result")
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        sources = {"baseline": _baseline_src(args.baseline, folder / "old"), "this": REPO / "src"}
        for style in STYLES:
            path = folder / f"{style}.csv"
            path.write_bytes(ledger_csv(args.rows, seed=1, style=style))
            best = {side: float("inf") for side in sources}
            digests = {}
            for _ in range(args.repeat):
                for side, src in sources.items():
                    read = _read(src, path)
                    best[side] = min(best[side], float(str(read["seconds"])))
                    digests[side] = read["digest"]
            same = "yes" if digests["baseline"] == digests["this"] else "NO"
            ratio = best["baseline"] / best["this"]
            print(
                f"{style:10} {best['baseline']:>10.2f} {best['this']:>8.2f} {ratio:>8.1f}x  {same}"
            )
    print("at", time.strftime("%Y-%m-%d %H:%M"), "load", os.getloadavg())


if __name__ == "__main__":
    main()
