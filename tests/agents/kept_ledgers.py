"""Ledgers as a back office keeps them, drawn from a seed, with the clean figures they hold.

For the agents' property tests (analysis and conversion): each :func:`kept_ledger` is one file a
user would hand over -- a CP932 or UTF-8 (BOM) CSV, or a workbook with merged header cells --
and the clean rows it was written from (date, department, amount in yen or blank). The file
combines what a real export or hand-kept sheet has:

* a title row (company and report name), a period line (``期間：令和8年1月1日～令和8年3月31日``),
  maybe an output date, and the unit: ``単位：千円`` on its own line, ``（単位：千円）`` after
  the title, ``金額（千円）`` in the header, or none (yen);
* amounts written every way (``1,200`` / ``(1,200)`` / ``△1,200`` / ``▲1,200`` / ``-1,200`` /
  ``¥1,200`` / full-width), blank cells; in 千円 a yen figure is written divided by 1,000;
* dates as 和暦 (``令和8年2月3日``, ``R8.2.3``), ``20260203``, ``2026/2/3``, ISO, or a date cell;
* a 小計 row under each department (sometimes), a 合計 row at the bottom, maybe a note under it;
* in a workbook: the title merged across the table, a two-row header where 日付 and 部門 stand
  under a merged 取引 cell and the other headers are merged down both rows.

:meth:`KeptLedger.total` and :meth:`KeptLedger.by_department` are the figures a correct reading
gives, in yen.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass
from typing import Any, Literal

from openpyxl import Workbook

from tests.support import ScriptedLLMServer

__all__ = ["DEPARTMENTS", "SUM_CODE", "KeptLedger", "kept_ledger", "script_sums", "wrong_figures"]

Form = Literal["csv-cp932", "csv-utf8-bom", "xlsx"]
Unit = Literal["円", "千円", "百万円"]
# Subtotal rows under each department: none, with a label (小計, 営業部 計...), or with the
# amount alone (a SUBTOTAL row nobody labelled: the reader cannot tell it from data, and the
# file's 合計 then disagrees with the sum of the rows it reads).
Subtotals = Literal["none", "labelled", "unlabelled"]
DEPARTMENTS = ("営業部", "管理部", "製造部", "総務部")
_ACCOUNTS = ("旅費交通費", "消耗品費", "通信費", "会議費", "支払手数料", "広告宣伝費")
_MEMOS = ("タクシー代", "コピー用紙", "携帯電話料金", "打合せ茶菓子", "振込手数料", "")
_FACTOR = {"円": 1, "千円": 1_000, "百万円": 1_000_000}
_FULL_WIDTH = str.maketrans("0123456789,.-", "０１２３４５６７８９，．－")


@dataclass(frozen=True)
class Row:
    day: dt.date
    department: str
    account: str
    memo: str
    amount: int | None  # yen; None: the cell is blank


@dataclass
class KeptLedger:
    name: str
    data: bytes
    rows: list[Row]
    unit: Unit
    unit_place: str  # "line", "title", "header" or "none"
    subtotals: Subtotals
    form: Form

    @property
    def doubtful(self) -> bool:
        """Whether a reader may refuse this ledger (its rows do not add up to its 合計)."""
        return self.subtotals == "unlabelled"

    def total(self) -> int:
        return sum(r.amount for r in self.rows if r.amount is not None)

    def by_department(self) -> dict[str, int]:
        sums: dict[str, int] = {}
        for row in self.rows:
            if row.amount is not None:
                sums[row.department] = sums.get(row.department, 0) + row.amount
            else:
                sums.setdefault(row.department, 0)
        return sums

    def describe(self) -> str:
        return f"{self.name}: {self.form}, 単位 {self.unit}（{self.unit_place}）, 小計 {self.subtotals}"


# What a model writes to sum every table it was given by department (the scripted code of
# the property tests): the figures go to sums.json in the workspace.
SUM_CODE = """import json
import pandas as pd

found = {}
for name, frame in dfs.items():
    amount = next(c for c in frame.columns if "金額" in c)
    department = next(c for c in frame.columns if "部門" in c)
    dates = next(c for c in frame.columns if "日付" in c)
    found[name] = {
        "amount": amount,
        "numeric": bool(pd.api.types.is_numeric_dtype(frame[amount])),
        "dates": bool(pd.api.types.is_datetime64_any_dtype(frame[dates])),
        "total": float(frame[amount].sum()) if pd.api.types.is_numeric_dtype(frame[amount]) else None,
        "by": {str(k): float(v) for k, v in frame.groupby(department)[amount].sum().items()}
        if pd.api.types.is_numeric_dtype(frame[amount]) else {},
    }
with open("sums.json", "w", encoding="utf-8") as out:
    json.dump(found, out, ensure_ascii=False)
print(len(found), "tables summed")
"""
REPORT = {
    "title": "部門別の経費",
    "conclusion": "部門別の合計を計算しました。",
    "evidence": ["sums.json の通り"],
    "sections": [],
    "suggestions": [],
}


def wrong_figures(ledger: KeptLedger, total: float | None, by: dict[str, float]) -> str | None:
    """Why the figures read from ``ledger`` are not its clean figures (None when they are)."""
    expected = {k: float(v) for k, v in ledger.by_department().items()}
    if total is None or abs(total - ledger.total()) > 0.5:
        return f"total {total} != {ledger.total()}"
    if set(by) != set(expected) or any(abs(by[k] - expected[k]) > 0.5 for k in expected):
        return f"by department {by} != {expected}"
    return None


def script_sums(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(
        json={"next_action": "act", "instruction": "部門別に合計する", "rationale": "集計"}
    )
    llm_server.add_chat(
        json={
            "code": SUM_CODE,
            "expected_outputs": [
                {"file_name": "sums.json", "description": "合計", "output_type": "table"}
            ],
        }
    )
    llm_server.add_chat(json={"next_action": "finalize", "rationale": "集計できた"})
    llm_server.add_chat(json=REPORT)


def _reiwa(day: dt.date) -> str:
    return f"令和{day.year - 2018}年{day.month}月{day.day}日"


def _date_text(rng: random.Random, day: dt.date) -> str:
    forms = (
        _reiwa(day),
        f"R{day.year - 2018}.{day.month}.{day.day}",
        day.strftime("%Y%m%d"),
        f"{day.year}/{day.month}/{day.day}",
        day.isoformat(),
    )
    return rng.choice(forms)


def _amount_text(rng: random.Random, written: int | float, unit: Unit) -> str:
    plain = f"{abs(written):,}" if isinstance(written, int) else f"{abs(written):,.1f}"
    if written >= 0:
        forms = [plain, plain.replace(",", ""), plain.translate(_FULL_WIDTH)]
        if unit == "円":
            forms += [f"¥{plain}", f"{plain}円"]
        return rng.choice(forms)
    return rng.choice([f"({plain})", f"△{plain}", f"▲{plain}", f"-{plain}", f"△ {plain}"])


def _written(yen: int, unit: Unit) -> int | float:
    """The figure a ledger in ``unit`` shows for ``yen`` (whole, or one decimal)."""
    value = yen / _FACTOR[unit]
    return int(value) if value.is_integer() else value


def _draw_rows(rng: random.Random, unit: Unit) -> list[Row]:
    step = {"円": 1, "千円": 1_000, "百万円": 100_000}[unit]  # 百万円 ledgers show 0.1
    rows = []
    for _ in range(rng.randint(6, 24)):
        day = dt.date(2026, rng.randint(1, 3), rng.randint(1, 28))
        amount: int | None = rng.randint(1, 900) * step * rng.choice((1, 1, 1, 7, 13))
        if rng.random() < 0.15:
            amount = -amount
        if rng.random() < 0.1:
            amount = None
        rows.append(
            Row(day, rng.choice(DEPARTMENTS), rng.choice(_ACCOUNTS), rng.choice(_MEMOS), amount)
        )
    return rows


def kept_ledger(seed: int) -> KeptLedger:
    rng = random.Random(seed)
    form: Form = rng.choice(("csv-cp932", "csv-cp932", "csv-utf8-bom", "xlsx"))
    unit: Unit = rng.choice(("円", "千円", "千円", "百万円"))
    place = (
        rng.choice(("line", "title", "header")) if unit != "円" else rng.choice(("none", "header"))
    )
    rows = _draw_rows(rng, unit)
    subtotals: Subtotals = rng.choice(("none", "none", "labelled", "labelled", "unlabelled"))
    if subtotals != "none":
        rows.sort(key=lambda r: (DEPARTMENTS.index(r.department), r.day))
    else:
        rows.sort(key=lambda r: r.day)
    title = rng.choice(("部門別経費明細表", "経費明細（部門別）", "支払明細"))
    amount_header = f"金額（{unit}）" if place == "header" else rng.choice(("金額", "支払金額"))
    above: list[list[Any]] = [
        ["株式会社さくら商事"],
        [title + ("（単位：千円）" if place == "title" and unit == "千円" else "")],
    ]
    if place == "title" and unit != "千円":
        above[1][0] = f"{title}（単位：{unit}）"
    above.append([f"期間：{_reiwa(dt.date(2026, 1, 1))}～{_reiwa(dt.date(2026, 3, 31))}"])
    if place == "line":
        above.append([rng.choice((f"単位：{unit}", f"（単位：{unit}）", f"[単位:{unit}]"))])
    if rng.random() < 0.5:
        above.append(["出力日：2026/04/02"])
    header = ["日付", "部門", "勘定科目", "摘要", amount_header]
    body: list[list[Any]] = []
    merges: list[tuple[int, int]] = []  # body rows whose 部門 cells are one merged cell
    as_cells = form == "xlsx" and rng.random() < 0.5  # a workbook of typed cells
    merged = form == "xlsx" and subtotals != "none" and rng.random() < 0.5
    separated = subtotals != "none" and rng.random() < 0.3  # a blank row after each group
    total = sum(r.amount or 0 for r in rows)
    grand = [rng.choice(("合計", "総合計", "【合 計】")), None, None, None]
    grand.append(_cell(rng, total, unit, as_cells))
    on_top = subtotals != "unlabelled" and rng.random() < 0.2  # 合計 right under the header
    if on_top:
        body.append(grand)
    first = len(body)
    for index, row in enumerate(rows):
        day: Any = row.day if as_cells and rng.random() < 0.7 else _date_text(rng, row.day)
        if row.amount is None:
            amount: Any = None
        elif as_cells:
            amount = _written(row.amount, unit)
        else:
            amount = _amount_text(rng, _written(row.amount, unit), unit)
        department = None if merged and len(body) > first else row.department
        body.append([day, department, row.account, row.memo, amount])
        last_of_group = index == len(rows) - 1 or rows[index + 1].department != row.department
        if subtotals != "none" and last_of_group:
            if merged:
                merges.append((first, len(body) - 1))
            group = sum(r.amount or 0 for r in rows if r.department == row.department)
            label = rng.choice((f"{row.department} 小計", "小計", f"【{row.department}計】"))
            if subtotals == "unlabelled":  # a SUBTOTAL row with no word beside it
                label = None
            cells = [label, None, None, None, _cell(rng, group, unit, as_cells)]
            if rng.random() < 0.5:
                cells = [None, label, None, None, cells[4]]
            body.append(cells)
            if separated and index < len(rows) - 1:
                body.append([])
            first = len(body)
    if not on_top:
        body.append(grand)
    if rng.random() < 0.4:
        body.append(["※ 金額は税込です。"])
    name = f"経費明細_{seed}"
    if form == "xlsx":
        data = _xlsx(above, header, body, merges)
        name += ".xlsx"
    else:
        data = _csv(above, header, body, "cp932" if form == "csv-cp932" else "utf-8-sig")
        name += ".csv"
    return KeptLedger(name, data, rows, unit, place, subtotals, form)


def _cell(rng: random.Random, yen: int, unit: Unit, as_cells: bool) -> Any:
    return _written(yen, unit) if as_cells else _amount_text(rng, _written(yen, unit), unit)


def _csv(above: list[list[Any]], header: list[str], body: list[list[Any]], encoding: str) -> bytes:
    lines = []
    for row in [*above, [], header, *body]:
        lines.append(",".join(_quoted("" if v is None else str(v)) for v in row))
    text = "\r\n".join(lines) + "\r\n"
    if encoding == "cp932":  # CP932 has no U+00A5: its yen is the full-width one (or 0x5C)
        text = text.replace("¥", "￥")
    return text.encode(encoding)


def _quoted(text: str) -> str:
    return f'"{text}"' if any(ch in text for ch in ',"\n') else text


def _xlsx(
    above: list[list[Any]],
    header: list[str],
    body: list[list[Any]],
    merges: list[tuple[int, int]],
) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "明細"
    width = len(header)
    row = 1
    for line in above:
        sheet.cell(row, 1, line[0])
        sheet.merge_cells(start_row=row, start_column=1, end_row=row, end_column=width)
        row += 1
    row += 1  # a blank row before the header
    # Two header rows: 日付 and 部門 under a merged 取引, the others merged down both rows.
    sheet.cell(row, 1, "取引")
    sheet.merge_cells(start_row=row, start_column=1, end_row=row, end_column=2)
    sheet.cell(row + 1, 1, header[0])
    sheet.cell(row + 1, 2, header[1])
    for column in range(3, width + 1):
        sheet.cell(row, column, header[column - 1])
        sheet.merge_cells(start_row=row, start_column=column, end_row=row + 1, end_column=column)
    row += 2
    for top, bottom in merges:  # a department written once beside its rows
        if bottom > top:
            sheet.merge_cells(
                start_row=row + top, start_column=2, end_row=row + bottom, end_column=2
            )
    for values in body:
        for column, value in enumerate(values, start=1):
            if value is None:
                continue
            cell = sheet.cell(row, column, value)
            if isinstance(value, dt.date):
                cell.number_format = "yyyy/m/d"
            elif isinstance(value, int | float):
                cell.number_format = '#,##0;"△"#,##0' if isinstance(value, int) else "#,##0.0"
        row += 1
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
