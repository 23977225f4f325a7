"""A table against a port's JSON Schema: by columns and types, and a bounded sample of rows.

A :class:`~keiri_agent.documents.table_value.Table` of a million rows is checked the way a
data tool checks a column store, not record by record: the schema's rules stay the same for
users, but they are applied

* to each **column**: its name (``properties``, ``required``, ``additionalProperties: false``)
  and its JSON types, read from the column's dtype (a column of integers is ``integer``, of
  dates ``string`` as they read at the JSON edge, blanks add ``null``), against the types the
  item schema allows for it;
* to the **length** (``minItems`` / ``maxItems``);
* to a **sample** of at most ``SAMPLE_ROWS`` rows (the first, the last and evenly spaced ones),
  validated as records with the full schema, for what only values can break (``enum``,
  ``pattern``, ``minimum``...).

A value constraint broken only by a row outside the sample is not seen; types, names and
lengths are checked for every row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from jsonschema.exceptions import best_match

from keiri_agent.blocks.schema_words import schema_problem
from keiri_agent.documents.table_value import Table

__all__ = ["SAMPLE_ROWS", "column_json_types", "table_problem"]

# Rows validated value by value: a third from the start, a third from the end, a third spread.
SAMPLE_ROWS = 300
_ANY = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})
_INFERRED = {
    "string": "string",
    "unicode": "string",
    "bytes": "string",
    "integer": "integer",
    "floating": "number",
    "mixed-integer-float": "number",
    "decimal": "number",
    "boolean": "boolean",
    "datetime": "string",
    "datetime64": "string",
    "date": "string",
    "time": "string",
    "period": "string",
    "timedelta": "number",
    "timedelta64": "number",
}


def _json_type(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "boolean"
    if isinstance(value, int | np.integer):
        return "integer"
    if isinstance(value, float | np.floating):
        return "integer" if float(value).is_integer() else "number"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return "string"


def column_json_types(column: pd.Series) -> frozenset[str]:
    """The JSON types a column's cells have at the JSON edge (``null`` for blanks)."""
    present = column.dropna()
    types: set[str] = {"null"} if len(present) < len(column) else set()
    if present.empty:
        return frozenset(types)
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        types.add("boolean")
    elif pd.api.types.is_integer_dtype(dtype):
        types.add("integer")
    elif pd.api.types.is_float_dtype(dtype):
        integral = bool((present % 1 == 0).all())
        types.add("integer" if integral else "number")
    elif (
        pd.api.types.is_datetime64_any_dtype(dtype)
        or isinstance(dtype, pd.PeriodDtype)
        or (pd.api.types.is_string_dtype(dtype) and not pd.api.types.is_object_dtype(dtype))
    ):
        types.add("string")
    else:
        inferred = pd.api.types.infer_dtype(present, skipna=True)
        if inferred in _INFERRED:
            types.add(_INFERRED[inferred])
        else:  # mixed: each value's own type (rare in tables read from files)
            types.update(present.map(_json_type).unique().tolist())
    return frozenset(types)


def _allowed(schema: Mapping[str, Any] | bool | None) -> frozenset[str]:
    if not isinstance(schema, Mapping):
        return _ANY if schema is not False else frozenset()
    declared = schema.get("type")
    if declared is None:
        return _ANY
    types = {declared} if isinstance(declared, str) else set(declared)
    if "number" in types:
        types.add("integer")
    return frozenset(types)


def _columns_problem(table: Table, items: Mapping[str, Any]) -> str | None:
    properties = items.get("properties") or {}
    extra = items.get("additionalProperties", True)
    missing = [name for name in items.get("required") or [] if name not in table.columns]
    if missing and len(table):
        return f"必須の列 {', '.join(map(str, missing))} がありません"
    for name in table.columns:
        schema = properties.get(name, extra)
        if schema is False:
            return f"定義にない列「{name}」があります"
        allowed = _allowed(schema)
        found = column_json_types(table.frame[name])
        wrong = sorted(found - allowed)
        if wrong:
            return (
                f"列「{name}」に {', '.join(wrong)} の値があります"
                f"（使える型: {', '.join(sorted(allowed))}）"
            )
    return None


def _sample(size: int) -> np.ndarray:
    if size <= SAMPLE_ROWS:
        return np.arange(size)
    third = SAMPLE_ROWS // 3
    spread = np.linspace(third, size - third - 1, SAMPLE_ROWS - 2 * third).astype(np.int64)
    return np.unique(np.concatenate([np.arange(third), spread, np.arange(size - third, size)]))


def table_problem(table: Table, schema: Mapping[str, Any], validator: Any) -> str | None:
    """Why ``table`` does not fit ``schema`` (None when it does); ``validator`` is the
    schema's compiled validator (``blocks.schema.validator_for``)."""
    if "array" not in _allowed(schema):
        return f"表（{len(table):,} 行）は {', '.join(sorted(_allowed(schema)))} ではありません"
    low, high = schema.get("minItems"), schema.get("maxItems")
    if isinstance(low, int) and len(table) < low:
        return f"行数 {len(table):,} は {low} 行以上である必要があります"
    if isinstance(high, int) and len(table) > high:
        return f"行数 {len(table):,} は {high} 行以下である必要があります"
    items = schema.get("items")
    if isinstance(items, Mapping):
        if "object" not in _allowed(items):
            return f"表の行は {', '.join(sorted(_allowed(items)))} ではありません"
        problem = _columns_problem(table, items)
        if problem is not None:
            return problem
    rows = _sample(len(table))
    records = table.take(rows).records()
    error = best_match(validator.iter_errors(records))
    if error is None:
        return None
    path = error.absolute_path
    if path and isinstance(path[0], int):
        path[0] = int(rows[path[0]])  # the table's row, not the sample's
    return schema_problem(error)
