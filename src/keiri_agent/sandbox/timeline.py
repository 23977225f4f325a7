"""Where the time of one action goes: named instants on the machine's monotonic clock.

Every process an action passes through (the host, the fork server, the supervisor, the action's
init, and the worker until user code starts) reads the same ``CLOCK_MONOTONIC`` (the jail has no
time namespace) and records ``(name, seconds)`` marks. The supervisor gathers them from its own
code and from the trusted pipes (the init's status pipe, the worker's layers pipe, closed before
user code runs) and puts them into its outcome document; the host adds its own and
``phases_ms`` turns them into the duration of each phase, named by the mark that ends it.
``ExecutionOutcome.phases_ms`` carries the result, ``benchmarks/sandbox.py`` prints it.

Phases (in order): ``policy`` (AST check), ``jail`` (workdir lock, jail looked up or started),
``inputs`` (DataFrames written as Arrow), ``server`` (request read by the fork server),
``supervisor`` (supervisor forked), ``action_fs`` (namespaces, tmpfs, overlay), ``cgroup``,
``init`` (action init forked), ``init_isolated`` (its cgroup, mount namespace and /proc),
``worker`` (worker forked), ``isolation`` (the worker's layers), ``worker_inputs``
(DataFrames read), ``code`` (user code, its report and the worker's exit), ``reaped`` (the
rest of the action killed and reaped), ``status`` (the supervisor saw the init's status),
``copy_out``, ``outcome`` (outcome built), ``answer`` (written, announced, read by the host),
``parsed`` (checked by the host).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable

__all__ = ["MAX_MARKS", "Marks", "mark", "parse_marks", "phases_ms"]

MAX_MARKS = 64
MAX_MARK_NAME_CHARS = 40

Marks = list[tuple[str, float]]


def mark(marks: Marks, name: str) -> None:
    """Record that ``name`` happened now."""
    marks.append((name, time.monotonic()))


def parse_marks(value: object) -> Marks:
    """Marks from JSON (``[[name, seconds], ...]``); anything of another shape is skipped."""
    found: Marks = []
    if not isinstance(value, list):
        return found
    for item in value[:MAX_MARKS]:
        if not isinstance(item, list | tuple) or len(item) != 2:
            continue
        name, seconds = item
        if (
            isinstance(name, str)
            and isinstance(seconds, int | float)
            and not isinstance(seconds, bool)
            and math.isfinite(seconds)
        ):
            found.append((name[:MAX_MARK_NAME_CHARS], float(seconds)))
    return found


def phases_ms(marks: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Milliseconds from each mark to the next, keyed by the later mark's name, in time order."""
    ordered = sorted(marks, key=lambda item: item[1])
    phases: dict[str, float] = {}
    for (_, before), (name, after) in itertools.pairwise(ordered):
        phases[name] = round(phases.get(name, 0.0) + (after - before) * 1000, 3)
    return phases
