"""Tables as blocks pass them: lists of records, converted to and from DataFrames.

A table travels between blocks as a list of records (``[{column: value}]``, the
``jsonschema://records`` schema): it validates with JSON Schema, shows in logs and the UI, and
the runner stores large ones beside the run log. Dates travel as ISO strings, amounts as numbers.
Inside a block, :func:`to_frame` gives pandas, and :func:`to_records` turns results back into
JSON-safe records (NaN → None, Timestamps → ISO strings, numpy scalars → Python numbers).

:func:`records_from` accepts what upstream blocks produce: a list of records, or an object that
carries one under ``items`` / ``records`` / ``rows`` (``ai.process_llm``'s ``results``).
:func:`parse_date` and :func:`parse_amount` read the ways Japanese documents write dates and
amounts; they return None for what they cannot read, and callers decide how that is reported.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.inputs import input_error
from keiri_agent.documents.table_infer import parse_number

__all__ = [
    "DATA_LIST_KEYS",
    "column_list",
    "columns_of",
    "input_error",
    "json_cell",
    "parse_amount",
    "parse_date",
    "records_from",
    "require_columns",
    "to_frame",
    "to_records",
]

# Keys under which an object may carry its list of records (ai.process_llm results and the like).
DATA_LIST_KEYS = ("items", "records", "rows")

# 2025-01-31, 2025/1/31, 2025.1.31, 2025年1月31日, optionally followed by a time.
_YMD = re.compile(
    r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*日?"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"
)
# 令和7年1月31日 / R7.1.31 / 平成31年4月30日 (era + year, month, day).
_ERA = re.compile(
    r"(?P<era>令和|平成|昭和|R|H|S)\s*(?P<y>\d{1,2}|元)\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]"
    r"\s*(?P<d>\d{1,2})\s*日?"
)
_ERA_START = {"令和": 2018, "R": 2018, "平成": 1988, "H": 1988, "昭和": 1925, "S": 1925}


def records_from(data: Any, *, field: str) -> list[dict[str, Any]]:
    """The records in ``data``: a list of mappings, or one found under items/records/rows."""
    hint = (
        f"{field} にはレコード（{{列名: 値}}）のリストか、items / records / rows のいずれかに"
        "そのリストを持つオブジェクトを渡してください。"
    )
    rows: Any = data
    if isinstance(data, Mapping):
        found = [key for key in DATA_LIST_KEYS if isinstance(data.get(key), list)]
        if not found:
            raise input_error(
                f"{field} にレコードのリストが見つかりません"
                f"（キー: {', '.join(map(str, data)) or 'なし'}）。",
                hint,
                field=field,
                keys=[str(k) for k in data],
            )
        rows = data[found[0]]
    if not isinstance(rows, Sequence) or isinstance(rows, str | bytes):
        raise input_error(
            f"{field} がレコードのリストではありません（{type(data).__name__}）。",
            hint,
            field=field,
        )
    bad = [index for index, row in enumerate(rows) if not isinstance(row, Mapping)]
    if bad:
        raise input_error(
            f"{field} の {len(bad)} 件（{', '.join(f'{i + 1} 件目' for i in bad[:5])}）が"
            "レコード（{列名: 値}）ではありません。",
            hint,
            field=field,
            indexes=bad,
        )
    return [dict(row) for row in rows]


def column_list(value: Any, *, field: str) -> list[str]:
    """A column name or a list of them, as a non-empty list of strings."""
    names = [value] if isinstance(value, str) else value
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and n.strip() for n in names)
    ):
        raise input_error(
            f"{field} には列名（文字列）か、列名のリストを指定してください。",
            f'例: {field}: 取引先  または  {field}: ["取引先", "月"]',
            field=field,
            value=repr(value)[:200],
        )
    return [n.strip() for n in names]


def columns_of(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every column that appears in the records, in first-seen order."""
    return list(dict.fromkeys(key for record in records for key in record))


def require_columns(
    records: Sequence[Mapping[str, Any]], columns: Iterable[str], *, field: str, table: str
) -> None:
    """BlockError naming every missing column and the ones that exist (empty tables pass)."""
    if not records:
        return
    available = columns_of(records)
    missing = [c for c in columns if c not in available]
    if missing:
        raise input_error(
            f"{table} に列 {', '.join(missing)} がありません（{field}）。",
            f"{field} には {table} にある列名を指定してください。"
            f"使える列: {', '.join(available) or 'なし'}",
            field=field,
            missing=missing,
            available=available,
        )


def to_frame(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Records as a DataFrame; columns in first-seen order, absent cells as None."""
    columns = columns_of(records)
    return pd.DataFrame.from_records(list(records), columns=columns)


def json_cell(value: Any) -> Any:
    """One cell as a JSON scalar: NaN/NaT → None, dates → ISO, numpy → Python, Decimal → number."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, str | int | bool):
        return value
    return str(value)


def to_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame as JSON-safe records (column names as strings)."""
    names = [str(c) for c in frame.columns]
    return [
        {name: json_cell(value) for name, value in zip(names, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]


def parse_date(value: Any) -> dt.date | None:
    """The date a cell holds (date objects, ISO, 2025/1/31, 2025年1月31日, 令和7年1月31日)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value.date()
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip()
    if match := _YMD.fullmatch(text):
        year = int(match["y"])
    elif match := _ERA.fullmatch(text):
        offset = 1 if match["y"] == "元" else int(match["y"])
        year = _ERA_START[match["era"]] + offset
    else:
        return None
    try:
        return dt.date(year, int(match["m"]), int(match["d"]))
    except ValueError:
        return None


def parse_amount(value: Any) -> float | None:
    """The amount a cell holds (numbers, "1,234", "¥1,234", "1,234円", "▲500"), or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal | np.integer | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    if isinstance(value, str):
        parsed = parse_number(value)
        return None if parsed is None else float(parsed)
    return None
