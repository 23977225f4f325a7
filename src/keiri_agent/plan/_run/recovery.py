"""What a run killed mid-write left behind, cleaned up when it is resumed or rerun.

Blocks log a ``file_write`` event before they write an output file (``BlockContext.
claim_output``), naming the file and the prefix of its temporary file. When a run dies with
``kill -9`` the temporary file stays (``.report.1a2b3c4d.XXXX.xlsx``), and when it dies after
the rename but before ``node_complete`` the next attempt finds "its" file already there. For
every node that runs again, :func:`recover_outputs` removes the temporary files it had left
and returns the files it had written, which that node may then replace.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from pathlib import Path

from keiri_agent.plan._run.output_store import OutputStore
from keiri_agent.plan._run.runstate import RunRecord

__all__ = ["recover_outputs"]


def recover_outputs(
    record: RunRecord, runs_again: Callable[[str], bool]
) -> dict[str, frozenset[str]]:
    """Node path → files it was writing in ``record``, for the nodes that ``runs_again``;
    their leftover temporary files, and those of the run's stored outputs, are removed."""
    claimed: dict[str, set[str]] = {}
    for event in record.file_writes:
        if not event.node_id or not runs_again(event.node_id):
            continue
        target = Path(event.path)
        pattern = glob.escape(str(target.parent / event.temp_prefix)) + "*"
        for name in glob.glob(pattern):
            Path(name).unlink(missing_ok=True)
        claimed.setdefault(event.node_id, set()).add(event.path)
    if record.status is None:  # no plan_complete: the run died; its outputs.json may be half
        store = OutputStore(record.log_path)
        for stale in store.dir.glob("*/.outputs.*.tmp"):
            stale.unlink(missing_ok=True)
    return {node: frozenset(paths) for node, paths in claimed.items()}
