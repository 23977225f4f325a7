"""What a run gives the person who ran it: the files it wrote and its result tables.

Both the CLI's summary after ``plan run`` and the app's 実行 page show these, the same way:

* **files**: every file the run's nodes wrote (its ``file_write`` events, those still on disk),
  then the files of nodes reused from an earlier run (paths in the outputs that lie under the
  runs folder); each part in the plan's node order (``PlanNames.place``; a node's own files in
  the order it wrote them), so writers that run side by side list the same way every run;
  inputs are never listed;
* **tables**: every output that is a table (a ``Table``, a DataFrame, a list of records or an
  object holding one under items / records / rows),
  named and ordered as the plan presents them (``_graph.names``: the written ones first, as the
  workbook's sheets); a table the plan does not write out is left out when it is empty, and
  one a later node's table replaces (``PlanNames.is_superseded``: a first pass before a person's
  answers) is marked ``superseded`` and comes last: people are shown it apart (途中の表); an
  output its block marks ``result: false`` (questions for a ``ui.interactive_input``) is no
  result, unless the plan writes it out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from keiri_agent.blocks.table.records import DATA_LIST_KEYS
from keiri_agent.documents.amount_format import (
    AmountFormat,
    header_label,
    is_amount_column,
    total_row_flags,
)
from keiri_agent.documents.table_value import Table
from keiri_agent.events.models import FileWrite
from keiri_agent.events.runlog import replay
from keiri_agent.plan._graph.names import PlanNames

__all__ = [
    "MAX_COLUMNS_SHOWN",
    "MAX_WALK",
    "ResultTable",
    "result_tables",
    "table_summary",
    "written_files",
]

MAX_WALK: Final = 50_000  # values looked at when searching outputs for files of reused nodes
MAX_COLUMNS_SHOWN: Final = 8  # column names listed in a table's summary; the rest are counted


@dataclass(frozen=True)
class ResultTable:
    """One result table: where it comes from, its name, and the table itself."""

    node: str
    output: str
    name: str
    table: Table
    written: bool  # the plan writes it out (a sheet of its workbook)
    superseded: bool = False  # a later node's table of the same label replaces it

    @property
    def rows(self) -> int:
        return len(self.table)

    @property
    def columns(self) -> list[str]:
        return self.table.columns


def _as_table(value: Any) -> Table | None:
    """``value`` as a table: a Table, a DataFrame, a list of records, or an object holding
    one under items / records / rows (what every table block takes as a table)."""
    if isinstance(value, Table):
        return value
    if isinstance(value, pd.DataFrame):
        return Table(value)
    if isinstance(value, Mapping):
        value = next((value[k] for k in DATA_LIST_KEYS if isinstance(value.get(k), list)), None)
    if isinstance(value, list) and all(isinstance(row, Mapping) for row in value):
        return Table.from_records(value)
    return None


def result_tables(
    outputs: Mapping[str, Mapping[str, Any]], names: PlanNames | None = None
) -> list[ResultTable]:
    """The tables among ``outputs`` (top-level node → its outputs), as the plan presents them."""
    names = names or PlanNames()
    found = []
    for node, values in outputs.items():
        for output, value in values.items():
            table = _as_table(value)
            written = names.is_written(node, output)
            if table is None or (not written and len(table) == 0):
                continue
            if not names.is_result(node, output):  # a contract for another block
                continue
            found.append(
                ResultTable(
                    node,
                    output,
                    names.table(node, output),
                    table,
                    written,
                    names.is_superseded(node, output),
                )
            )
    for node, path in names.written:  # a table the plan writes from inside an output
        if "." not in path or node not in outputs:
            continue
        table = _as_table(_inside(outputs[node], path.split(".")))
        if table is not None:
            found.append(ResultTable(node, path, names.table(node, path), table, True))
    return sorted(found, key=lambda t: (t.superseded, names.rank(t.node, t.output)))


def _inside(values: Mapping[str, Any], steps: list[str]) -> Any:
    """The value at ``steps`` inside a node's outputs (None where the path leads nowhere)."""
    value: Any = values
    for step in steps:
        if isinstance(value, Mapping):
            value = value.get(step)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return None
    return value


def table_summary(table: ResultTable, amounts: AmountFormat) -> str:
    """``月別: 6 行 × 3 列（月、売上金額、件数）``, and the amounts of its total row if it has
    one (``合計: 売上金額 27,850,400``), shown by ``amounts``."""
    columns = table.columns
    shown = "、".join(
        header_label(c, table.table.units.get(c)) for c in columns[:MAX_COLUMNS_SHOWN]
    )
    if len(columns) > MAX_COLUMNS_SHOWN:
        shown += f" ほか {len(columns) - MAX_COLUMNS_SHOWN} 列"
    line = f"{table.name}: {table.rows:,} 行 × {len(columns)} 列"
    line += f"（{shown}）" if columns else ""
    last = table.table.records(table.rows - 1) if table.rows else []
    if last and total_row_flags(last, columns)[-1]:
        total = last[-1]
        sums = [
            f"{c} {amounts.text(total[c])}"
            for c in columns
            if total.get(c) is not None and is_amount_column(c, [total[c]])
        ]
        if sums:
            line += "　合計: " + "、".join(sums)
    return line


def _strings(value: Any, budget: list[int]) -> Iterator[str]:
    budget[0] -= 1
    if budget[0] < 0:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item, budget)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, budget)


def written_files(
    log_path: Path | None,
    outputs: Mapping[str, Mapping[str, Any]],
    runs_dir: Path,
    names: PlanNames | None = None,
) -> list[Path]:
    """The files the run wrote, absolute, in the plan's node order of ``names`` (without: node
    ids; see the module docstring); files since removed are not listed."""
    names = names or PlanNames()
    writes: list[tuple[str, Path]] = []
    if log_path is not None and log_path.is_file():
        for event in replay(log_path):
            if isinstance(event, FileWrite):
                path = Path(event.path)
                if path.is_file():
                    writes.append((event.node_id or "", path.absolute()))
    writes.sort(key=lambda write: names.place(write[0]))  # stable: a node's own write order
    found = dict.fromkeys(path for _, path in writes)
    base = runs_dir.resolve()
    prefix = str(base)
    budget = [MAX_WALK]
    nodes = sorted(outputs.items(), key=lambda item: names.place(item[0]))
    values = (v for _, out in nodes for v in out.values() if _as_table(v) is None)
    for text in (t for value in values for t in _strings(value, budget)):
        if not text.startswith(prefix) or "\n" in text:
            continue
        path = Path(text)
        if path.is_file() and path.resolve().is_relative_to(base):
            found.setdefault(path, None)
    return list(found)
