"""The job a vault lives for: one plan run, analysis turn, help-desk question or server task.

Where a job begins, its code enters :func:`job_scope`; every LLM call made inside it, in this
thread or in a thread that copies the context (the plan runner's workers, LangGraph's), masks
with the same :class:`~keiri_agent.privacy.vault.Vault`, so one person is one placeholder in
every prompt of the job. A job started inside another (a help-desk question asked by a plan
node, an analysis inside a server task) keeps the outer job's vault. When the outermost scope
ends, the vault is dropped with it: the mapping is never kept anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from keiri_agent.privacy.kinds import PersonalKind
from keiri_agent.privacy.vault import Vault

__all__ = ["MAX_WALK_DEPTH", "current_vault", "job_scope", "learn_tables"]

MAX_WALK_DEPTH = 4  # how deep learn_tables looks for tables inside mappings and lists

_CURRENT: ContextVar[Vault | None] = ContextVar("keiri_privacy_vault", default=None)


def current_vault() -> Vault | None:
    """The vault of the enclosing :func:`job_scope`, if any."""
    return _CURRENT.get()


@contextmanager
def job_scope(*, learnt: Callable[[PersonalKind, str], None] | None = None) -> Iterator[Vault]:
    """The job's vault: the enclosing one, or a new one for the length of this block.

    ``learnt`` is told every value the vault learns (the run's log redactor registers them).
    """
    outer = _CURRENT.get()
    vault = outer if outer is not None else Vault()
    if learnt is not None:
        vault.add_listener(learnt)
    if outer is not None:
        yield vault
        return
    token = _CURRENT.set(vault)
    try:
        yield vault
    finally:
        _CURRENT.reset(token)


def _is_frame(value: Any) -> bool:
    frame = getattr(value, "frame", value)
    return hasattr(frame, "columns") and hasattr(frame, "dtypes")


def learn_tables(value: Any, *, depth: int = 0) -> int:
    """Teach the job's vault the personal columns (by header) of every table in ``value``
    (DataFrames, ``documents.Table`` values, lists of records, inside mappings and lists).
    Returns the number of values learnt; 0 outside a job."""
    vault = current_vault()
    if vault is None or depth > MAX_WALK_DEPTH:
        return 0
    if _is_frame(value):
        return vault.learn_table(value)
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value[:10]):
        return vault.learn_table(value)
    if isinstance(value, Mapping):
        return sum(learn_tables(v, depth=depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(learn_tables(v, depth=depth + 1) for v in value)
    return 0
