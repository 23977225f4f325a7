"""The text half of ``read_table``: delimited text (CSV, TSV, ...) into a DataFrame.

The text is decoded with ``encoding.decode_bytes``; the delimiter is the one of ``DELIMITERS``
that splits the first records most consistently; only those first records are read in
Python (to choose the delimiter and find the header), pandas' C engine reads the rest.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator

import pandas as pd

from keiri_agent.documents.encoding import decode_bytes
from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.documents.limits import TableLimits
from keiri_agent.documents.table_frame import (
    TableReadInfo,
    TableResult,
    choose_header,
    finish_table,
)
from keiri_agent.documents.table_infer import check_table_size

__all__ = ["DELIMITERS", "SNIFF_RECORDS", "read_delimited", "sniff_delimiter"]

DELIMITERS: tuple[str, ...] = (",", "\t", ";", "|")
# Records read in Python to choose the delimiter and find the header; pandas reads the rest.
SNIFF_RECORDS = 50

_PANDAS_LINE = re.compile(r"line (\d+)")
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
) -> TableResult:
    text, used_encoding = decode_bytes(data, file=label, encoding=encoding)
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
    except csv.Error as exc:
        raise unreadable(
            label,
            f"ファイル '{label}' を区切り文字形式として読めません: {exc}",
            '引用符（"）の対応や区切り文字を確認してください。',
        ) from exc
    rows = [cells for _s, _e, cells in sample]
    header, data_start = choose_header(rows, header_row, label)
    start_offset = sample[data_start][0] if data_start < len(sample) else len(text)
    widths = [len(r) for r in rows[header if header is not None else data_start :]]
    ncols = max(widths, default=1)
    body = text[start_offset:]
    # Lines bound the records from above (a quoted line break makes one record two lines).
    check_table_size(label, body.count("\n") + 1, ncols, limits)
    try:
        frame = pd.read_csv(
            io.StringIO(body),
            sep=delim,
            header=None,
            names=list(range(ncols)),
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skip_blank_lines=True,
            engine="c",
        )
    except pd.errors.ParserError as exc:
        line_no = text.count("\n", 0, start_offset)
        found = _PANDAS_LINE.search(str(exc))
        where = f"{line_no + int(found.group(1))} 行目" if found else "途中の行"
        raise unreadable(
            label,
            f"ファイル '{label}' の {where}の列数がヘッダー（{ncols} 列）より多く、表として読めません。",
            'その行の区切り文字や引用符（"）を確認してください。値にカンマを含む場合は "1,234" のように引用符で囲みます。',
            pandas_error=str(exc),
        ) from exc
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame(columns=list(range(ncols)), dtype=str)
    frame = _blank_to_null(frame)
    header_cells = rows[header] if header is not None else []
    info = TableReadInfo(file=label, format="csv", encoding=used_encoding, delimiter=delim)
    first_line = text.count("\n", 0, start_offset) + 1
    positions = _record_lines(body, delim, first_line, len(frame))
    if positions is None:
        info.warnings.append(
            "引用符の中の改行などのため、各行がファイルの何行目かを特定できませんでした"
            "（エラーや注意ではファイル名と列名だけを示します）。"
        )
    if header is not None:
        wider = [
            text.count("\n", 0, sample[n][0]) + 1  # the file line, whatever quotes spanned
            for n in range(data_start, len(rows))
            if any(cell.strip() for cell in rows[n][len(header_cells) :])
        ]
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
    )
