"""Files as accounting systems, banks and spreadsheet programs export them: a seeded generator.

Shapes the other corpora (``arrival_corpus``, ``fresh_ledgers``, ``ledger_corpus``) do not draw:

- 弥生会計's 仕訳日記帳 export: CP932, no header line at all, 25 columns from the 識別フラグ
  (2000 for a one-line 仕訳) on, mostly empty;
- freee's export: UTF-8 with a BOM, every cell quoted, blank lines after the last record;
- 勘定奉行-style exports: CP932, every cell quoted, amounts with thousands commas inside the
  quotes, a delimiter after the last cell of each line;
- Excel for Mac's 「CSV (Macintosh)」: lines ending in CR alone;
- an Internet bank's CSV: account lines (口座, 照会期間) above the header, 入金 / 出金 columns
  of which one is empty on each line, quoted amounts with commas;
- workbooks as other programs write them: cells and rows without their ``r`` reference (web
  systems' writers), text in a shared-string table (Excel, LibreOffice, Google Sheets) or inline
  in rich-text runs.

Names come with CP932's NEC/IBM extension characters (髙, 﨑, ㈱) where the encoding has them.
A case may carry one amount a person mistyped (``12OO``); a reader must then name its line.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import re
import zipfile
from dataclasses import dataclass

from openpyxl import Workbook

__all__ = ["TEXT_SHAPES", "Export", "text_export", "workbook_export"]

TEXT_SHAPES = ("yayoi", "freee", "bugyo", "mac", "bank")
_NAMES = ("株式会社テスト", "山田商事", "ＡＢＣ商会", "さくら会計事務所", "東京都港区（本社）")
_CP932_NAMES = ("㈱髙橋商事", "﨑山工業", "德永鉄工㈲")
MISTYPED = "12OO"  # O for 0, as typed in a hurry


@dataclass(frozen=True)
class Export:
    data: bytes
    name: str
    shape: str
    rows: tuple[tuple[str, str, int], ...]  # (ISO date, name, amount) in file order
    columns: tuple[str, str, str]  # the columns a reader names date, name and amount
    mistyped_line: int | None  # the file line (or sheet row) of the mistyped amount


def _rows(rng: random.Random, names: tuple[str, ...]) -> list[tuple[dt.date, str, int]]:
    start = dt.date(2026, 4, 1)
    return [
        (
            start + dt.timedelta(days=rng.randrange(28)),
            rng.choice(names),
            rng.randrange(1, 3_000) * 100,
        )
        for _ in range(rng.randrange(2, 30))
    ]


def _quote(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"'


def text_export(seed: int) -> Export:
    """One text export of a random shape (deterministic per ``seed``)."""
    rng = random.Random(seed)
    shape = TEXT_SHAPES[seed % len(TEXT_SHAPES)]
    encoding = "utf-8-sig" if shape == "freee" else "cp932"
    rows = _rows(rng, _NAMES + (_CP932_NAMES if encoding == "cp932" else ()))
    # One cell in a few is a column of text, not of amounts with a mistake: from 5 rows on
    # under a header that names amounts, from 20 in a file without one (table_types' shares).
    enough = len(rows) >= (20 if shape == "yayoi" else 5)
    mistyped = rng.randrange(len(rows)) if enough and rng.random() < 0.3 else None

    def amount(n: int, value: int, comma: bool) -> str:
        return MISTYPED if n == mistyped else (f"{value:,}" if comma else str(value))

    lines: list[str]
    columns = ("日付", "取引先", "金額")
    if shape == "yayoi":
        lines = []
        for n, (day, name, value) in enumerate(rows):
            cells = [""] * 25
            cells[0], cells[3], cells[4], cells[7] = "2000", f"{day:%Y/%m/%d}", "売掛金", "対象外"
            cells[8], cells[9], cells[10], cells[13] = (
                amount(n, value, False),
                "0",
                "売上高",
                "課税売上10%",
            )
            cells[14], cells[15], cells[16], cells[19], cells[24] = str(value), "0", name, "0", "no"
            lines.append(",".join(cells))
        columns = ("列4", "列17", "列9")
        first = 1
    elif shape == "freee":
        lines = [",".join(map(_quote, ("発生日", "取引先", "勘定科目", "金額")))]
        lines += [
            ",".join(map(_quote, (f"{day:%Y-%m-%d}", name, "売上高", amount(n, value, False))))
            for n, (day, name, value) in enumerate(rows)
        ]
        lines += ["", ""]
        columns = ("発生日", "取引先", "金額")
        first = 2
    elif shape == "bugyo":
        lines = [",".join(map(_quote, ("伝票日付", "取引先名", "借方科目", "金額"))) + ","]
        lines += [
            ",".join(map(_quote, (f"{day:%Y/%m/%d}", name, "現金", amount(n, value, True)))) + ","
            for n, (day, name, value) in enumerate(rows)
        ]
        columns = ("伝票日付", "取引先名", "金額")
        first = 2
    elif shape == "mac":
        lines = ["日付,取引先,金額"]
        lines += [
            f"{day:%Y/%-m/%-d},{name},{_quote(amount(n, value, True))}"
            for n, (day, name, value) in enumerate(rows)
        ]
        first = 2
    else:  # bank
        lines = [
            "口座,普通 1234567",
            "照会期間,2026/04/01～2026/04/30",
            "",
            "日付,摘要,入金,出金,残高",
        ]
        balance = 1_000_000
        for n, (day, name, value) in enumerate(rows):
            balance += value
            cells = [
                f"{day:%Y/%m/%d}",
                name,
                _quote(amount(n, value, True)),
                "",
                _quote(f"{balance:,}"),
            ]
            lines.append(",".join(cells))
        columns = ("日付", "摘要", "入金")
        first = 5
    end = "\r" if shape == "mac" else "\r\n"
    data = "".join(line + end for line in lines).encode(encoding)
    return Export(
        data,
        "仕訳日記帳.csv" if shape == "yayoi" else f"{shape}.csv",
        shape,
        tuple((day.isoformat(), name, value) for day, name, value in rows),
        columns,
        first + mistyped if mistyped is not None else None,
    )


_INLINE = re.compile(rb'<c ([^>]*?)t="inlineStr"([^>]*)><is><t>(.*?)</t></is></c>')
_FIRST_CHAR = re.compile(rb"(&#?\w+;|[\x00-\x7f]|[\xc0-\xff][\x80-\xbf]*)(.*)", re.DOTALL)
_SHARED_TYPE = (
    b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
    b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
)
_SHARED_REL = (
    b'<Relationship Id="rIdShared" Type="http://schemas.openxmlformats.org/officeDocument/'
    b'2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
)


def _rewritten(data: bytes, *, references: bool, shared: bool, runs: bool) -> bytes:
    """openpyxl's workbook (inline strings, every cell and row with its reference) as another
    program writes it: without references, with a shared-string table (Excel, LibreOffice,
    Google Sheets), or with inline text in rich-text runs."""
    out = io.BytesIO()
    strings: list[bytes] = []

    def cell(match: re.Match[bytes]) -> bytes:
        if shared:
            strings.append(match[3])
            return b"<c " + match[1] + b't="s"' + match[2] + b"><v>%d</v></c>" % (len(strings) - 1)
        if runs:  # the first character (or character reference) in a run of its own
            head, tail = _FIRST_CHAR.match(match[3]).groups()  # type: ignore[union-attr]
            return (
                b"<c " + match[1] + b't="inlineStr"' + match[2] + b"><is><r><t>" + head
                + b"</t></r><r><rPr><b/></rPr><t>" + tail + b"</t></r></is></c>"
            )  # fmt: skip
        return match[0]

    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):
                body = _INLINE.sub(cell, body)
                if not references:
                    body = re.sub(rb'(<(?:c|row)\b[^>]*?) r="[A-Z]*[0-9]+"', rb"\1", body)
            elif shared and item.filename == "[Content_Types].xml":
                body = body.replace(b"</Types>", _SHARED_TYPE + b"</Types>")
            elif shared and item.filename == "xl/_rels/workbook.xml.rels":
                body = body.replace(b"</Relationships>", _SHARED_REL + b"</Relationships>")
            dst.writestr(item, body)
        if shared:
            items = b"".join(b"<si><t>" + s + b"</t></si>" for s in strings)
            dst.writestr(
                "xl/sharedStrings.xml",
                b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" '
                b'uniqueCount="%d">' % (len(strings), len(strings)) + items + b"</sst>",
            )
    return out.getvalue()


def workbook_export(seed: int) -> Export:
    """One workbook as a web system or another spreadsheet program writes it."""
    rng = random.Random(seed)
    rows = _rows(rng, _NAMES + _CP932_NAMES)
    book = Workbook()
    ws = book.active
    ws.title = "シート1"
    ws.append(["日付", "取引先", "金額"])
    for day, name, value in rows:
        ws.append([day, name, value])
        ws.cell(ws.max_row, 1).number_format = "yyyy/m/d"
    buffer = io.BytesIO()
    book.save(buffer)
    references, shared, runs = rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5
    shape = f"references={references} shared={shared} runs={runs and not shared}"
    data = _rewritten(buffer.getvalue(), references=references, shared=shared, runs=runs)
    return Export(
        data,
        "明細.xlsx",
        shape,
        tuple((day.isoformat(), name, value) for day, name, value in rows),
        ("日付", "取引先", "金額"),
        None,
    )
