"""What the validator's walk shares with its rules: the findings so far and the walk's state.

The rules (``rules``, ``control_rules``) are written against ``references.ReferenceChecker`` (this
state plus reference checks); ``checker.Checker`` implements the one abstract step left here,
:meth:`CheckState.check_scope`, so the rules never import the walk that calls them.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan._dsl.issues import Loc, PlanIssue, ValidationReport, format_path
from keiri_agent.plan._dsl.loader import PlanSource
from keiri_agent.plan._dsl.models import Plan
from keiri_agent.plan._graph.scope import StaticScope
from keiri_agent.plan._graph.scope import types_label as _types
from keiri_agent.plan._graph.subflows import SubflowLoader

__all__ = ["CheckState", "Deps", "close_matches", "port_hint"]

Deps = list[tuple[StaticScope, str]]


@dataclass
class CheckState(ABC):
    source: PlanSource
    plan: Plan
    registry: BlockRegistry
    report: ValidationReport
    designs_dir: Path
    config: Mapping[str, Any]
    env: Mapping[str, str]
    stack: tuple[str, ...]  # plan ids of the calling chain, this plan last
    stack_files: tuple[str | None, ...]  # their resolved files (None: not from a file)
    index_map: list[int]
    validate_subflow: Callable[[PlanSource], ValidationReport]
    subflows: SubflowLoader  # shared with the phases that follow (dry run, run)
    used: set[tuple[int, str, str]] = field(default_factory=set)
    seen_ids: dict[str, Loc] = field(default_factory=dict)
    top: StaticScope | None = None
    dropped: set[str] = field(default_factory=set)  # top-level nodes whose schema was invalid
    requirement_types: dict[str, tuple[str, str]] = field(default_factory=dict)

    # --- reporting ---------------------------------------------------------------------------

    def issue(
        self,
        code: str,
        message: str,
        loc: Loc,
        *,
        node: str | None = None,
        hint: str = "",
        severity: str = "error",
    ) -> None:
        line, column = self.source.position(loc)
        self.report.add(
            PlanIssue(
                code=code,
                message=message,
                severity="warning" if severity == "warning" else "error",
                node_id=node,
                path=format_path(loc),
                line=line,
                column=column,
                hint=hint,
                file=self.source.file,
            )
        )

    def unknown_names(
        self,
        code: str,
        given: Iterable[str],
        known: Collection[str],
        message: str,
        loc: Loc,
        node: str,
        label: str,
    ) -> None:
        """One issue per name in ``given`` that ``known`` lacks (at ``loc`` + the name, with
        ``{name}`` in ``message`` replaced by it); the hint lists ``known`` after ``label``."""
        for name in given:
            if name not in known:
                hint = f"{label}: {', '.join(known) or 'なし'}"
                text = message.replace("{name}", name)
                self.issue(code, text, (*loc, name), node=node, hint=hint)

    # --- the walk's steps, used by the rules ---------------------------------------------------

    @abstractmethod
    def check_scope(self, scope: StaticScope, outer: Deps | None) -> None: ...


def port_hint(target: Mapping[str, Any]) -> str:
    parts = [f"型: {_types(target)}"]
    if "enum" in target:
        parts.append(f"選択肢: {', '.join(map(str, target['enum']))}")
    return "。".join(parts)


def close_matches(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.5)
    return f"もしかして: {', '.join(close)}" if close else ""
