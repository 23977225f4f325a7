"""A seeded generator of sales ledgers as a back office exports them: CSV (CP932 or UTF-8 with a
BOM) or Excel, a title row above the header, a 合計 row, blank cells (a name, a quantity, an
amount), a sale's time beside its date, a cell of some thousand characters."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

import openpyxl

__all__ = ["COLUMNS", "Ledger", "ledger", "ledgers"]

SEED = 15
COLUMNS = ["売上日", "伝票番号", "得意先", "商品区分", "商品名", "数量", "単価", "金額"]
CUSTOMERS = ["あおば商事", "髙橋工業", "株式会社さくら", "(株)北斗運輸", "ﾐﾄﾞﾘ産業"]
GOODS = [("サービス", "保守サポート"), ("製品", "会計パッケージ"), ("製品", "ＰＯＳ端末")]


@dataclass(frozen=True)
class Ledger:
    """One generated sales ledger: its file name, bytes and what it is like."""

    name: str
    data: bytes
    shape: str


def _rows(
    rng: random.Random, count: int, *, blanks: bool, huge: bool, rich: bool = False
) -> list[list[object]]:
    rows: list[list[object]] = []
    for number in range(count):
        kind, goods = rng.choice(GOODS)
        quantity = rng.randint(1, 20)
        price = rng.choice([1200, 15000, 150000, 98000])
        row: list[object] = [
            f"2024/04/{number % 28 + 1:02d}", f"S{5000 + number}", rng.choice(CUSTOMERS),
            kind, goods, quantity, price, quantity * price,
        ]  # fmt: skip
        if blanks and rng.random() < 0.4:
            row[rng.choice([3, 4])] = ""
        if rich and blanks and rng.random() < 0.3:  # a quantity or an amount left blank
            row[rng.choice([5, 7])] = ""
        if rich and rng.random() < 0.2:  # a sale's time beside its date
            row[0] = f"{row[0]} {rng.randint(8, 19):02d}:{rng.choice([0, 15, 30, 45]):02d}"
        rows.append(row)
    if huge:
        rows[0][4] = "備考：" + "長い説明" * rng.randint(500, 1500)
    return rows


def ledger(rng: random.Random, *, rich: bool = False) -> Ledger:
    """A sales ledger as a back office exports it (``rich``: blank numbers and times too)."""
    titled, total, blanks = rng.random() < 0.6, rng.random() < 0.5, rng.random() < 0.6
    huge = rng.random() < 0.3
    rows = _rows(rng, rng.randint(2, 12), blanks=blanks, huge=huge, rich=rich)
    head: list[list[object]] = (
        [["売上明細表（2024年4月分）"], ["出力日: 2024/05/01"]] if titled else []
    )
    tail: list[list[object]] = []
    if total:
        tail = [["合計", "", "", "", "", _sum(rows, 5), "", _sum(rows, 7)]]
    shape = ", ".join(
        n
        for n, on in (("title", titled), ("合計", total), ("blanks", blanks), ("huge", huge))
        if on
    )
    if rng.random() < 0.5:
        book = openpyxl.Workbook()
        sheet = book.active
        assert sheet is not None
        for row in [*head, COLUMNS, *rows, *tail]:
            sheet.append(row)
        out = io.BytesIO()
        book.save(out)
        return Ledger("売上明細.xlsx", out.getvalue(), f"xlsx {shape}")
    lines = [",".join(_csv_cell(v) for v in row) for row in [*head, COLUMNS, *rows, *tail]]
    encoding = rng.choice(["cp932", "utf-8-sig"])
    text = "\r\n".join(lines) + "\r\n"
    data = text.encode(encoding, errors="replace")
    return Ledger("売上明細.csv", data, f"csv {encoding} {shape}")


def _sum(rows: list[list[object]], column: int) -> int:
    return sum(int(str(r[column])) for r in rows if str(r[column]).isdigit())


def _csv_cell(value: object) -> str:
    text = str(value)
    return f'"{text}"' if "," in text else text


def ledgers(count: int, *, rich: bool = False) -> list[Ledger]:
    """``count`` ledgers drawn from the seed, then an empty file."""
    rng = random.Random(SEED)
    return [ledger(rng, rich=rich) for _ in range(count)] + [Ledger("空.csv", b"", "empty")]
