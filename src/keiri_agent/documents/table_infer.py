"""Inference shared by the CSV and Excel table readers: header row, column names, value types.

Japanese spreadsheets put a title ("2024年度 売上明細"), a few "key, value" lines (会社名,
期間) and blank rows above the real header, write amounts as "1,234", "¥1,234", "▲500" or in
full-width digits, and leave header cells blank or repeated. The rules here are deliberately
simple and deterministic, so a user can predict them from ``TableReadInfo``:

* header row: the first row (of the first ``HEADER_SCAN_ROWS``) that is at least half as wide
  as the widest row, at least ~80 % as wide as the rows below it, and holds at least one text
  label. If that first wide row holds no text label (all numbers or dates), the table has no
  header and data starts there;
* column names: blank → "列<n>" (n = 1-based column position in the file), repeated →
  "<name>_2", "<name>_3", ...; whitespace runs (including line breaks) become one space;
* numbers: a text column becomes numeric only when every non-empty value is a number after
  NFKC, removing "¥"/"\\"/"$", a trailing "円" and well-formed thousands separators; "▲"/"△"
  mean minus. Columns with leading-zero codes ("0123") stay text, so codes keep their zeros;
* dates: only clean ISO values ("2024-04-01", "2024-04-01 09:30") become datetimes.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict
from datetime import date, datetime
from statistics import median
from typing import Any

import pandas as pd
from openpyxl.utils import get_column_letter

from keiri_agent.documents.cell_forms import unsigned_value
from keiri_agent.documents.failures import too_large
from keiri_agent.documents.limits import TableLimits

__all__ = [
    "HEADER_SCAN_ROWS",
    "TableLimits",
    "check_table_size",
    "convert_column",
    "detect_header",
    "is_blank",
    "make_column_names",
    "parse_number",
]

HEADER_SCAN_ROWS = 30
# How many non-empty values are checked one by one before a whole column is converted.
_PROBE_VALUES = 200

_NUMBER = re.compile(
    r"(?P<sign>[+\-▲△]?)\s*[¥\\$]?\s*(?P<sign2>[+\-]?)"
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?P<frac>\.[0-9]+)?\s*円?"
)
_ASCII_NUMBER = re.compile(
    r"\s*[+\-]?(?:0|[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*)(?:\.[0-9]+)?\s*"
)
_ISO_DATE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)?"
)
_SPACES = re.compile(r"\s+")


def is_blank(value: Any) -> bool:
    """Whether a cell counts as empty (None, NaN, or only whitespace)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def _normalize_number_text(text: str) -> str:
    text = text.strip()
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).replace("−", "-")
    return text


def parse_number(text: str) -> int | float | None:
    """The number ``text`` spells ("1,234", "¥1,234", "▲500", "１２３円"), or None.

    Leading-zero integers ("0123") are not numbers here: they are codes.
    """
    match = _NUMBER.fullmatch(_normalize_number_text(text))
    if match is None or (match["sign"] and match["sign2"]):
        return None
    value = unsigned_value(match)
    if value is None:
        return None
    negative = match["sign"] in ("-", "▲", "△") or match["sign2"] == "-"
    return -value if negative else value


def check_table_size(
    label: str, rows: int, columns: int, limits: TableLimits, *, sheet: str | None = None
) -> None:
    """Refuse a table of ``rows`` x ``columns`` over ``limits`` (FILE_TOO_LARGE)."""
    problems = []
    if rows > limits.max_rows:
        problems.append(f"行数 {rows:,} > 上限 {limits.max_rows:,}")
    if columns > limits.max_columns:
        problems.append(f"列数 {columns:,} > 上限 {limits.max_columns:,}")
    if rows * columns > limits.max_cells:
        problems.append(f"セル数 {rows * columns:,} > 上限 {limits.max_cells:,}")
    if not problems:
        return
    if sheet is None:
        where = f"「{label}」の表は {rows:,} 行 × {columns:,} 列で"
        hint = "期間や部門で分けたファイルにするか、不要な列を削除してから渡してください。"
    else:
        span = f"A1:{get_column_letter(min(columns, 16_384))}{rows}"
        where = (
            f"「{label}」のシート「{sheet}」は使用範囲が {span}（{rows:,} 行 × {columns:,} 列）で"
        )
        hint = (
            "離れた位置に値や書式の入ったセルが残っていると使用範囲が広がります。Excel で Ctrl+End を"
            "押して最後のセルを確認し、不要な行・列を削除して保存し直してください。"
        )
    raise too_large(
        label,
        f"{where}大きすぎるため読み込めません（{'、'.join(problems)}）。",
        hint,
        rows=rows,
        columns=columns,
        sheet=sheet,
        limits=asdict(limits),
    )


def _is_label(value: Any) -> bool:
    """A cell that can name a column: text that is neither a number nor an ISO date."""
    if not isinstance(value, str) or not value.strip():
        return False
    text = value.strip()
    return parse_number(text) is None and _ISO_DATE.fullmatch(text) is None


def detect_header(rows: Sequence[Sequence[Any]]) -> tuple[int | None, int]:
    """Return ``(header_index, data_start)`` for the first rows of a table.

    ``header_index`` is None when the table has no header row. Raises ``ValueError`` when
    every scanned row is empty.
    """
    scan = [list(r) for r in rows[:HEADER_SCAN_ROWS]]
    counts = [sum(not is_blank(v) for v in r) for r in scan]
    widest = max(counts, default=0)
    if widest == 0:
        raise ValueError("no data")
    for i, count in enumerate(counts):
        if count == 0:
            continue
        below = [c for c in counts[i + 1 : i + 21] if c]
        body = median(below) if below else count
        wide_enough = count >= max(2, widest / 2) and count >= 0.8 * min(body, widest)
        if widest >= 2 and not wide_enough:
            continue
        if any(_is_label(v) for v in scan[i]):
            return i, i + 1
        return None, i
    # Only reachable when no row is wide enough, which the widest row always is.
    raise AssertionError("unreachable")


def _cell_name(value: Any) -> str:
    if is_blank(value):
        return ""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == datetime.min.time() else str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _SPACES.sub(" ", str(value)).strip()


def make_column_names(
    cells: Sequence[Any], positions: Sequence[int]
) -> tuple[list[str], list[str]]:
    """Unique column names for header ``cells`` at 0-based file ``positions``.

    Returns ``(names, renamed)`` where ``renamed`` lists the names that were invented or
    suffixed, for a warning.
    """
    names: list[str] = []
    renamed: list[str] = []
    used: set[str] = set()
    raw = [_cell_name(c) for c in cells]
    taken = {r for r in raw if r}
    for value, pos in zip(raw, positions, strict=True):
        base = value or f"列{pos + 1}"
        name, n = base, 2
        # Invented or suffixed names must not take a real header's name.
        while name in used or (name != value and name in taken):
            name, n = f"{base}_{n}", n + 1
        if name != value:
            renamed.append(name)
        used.add(name)
        names.append(name)
    return names, renamed


def _text_to_numbers(values: pd.Series) -> pd.Series | None:
    """Vectorized: the numbers spelled by every value of a text column, or None."""
    # Fast path, one regex pass: ASCII numbers with optional well-formed thousands separators
    # and no leading zeros (codes such as "0123" fail it and go to the slow path, which
    # refuses them too).
    if values.str.fullmatch(_ASCII_NUMBER.pattern).all():
        return pd.to_numeric(values.str.replace(",", "", regex=False))
    normalized = values.map(_normalize_number_text)
    parts = normalized.str.extract(f"^(?:{_NUMBER.pattern})$")
    if parts["int"].isna().any():
        return None
    digits = parts["int"].str.replace(",", "", regex=False)
    if digits.str.match(r"0\d").any() or (parts["sign"].ne("") & parts["sign2"].ne("")).any():
        return None
    negative = parts["sign"].isin(["-", "▲", "△"]) | parts["sign2"].eq("-")
    number = pd.to_numeric(digits + parts["frac"].fillna(""))
    return number.where(~negative, -number)


def _probe_numbers(values: pd.Series) -> bool:
    return all(parse_number(v) is not None for v in values.iloc[:_PROBE_VALUES])


def _finish_numeric(series: pd.Series, numbers: pd.Series) -> pd.Series:
    result = numbers.reindex(series.index)
    if pd.api.types.is_float_dtype(result) and bool((result.dropna() % 1 == 0).all()):
        return result.astype("Int64") if result.isna().any() else result.astype("int64")
    return result


def convert_column(series: pd.Series) -> tuple[pd.Series, str | None]:
    """Convert a column to numbers or ISO datetimes when every value allows it.

    Returns ``(series, kind)`` with kind "number", "datetime" or None (left unchanged).
    """
    values = series.dropna()
    if values.empty:
        return series, None
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_datetime64_any_dtype(series):
        return series, None
    if series.dtype == object and not all(isinstance(v, str) for v in values):
        return _convert_mixed(series, values)
    if len(values) <= _PROBE_VALUES:
        return _convert_few(series, values)
    values = values.astype(str)
    if _probe_numbers(values):
        numbers = _text_to_numbers(values)
        if numbers is not None:
            return _finish_numeric(series, numbers), "number"
        return series, None
    probe = values.iloc[:_PROBE_VALUES].str.strip()
    if probe.str.fullmatch(_ISO_DATE.pattern).all():
        stripped = values.str.strip()
        if stripped.str.fullmatch(_ISO_DATE.pattern).all():
            try:
                converted = pd.to_datetime(stripped, format="ISO8601")
            except (ValueError, OverflowError):
                return series, None
            return converted.reindex(series.index), "datetime"
    return series, None


def _convert_few(series: pd.Series, values: pd.Series) -> tuple[pd.Series, str | None]:
    """``convert_column`` for a short column, value by value: the vectorized path costs a few
    milliseconds per column whatever its length, which a table 16,384 columns wide notices.
    Same rules (``parse_number``, ``_ISO_DATE``), same result types."""
    texts = [str(v) for v in values.tolist()]
    numbers = [parse_number(t) for t in texts]
    if all(n is not None for n in numbers):
        return _finish_numeric(series, pd.Series(numbers, index=values.index)), "number"
    stripped = [t.strip() for t in texts]
    if not all(_ISO_DATE.fullmatch(t) for t in stripped):
        return series, None
    try:
        converted = pd.to_datetime(pd.Series(stripped, index=values.index), format="ISO8601")
    except (ValueError, OverflowError):
        return series, None
    return converted.reindex(series.index), "datetime"


def _convert_mixed(series: pd.Series, values: pd.Series) -> tuple[pd.Series, str | None]:
    """Excel columns hold Python numbers, datetimes and strings side by side."""
    numbers: list[int | float] = []
    for v in values:
        if isinstance(v, bool):
            return series, None
        if isinstance(v, int | float):
            numbers.append(v)
        elif isinstance(v, str) and (parsed := parse_number(v)) is not None:
            numbers.append(parsed)
        else:
            break
    else:
        converted = pd.Series(numbers, index=values.index)
        return _finish_numeric(series, pd.to_numeric(converted)), "number"
    if all(isinstance(v, datetime | date) for v in values):
        return pd.to_datetime(values).reindex(series.index), "datetime"
    return series, None
