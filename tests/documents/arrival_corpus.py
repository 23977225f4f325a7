"""Files as they arrive from accounting systems, banks and Excel: a seeded generator.

Each case is one small ledger (date, 取引先, コード with leading zeros, 金額) written the way a
Japanese back office's files really come, in shapes the other corpora do not draw:

- text: CP932 with NEC/IBM extension characters (①, ㈱, ㍻, 髙, 﨑), UTF-8 with and without a
  BOM, EUC-JP, Excel's 「Unicode テキスト」 (UTF-16 LE with a BOM, tabs, CRLF); a file that is
  ASCII for its first few hundred KB with the Japanese rows at the end; CRLF, LF and both mixed;
  the DOS EOF mark 0x1A and NUL padding after the last line; two exports joined into one file,
  each with its BOM and header; title and blank lines above the header; a delimiter after every cell; quoted names with line breaks and commas; codes written
  ``="00123"`` for Excel (bare or CSV-quoted); ``,`` ``\\t`` ``;`` delimiters; the header
  repeated in the middle;
- workbooks: the 1904 date system, dates as date cells or as serial numbers under General,
  a hidden first sheet, hidden rows and columns, amounts stored as text, a formatted empty
  cell far beyond the table, formulas with a saved result (as Excel writes them) and without
  one (as a program that never computed them writes them).

Every case knows the rows it holds (``Ledger``) and what a reader must say about it.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import re
import zipfile
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils.datetime import CALENDAR_MAC_1904, to_excel

__all__ = [
    "ASCII_HEADER",
    "HEADER",
    "Ledger",
    "TextCase",
    "WorkbookCase",
    "expected_records",
    "text_case",
    "workbook_case",
]

HEADER = ("日付", "取引先", "コード", "金額")
# The header a system that writes ASCII first (the ``ascii_head`` shape) gives its columns.
ASCII_HEADER = ("date", "name", "code", "amount")
# Names as bank and accounting systems write them; the first group is CP932 only (NEC/IBM
# extensions), half-width kana are not written in EUC-JP here (see ``text_case``).
_CP932_ONLY = ("㈱髙橋商事", "﨑山工業①", "㍻興産", "德永鉄工㈲", "ｶ)ﾀｶﾊｼｼｮｳｼﾞ", "ﾐﾄﾞﾘ ｼｮｳｶｲ")
_COMMON = ("株式会社テスト", "有限会社さくら", "ＡＢＣ商会", "山田　太郎", "東京都港区（本社）")
_ASCII = ("ABC Corp", "Sato & Co", "Kato Ltd")


@dataclass(frozen=True)
class Ledger:
    """The rows a file holds: (date, name, code, amount)."""

    rows: tuple[tuple[dt.date, str, str, int], ...]


def _ledger(rng: random.Random, names: tuple[str, ...], count: int) -> Ledger:
    start = dt.date(2026, 4, 1)
    rows = tuple(
        (
            start + dt.timedelta(days=rng.randrange(60)),
            rng.choice(names),
            f"{rng.randrange(1, 99999):05d}",
            rng.randrange(1, 5_000_000),
        )
        for _ in range(count)
    )
    return Ledger(rows)


@dataclass(frozen=True)
class Case:
    """One file: its bytes and name, the rows it holds, the shape it was drawn in."""

    data: bytes
    name: str
    ledger: Ledger
    shape: dict[str, object]


@dataclass(frozen=True)
class TextCase(Case):
    header: tuple[str, ...] = HEADER


def _flags(rng: random.Random, **chances: float) -> dict[str, bool]:
    """Each shape flag drawn with its chance, in the order given (deterministic per ``rng``)."""
    return {flag: rng.random() < chance for flag, chance in chances.items()}


def _quoted(cell: str, delimiter: str) -> str:
    if any(ch in cell for ch in (delimiter, '"', "\n", "\r")):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def text_case(seed: int) -> TextCase:
    """One delimited-text ledger of random shape (deterministic per ``seed``)."""
    rng = random.Random(seed)
    encoding = rng.choice(["cp932", "cp932", "utf-8", "utf-8-sig", "utf-16", "euc-jp", "euc-jp"])
    delimiter = "\t" if encoding == "utf-16" else rng.choice([",", ",", "\t", ";"])
    names = _COMMON + (_CP932_ONLY if encoding != "euc-jp" else ())
    flags = _flags(
        rng, quoted_breaks=0.3, trailing=0.3, titles=0.5, repeated=0.2, ascii_head=0.3, joined=0.2
    )
    if flags["quoted_breaks"]:
        names += ("㈱髙橋\n商事" if encoding != "euc-jp" else "高橋\n商事", "佐藤, 鈴木")
    ledger = _ledger(rng, names, rng.randrange(3, 25))
    newline = "\r\n" if encoding == "utf-16" else rng.choice(["\r\n", "\n", "mixed"])
    excel_text = rng.choice(["none", "bare", "quoted"])
    repeated = flags["repeated"] and len(ledger.rows) > 4
    ascii_head = encoding in ("cp932", "euc-jp") and flags["ascii_head"]
    titles = flags["titles"] and not ascii_head
    shape: dict[str, object] = {
        **flags,
        "encoding": encoding,
        "delimiter": delimiter,
        "newline": newline,
        "excel_text": excel_text,
        "repeated": repeated,
        "ascii_head": ascii_head,
        "titles": titles,
    }
    columns = ASCII_HEADER if ascii_head else HEADER
    header = delimiter.join(columns)
    stamp = f"出力日時：2026/06/01 10:{rng.randrange(60):02d}"
    rows = list(ledger.rows)
    if ascii_head:  # the ASCII rows first, then the Japanese ones past the scored head
        extra = [
            (dt.date(2026, 4, 1), rng.choice(_ASCII), f"{n % 99999 + 1:05d}", n)
            for n in range(1, 9_000)
        ]
        rows = extra + rows
        ledger = Ledger(tuple(rows))

    def export(part: list[tuple[dt.date, str, str, int]]) -> list[str]:
        """The lines of one export of ``part``: titles, header, rows."""
        lines = ["売上明細表", "", stamp, ""] if titles else []
        lines.append(header)
        for n, (day, name, code, amount) in enumerate(part):
            code_cell = {
                "none": code,
                "bare": f'="{code}"',
                "quoted": _quoted(f'="{code}"', delimiter),
            }[excel_text]
            cells = [day.strftime("%Y/%m/%d"), _quoted(name, delimiter), code_cell, str(amount)]
            lines.append(delimiter.join(cells))
            if repeated and n == len(part) // 2:
                lines.append(header)
        if flags["trailing"]:
            lines = [line + delimiter if line else line for line in lines]
        ends = [rng.choice(["\r\n", "\n"]) if newline == "mixed" else newline for _ in lines]
        return [line + end for line, end in zip(lines, ends, strict=True)]

    # Two exports joined into one file (``copy /b``), each with its own BOM.
    joined = flags["joined"] and not ascii_head and len(rows) >= 4
    shape["joined"] = joined
    parts = [rows[: len(rows) // 2], rows[len(rows) // 2 :]] if joined else [rows]
    data = b"".join(_encoded("".join(export(part)), encoding) for part in parts)
    padding = (
        b""
        if encoding == "utf-16"
        else rng.choice([b"", b"", b"\x1a", b"\x00" * 37, b"\x1a\x00\x00"])
    )
    shape["padding"] = len(padding)
    name = "明細.txt" if encoding == "utf-16" else rng.choice(["明細.csv", "明細.txt"])
    return TextCase(data + padding, name, ledger, shape, columns)


def _encoded(text: str, encoding: str) -> bytes:
    """``text`` as a system writes it: UTF-16 is little-endian after its BOM (Excel's Unicode
    text), ``utf-8-sig`` starts with a BOM."""
    if encoding == "utf-16":
        return ("\ufeff" + text).encode("utf-16-le")
    return text.encode(encoding)


@dataclass(frozen=True)
class WorkbookCase(Case):
    hidden_rows: tuple[int, ...] = ()
    uncomputed: tuple[str, ...] = ()  # cells a reader must name when it refuses the sheet
    sheet: str = "明細"


_CELL_VALUE = re.compile(
    rb'(<c r="(?P<ref>[A-Z]+[0-9]+)"[^>]*>)<f>(?P<f>[^<]*)</f><v\s*/?>(?:</v>)?'
)


def _cache_formulas(data: bytes, values: dict[str, int]) -> bytes:
    """The workbook with the result of each formula cell in ``values`` saved as Excel saves it
    (openpyxl writes formulas with an empty ``<v>``)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            body = src.read(item.filename)
            if item.filename.startswith("xl/worksheets/sheet"):

                def cached(match: re.Match[bytes]) -> bytes:
                    ref = match["ref"].decode()
                    if ref not in values:
                        return match[0]
                    return (
                        match[1]
                        + b"<f>"
                        + match["f"]
                        + b"</f><v>"
                        + str(values[ref]).encode()
                        + b"</v>"
                    )

                body = _CELL_VALUE.sub(cached, body)
            dst.writestr(item, body)
    return out.getvalue()


def workbook_case(seed: int) -> WorkbookCase:
    """One workbook ledger of random shape (deterministic per ``seed``)."""
    rng = random.Random(seed)
    ledger = _ledger(rng, _COMMON + _CP932_ONLY, rng.randrange(3, 20))
    flags = _flags(
        rng, mac=0.4, serial_dates=0.5, hidden_sheet=0.4, text_amounts=0.3, stray_format=0.3
    )
    mac, serial_dates, hidden_sheet = flags["mac"], flags["serial_dates"], flags["hidden_sheet"]
    formulas = rng.choice(["none", "computed", "uncomputed"])
    title = rng.random() < 0.5
    shape: dict[str, object] = {**flags, "formulas": formulas, "title": title}
    book = Workbook()
    if mac:
        book.epoch = CALENDAR_MAC_1904
    first = book.active
    assert first is not None
    if hidden_sheet:
        first.title = "設定"
        first.append(["区分", "値"])
        first.append(["税率", 10])
        first.sheet_state = "hidden"
        ws = book.create_sheet("明細")
    else:
        ws = first
        ws.title = "明細"
    if title:
        ws.append(["2026年度 売上明細"])
        ws.merge_cells("A1:D1")
        ws.append([])
    ws.append([*HEADER, "備考"])
    top = ws.max_row + 1
    for day, name, code, amount in ledger.rows:
        date_cell: object = day
        if serial_dates:
            date_cell = int(to_excel(dt.datetime.combine(day, dt.time()), book.epoch))
        amount_cell: object = f"{amount:,}" if flags["text_amounts"] else amount
        ws.append([date_cell, name, code, amount_cell, None])
        if not serial_dates:
            ws.cell(row=ws.max_row, column=1).number_format = "yyyy/mm/dd"
    hidden_rows = tuple(sorted(rng.sample(range(top, ws.max_row + 1), k=min(2, len(ledger.rows)))))
    if rng.random() < 0.5:
        for row in hidden_rows:
            ws.row_dimensions[row].hidden = True
    else:
        hidden_rows = ()
    shape["hidden_rows"] = hidden_rows
    uncomputed: tuple[str, ...] = ()
    cached: dict[str, int] = {}
    if formulas != "none":
        for row in range(top, ws.max_row + 1):
            ws.cell(row=row, column=5).value = f"=LEN(B{row})*0"  # a check column: 0
            cached[f"E{row}"] = 0
        ws.column_dimensions["E"].hidden = rng.random() < 0.5
        if formulas == "uncomputed":
            uncomputed = tuple(sorted(cached, key=lambda ref: int(ref[1:])))
    if flags["stray_format"]:
        ws.cell(row=rng.choice([5_000, 1_048_576]), column=rng.choice([60, 16_384])).font = Font(
            bold=True
        )
    buffer = io.BytesIO()
    book.save(buffer)
    data = buffer.getvalue()
    if formulas == "computed":
        data = _cache_formulas(data, cached)
    return WorkbookCase(data, "明細.xlsx", ledger, shape, hidden_rows, uncomputed)


def expected_records(ledger: Ledger) -> list[tuple[str, str, str, int]]:
    """The rows as a reader must give them (ISO date, name, code, amount)."""
    return [(day.isoformat(), name, code, amount) for day, name, code, amount in ledger.rows]
