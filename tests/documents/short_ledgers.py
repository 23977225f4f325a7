"""Short tables (3-9 rows) as accounting teams export and keep them: a seeded generator.

Shapes: a 弥生-style 仕訳 export (no header line), freee- and MF-style journal exports, an
Internet bank's statement CSV and a customer list, each with or without its header line, in a
CSV or (a few) a workbook whose amounts are numbers. Beside the amounts they hold the columns
that must stay text however much they look like numbers: customer codes with leading zeros
(``00123``), telephone numbers (``0120-123-456``), 適格請求書 registration numbers
(``T`` + 13 digits) and 口座番号 (seven digits, leading zeros kept).

In most tables one amount cell (sometimes two) is written as a person or another program
writes an amount by hand: full-width digits (``１，２００``), a minus in brackets
(``(1,200)``), after the digits (``1,200-``) or as ``▲``/``△``, a yen mark (``￥1,200``), a
stray space (``1, 200``, `` 1,200``, ``1,200　``). ``expected`` is the amount each cell means.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from openpyxl import Workbook

__all__ = ["MISTYPES", "SHAPES", "ShortColumn", "ShortTable", "short_table"]

Kind = Literal["amount", "date", "code", "other"]
SHAPES = ("yayoi", "freee", "mf", "bank", "customers")
_FULL = str.maketrans("0123456789,-", "０１２３４５６７８９，－")


def _full(text: str) -> str:
    return text.translate(_FULL)


# Each mistyped form: (name, writes the value negative, how a value is written).
MISTYPES: tuple[tuple[str, bool, Callable[[int], str]], ...] = (
    ("full-width", False, lambda v: _full(f"{v:,}")),
    ("full-width plain", False, lambda v: _full(str(v))),
    ("full-width yen", False, lambda v: _full(f"{v:,}") + "円"),
    ("brackets", True, lambda v: f"({v:,})"),
    ("full-width brackets", True, lambda v: "（" + _full(f"{v:,}") + "）"),
    ("trailing minus", True, lambda v: f"{v:,}-"),
    ("yen mark", False, lambda v: f"￥{v:,}"),
    ("yen mark as cp932 writes it", False, lambda v: f"\\{v:,}"),
    ("yen mark space", False, lambda v: f"￥ {v:,}"),
    ("triangle", True, lambda v: f"▲{v:,}"),
    ("white triangle", True, lambda v: f"△{v:,}"),
    ("space before", False, lambda v: f" {v:,}"),
    ("space after", False, lambda v: f"{v:,} "),
    ("ideographic space", False, lambda v: f"{v:,}\u3000"),
    ("space after comma", False, lambda v: f"{v:,}".replace(",", ", ", 1)),
    ("space before comma", False, lambda v: f"{v:,}".replace(",", " ,", 1)),
    ("full-width space after comma", False, lambda v: _full(f"{v:,}").replace("，", "，\u3000", 1)),
)


@dataclass(frozen=True)
class ShortColumn:
    """One column: its header, what it holds, its cells and, for amounts, what they mean."""

    header: str
    kind: Kind
    cells: tuple[object, ...]  # as written: str in a CSV; int/date/str in a workbook; "" blank
    expected: tuple[int | None, ...] = ()  # amounts: what each cell means (None: blank)


@dataclass(frozen=True)
class ShortTable:
    """One drawn table: its columns in file order, with or without its header line, and the
    cells written by hand (``mistyped``)."""

    shape: str
    headed: bool
    workbook: bool
    columns: tuple[ShortColumn, ...]
    mistyped: tuple[tuple[int, int, str], ...]  # (column, row, form name)

    @property
    def rows(self) -> int:
        return len(self.columns[0].cells)

    @property
    def name(self) -> str:
        return f"{self.shape}.{'xlsx' if self.workbook else 'csv'}"

    def names(self) -> list[str]:
        """The column names a reader gives (``列<n>`` without a header line)."""
        if self.headed:
            return [c.header for c in self.columns]
        return [f"列{n + 1}" for n in range(len(self.columns))]

    def data(self) -> bytes:
        lines = [[c.cells[r] for c in self.columns] for r in range(self.rows)]
        if self.headed:
            lines.insert(0, [c.header for c in self.columns])
        if self.workbook:
            book = Workbook()
            sheet = book.active
            assert sheet is not None
            for line in lines:
                sheet.append([None if v == "" else v for v in line])
            out = io.BytesIO()
            book.save(out)
            return out.getvalue()
        text = io.StringIO()
        writer = csv.writer(
            text,
            quoting=csv.QUOTE_ALL if self.shape == "freee" else csv.QUOTE_MINIMAL,
            lineterminator="\r\n",
        )
        writer.writerows([[str(v) for v in line] for line in lines])
        return text.getvalue().encode("utf-8-sig" if self.shape == "freee" else "cp932")


_ACCOUNTS = ("売上高", "売掛金", "普通預金", "現金", "消耗品費", "旅費交通費", "支払手数料")
_NAMES = ("山田商事", "株式会社テスト", "さくら会計事務所", "ABC商会", "東都電機")
_TAXES = ("課税売上10%", "対象外", "課税仕入10%", "非課税")


def _amount(rng: random.Random) -> int:
    return rng.choice(
        (
            rng.randrange(1, 100) * 100,
            rng.randrange(1, 10_000) * 10,
            rng.randrange(1_000, 3_000_000),
        )
    )


def _code(rng: random.Random) -> str:
    return f"{rng.randrange(1, 1_000):0{rng.choice((5, 6, 4))}d}"


def _phone(rng: random.Random) -> str:
    return rng.choice(
        (
            f"0120-{rng.randrange(100, 1000)}-{rng.randrange(100, 1000)}",
            f"03-{rng.randrange(1000, 10_000)}-{rng.randrange(1000, 10_000)}",
            f"06-{rng.randrange(1000, 10_000)}-{rng.randrange(1000, 10_000)}",
            f"090-{rng.randrange(1000, 10_000)}-{rng.randrange(1000, 10_000)}",
        )
    )


def _invoice(rng: random.Random) -> str:
    return "T" + str(rng.randrange(10**12, 10**13))


def _account_number(rng: random.Random) -> str:
    # Seven digits as a bank prints them; a column of them holds at least one leading zero
    # (``short_table``), the number otherwise being no different from an amount's.
    return f"{rng.randrange(10**7):07d}"


class _Builder:
    def __init__(self, rng: random.Random, rows: int, workbook: bool) -> None:
        self.rng, self.rows, self.workbook = rng, rows, workbook
        self.columns: list[ShortColumn] = []
        self.day = dt.date(2026, rng.randrange(1, 13), 1)

    def text(self, header: str, kind: Kind, cells: list[str]) -> None:
        self.columns.append(ShortColumn(header, kind, tuple(cells)))

    def dates(self, header: str) -> None:
        days = sorted(
            self.day + dt.timedelta(days=self.rng.randrange(28)) for _ in range(self.rows)
        )
        form = self.rng.choice(("%Y/%m/%d", "%Y-%m-%d", "%Y/%-m/%-d"))
        cells: list[object] = [
            dt.datetime(d.year, d.month, d.day) if self.workbook else d.strftime(form) for d in days
        ]
        self.columns.append(ShortColumn(header, "date", tuple(cells)))

    def amounts(self, header: str, values: list[int | None], comma: bool) -> None:
        cells: list[object] = [
            "" if v is None else (v if self.workbook else (f"{v:,}" if comma else str(v)))
            for v in values
        ]
        self.columns.append(ShortColumn(header, "amount", tuple(cells), tuple(values)))


def _journal(b: _Builder, shape: str) -> None:
    rng, n = b.rng, b.rows
    values = [_amount(rng) for _ in range(n)]
    taxes = [v // 11 if rng.random() < 0.6 else 0 for v in values]
    if shape == "yayoi":
        b.text("識別フラグ", "other", ["2000"] * n)
        b.text("伝票No", "other", [str(i + 1) for i in range(n)])
        b.dates("取引日付")
        b.text("借方勘定科目", "other", [rng.choice(_ACCOUNTS) for _ in range(n)])
        b.text("借方税区分", "other", [rng.choice(_TAXES) for _ in range(n)])
        b.amounts("借方金額", list(values), comma=False)
        b.amounts("借方税金額", list(taxes), comma=False)
        b.text("貸方勘定科目", "other", [rng.choice(_ACCOUNTS) for _ in range(n)])
        b.amounts("貸方金額", list(values), comma=False)
        b.text("摘要", "other", [rng.choice(_NAMES) + " 請求分" for _ in range(n)])
    elif shape == "freee":
        b.dates("発生日")
        b.text("取引先コード", "code", [_code(rng) for _ in range(n)])
        b.text("取引先", "other", [rng.choice(_NAMES) for _ in range(n)])
        b.text("勘定科目", "other", [rng.choice(_ACCOUNTS) for _ in range(n)])
        b.text("税区分", "other", [rng.choice(_TAXES) for _ in range(n)])
        b.amounts("金額", list(values), comma=False)
        b.amounts("税額", list(taxes), comma=False)
        b.text("登録番号", "code", [_invoice(rng) for _ in range(n)])
    else:  # mf
        b.text("取引No", "other", [str(rng.randrange(1, 500)) for _ in range(n)])
        b.dates("取引日")
        b.text("借方勘定科目", "other", [rng.choice(_ACCOUNTS) for _ in range(n)])
        b.amounts("借方金額(円)", list(values), comma=True)
        b.text("貸方勘定科目", "other", [rng.choice(_ACCOUNTS) for _ in range(n)])
        b.amounts("貸方金額(円)", list(values), comma=True)
        b.text("摘要", "other", [rng.choice(_NAMES) for _ in range(n)])
        b.text("取引先電話", "code", [_phone(rng) for _ in range(n)])


def _bank(b: _Builder) -> None:
    rng, n = b.rng, b.rows
    out: list[int | None] = []
    into: list[int | None] = []
    balances: list[int | None] = []
    balance = rng.randrange(100_000, 5_000_000)
    directions = [rng.random() < 0.5 for _ in range(n)]
    directions[:2] = [True, False]  # a statement of a few lines with both directions
    rng.shuffle(directions)
    for deposit in directions:
        value = _amount(rng)
        balance += value if deposit else -value
        out.append(None if deposit else value)
        into.append(value if deposit else None)
        balances.append(balance)
    b.dates(rng.choice(("日付", "取引日", "お取引日")))
    b.text(
        "摘要",
        "other",
        [rng.choice(("振込 ", "ATM ", "口座振替 ")) + rng.choice(_NAMES) for _ in range(n)],
    )
    b.amounts(rng.choice(("お引出し", "出金", "お支払金額")), out, comma=True)
    b.amounts(rng.choice(("お預入れ", "入金", "お預り金額")), into, comma=True)
    b.amounts("残高", balances, comma=True)


def _customers(b: _Builder) -> None:
    rng, n = b.rng, b.rows
    b.text("取引先コード", "code", [_code(rng) for _ in range(n)])
    b.text(
        "取引先名",
        "other",
        rng.sample(_NAMES, min(n, len(_NAMES))) + [f"取引先{i}" for i in range(n - len(_NAMES))],
    )
    b.text("電話番号", "code", [_phone(rng) for _ in range(n)])
    accounts = [_account_number(rng) for _ in range(n)]
    if not any(a.startswith("0") for a in accounts):
        accounts[rng.randrange(n)] = "0" + accounts[0][1:]
    b.text("口座番号", "code", accounts)
    b.text("登録番号", "code", [_invoice(rng) for _ in range(n)])
    b.amounts("売掛残高", [_amount(rng) for _ in range(n)], comma=rng.random() < 0.5)


def _mistype(rng: random.Random, column: ShortColumn, row: int) -> tuple[ShortColumn, str]:
    value = column.expected[row]
    assert value is not None
    name, negative, write = rng.choice(MISTYPES)
    cells, expected = list(column.cells), list(column.expected)
    cells[row] = write(abs(value))
    expected[row] = -abs(value) if negative else abs(value)
    return ShortColumn(column.header, column.kind, tuple(cells), tuple(expected)), name


def short_table(seed: int) -> ShortTable:
    """One short table (deterministic per ``seed``)."""
    rng = random.Random(seed)
    shape = SHAPES[seed % len(SHAPES)]
    # A customer list without its header line has no date to tell its first row is data.
    headed = shape == "customers" or rng.random() < (0.2 if shape == "yayoi" else 0.5)
    workbook = rng.random() < 0.2
    b = _Builder(rng, rng.randrange(3, 10), workbook)
    if shape == "bank":
        _bank(b)
    elif shape == "customers":
        _customers(b)
    else:
        _journal(b, shape)
    columns = list(b.columns)
    mistyped: list[tuple[int, int, str]] = []
    amounts = [i for i, c in enumerate(columns) if c.kind == "amount"]
    for _ in range(rng.choice((0, 1, 1, 1, 2))):
        i = rng.choice(amounts)
        filled = [
            r
            for r, v in enumerate(columns[i].expected)
            if v and not any(m[0] == i and m[1] == r for m in mistyped)
        ]
        if not filled:
            continue
        row = rng.choice(filled)
        columns[i], form = _mistype(rng, columns[i], row)
        mistyped.append((i, row, form))
    return ShortTable(shape, headed, workbook, tuple(columns), tuple(mistyped))
