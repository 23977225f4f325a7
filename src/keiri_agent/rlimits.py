"""Lowering this process's resource limits (``setrlimit``), the one way every child does it.

The document parser's child (``documents.bounded``) and the sandbox worker
(``sandbox.isolation``) both cap themselves before running what they were forked for. A limit
can only come down here: a hard limit the process already has below the asked one stays, so a
child started under a stricter parent (a container, a jail) never asks for more than it holds,
which ``setrlimit`` would refuse.
"""

from __future__ import annotations

import resource

__all__ = ["lower_limit"]


def lower_limit(kind: int, soft: int, hard: int | None = None) -> int:
    """Lower limit ``kind`` to (``soft``, ``hard`` or ``soft``); one already lower stays.
    Returns the soft limit now in force."""
    _, current_hard = resource.getrlimit(kind)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
    resource.setrlimit(kind, (min(soft, hard), hard))
    return min(soft, hard)
