"""Long ledgers as accounting systems export them and people keep them: a seeded generator of
whole CSV files of any length, for the reading speed of ``read_table`` (``benchmarks/
table_read.py``) and for the test that its column-at-once readings give what reading every
cell one by one gives (``tests/documents/test_ledger_rows.py``).

The other ledger generators draw a few dozen rows to check values; this one draws the shape
of a year's 仕訳帳 or 出納帳 export at 10万 rows: 日付 in the forms one file mixes when rows
were typed by several people or pasted from several systems (``2026/02/03``, ``2026/2/3``,
``2026-02-03``, ``2026年2月3日``, ``令和8年2月3日``, ``R8.2.3``, with a weekday now and then),
a 伝票番号 with leading zeros, 勘定科目, free-text 摘要 with digits, dashes and yen in it
(``交通費 1,200円 立替``, ``-``, ``¥500 返金``), 取引先, and amount columns as the columns of
such files write them: plain (``12,000``), marked (``¥12,000``, ``￥12,000``, ``12,000円``),
negative by ``△``/``▲``/``-``/parentheses, now and then full width, spaced (``1, 200``), 0,
a decimal or a lone dash.

``style`` picks how the 金額 column writes the dash after its digits, each a different path of
the column's decision (``table_types._yen_dash``): none (``plain``), the end mark on every yen
amount (``end_mark``: ``¥12,000-``), a system's trailing minus (``trailing``: ``12,000-``
beside ``¥12,000-``), or the end mark on some yen amounts only (``mixed``: listed, not read).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from typing import Any, Literal

__all__ = ["STYLES", "Style", "digest", "ledger_csv"]

Style = Literal["plain", "end_mark", "trailing", "mixed"]
STYLES: tuple[Style, ...] = ("plain", "end_mark", "trailing", "mixed")

_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")
_WEEKDAYS = "月火水木金土日"
_ACCOUNTS = (
    "旅費交通費",
    "消耗品費",
    "通信費",
    "会議費",
    "支払手数料",
    "地代家賃",
    "売上高",
    "売掛金",
)
_PARTNERS = (
    "山田商事",
    "鈴木工業",
    "佐藤物産",
    "高橋電機",
    "田中建設",
    "株式会社ABC",
    "(株)エービーシー",
    "",
)
_MEMOS = (
    "タクシー代",
    "文具 鈴木文具店",
    "切手代",
    "打合せ 喫茶",
    "振込手数料",
    "3月分 家賃",
    "交通費 1,200円 立替",
    "会議費(5名)",
    "-",
    "¥500 返金",
    "請求書No.1234 入金",
    "ー",
)


def _date(rng: random.Random, day: dt.date) -> str:
    era = day.year - 2018
    weekday = f"({_WEEKDAYS[day.weekday()]})" if rng.random() < 0.05 else ""
    return rng.choice(
        (
            f"{day:%Y/%m/%d}",
            f"{day:%Y/%m/%d}",
            f"{day.year}/{day.month}/{day.day}",
            f"{day:%Y-%m-%d}",
            f"{day.year}年{day.month}月{day.day}日{weekday}",
            f"令和{era}年{day.month}月{day.day}日",
            f"R{era}.{day.month}.{day.day}",
        )
    )


def _amount(rng: random.Random, value: int, style: Style) -> str:
    """``value`` as the 金額 column of ``style`` writes it."""
    odd = rng.random()
    if odd < 0.01:
        return rng.choice(("0", "-", "1, 200", "1,200.5", "0123"))
    body = f"{abs(value):,}" if rng.random() < 0.85 else str(abs(value))
    if rng.random() < 0.03:
        body = body.translate(_FULL_WIDTH)
    mark = rng.choice(("", "", "¥", "￥", "\\"))
    yen = "円" if not mark and rng.random() < 0.2 else ""
    dashed = style == "end_mark" or (style == "mixed" and rng.random() < 0.5)
    if value >= 0:
        if (mark or yen) and dashed:
            return f"{mark}{body}{yen}-"
        return f"{mark}{body}{yen}"
    if style == "trailing":
        return f"{mark}{body}-" if mark else f"{body}-"
    form = rng.randrange(4)
    if form == 0:
        return f"{rng.choice('△▲')}{mark}{body}{yen}"
    if form == 1:
        return f"({mark}{body}{yen})" if rng.random() < 0.7 else f"（{mark}{body}{yen}）"
    if form == 2:
        return f"-{body}"
    return f"{mark}{rng.choice('△▲-')}{body}{yen}"


def _quoted(cell: str) -> str:
    return f'"{cell}"' if "," in cell or "，" in cell else cell


def ledger_csv(rows: int, seed: int, style: Style = "plain") -> bytes:
    """A ledger of ``rows`` rows (UTF-8 with BOM, CRLF): a title, a header, the rows."""
    rng = random.Random(f"ledger-rows-{seed}-{style}")
    lines = ["仕訳帳（2025年度）", "日付,伝票番号,勘定科目,摘要,取引先,金額,消費税,残高"]
    first = dt.date(2025, 4, 1)
    balance = 0
    for n in range(rows):
        day = first + dt.timedelta(days=rng.randrange(365))
        value = rng.randrange(1, 2_000_000) * (-1 if rng.random() < 0.12 else 1)
        balance += value
        memo = rng.choice(_MEMOS) + (f" No.{rng.randrange(1000)}" if rng.random() < 0.4 else "")
        cells = [
            _date(rng, day),
            f"{n + 1:07d}",
            rng.choice(_ACCOUNTS),
            memo,
            rng.choice(_PARTNERS),
            _amount(rng, value, style),
            f"{abs(value) // 11:,}",
            f"{balance:,}" if balance >= 0 else f"△{-balance:,}",
        ]
        lines.append(",".join(_quoted(c) for c in cells))
    return ("\r\n".join(lines) + "\r\n").encode("utf-8-sig")


def digest(result: Any) -> str:
    """A digest of everything ``read_table`` gave back (a ``TableResult``): every column's name,
    dtype and values, the positions, the total rows and ``info``; equal digests, equal
    readings."""
    found = hashlib.sha256()
    for name in result.df.columns:
        column = result.df[name]
        found.update(repr((name, str(column.dtype), column.tolist())).encode())
    for part in (result.positions, result.total_positions):
        found.update(repr(None if part is None else part.tolist()).encode())
    if result.totals is not None:
        found.update(repr(result.totals.to_dict("list")).encode())
    found.update(json.dumps(result.info.to_dict(), sort_keys=True, default=str).encode())
    return found.hexdigest()
