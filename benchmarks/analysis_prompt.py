"""How big the analysis agent's view of a table is, against what LangChain's pandas agent sends.

For wide tables (10 to 500 columns of mixed numeric, text and date data with Japanese column
names and long Japanese text values, 1,000 rows) this prints, in one run, the characters of
``DataFrameInfo.from_frame(df).to_prompt()`` (what our reason and code generation prompts
contain per table) and of ``df.head().to_markdown()`` (what LangChain's pandas DataFrame agent
puts into its prompt), with the ratio. Prompt size against column count is the most common
complaint in the PandasAI and LangChain pandas-agent issue trackers.

Run: ``python benchmarks/analysis_prompt.py [--rows 1000] [--columns 10 20 50 100 200 500]``
(``to_markdown`` needs the ``tabulate`` package, a dev dependency).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from keiri_agent.agents.analysis import DataFrameInfo
from keiri_agent.agents.analysis.dfinfo import DEFAULT_INFO_BUDGET

__all__ = ["COLUMN_COUNTS", "main", "make_frame", "measure"]

COLUMN_COUNTS = (10, 20, 50, 100, 200, 500)
DEFAULT_ROWS = 1_000
SEED = 20_240_401

_VENDORS = [
    "株式会社あおば商事",
    "ミドリ物産株式会社",
    "さくら電機工業",
    "髙橋工業合同会社",
    "ひまわり運輸",
]
_MEMO_PARTS = [
    "2024年度第1四半期の定期保守契約にもとづく請求",
    "出張旅費（東京・大阪間の新幹線往復および宿泊費）の精算",
    "広告宣伝費として計上した展示会出展料の前払い分",
    "消耗品費（事務用品・トナーカートリッジ）の月次まとめ払い",
    "外注費：システム改修（会計システム連携部分）の第2回中間金",
]
# Column kinds in turn, with Japanese names as in a real accounting export.
_KINDS = ("金額", "単価", "取引先", "摘要", "計上日")


def make_frame(columns: int, rows: int = DEFAULT_ROWS, *, seed: int = SEED) -> pd.DataFrame:
    """A deterministic table: amounts, unit prices, vendors, long memos and dates in turn."""
    rng = np.random.default_rng(seed + columns)
    data: dict[str, object] = {}
    start = np.datetime64("2024-04-01")
    for index in range(columns):
        kind = _KINDS[index % len(_KINDS)]
        name = f"{kind}_{index + 1:03d}"
        if kind == "金額":
            data[name] = rng.integers(1_000, 5_000_000, rows)
        elif kind == "単価":
            data[name] = np.round(rng.uniform(10, 99_999, rows), 2)
        elif kind == "取引先":
            data[name] = rng.choice(_VENDORS, rows)
        elif kind == "摘要":
            first = rng.choice(_MEMO_PARTS, rows)
            second = rng.choice(_MEMO_PARTS, rows)
            data[name] = [
                f"{a}／{b}（伝票番号 {n:06d}）"
                for a, b, n in zip(first, second, rng.integers(0, 999_999, rows), strict=True)
            ]
        else:
            data[name] = pd.to_datetime(start + rng.integers(0, 365, rows).astype("timedelta64[D]"))
    return pd.DataFrame(data)


# The headings by which the three renderings of DataFrameInfo.to_prompt() can be told apart.
_VIEWS = {"列（型ごと）:": "grouped", "列（名前: 型）:": "compact", "列:": "detailed"}


def _view(prompt: str) -> str:
    lines = prompt.splitlines()
    return next((name for heading, name in _VIEWS.items() if heading in lines), "cut")


def measure(df: pd.DataFrame) -> tuple[int, int, float, str]:
    """(our prompt characters, head().to_markdown() characters, seconds for ours, our view)."""
    began = time.perf_counter()
    ours = DataFrameInfo.from_frame(df).to_prompt()
    elapsed = time.perf_counter() - began
    baseline = df.head().to_markdown()
    return len(ours), len(baseline), elapsed, _view(ours)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--columns", type=int, nargs="+", default=list(COLUMN_COUNTS))
    args = parser.parse_args(argv)

    print(f"rows={args.rows}, pandas {pd.__version__}, budget={DEFAULT_INFO_BUDGET} chars")
    print()
    print(
        "| columns | DataFrameInfo.to_prompt() | view | df.head().to_markdown() "
        "| ratio (head / ours) | ours ms |"
    )
    print("|---:|---:|---|---:|---:|---:|")
    over_budget = []
    for columns in args.columns:
        ours, baseline, elapsed, view = measure(make_frame(columns, args.rows))
        if ours > DEFAULT_INFO_BUDGET:
            over_budget.append(columns)
        print(
            f"| {columns} | {ours:,} | {view} | {baseline:,} | {baseline / ours:.1f}x "
            f"| {elapsed * 1000:.0f} |"
        )
    print()
    if over_budget:
        print(f"over the {DEFAULT_INFO_BUDGET}-character budget at {over_budget} columns")
        return 1
    print(f"every table stayed within {DEFAULT_INFO_BUDGET:,} characters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
