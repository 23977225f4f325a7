"""A 全銀協 file's bytes cut into 200-byte records, and the records into one group per account.

Banks deliver the same records three ways: one record per line (CR LF or LF after each), all
records on one line with nothing between them, or a mix (one long line of records, then a line
break). A trailing DOS end-of-file mark (0x1A) and line breaks after the last record are
ignored. Anything else that is not a whole number of 200-byte records is refused with the
record's number, its line and byte offset, and its length:

* a line (text between line breaks) whose length is not a multiple of 200 bytes: the record
  has the wrong length (an editor that strips trailing spaces makes exactly this);
* the last record of the file is shorter than 200 bytes and nothing follows it: the file was
  cut off (an interrupted download);
* an empty line between records.

The records must then come as header (データ区分 1), data (2)..., trailer (8) for each
account, and one end record (9) (``group_records``); a record of another type, one out of
this order, a missing trailer or end record, or anything after the end record is refused with
the record's position. Fields are decoded in ``zengin``; here a record is only its bytes
(``looks_like_zengin`` tells such bytes from a CSV).

A file of 100,000 records is held as its bytes and two lists of integers (where each record
starts, on which line), not as 100,000 objects: objects that live through a parse are what
Python's garbage collector walks again and again. ``RecordTable.record`` makes the
``RawRecord`` of one record when it is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from keiri_agent.documents.bank_lines import LinePosition
from keiri_agent.documents.failures import unreadable
from keiri_agent.documents.zengin_layout import (
    DATA,
    END,
    HEADER,
    RECORD_BYTES,
    RECORD_KINDS,
    TRAILER,
)
from keiri_agent.errors import FileProcessingError

__all__ = [
    "DOWNLOAD_AGAIN_HINT",
    "EOF_MARK",
    "RawRecord",
    "RecordGroup",
    "RecordTable",
    "group_records",
    "is_ebcdic_zengin",
    "looks_like_zengin",
    "refuse_record",
    "split_records",
]

# MS-DOS end-of-file mark, still written after the last record by some banking software.
EOF_MARK = b"\x1a"
CUT_OFF_HINT = (
    "ダウンロードが最後まで終わっていない可能性があります。もう一度ダウンロードしてください。"
)
DOWNLOAD_AGAIN_HINT = (
    "銀行のサイトからダウンロードしたままのファイルを指定してください。テキストエディタで開いて"
    "保存すると、行末の空白が削られたり文字コードが変わったりして読めなくなります。"
)


def looks_like_zengin(data: bytes) -> bool:
    """Whether ``data`` starts like 全銀協 records: a header record (データ区分 1, a two-digit
    種別コード, コード区分 0/1), or a first line of whole 200-byte records starting with another
    record type; no comma or tab in the first record either way."""
    first = data[:RECORD_BYTES]
    if any(sep in first for sep in (b",", b"\t")) or not first[:1].isdigit():
        return False
    if first[:1] == b"1" and first[1:3].isdigit() and first[3:4] in (b"0", b"1"):
        return True
    newline = data.find(b"\n")
    length = len(data[: newline if newline >= 0 else len(data)].rstrip(b"\r"))
    return first[:1] in (DATA.encode(), TRAILER.encode(), END.encode()) and (
        length >= RECORD_BYTES and length % RECORD_BYTES == 0
    )


def is_ebcdic_zengin(data: bytes) -> bool:
    """Whether ``data`` starts like a 全銀協 header record in EBCDIC ("1", a digit, a digit)."""
    return len(data) >= 4 and data[0] == 0xF1 and all(0xF0 <= b <= 0xF9 for b in data[1:3])


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One 200-byte record: 1-based ``number`` in the file, 0-based byte ``offset``, 1-based
    text ``line`` (None when the file has no line breaks)."""

    number: int
    offset: int
    line: int | None
    data: bytes

    @property
    def position(self) -> LinePosition:
        return LinePosition(self.number, self.offset, self.line)

    def where(self) -> str:
        return self.position.where()


@dataclass(frozen=True)
class RecordTable:
    """The records of a file: ``offsets[i]`` is where record i (0-based) starts in ``body``,
    ``lines[i]`` its text line (``lines`` is None when the file has no line breaks)."""

    body: bytes
    offsets: list[int]
    lines: list[int] | None

    def __len__(self) -> int:
        return len(self.offsets)

    def record(self, index: int) -> RawRecord:
        at = self.offsets[index]
        line = self.lines[index] if self.lines is not None else None
        return RawRecord(index + 1, at, line, self.body[at : at + RECORD_BYTES])

    def kind(self, index: int) -> str:
        """The record's データ区分 (its first byte)."""
        at = self.offsets[index]
        return self.body[at : at + 1].decode("ascii", "replace")

    def field(self, index: int, span: slice) -> bytes:
        """The bytes ``span`` of record ``index``."""
        at = self.offsets[index]
        return self.body[at + span.start : at + span.stop]


def _bad_length(
    label: str, position: LinePosition, length: int, message: str, hint: str
) -> FileProcessingError:
    """A refusal of ``length`` bytes at ``position`` where a 200-byte record should be."""
    return unreadable(
        label,
        message,
        hint,
        record=position.record,
        offset=position.offset,
        line=position.line,
        length=length,
        expected=RECORD_BYTES,
    )


def _cut_off(label: str, position: LinePosition, length: int, kind: str) -> FileProcessingError:
    return _bad_length(
        label,
        position,
        length,
        f"「{label}」の {position.where()}は {length} バイトしかなく、途中で切れています"
        f"（{kind}は 1 レコード {RECORD_BYTES} バイトです）。",
        CUT_OFF_HINT,
    )


def _wrong_length(
    label: str, position: LinePosition, length: int, kind: str
) -> FileProcessingError:
    return _bad_length(
        label,
        position,
        length,
        f"「{label}」の {position.where()}を含む行は {length:,} バイトで、{RECORD_BYTES} バイトの"
        f"レコードに分けられません（{kind}は 1 レコード {RECORD_BYTES} バイトです。改行は数えません）。",
        DOWNLOAD_AGAIN_HINT,
    )


def split_records(data: bytes, label: str, kind: str) -> RecordTable:
    """The records of ``data``; ``kind`` names the format in errors (振込入金通知...)."""
    body = data.rstrip(EOF_MARK)
    if b"\n" not in body:
        whole, extra = divmod(len(body), RECORD_BYTES)
        if extra:
            at = whole * RECORD_BYTES
            raise _cut_off(label, LinePosition(whole + 1, at, None), extra, kind)
        return RecordTable(body, list(range(0, len(body), RECORD_BYTES)), None)
    offsets: list[int] = []
    lines: list[int] = []
    start, line = 0, 0
    while start < len(body):
        newline = body.find(b"\n", start)
        stop = len(body) if newline < 0 else newline
        if stop > start and body[stop - 1] == 0x0D:  # CR before LF
            stop -= 1
        line += 1
        length = stop - start
        whole, extra = divmod(length, RECORD_BYTES)
        if extra or not length:
            _refuse_line(body, label, kind, len(offsets) + 1, start, line, length, newline)
            break  # only line breaks after the last record
        offsets.extend(range(start, stop, RECORD_BYTES))
        lines.extend([line] * whole)
        if newline < 0:
            break
        start = newline + 1
    return RecordTable(body, offsets, lines)


def _refuse_line(
    body: bytes,
    label: str,
    kind: str,
    record: int,
    start: int,
    line: int,
    length: int,
    newline: int,
) -> None:
    """Refuse a line that is not whole records, or return when it is the blank end."""
    first = LinePosition(record, start, line)
    if not length:
        if newline < 0 or not body[newline + 1 :].strip(b"\r\n"):
            return
        raise _bad_length(
            label,
            first,
            0,
            f"「{label}」の {line} 行目が空です（{record - 1} 件目のレコードの後）。"
            f"{kind}の各行は {RECORD_BYTES} バイトのレコードです。",
            DOWNLOAD_AGAIN_HINT,
        )
    whole, extra = divmod(length, RECORD_BYTES)
    if newline >= 0:
        raise _wrong_length(label, first, length, kind)
    at = start + whole * RECORD_BYTES
    raise _cut_off(label, LinePosition(record + whole, at, line), extra, kind)


@dataclass(frozen=True)
class RecordGroup:
    """One account's records, by 0-based index: its header, data records and trailer."""

    header: int
    trailer: int

    @property
    def data(self) -> range:
        return range(self.header + 1, self.trailer)


def refuse_record(
    label: str, raw: RawRecord, message: str, **details: object
) -> FileProcessingError:
    """A refusal of ``label`` located at record ``raw``."""
    return unreadable(
        label,
        f"「{label}」の {raw.where()}: {message}",
        DOWNLOAD_AGAIN_HINT,
        record=raw.number,
        offset=raw.offset,
        line=raw.line,
        **details,
    )


def group_records(table: RecordTable, label: str) -> list[RecordGroup]:
    """The records as header, data..., trailer per account, then the end record."""
    groups: list[RecordGroup] = []
    header: int | None = None
    end: int | None = None
    for index in range(len(table)):
        kind = table.kind(index)
        if kind == DATA and header is not None:
            continue  # the common case first
        if kind not in RECORD_KINDS:
            raise refuse_record(
                label,
                table.record(index),
                f"データ区分（1 バイト目）が「{kind}」です。1（ヘッダー）・2（データ）・"
                "8（トレーラー）・9（エンド）のいずれかのはずです。",
                field="データ区分",
                found=kind,
            )
        name = RECORD_KINDS[kind]
        if end is not None:
            message = f"エンド・レコード（{end + 1} 件目）の後に{name}があります。"
        elif header is None and kind == END and groups:
            end = index
            continue
        elif header is None and kind == HEADER:
            header = index
            continue
        elif header is None and groups:
            message = (
                f"{groups[-1].trailer + 1} 件目のトレーラー・レコードの後に、ヘッダー・レコードの"
                f"ないまま{name}があります。"
            )
        elif header is None:
            message = f"ヘッダー・レコードより前に{name}があります。"
        elif kind == TRAILER:
            groups.append(RecordGroup(header, index))
            header = None
            continue
        else:
            message = (
                f"{header + 1} 件目のヘッダーのトレーラー・レコードがないまま、{name}があります。"
            )
        raise refuse_record(label, table.record(index), message)
    if header is not None or end is None:
        missing = (
            "トレーラー・レコード（データ区分 8）"
            if header is not None
            else "エンド・レコード（データ区分 9）"
        )
        last = (
            f"最後は {table.record(len(table) - 1).where()}"
            if len(table)
            else "レコードがありません"
        )
        raise unreadable(
            label,
            f"「{label}」に{missing}がありません（{last}）。ファイルが途中で切れている可能性があります。",
            CUT_OFF_HINT,
            records=len(table),
        )
    return groups
