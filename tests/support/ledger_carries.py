"""Cash books (出納帳) whose carried balances and totals are labelled as offices, 町内会 and NPO
books label them: a seeded generator of whole files (CSV in UTF-8, UTF-8 with a BOM or CP932,
or a workbook), each with the rows a reader must set aside and how each is to be named.

``ledger_books`` closes books with the labels a textbook writes (前月繰越, 次月繰越, 合計, 月計).
This one draws the labels written around them: 繰越 with 金 after it (前月繰越金, 前年度繰越金,
繰越金), 前期からの繰越, marks and notes around a label (``*** 前月繰越 ***``,
``前月繰越（2月分）``, ``■次月繰越``), and totals as 小計, 合計, 合　計, 総合計, 計, 月計, 累計,
``*** 合計 ***``. A carry written in the 収入 or 支出 column moves no money: it must be set
aside and named a carry (``繰越の行``); a total set aside and named a total (``合計・小計の行``);
the 収入 and 支出 of the data must sum to the entries alone.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

__all__ = ["CARRIES", "FILES", "TOTALS", "Carried", "cash_book"]

FILES = ("utf8", "utf8_bom", "cp932", "xlsx")
# Opening and closing carries as books write them (each with the column it is written in).
CARRIES = (
    "前月繰越",
    "前期繰越",
    "繰越金額",
    "前月繰越金",
    "前年度繰越金",
    "前期繰越金",
    "繰越金",
    "前期からの繰越",
    "前月より繰越",
    "*** 前月繰越 ***",
    "■前月繰越",
    "前月繰越（2月分）",
    "【前期繰越】",
)
CLOSINGS = ("次月繰越", "次期繰越", "次月繰越金", "次年度繰越金", "■次月繰越", "次月へ繰越")
TOTALS = ("小計", "合計", "合　計", "総合計", "計", "月計", "累計", "*** 合計 ***", "合計（税込）")
_ENTRIES = (
    ("会費収入", True),
    ("売上", True),
    ("事務用品", False),
    ("交通費", False),
    ("会議費", False),
)


@dataclass
class Carried:
    """A drawn book: the file's rows (``rows``, the header first), the labels of the rows a
    reader must set aside as carries and as totals, and the 収入/支出 sums of the entries."""

    rows: list[list[object]]
    carries: list[str]
    totals: list[str]
    inflow: int
    outflow: int


def _book(rng: random.Random) -> Carried:
    rows: list[list[object]] = [["日付", "摘要", "収入", "支出", "残高"]]
    balance = rng.randrange(10, 500) * 1000
    opening = rng.choice(CARRIES)
    rows.append(["2026/2/1", opening, balance, None, balance])
    inflow = outflow = 0
    for day in sorted(rng.sample(range(2, 28), rng.randrange(2, 7))):
        memo, received = rng.choice(_ENTRIES)
        value = rng.randrange(1, 100) * 100
        balance += value if received else -value
        inflow += value if received else 0
        outflow += 0 if received else value
        rows.append(
            [
                f"2026/2/{day}",
                memo,
                value if received else None,
                None if received else value,
                balance,
            ]
        )
    carries, totals = [opening], []
    if rng.random() < 0.6:
        closing = rng.choice(CLOSINGS)
        rows.append(["2026/2/28", closing, None, balance, None])
        carries.append(closing)
    label = rng.choice(TOTALS)
    rows.append([label, None, inflow, outflow, None])
    totals.append(label)
    return Carried(rows, carries, totals, inflow, outflow)


def cash_book(seed: int, form: str) -> tuple[Carried, bytes, str]:
    """The book of ``seed`` as a file in ``form`` (``FILES``): ``(drawn, bytes, name)``."""
    drawn = _book(random.Random(f"ledger-carries-{seed}"))
    if form == "xlsx":
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        assert sheet is not None
        for row in drawn.rows:
            sheet.append(row)
        out = io.BytesIO()
        book.save(out)
        return drawn, out.getvalue(), "出納帳.xlsx"
    lines = [",".join("" if c is None else str(c) for c in row) for row in drawn.rows]
    text = "\r\n".join(lines) + "\r\n"
    if form == "cp932":
        return drawn, text.encode("cp932"), "出納帳.csv"
    return drawn, ("\ufeff" if form == "utf8_bom" else "").encode() + text.encode(), "出納帳.csv"
