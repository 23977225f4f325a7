"""Detail tables with a total under each group, labelled as printouts and Excel label them.

``tests/documents/fresh_ledgers`` and ``kept_ledgers`` label their totals 合計, 小計, 頁計,
【合計】. Reports and spreadsheets also write:

* Excel's データ → 小計 and pivot tables: ``営業部 集計`` in the grouped column, 総計 at the end;
* line-printer and ERP reports: marks around the label (``*** 小計 ***``, ``＊合計＊``,
  ``■小計``, ``― 合計 ―``), the count of entries after it (``小計 3件``, ``合計 12件``,
  ``小計（3件）``), a note in brackets (``小計（10%対象）``, ``合計（税込）``), ``合計金額``;
* a group's name before 計 (``山田商事 計``, ``営業部計``, ``【得意先計】``).

Each table (a 部門別経費明細 grouped by 部門コード and 部門, or a 得意先別売上明細 grouped by
得意先) has 2-5 groups of 1-6 entries, each closed by its total row -- the label in the grouped
column or the first column, the other text cells blank; or, as pivoted and ERP reports write
it, the group's keys written again (``001 | 営業部 | 小計``, the period's last day and the
得意先 before ``【得意先計】``) and the label in the next column -- maybe a blank line after it,
and a grand total at the end; a title and maybe a period line above, maybe a note under. Dates and amounts are
written as ``ledger_books`` writes them. :class:`Grouped` says what ``read_table`` must give
back: the entries, the labels of the total rows (in order) and each amount column's sum.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any

from tests.documents.fresh_ledgers import Drawn, FileFormat, Sheet, WCell
from tests.support.ledger_books import FORMATS, amount_cell, date_cell

__all__ = ["FORMATS", "Grouped", "grouped"]

_DEPARTMENTS = ("営業部", "管理部", "製造部", "開発部", "総務部")
_PARTNERS = ("山田商事", "鈴木工業", "佐藤物産", "高橋電機", "田中建設")
_ACCOUNTS = ("旅費交通費", "消耗品費", "通信費", "会議費", "広告宣伝費")
_GOODS = ("商品A", "商品B", "部品C", "サービスD")


def _group_label(rng: random.Random, name: str, count: int, excel: bool) -> str:
    if excel:
        return f"{name} 集計"
    return rng.choice(
        [
            f"{name} 計",
            "小計",
            "【小計】",
            "*** 小計 ***",
            "＊小計＊",
            "■小計",
            "― 小計 ―",
            f"小計 {count}件",
            f"小計（{count}件）",
            "小計（10%対象）",
            f"{name} 合計",
        ]
    )


def _grand_label(rng: random.Random, count: int, excel: bool) -> str:
    if excel:
        return "総計"
    return rng.choice(
        [
            "合計",
            "総合計",
            "*** 合計 ***",
            "＊＊総合計＊＊",
            "合計（税込）",
            f"合計 {count}件",
            "合計金額",
            "【 総 計 】",
        ]
    )


@dataclass
class Grouped:
    """A drawn table and the sums of its amount columns over the entries."""

    drawn: Drawn
    sums: dict[str, int]
    excel: bool  # labelled as Excel's 小計 writes it


def grouped(seed: int, fmt: FileFormat) -> Grouped:
    """The grouped table of ``seed`` in ``fmt`` (module docstring)."""
    rng, look = random.Random(seed), random.Random(f"{seed}-{fmt}")
    excel = rng.random() < 0.3
    sales = rng.random() < 0.5
    if sales:
        names = ["日付", "得意先", "商品", "数量", "金額"]
        groups, key = rng.sample(_PARTNERS, rng.randrange(2, 6)), "得意先"
    else:
        names = ["部門コード", "部門", "日付", "科目", "摘要", "金額"]
        groups, key = rng.sample(_DEPARTMENTS, rng.randrange(2, 5)), "部門"
    title = "得意先別売上明細" if sales else "部門別経費明細"
    sheet = Sheet()
    sheet.add([WCell(title, title)])
    first = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randrange(60))
    if look.random() < 0.5:
        period = f"対象期間：{first:%Y/%m/%d}～{first + dt.timedelta(days=30):%Y/%m/%d}"
        sheet.add([WCell(period, period)])
    sheet.add([WCell(n, n) for n in names])
    records: list[dict[str, Any]] = []
    labels: list[str] = []
    sums = dict.fromkeys(["金額", *(["数量"] if sales else [])], 0)
    last = first + dt.timedelta(days=30)
    for number, group in enumerate(groups, start=1):
        code = f"{number * 10:03d}"
        entries = rng.randrange(1, 7)
        days = sorted(first + dt.timedelta(days=rng.randrange(30)) for _ in range(entries))
        group_sums = dict.fromkeys(sums, 0)
        for day in days:
            value = rng.randrange(1, 500) * 100
            record: dict[str, Any] = {"日付": day.isoformat(), key: group, "金額": value}
            if not sales:
                record["部門コード"] = code
            if sales:
                count = rng.randrange(1, 20)
                record.update({"商品": rng.choice(_GOODS), "数量": count})
            else:
                account = rng.choice(_ACCOUNTS)
                record.update({"科目": account, "摘要": f"{account} {look.choice('ABC')}社"})
            cells = []
            for name in names:
                value_of = record[name]
                if name == "日付":
                    cells.append(date_cell(look, day, fmt))
                elif name in sums:
                    cells.append(amount_cell(look, value_of, fmt))
                else:
                    cells.append(WCell(value_of, value_of))
            sheet.add(cells, data=True)
            records.append({name: record[name] for name in names})
            for name in sums:
                group_sums[name] += record[name]
        label = _group_label(look, group, entries, excel)
        cells = _total_row(look, names, names.index(key), label, group_sums, fmt)
        if not excel and look.random() < 0.4:  # the keys again, the label after them
            at = names.index("商品" if sales else "科目")
            cells = _total_row(look, names, at, label, group_sums, fmt)
            cells[names.index(key)] = WCell(group, group)
            if sales:
                cells[0] = date_cell(look, last, fmt)
            else:
                cells[0] = WCell(code, code)
        elif not excel and look.random() < 0.3:
            cells = _total_row(look, names, 0, label, group_sums, fmt)
        sheet.add(cells)
        labels.append(label)
        for name in sums:
            sums[name] += group_sums[name]
        if look.random() < 0.3:
            sheet.add(None)
    label = _grand_label(look, len(records), excel)
    sheet.add(_total_row(look, names, 0, label, sums, fmt))
    labels.append(label)
    if look.random() < 0.4:
        sheet.add(None)
        sheet.add([WCell("※ 金額は税抜です", "※ 金額は税抜です")])
    return Grouped(Drawn(sheet, fmt, names, records, labels, {}), sums, excel)


def _total_row(
    rng: random.Random,
    names: list[str],
    at: int,
    label: str,
    sums: dict[str, int],
    fmt: FileFormat,
) -> list[WCell]:
    """A total row: ``label`` in column ``at``, the sums under their columns, blanks else."""
    cells = [WCell("", None) for _ in names]
    cells[at] = WCell(label, label)
    for name, value in sums.items():
        cells[names.index(name)] = amount_cell(rng, value, fmt)
    return cells
