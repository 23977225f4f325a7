"""Sales exports as accounting and sales systems write them, through a plan: read → aggregate
by department and month → Excel report, with the exact totals.

Each export is generated (seeded): amounts with the minus after the digits (``1,200-``,
``¥3,300-``, ``５００－``, ``1,200−``) among the other forms, a 小計 row under each department
with the next department's rows after it (one of them saying 以上 in its 摘要, with its
amount), a 合計 row, then footer notes (``※ 金額は税込です``, ``以上``, ``出力日: …``,
``担当: 経理部``), after a blank row or not, and a registration time written with a UTC offset.
Written as CP932 CSV and as a workbook. The report must hold the totals computed here from
what the export means; the notes must be set aside at their own lines, not summed or counted.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook

from keiri_agent.plan import PlanRunner
from tests.examples.test_ledger_plan import run_plan, write_csv, write_xlsx
from tests.examples.test_ledger_plan import runner as runner  # the fixture, used by name

HEADER = ["日付", "部門", "得意先", "摘要", "金額", "登録日時"]
DEPARTMENTS = ["営業一部", "営業二部", "海外事業部"]
PARTNERS = ["ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "大空物産株式会社", "北斗運輸", "山田商事"]
SUMMARIES = ["商品売上", "返品", "値引", "送料", "サービス料"]
FOOTERS: list[list[str]] = [
    ["※ 金額は税込です"],
    ["以上"],
    ["出力日: 2026/04/01"],
    ["出力日", "2026/04/01 09:30"],
    ["担当: 経理部"],
    ["作成者", "経理部 山田"],
    ["ページ 1/1"],
    ["＊ 返品・値引はマイナスで表示しています"],
]
_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")
_TOKYO = dt.timezone(dt.timedelta(hours=9))


def written_amount(rng: random.Random, value: int) -> str:
    """``value`` in a form a system or a person writes; negatives mostly with a trailing minus."""
    size = f"{abs(value):,}"
    if value >= 0:
        return rng.choice([size, f"￥{size}", f"{size}円", str(value)])
    return rng.choice(
        [
            f"{size}-",
            f"{size}-",
            f"\\{size}-",
            f"{size}－".translate(_FULL_WIDTH),
            f"{size}\u2212",
            f"▲{size}",
            f"({size})",
        ]
    )


def written_stamp(rng: random.Random, local: dt.datetime) -> str:
    """A registration time with its offset: Tokyo's, or the same moment in UTC."""
    aware = local.replace(tzinfo=_TOKYO)
    if rng.random() < 0.5:
        return aware.isoformat()
    return aware.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


class Export:
    """One generated export: its rows, and what they mean."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.rows: list[list[Any]] = [["売上明細（販売管理システム出力）"], HEADER]
        self.totals: dict[tuple[str, str], int] = defaultdict(int)
        self.stamps: list[dt.datetime] = []
        self.labels: list[str] = []
        self.entries = 0
        grand = 0
        for n, department in enumerate(DEPARTMENTS):
            subtotal = 0
            for k in range(rng.randint(2, 5)):
                day = dt.date(2026, rng.choice([2, 3]), rng.randint(1, 28))
                value = rng.choice([-1, 1, 1]) * rng.randint(1, 3_000_000)
                # The first row after a 小計 says 以上 in its 摘要: still a data row.
                summary = "以上" if n and not k else rng.choice(SUMMARIES)
                local = dt.datetime(
                    2026, day.month, day.day, rng.randint(0, 23), rng.randint(0, 59)
                )
                self.rows.append(
                    [
                        f"{day.year}/{day.month:02d}/{day.day:02d}",
                        department,
                        rng.choice(PARTNERS),
                        summary,
                        written_amount(rng, value),
                        written_stamp(rng, local),
                    ]
                )
                self.totals[(department, f"{day.year}-{day.month:02d}")] += value
                self.stamps.append(local)
                subtotal += value
                self.entries += 1
            label = f"{department} 小計"
            self.rows.append([label, "", "", "", written_amount(rng, subtotal), ""])
            self.labels.append(label)
            grand += subtotal
        self.rows.append(["合計", "", "", "", written_amount(rng, grand), ""])
        self.labels.append("合計")
        self.blank = rng.random() < 0.5
        if self.blank:
            self.rows.append([])
        self.footer = rng.sample(FOOTERS, rng.randint(1, 4))
        first = len(self.rows) + 1  # the file line / sheet row of the first note
        self.footer_lines = [
            {"position": first + i, "text": " ".join(line)} for i, line in enumerate(self.footer)
        ]
        self.rows.extend(line + [""] * (len(HEADER) - len(line)) for line in self.footer)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_system_export_is_aggregated_to_the_exact_totals(
    runner: PlanRunner, tmp_path: Path, fmt: str, seed: int
) -> None:
    export = Export(seed)
    ledger = tmp_path / f"売上明細.{fmt}"
    (write_csv if fmt == "csv" else write_xlsx)(ledger, export.rows)
    result, out = run_plan(runner, tmp_path, ledger)
    assert result.status == "success", result.error and result.error.to_dict()

    read = result.outputs["read"]
    info = read["info"]
    assert info["footer"] == export.footer_lines
    assert [t["label"] for t in info["totals"]] == export.labels
    assert len(read["rows"]) == export.entries
    assert info["converted"]["金額"] == "number"
    assert info["converted"]["登録日時"] == "datetime"
    assert info["unreadable"] == []
    assert any("表の後の注記" in w for w in info["warnings"])
    records = read["rows"].records()
    assert [r["登録日時"] for r in records] == [s.isoformat() for s in export.stamps]
    assert sum(r["摘要"] == "以上" for r in records) == len(DEPARTMENTS) - 1

    book = load_workbook(out)
    try:
        rows = [tuple(r) for r in book["部門別"].iter_rows(values_only=True)]
    finally:
        book.close()
    assert rows[0][:2] == ("部門", "月")
    got = {(department, month): total for department, month, total in rows[1:]}
    assert got == dict(export.totals)
