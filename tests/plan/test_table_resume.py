"""A large table run rerun and resumed from its stored outputs: the same tables, exactly.

Tables are stored beside the run log as Parquet with their file positions, origin and units
(``documents.table_value.save_table``); a rerun from a node reads them back instead of running
the upstream nodes, and must give the node the very table it had: same values and types, same
file lines (so an error downstream still names the user's line), same units.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from keiri_agent.documents.table_value import Table
from keiri_agent.events import read_events
from keiri_agent.plan import PlanRunner

WritePlan = Callable[[str, str], Path]
ROWS = 200_000


def write_ledger(path: Path) -> None:
    lines = ["2026年度 経費台帳（単位：千円）", "日付,部門,金額"]
    total = 0
    for n in range(ROWS):
        day = f"2026/{n % 12 + 1}/{n % 28 + 1}"
        amount = f"({n % 997:,})" if n % 13 == 0 else f"{n % 9973:,}"
        total += -(n % 997) if n % 13 == 0 else n % 9973
        lines.append(f'{day},部門{n % 7},"{amount}"')
    lines.append(f'合計,,"{total:,}"')  # an export's total adds up (file.read_table checks it)
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp932"))


PLAN = """
id: ledger_rerun
vars: {ledger: ""}
graph:
  - {id: read, block: file.read_table, in: {path: "${vars.ledger}"}}
  - id: monthly
    block: table.aggregate
    in:
      table: ${read.rows}
      period: {column: 日付, unit: month, as: 月}
      group_by: [部門, 月]
      aggregations: [{column: 金額, func: sum, as: 金額合計}]
  - id: top
    block: table.sort
    in: {table: "${read.rows}", by: [{column: 金額, order: desc}], limit: 1000}
"""


def test_rerun_and_resume_of_a_large_table_run_read_the_same_tables(
    runner: PlanRunner, write_plan: WritePlan, tmp_path: Path
) -> None:
    ledger = tmp_path / "台帳.csv"
    write_ledger(ledger)
    plan = write_plan("ledger_rerun", PLAN)
    first = runner.run(plan, vars={"ledger": str(ledger)})
    assert first.status == "success", first.error and first.error.to_dict()
    rows = first.outputs["read"]["rows"]
    assert isinstance(rows, Table)
    assert len(rows) == ROWS
    assert rows.units == {"金額": "千円"}
    assert rows.position(0) == 3  # title, header, then the first row

    again = runner.rerun(first.run_id, "monthly")
    assert again.status == "success", again.error and again.error.to_dict()
    assert again.log_path is not None
    reused = [
        e.node_id
        for e in read_events(again.log_path)
        if e.event == "node_complete" and getattr(e, "reused", False)
    ]
    assert reused == ["read"] or sorted(reused) == ["read", "top"]
    stored = again.outputs["read"]["rows"]
    assert isinstance(stored, Table)
    # The very table: values, column types, file lines, origin and units.
    assert stored == rows
    assert list(stored.frame.dtypes) == list(rows.frame.dtypes)
    assert stored.where(ROWS - 1, "金額") == rows.where(ROWS - 1, "金額")
    assert again.outputs["monthly"]["rows"] == first.outputs["monthly"]["rows"]
    assert again.outputs["top"]["rows"] == first.outputs["top"]["rows"]
    assert again.outputs["top"]["rows"].positions.tolist() == (
        first.outputs["top"]["rows"].positions.tolist()
    )

    resumed = runner.resume(first.run_id)
    assert resumed.status == "success"
    assert resumed.outputs["read"]["rows"] == rows
