"""The text half of ``read_table``: delimited text (CSV, TSV, ...) into a DataFrame.

The text is decoded with ``encoding.decode_bytes``; the delimiter is the one of ``DELIMITERS``
that splits the first records most consistently; only those first records are read in
Python (to choose the delimiter and find the header), pandas' C engine reads the rest.

Three marks files from Japanese back offices carry are read as the person meant them, each
with a note in ``info``: the padding old systems write after the last line (the DOS EOF mark
0x1A and NUL bytes: ``encoding.text_end``) is left out instead of becoming a last row; a cell
that Excel was told to keep as text, ``="00123"`` (how exports keep leading zeros of codes and
account numbers), is read as ``00123``; a byte-order mark at the start of a cell (files joined
one after another, each with its BOM) is dropped, so the second file's header is known again
as a repeated header. A file whose lines end in CR alone (Excel for Mac's "CSV (Macintosh)")
is read with each CR as a line break, so its lines are counted as an editor shows them.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import tzinfo

import numpy as np
import pandas as pd

from keiri_agent.documents.encoding import decode_head, text_end
from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.documents.limits import TableLimits
from keiri_agent.documents.table_frame import (
    TableReadInfo,
    TableResult,
    choose_header,
    finish_table,
)
from keiri_agent.documents.table_infer import (
    check_table_size,
    expand_merges,
    grouped_header,
    joined_name,
    spanned_note,
)
from keiri_agent.errors import cause_of, reason_of

__all__ = ["DELIMITERS", "SNIFF_RECORDS", "read_delimited", "sniff_delimiter"]

DELIMITERS: tuple[str, ...] = (",", "\t", ";", "|")
# Records read in Python to choose the delimiter and find the header; pandas reads the rest.
SNIFF_RECORDS = 50
# Bytes decoded as text for that (more only when the records do not fit in them).
HEAD_BYTES = 1 << 20

_PANDAS_LINE = re.compile(r"line (\d+)")
# A cell written for Excel to keep as text: ="00123" (a quote inside doubled, as in CSV).
_EXCEL_TEXT = re.compile(r'="((?:[^"]|"")*)"', re.DOTALL)
# The byte-order mark, which inside a file is no character of the data.
_BOM = "\ufeff"
# What pandas' C parser counts as an empty line (and skips): only spaces and tabs.
_BLANK_LINE_CHARS = " \t"


def _records(text: str, delimiter: str, limit: int) -> Iterator[tuple[int, int, list[str]]]:
    """Yield ``(start, end, cells)`` character offsets of the first ``limit`` CSV records."""
    buffer = io.StringIO(text, newline="")
    offset = 0

    def lines() -> Iterator[str]:
        nonlocal offset
        for line in buffer:
            offset += len(line)
            yield line

    reader = csv.reader(lines(), delimiter=delimiter)
    start = 0
    for n, cells in enumerate(reader):
        if n >= limit:
            return
        yield start, offset, cells
        start = offset


def _skipped_line(line: str, delimiter: str) -> bool:
    """Whether pandas skips ``line`` as blank: nothing but spaces and tabs (other than the
    delimiter) before its line break. A line of delimiters or ``""`` is a record of blanks."""
    return not line.rstrip("\r\n").strip(_BLANK_LINE_CHARS.replace(delimiter, ""))


def _record_lines_bytes(
    body: memoryview, delimiter: str, first_line: int, expected: int, encoding: str
) -> np.ndarray | None:
    """:func:`_record_lines` over the encoded body of an ASCII-compatible encoding (LF and
    ``"`` are single bytes no multibyte character contains), with numpy: no line becomes a
    string but the few that may be blank. None when a line has an odd number of quotes (a
    quoted line break: the caller reads the text) or the count does not match."""
    octets = np.frombuffer(body, dtype=np.uint8)
    if octets.size == 0:
        return np.zeros(0, dtype=np.int64) if expected == 0 else None
    breaks = np.flatnonzero(octets == 0x0A)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(octets)]))
    quotes = np.flatnonzero(octets == 0x22)
    if quotes.size:
        per_line = np.bincount(np.searchsorted(breaks, quotes), minlength=len(starts))
        if bool((per_line % 2).any()):
            return None
    blank_start = set((_BLANK_LINE_CHARS.replace(delimiter, "") + "\r").encode("ascii"))
    lengths = ends - starts
    first = np.where(lengths > 0, octets[np.minimum(starts, max(len(octets) - 1, 0))], 0)
    maybe = (lengths == 0) | np.isin(first, list(blank_start))
    skipped = np.zeros(len(starts), dtype=bool)
    for index in np.flatnonzero(maybe).tolist():
        line = bytes(body[int(starts[index]) : int(ends[index])]).decode(encoding, "replace")
        skipped[index] = _skipped_line(line, delimiter)
    found = first_line + np.flatnonzero(~skipped)
    return found if len(found) == expected else None


def _record_lines(body: str, delimiter: str, first_line: int, expected: int) -> list[int] | None:
    """The file line (from 1) where each record of ``body`` starts, as pandas counts records
    (blank lines skipped, ``_skipped_line``); None when that cannot be matched to ``expected``
    rows. Lines are counted by their LF, as ``first_line`` is."""
    lines_of_body = body.split("\n")
    # A quoted line break starts on a line with an odd number of quotes (an escaped quote is
    # two): without one, every record is one line, and lines give the positions at once.
    if '"' not in body or not any(line.count('"') % 2 for line in lines_of_body):
        found = [
            first_line + n
            for n, line in enumerate(lines_of_body)
            if not _skipped_line(line, delimiter)
        ]
        return found if len(found) == expected else None
    del lines_of_body
    starts: list[int] = []
    consumed = newlines = 0  # lines read so far, and the LFs among them
    last = ""

    def lines() -> Iterator[str]:
        nonlocal consumed, newlines, last
        for line in io.StringIO(body, newline=""):
            consumed += 1
            newlines += line[-1:] == "\n"
            last = line
            yield line

    reader = csv.reader(lines(), delimiter=delimiter)
    lines_before = newlines_before = 0
    try:
        for cells in reader:
            # A line pandas skips is one line of at most one cell (spaces, tabs or nothing).
            one_line = consumed - lines_before == 1
            if not (len(cells) <= 1 and one_line and _skipped_line(last, delimiter)):
                starts.append(first_line + newlines_before)
            lines_before, newlines_before = consumed, newlines
    except csv.Error:
        return None
    return starts if len(starts) == expected else None


def _blank_to_null(frame: pd.DataFrame) -> pd.DataFrame:
    """Cells of only spaces are blank, as a workbook's are (``table_infer.is_blank``)."""
    blank = frame.apply(lambda column: column.str.strip().eq("").fillna(False).astype(bool))
    return frame.mask(blank) if bool(blank.to_numpy().any()) else frame


def _excel_text_to_plain(frame: pd.DataFrame) -> list[int]:
    """Cells written ``="00123"`` read as ``00123``, in place; the columns (0-based) that held
    any."""
    found: list[int] = []
    for column in frame.columns:
        values = frame[column]
        inner = values.str.fullmatch(_EXCEL_TEXT.pattern, flags=re.DOTALL).fillna(False)
        if not bool(inner.any()):
            continue
        mask = inner.astype(bool)
        frame.loc[mask, column] = values[mask].str.slice(2, -1).str.replace('""', '"')
        found.append(int(column))
    return found


def _drop_inner_boms(frame: pd.DataFrame) -> int:
    """A BOM at the start of a cell (files joined one after another, each with its BOM, so that
    the second header reads ``\ufeff日付``) removed in place; how many cells held one."""
    count = 0
    for column in frame.columns:
        starts = frame[column].str.startswith(_BOM).fillna(False).astype(bool)
        if bool(starts.any()):
            frame.loc[starts, column] = frame.loc[starts, column].str.lstrip(_BOM)
            count += int(starts.sum())
    return count


def _one_byte_breaks(encoding: str) -> bool:
    """Whether ``encoding`` writes LF and CR as the bytes 0x0A and 0x0D that no other character
    contains (UTF-8, CP932, EUC-JP...; not UTF-16/32)."""
    name = codecs.lookup(encoding).name
    one_byte_lf = name in ("utf-8", "utf-8-sig") or "\n".encode(encoding) == b"\n"
    return one_byte_lf and not name.startswith(("utf-16", "utf-32"))


def _cr_lines_as_lf(data: bytes, encoding: str) -> bytes | None:
    """``data`` with each CR made a LF when its lines end in CR alone (Excel for Mac's "CSV
    (Macintosh)", old Mac systems) and it holds no LF at all; else None."""
    if _one_byte_breaks(encoding):
        return data.replace(b"\r", b"\n") if b"\n" not in data and b"\r" in data else None
    text = data.decode(encoding)
    if "\n" in text or "\r" not in text:
        return None
    return text.replace("\r", "\n").encode(encoding)


def _body_offset(data: bytes, first_line: int, encoding: str) -> int | None:
    """Where line ``first_line`` starts in ``data``, when ``encoding`` writes LF as the one byte
    0x0A that no other character contains (``_one_byte_breaks``); None for UTF-16/32."""
    if not _one_byte_breaks(encoding):
        return None
    offset = 0
    for _ in range(first_line - 1):
        offset = data.index(b"\n", offset) + 1
    return offset


def _wider_lines(
    text: str,
    sample: list[tuple[int, int, list[str]]],
    rows: list[list[str]],
    data_start: int,
    header: int | None,
    header_cells: list[str],
) -> list[int]:
    """The file lines of the first records that hold more values than the header."""
    if header is None:
        return []
    return [
        text.count("\n", 0, sample[n][0]) + 1  # the file line, whatever quotes spanned
        for n in range(data_start, len(rows))
        if any(cell.strip() for cell in rows[n][len(header_cells) :])
    ]


def sniff_delimiter(text: str, *, prefer: str | None = None) -> str:
    """Choose among ``DELIMITERS`` the one that splits the first records most consistently.

    Score: the share of non-blank records that have the most common field count (> 1),
    then that count. ``prefer`` (from the extension) wins when it is consistent enough.
    """
    scores: dict[str, tuple[float, int]] = {}
    for delim in DELIMITERS:
        try:
            counts = [len(c) for _s, _e, c in _records(text, delim, SNIFF_RECORDS) if c]
        except csv.Error:
            continue
        if not counts:
            continue
        common = Counter(counts).most_common()
        freq, width = max((f, w) for w, f in common)
        scores[delim] = (freq / len(counts), width) if width > 1 else (0.0, 1)
    if prefer in scores and scores[prefer][0] >= 0.8:
        return prefer
    best = max(DELIMITERS, key=lambda d: scores.get(d, (0.0, 0)))
    if scores.get(best, (0.0, 0))[0] == 0.0:
        return prefer or ","  # a single-column table
    return best


def read_delimited(
    data: bytes,
    label: str,
    encoding: str | None,
    delimiter: str | None,
    header_row: int | None,
    ext: str,
    limits: TableLimits,
    columns: Sequence[str] | None = None,
    zone: tzinfo | None = None,
) -> TableResult:
    # Only the head is decoded to find the delimiter and the header; the whole file is checked
    # strictly all the same, and pandas reads the rest from the bytes.
    end = text_end(data, encoding)
    padding = len(data) - end
    if padding:
        data = data[:end]  # a copy, only of a file that carries padding
    text, used_encoding, whole = decode_head(data, file=label, encoding=encoding, size=HEAD_BYTES)
    lf = _cr_lines_as_lf(data, used_encoding) if "\r" in text and "\n" not in text else None
    if lf is not None:  # lines are counted, and pandas reads them, by their LF
        data, text = lf, text.replace("\r", "\n")
    if not whole:
        text = text[: text.rfind("\n") + 1]  # whole lines only
    if not whole and not text.strip():
        text, whole = data.decode(used_encoding), True
    if not text.strip():
        raise unreadable(
            label,
            f"ファイル '{label}' は空です（データがありません）。",
            "データの入ったファイルを指定してください。",
        )
    if delimiter is not None and len(delimiter) != 1:
        raise invalid_input(
            label,
            f"区切り文字 {delimiter!r} は使えません（1 文字で指定してください）。",
            '"," や "\\t"（タブ）など 1 文字を指定するか、指定を外して自動判定にしてください。',
            delimiter=delimiter,
        )
    prefer = "\t" if ext in (".tsv", ".tab") else None
    delim = delimiter or sniff_delimiter(text, prefer=prefer)
    limit = max(SNIFF_RECORDS, (header_row or 0) + SNIFF_RECORDS)
    try:
        sample = list(_records(text, delim, limit))
        if len(sample) < limit and not whole:  # the head was too short: read it all
            text, whole = data.decode(used_encoding), True
            sample = list(_records(text, delim, limit))
    except csv.Error as exc:
        raise unreadable(
            label,
            f"ファイル '{label}' を区切り文字形式として読めません: {reason_of(exc)}",
            '引用符（"）の対応や区切り文字を確認してください。',
            reason=cause_of(exc),
        ) from exc
    rows = [cells for _s, _e, cells in sample]
    header, data_start = choose_header(rows, header_row, label)
    grouped = None if header_row is not None else grouped_header(rows, header, data_start)
    if grouped is not None:  # 借方 | | 貸方 | over 科目 | 金額 | 科目 | 金額: one header
        header, data_start = grouped.first, grouped.last + 1
    start_offset = sample[data_start][0] if data_start < len(sample) else len(text)
    widths = [len(r) for r in rows[header if header is not None else data_start :]]
    ncols = max(widths, default=1)
    first_line = text.count("\n", 0, start_offset) + 1
    header_cells = rows[header] if header is not None else []
    header_rows: list[list[str]] = []  # a header of rows, as one (``grouped_header``)
    if grouped is not None:
        header_rows = expand_merges(rows, grouped.merges, grouped.last)[header:data_start]
        last = len(header_rows) - 1
        header_cells = [joined_name(header_rows, 0, last, j) or "" for j in range(ncols)]
    wider = _wider_lines(text, sample, rows, data_start, header, header_cells)
    # An ASCII-compatible encoding is parsed from its bytes: the decoded text (and a copy of
    # it for pandas) would hold the file three times over at a million rows.
    offset = _body_offset(data, first_line, used_encoding)
    byte_body = memoryview(data)[offset:] if offset is not None else None
    if offset is not None:
        del text
        check_table_size(label, data.count(b"\n", offset) + 1, ncols, limits)
        source: io.IOBase = io.BytesIO(data)  # shares the bytes (no copy)
        source.seek(offset)
        pandas_encoding: str | None = used_encoding
    else:
        if not whole:
            text = data.decode(used_encoding)
        body = text[start_offset:]
        # Lines bound the records from above (a quoted line break makes one record two lines).
        check_table_size(label, body.count("\n") + 1, ncols, limits)
        source, pandas_encoding = io.StringIO(body), None
    try:
        frame = pd.read_csv(
            source,
            sep=delim,
            header=None,
            names=list(range(ncols)),
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skip_blank_lines=True,
            engine="c",
            encoding=pandas_encoding,
        )
    except pd.errors.ParserError as exc:
        found = _PANDAS_LINE.search(str(exc))
        where = f"{first_line - 1 + int(found.group(1))} 行目" if found else "途中の行"
        raise unreadable(
            label,
            f"ファイル '{label}' の {where}の列数がヘッダー（{ncols} 列）より多く、表として読めません。",
            'その行の区切り文字や引用符（"）を確認してください。値にカンマを含む場合は "1,234" のように引用符で囲みます。',
            pandas_error=str(exc),
        ) from exc
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(columns=list(range(ncols)), dtype=str)

    def holds(mark: str) -> bool:  # in the bytes of an ASCII-compatible file, else the text
        if offset is None:
            return mark in body
        codec = "utf-8" if used_encoding == "utf-8-sig" else used_encoding  # (no BOM added)
        try:
            return mark.encode(codec) in data
        except UnicodeEncodeError:
            return False  # (a BOM in CP932: no such character)

    excel_text = _excel_text_to_plain(frame) if holds('="') else []
    inner_boms = _drop_inner_boms(frame) if holds(_BOM) else 0
    frame = _blank_to_null(frame)
    info = TableReadInfo(file=label, format="csv", encoding=used_encoding, delimiter=delim)
    if grouped is not None:
        info.warnings.append(spanned_note(grouped.first, grouped.last))
    if lf is not None:
        info.warnings.append(
            "行の区切りが CR（0x0D）だけのファイル（Mac の Excel の「CSV (Macintosh)」など）"
            "として、CR ごとに 1 行と数えて読みました。"
        )
    if padding:
        info.warnings.append(
            f"ファイル末尾の {padding:,} バイト（旧システムが付ける EOF 記号 0x1A や NUL の"
            "埋め草）はデータではないため読み飛ばしました。"
        )
    positions: Sequence[int] | np.ndarray | None = None
    if byte_body is not None:
        positions = _record_lines_bytes(byte_body, delim, first_line, len(frame), used_encoding)
    if positions is None:
        body_text = bytes(byte_body).decode(used_encoding) if byte_body is not None else body
        positions = _record_lines(body_text, delim, first_line, len(frame))
        del body_text
    if positions is None:
        info.warnings.append(
            "引用符の中の改行などのため、各行がファイルの何行目かを特定できませんでした"
            "（エラーや注意ではファイル名と列名だけを示します）。"
        )
    if inner_boms:
        info.warnings.append(
            f"ファイルの途中の BOM（複数のファイルを連結したときに残る印）を {inner_boms:,} か所"
            "除いて読みました。"
        )
    if excel_text:
        named = "、".join(
            f"「{header_cells[j]}」"
            if j < len(header_cells) and header_cells[j].strip()
            else f"{j + 1} 列目"
            for j in excel_text
        )
        info.warnings.append(
            f'列{named}の ="…" の形の値（Excel に文字列として扱わせる書き方）は、'
            "中の文字列として読みました（先頭の 0 はそのままです）。"
        )
    if wider:
        lines = "、".join(f"{n} 行目" for n in wider[:5]) + (" ほか" if len(wider) > 5 else "")
        info.warnings.append(
            f"{lines}はヘッダー（{len(header_cells)} 列）より値が多いため、名前のない列として"
            "読みました。値にカンマを含む場合は引用符で囲まれているか確認してください。"
        )
    return finish_table(
        frame,
        header_cells,
        header,
        rows[: header if header is not None else data_start],
        info,
        positions,
        columns,
        zone,
        header_rows=header_rows,
    )
