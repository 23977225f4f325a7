"""A table checked against a port's schema by columns and types, and a bounded sample of rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.schema import check_value, resolve_port, validator_for
from keiri_agent.blocks.table_schema import SAMPLE_ROWS, column_json_types, table_problem
from keiri_agent.documents.table_value import Table

RECORDS = resolve_port({"$ref": "jsonschema://records"})


def problem(table: Table, schema: dict[str, Any] = RECORDS) -> str | None:
    return table_problem(table, schema, validator_for(schema))


def test_a_typed_table_from_a_file_fits_the_records_schema() -> None:
    frame = pd.DataFrame(
        {
            "日付": pd.to_datetime(["2026-02-03", None]),
            "金額": pd.array([1200, None], dtype="Int64"),
            "率": [0.5, np.nan],
            "取引先": ["山田商事", None],
            "月": pd.Series(["2026-02", None], dtype="period[M]"),
            "済": [True, False],
        }
    )
    assert problem(Table(frame)) is None
    assert check_value(Table(frame), RECORDS) is None


def test_column_types_are_read_from_dtypes() -> None:
    assert column_json_types(pd.Series([1, 2])) == {"integer"}
    assert column_json_types(pd.Series([1.0, 2.5, None])) == {"number", "null"}
    assert column_json_types(pd.Series([1.0, 2.0])) == {"integer"}
    assert column_json_types(pd.Series(["a", None], dtype=object)) == {"string", "null"}
    assert column_json_types(pd.Series([1, "a"], dtype=object)) == {"integer", "string"}


def test_a_column_of_objects_is_refused_with_its_name() -> None:
    table = Table.from_records([{"金額": 1}, {"金額": {"内訳": 1}}])
    found = problem(table)
    assert found is not None
    assert "列「金額」" in found
    assert "object" in found


def test_names_and_required_columns_are_checked() -> None:
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"金額": {"type": "integer"}},
            "required": ["金額"],
            "additionalProperties": False,
        },
    }
    assert problem(Table.from_records([{"金額": 1}]), schema) is None
    assert "必須の列 金額" in (problem(Table.from_records([{"額": 1}]), schema) or "")
    found = problem(Table.from_records([{"金額": 1, "メモ": "x"}]), schema)
    assert found is not None
    assert "定義にない列「メモ」" in found


def test_lengths_and_value_rules_apply() -> None:
    schema = {
        "type": "array",
        "minItems": 2,
        "items": {"type": "object", "properties": {"区分": {"enum": ["売上", "仕入"]}}},
    }
    assert "2 行以上" in (problem(Table.from_records([{"区分": "売上"}]), schema) or "")
    rows = [{"区分": "売上"}] * 5 + [{"区分": "経費"}]
    found = problem(Table.from_records(rows), schema)
    assert found is not None
    assert found.startswith("5/区分")  # the table's own row, not the sample's


class CountingTable(Table):
    """A table that remembers how many rows were turned into records, and what it gave."""

    __slots__ = ("last_taken", "rows_read")

    def records(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        out = super().records(start, stop)
        self.rows_read = getattr(self, "rows_read", 0) + len(out)
        return out

    def take(self, rows: Any) -> Table:
        self.last_taken = CountingTable(super().take(rows).frame)
        return self.last_taken


def test_a_large_table_is_never_read_row_by_row() -> None:
    size = 200_000
    frame = pd.DataFrame({"金額": np.arange(size), "取引先": ["山田商事"] * size})
    table = CountingTable(frame)
    assert problem(table) is None
    assert getattr(table, "rows_read", 0) == 0  # the whole table was never made records
    assert table.last_taken.rows_read <= SAMPLE_ROWS
