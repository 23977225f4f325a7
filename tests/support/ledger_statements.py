"""Dates with the year last in the columns a block or a bank statement reads: a seeded
generator of small Internet banking statements (CSV in UTF-8 or CP932, a workbook of text
cells) whose date column is one system's export, each statement with what it must read to.

Foreign banks' and card companies' exports, and a Japanese bank's CSV opened and saved by
Excel on a machine set to another locale, write the date with its year last
(``13/02/2026``, ``02/13/2026``, ``13.02.2026``, ``2/13/2026 10:15``). One cell cannot say
which order; the column can (a day above 12). By shape:

* ``shows``: one order, some cell shows it: every line read in that order;
* ``hidden``: one order, every day 12 or below: refused, with why (no cell shows the order);
* ``mixed``: two exports pasted together, a day-first one above a month-first one, each
  showing its order: refused, naming a cell of each.

:class:`Statement` holds the date cells as written and the dates they must read to (None:
refused, with ``reason`` a word the refusal must say).
"""

from __future__ import annotations

import datetime as dt
import io
import random
from dataclasses import dataclass

__all__ = ["FILES", "SHAPES", "Statement", "draw", "statement_file"]

SHAPES = ("shows", "hidden", "mixed")
FILES = ("utf8", "cp932", "xlsx_text")

_PADS = (("", "/"), (":02d", "/"), (":02d", "."), (":02d", "-"))
_DATE_HEADERS = ("取引日", "日付", "お取引日", "勘定日", "入出金日")
# The ways the exports write one date: padded or not, by separator; Excel's with its time.
_FORMS = (
    *(f"{{a{pad}}}{sep}{{b{pad}}}{sep}{{y}}" for pad, sep in _PADS),
    "{a}/{b}/{y} {t}",
)
_PAYERS = ("ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ﾔﾏﾀﾞ ﾀﾛｳ", "ｽｽﾞｷｺｳｷﾞﾖｳ(ｶ", "ﾕ)ｻｸﾗﾃﾞﾝｷ")
# The words a refusal must say, by shape.
REASONS = {"hidden": "12 以下", "mixed": "両方"}


@dataclass
class Statement:
    """A drawn statement: its shape, date header, date cells and the dates they read to."""

    shape: str
    header: str
    cells: list[str]
    want: list[dt.date | None]


def _written(day: dt.date, day_first: bool, form: str, rng: random.Random) -> str:
    a, b = (day.day, day.month) if day_first else (day.month, day.day)
    return form.format(a=a, b=b, y=day.year, t=f"{rng.randrange(24)}:{rng.randrange(60):02d}")


def _days(rng: random.Random, rows: int, shows: bool) -> list[dt.date]:
    start = dt.date(2025, 4, 1) + dt.timedelta(days=rng.randrange(300))
    days = sorted(start + dt.timedelta(days=rng.randrange(60)) for _ in range(rows))
    if not shows:
        return [d.replace(day=min(d.day, 12)) for d in days]
    if all(d.day <= 12 for d in days):
        days[-1] = days[-1].replace(day=rng.randrange(13, 29))
    return days


def draw(seed: int, shape: str, rows: int = 8) -> Statement:
    """A statement of ``shape`` (``SHAPES``) with ``rows`` lines, drawn from ``seed``."""
    rng = random.Random(f"ledger-statements-{seed}-{shape}")
    header, form = rng.choice(_DATE_HEADERS), rng.choice(_FORMS)
    day_first = rng.random() < 0.5
    if shape == "mixed":
        half = rows // 2
        cells = [_written(d, True, form, rng) for d in _days(rng, half, True)]
        cells += [_written(d, False, form, rng) for d in _days(rng, rows - half, True)]
        return Statement(shape, header, cells, [None] * rows)
    days = _days(rng, rows, shape == "shows")
    cells = [_written(d, day_first, form, rng) for d in days]
    want: list[dt.date | None] = list(days) if shape == "shows" else [None] * rows
    return Statement(shape, header, cells, want)


def statement_file(drawn: Statement, seed: int, form: str) -> tuple[bytes, str]:
    """The statement as a file of ``form`` (``FILES``): its bytes and its name."""
    rng = random.Random(f"ledger-statement-file-{seed}")
    rows = [
        [cell, f"{rng.randrange(1, 500) * 100}", "", f"振込 {rng.choice(_PAYERS)}"]
        for cell in drawn.cells
    ]
    header = [drawn.header, "入金額", "出金額", "摘要"]
    if form == "xlsx_text":
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        assert sheet is not None
        for row in (header, *rows):
            sheet.append([int(v) if v.isdigit() else (v or None) for v in row])
        out = io.BytesIO()
        book.save(out)
        return out.getvalue(), "statement.xlsx"
    text = "\r\n".join(",".join(row) for row in (header, *rows)) + "\r\n"
    return text.encode("cp932" if form == "cp932" else "utf-8"), "statement.csv"
