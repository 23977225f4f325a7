"""Hostile input files, small on disk and huge once read, written by the tests themselves.

Bombs are built without ever holding the expanded data: a deflate stream of one repeated
block is that block compressed once (ending on a full flush, which resets the compressor, so
every repetition compresses to the same bytes), repeated, then closed with an empty final
block. The checksums (CRC-32 for ZIP, Adler-32 for zlib/PDF) are computed block by block.

``peak_rss`` runs a reader in a fresh interpreter and returns its peak resident memory (its own
``VmHWM`` and the ``ru_maxrss`` of the children it waited for, such as the bounded parser child)
and its ``VmHWM`` after the imports, as the baseline. Not the reader's own ``ru_maxrss``: Linux
keeps there the peak of the process that forked it, the test runner, which grows over a run.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import threading
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Measured",
    "MiB",
    "billion_laughs_xlsx",
    "deflate_repeated",
    "far_cell_xlsx",
    "flate_bomb_pdf",
    "lying_dimension_xlsx",
    "many_parts_xlsx",
    "minimal_xlsx",
    "office_part_bomb",
    "peak_rss",
    "shared_strings_bomb_xlsx",
    "wide_csv",
]

MiB = 1024 * 1024
# A safety net for a reader that never ends, not a measure of speed.
READER_TIMEOUT_S = 600
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_END = struct.Struct("<4sHHHHIIH")
# The final deflate block: BFINAL=1, fixed Huffman, end-of-block (byte-aligned after a flush).
_FINAL_EMPTY_BLOCK = b"\x03\x00"


@dataclass
class Deflated:
    """A raw deflate stream and the checksums of what it expands to."""

    payload: bytes
    size: int
    crc32: int
    adler32: int


def deflate_repeated(
    block: bytes, repeat: int, *, prefix: bytes = b"", suffix: bytes = b""
) -> Deflated:
    """Raw deflate of ``prefix + block * repeat + suffix`` without building the expansion."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    body = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    assert packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH) == body
    tail = packer.compress(suffix) + packer.flush(zlib.Z_FULL_FLUSH)
    crc, adler = zlib.crc32(prefix), zlib.adler32(prefix)
    for _ in range(repeat):
        crc, adler = zlib.crc32(block, crc), zlib.adler32(block, adler)
    crc, adler = zlib.crc32(suffix, crc), zlib.adler32(suffix, adler)
    payload = head + body * repeat + tail + _FINAL_EMPTY_BLOCK
    size = len(prefix) + len(block) * repeat + len(suffix)
    return Deflated(payload, size, crc, adler)


def _zip(entries: list[tuple[str, Deflated]]) -> bytes:
    """A ZIP of already-deflated entries (the sizes and CRCs are the true ones)."""
    out = io.BytesIO()
    central = bytearray()
    for name, entry in entries:
        raw = name.encode()
        offset = out.tell()
        fields = (
            20,
            0x800,
            zipfile.ZIP_DEFLATED,
            0,
            0x21,
            entry.crc32,
            len(entry.payload),
            entry.size,
        )
        out.write(_LOCAL.pack(b"PK\x03\x04", *fields, len(raw), 0) + raw + entry.payload)
        central += _CENTRAL.pack(b"PK\x01\x02", 20, *fields, len(raw), 0, 0, 0, 0, 0, offset) + raw
    start = out.tell()
    out.write(central)
    out.write(_END.pack(b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), start, 0))
    return out.getvalue()


def _deflated(data: bytes) -> Deflated:
    return deflate_repeated(b"", 0, prefix=data)


_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_XLSX_PARTS = {
    "[Content_Types].xml": (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels"'
        ' ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{_CT}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{_CT}.worksheet+xml"/>'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_CT}.sharedStrings+xml"/>'
        "</Types>"
    ),
    "_rels/.rels": (
        f'<Relationships xmlns="{_PKG_REL}"><Relationship Id="rId1"'
        f' Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    ),
    "xl/workbook.xml": (
        f'<workbook xmlns="{_MAIN_NS}" xmlns:r="{_REL}"><sheets>'
        '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
    ),
    "xl/_rels/workbook.xml.rels": (
        f'<Relationships xmlns="{_PKG_REL}">'
        f'<Relationship Id="rId1" Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/>'
        f'<Relationship Id="rId2" Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/>'
        "</Relationships>"
    ),
}
_XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_SHEET = f'<worksheet xmlns="{_MAIN_NS}"><sheetData>{{rows}}</sheetData></worksheet>'
_ONE_STRING_ROW = '<row r="1"><c r="A1" t="s"><v>0</v></c></row>'


def minimal_xlsx(*, shared_strings: Deflated | None = None, sheet: Deflated | None = None) -> bytes:
    """A valid one-sheet .xlsx written part by part (A1 is shared string 0); either part may
    be replaced by a prepared (possibly hostile) deflate stream."""
    entries = [(name, _deflated((_XML_DECL + xml).encode())) for name, xml in _XLSX_PARTS.items()]
    strings = f'<sst xmlns="{_MAIN_NS}"><si><t>見出し</t></si></sst>'
    default_sheet = _SHEET.format(rows=_ONE_STRING_ROW)
    entries.append(
        ("xl/sharedStrings.xml", shared_strings or _deflated((_XML_DECL + strings).encode()))
    )
    entries.append(
        ("xl/worksheets/sheet1.xml", sheet or _deflated((_XML_DECL + default_sheet).encode()))
    )
    return _zip(entries)


def shared_strings_bomb_xlsx(expanded_mb: int = 432) -> bytes:
    """An .xlsx (about 1/400 of ``expanded_mb``) whose sharedStrings.xml is ``expanded_mb`` MB
    of ``<si><t>a</t></si>``."""
    head = (_XML_DECL + f'<sst xmlns="{_MAIN_NS}">').encode()
    block = b"<si><t>a</t></si>" * 65536
    repeat = expanded_mb * MiB // len(block)
    bomb = deflate_repeated(block, repeat, prefix=head, suffix=b"</sst>")
    return minimal_xlsx(shared_strings=bomb)


def _laughs(root: str) -> str:
    lines = ['<!ENTITY lol0 "lollollollollollollollollollol">']
    lines += [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)]
    return f"<!DOCTYPE {root} [" + "".join(lines) + "]>"


def billion_laughs_xlsx(part: str = "sheet") -> bytes:
    """An .xlsx whose sheet (``part="sheet"``) or shared strings (``"strings"``) define nested
    entities ("billion laughs": 10^9 copies of "lol")."""
    if part == "sheet":
        row = '<row r="1"><c r="A1" t="inlineStr"><is><t>&lol9;</t></is></c></row>'
        xml = _XML_DECL + _laughs("worksheet") + _SHEET.format(rows=row)
        return minimal_xlsx(sheet=_deflated(xml.encode()))
    strings = f'<sst xmlns="{_MAIN_NS}"><si><t>&lol9;</t></si></sst>'
    xml = _XML_DECL + _laughs("sst") + strings
    return minimal_xlsx(shared_strings=_deflated(xml.encode()))


def lying_dimension_xlsx() -> bytes:
    """A1 and A100000 (42) exist, but the saved dimension claims A1:XFD1048576: a reader
    that trusts it pads 100,000 rows to 16,384 columns each."""
    last = '<row r="100000"><c r="A100000"><v>42</v></c></row>'
    sheet = (
        f'<worksheet xmlns="{_MAIN_NS}"><dimension ref="A1:XFD1048576"/>'
        f"<sheetData>{_ONE_STRING_ROW}{last}</sheetData></worksheet>"
    )
    return minimal_xlsx(sheet=_deflated((_XML_DECL + sheet).encode()))


def many_parts_xlsx(extra_parts: int = 6_000) -> bytes:
    """A valid .xlsx carrying ``extra_parts`` tiny extra members."""
    data = minimal_xlsx()
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a") as archive:
        for n in range(extra_parts):
            archive.writestr(f"customXml/item{n}.xml", "<a/>")
    return out.getvalue()


def office_part_bomb(document: bytes, part: str, element: bytes, expanded_mb: int) -> bytes:
    """``document`` (an Office file) with ``part`` replaced by ``expanded_mb`` MB of
    ``element`` repeated inside the part's original first and last tags."""
    entries: list[tuple[str, Deflated]] = []
    with zipfile.ZipFile(io.BytesIO(document)) as archive:
        for name in archive.namelist():
            content = archive.read(name)
            if name != part:
                entries.append((name, _deflated(content)))
                continue
            cut = content.index(b">", content.index(b"<", content.index(b"?>") + 2)) + 1
            head, tail = content[:cut], content[content.rindex(b"</") :]
            block = element * (MiB // len(element))
            entries.append((name, deflate_repeated(block, expanded_mb, prefix=head, suffix=tail)))
    return _zip(entries)


def far_cell_xlsx() -> bytes:
    """A few KB: A1 and one cell at the sheet's last position, XFD1048576."""
    from openpyxl import Workbook

    book = Workbook()
    book.active["A1"] = "金額"
    book.active["XFD1048576"] = 1
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def flate_bomb_pdf(expanded_mb: int = 1536) -> bytes:
    """A one-page PDF whose content stream is a zlib stream of ``expanded_mb`` MB of spaces."""
    text = b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"
    spaces = deflate_repeated(b" " * MiB, expanded_mb, prefix=text)
    stream = b"\x78\xda" + spaces.payload + struct.pack(">I", spaces.adler32)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def wide_csv(columns: int = 100_000, rows: int = 1) -> bytes:
    """A header of ``columns`` names and ``rows`` rows of numbers (890 KB for 100,000)."""
    header = ",".join(f"c{i}" for i in range(columns))
    row = ",".join(str(i % 10) for i in range(columns))
    return (header + "\n" + (row + "\n") * rows).encode()


@dataclass
class Measured:
    """What the reader in the child interpreter did, and its memory."""

    outcome: dict[str, Any]
    peak_mb: float
    baseline_mb: float

    @property
    def growth_mb(self) -> float:
        return self.peak_mb - self.baseline_mb


# Runs in a fresh interpreter: import, note the baseline, read, report. A guard on the
# address space keeps a reader without a bound (the code before the fix) from taking the
# machine: it then fails with MemoryError instead of growing to gigabytes.
_SCRIPT = """
import json, resource, sys
from keiri_agent.documents import ExcelManager, extract_text, read_table
from keiri_agent.errors import BlockError

def vm_size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024

def vm_hwm_kb():
    # This process's own peak since its exec. ru_maxrss would also hold the peak of the
    # process that forked it (the test runner, hundreds of MB late in a full run).
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

guard = vm_size() + int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (guard, guard))
baseline = vm_hwm_kb()
rows = lambda path: ExcelManager(path).read_rows()
reader = {"extract": extract_text, "table": read_table, "rows": rows}[sys.argv[1]]
try:
    result = reader(sys.argv[2])
    outcome = {"ok": True}
except BlockError as exc:
    outcome = {"error": exc.to_dict()}
except BaseException as exc:
    outcome = {"crash": f"{type(exc).__name__}: {str(exc)[:300]}"}
# The bounded parser children were forked from this small process: their peaks are real.
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
peak = max(vm_hwm_kb(), children)
print(json.dumps({"outcome": outcome, "baseline_kb": baseline, "peak_kb": peak}))
"""


def peak_rss(reader: str, path: Path, *, guard_bytes: int = 3 * 1024 * MiB) -> Measured:
    """Run ``reader`` on ``path`` in a fresh interpreter: "extract" (``extract_text``), "table"
    (``read_table``) or "rows" (``ExcelManager.read_rows``)."""
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(
            [sys.executable, "-c", _SCRIPT, reader, str(path), str(guard_bytes)],
            stdout=subprocess.PIPE,
            stderr=devnull,
        )
        assert proc.stdout is not None
        # A reader without bounds (the code before the fix) could run for many minutes.
        killer = threading.Timer(READER_TIMEOUT_S, proc.kill)
        killer.start()
        try:
            out = proc.stdout.read()
        finally:
            killer.cancel()
        proc.stdout.close()
        proc.wait()
    assert proc.returncode == 0, f"reader exited with {proc.returncode}: {out[-2000:]!r}"
    report = json.loads(out.decode().strip().splitlines()[-1])
    return Measured(report["outcome"], report["peak_kb"] / 1024, report["baseline_kb"] / 1024)
