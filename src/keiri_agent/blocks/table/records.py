"""Tables as blocks pass them: a :class:`~keiri_agent.documents.table_value.Table`, or records.

A table travels between blocks as a ``Table`` (typed columns that remember the file line of each
row, so an error names the cell as the user finds it) or as a list of records (``[{column:
value}]``, the ``jsonschema://records`` schema) made by other blocks; both validate with JSON
Schema, show in logs and the UI, and are stored beside the run log. Dates read as ISO strings,
amounts as numbers. A block takes either with :func:`table_from` (a Table) or
:func:`records_from` (records); :func:`to_frame` gives pandas, and :func:`to_records` turns
results back into JSON-safe records (each cell through
:func:`~keiri_agent.blocks.table.cells.json_cell`).

:func:`records_from` accepts what upstream blocks produce: a list of records, or an object that
carries one under ``items`` / ``records`` / ``rows`` (``ai.process_llm``'s ``results``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import pandas as pd

from keiri_agent.blocks.inputs import string_list
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import input_error

__all__ = [
    "DATA_LIST_KEYS",
    "Table",
    "column_list",
    "columns_of",
    "optional_columns",
    "optional_mapping",
    "records_from",
    "require_columns",
    "table_from",
    "to_frame",
    "to_records",
]

# Keys under which an object may carry its list of records (ai.process_llm results and the like).
DATA_LIST_KEYS = ("items", "records", "rows")


def records_from(data: Any, *, field: str) -> list[dict[str, Any]]:
    """The records in ``data``: a list of mappings, or one found under items/records/rows."""
    hint = (
        f"{field} にはレコード（{{列名: 値}}）のリストか、items / records / rows のいずれかに"
        "そのリストを持つオブジェクトを渡してください。"
    )
    if isinstance(data, Table):
        return data.records()
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


def table_from(data: Any, *, field: str) -> Table:
    """``data`` as a :class:`Table`: a table as is (it knows where its rows came from), a
    DataFrame, or records (:func:`records_from`; their rows are named by their place)."""
    if isinstance(data, Table):
        return data
    if type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas"):
        return Table(data)
    return Table.from_records(records_from(data, field=field))


def column_list(value: Any, *, field: str) -> list[str]:
    """A column name or a list of them, as a non-empty list of strings."""
    names = string_list(value)
    if not names or not all(n.strip() for n in names):
        raise input_error(
            f"{field} には列名（文字列）か、列名のリストを指定してください。",
            f'例: {field}: 取引先  または  {field}: ["取引先", "月"]',
            field=field,
            value=repr(value)[:200],
        )
    return [n.strip() for n in names]


def optional_columns(inputs: Mapping[str, Any], name: str) -> list[str]:
    """The input ``name`` as a list of column names (:func:`column_list`); none when absent."""
    value = inputs.get(name)
    return [] if value in (None, []) else column_list(value, field=name)


def optional_mapping(
    value: Any, *, field: str, keys: AbstractSet[str], hint: str
) -> Mapping[str, Any] | None:
    """An optional input written as a mapping of some of ``keys`` (period, fuzzy...): None
    when absent; anything else, or a key not among ``keys``, is refused with ``hint``."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) - keys:
        raise input_error(f"{field} の形が正しくありません（{value!r}）。", hint, field=field)
    return value


def columns_of(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every column that appears in the records, in first-seen order."""
    return list(dict.fromkeys(key for record in records for key in record))


def require_columns(
    records: Sequence[Mapping[str, Any]] | Table,
    columns: Iterable[str],
    *,
    field: str,
    table: str,
) -> None:
    """BlockError naming every missing column and the ones that exist (empty tables pass)."""
    if not len(records):
        return
    available = records.columns if isinstance(records, Table) else columns_of(records)
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


def to_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame as JSON-safe records (column names as strings)."""
    names = [str(c) for c in frame.columns]
    return [
        {name: json_cell(value) for name, value in zip(names, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]
