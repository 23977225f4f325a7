"""What a run gives the person who ran it: the files it wrote and its result tables.

Both the CLI's summary after ``plan run`` and the app's 実行 page show these, the same way:

* **files**: every file the run's nodes wrote (its ``file_write`` events, in order, those still
  on disk), then the files of nodes reused from an earlier run (paths in the outputs that lie
  under the runs folder); inputs are never listed;
* **tables**: every output that is a table (a ``Table``, a DataFrame or a list of records),
  named and ordered as the plan presents them (``_graph.names``: the written ones first, as the
  workbook's sheets); a table the plan does not write out is left out when it is empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pandas as pd

from keiri_agent.documents.table_value import Table
from keiri_agent.events.models import FileWrite
from keiri_agent.events.runlog import replay
from keiri_agent.plan._graph.names import PlanNames

__all__ = ["MAX_WALK", "ResultTable", "result_tables", "written_files"]

MAX_WALK: Final = 50_000  # values looked at when searching outputs for files of reused nodes


@dataclass(frozen=True)
class ResultTable:
    """One result table: where it comes from, its name, and the table itself."""

    node: str
    output: str
    name: str
    table: Table
    written: bool  # the plan writes it out (a sheet of its workbook)

    @property
    def rows(self) -> int:
        return len(self.table)

    @property
    def columns(self) -> list[str]:
        return self.table.columns


def _as_table(value: Any) -> Table | None:
    if isinstance(value, Table):
        return value
    if isinstance(value, pd.DataFrame):
        return Table(value)
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
            found.append(ResultTable(node, output, names.table(node, output), table, written))
    return sorted(found, key=lambda t: names.rank(t.node, t.output))


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
    log_path: Path | None, outputs: Mapping[str, Mapping[str, Any]], runs_dir: Path
) -> list[Path]:
    """The files the run wrote, absolute, in the order they were written (see the module
    docstring); files since removed are not listed."""
    found: dict[Path, None] = {}
    if log_path is not None and log_path.is_file():
        for event in replay(log_path):
            if isinstance(event, FileWrite):
                path = Path(event.path)
                if path.is_file():
                    found[path.absolute()] = None
    base = runs_dir.resolve()
    prefix = str(base)
    budget = [MAX_WALK]
    values = (v for out in outputs.values() for v in out.values() if _as_table(v) is None)
    for text in (t for value in values for t in _strings(value, budget)):
        if not text.startswith(prefix) or "\n" in text:
            continue
        path = Path(text)
        if path.is_file() and path.resolve().is_relative_to(base):
            found.setdefault(path, None)
    return list(found)
