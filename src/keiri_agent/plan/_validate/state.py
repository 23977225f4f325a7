"""What the validator's walk shares with its rules: the findings so far and the walk's state.

The rules (``rules``, ``control_rules``) are written against :class:`CheckState`; the walk
(``references.ReferenceChecker`` → ``checker.Checker``) implements its abstract steps, so the rules
never import the walk that calls them.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.plan._dsl.issues import Loc, PlanIssue, ValidationReport, format_path
from keiri_agent.plan._dsl.loader import PlanSource
from keiri_agent.plan._dsl.models import Plan
from keiri_agent.plan._dsl.refs import Reference
from keiri_agent.plan._graph.scope import NodeInfo, Scope
from keiri_agent.plan._graph.scope import types_label as _types
from keiri_agent.plan._graph.subflows import SubflowLoader

__all__ = ["CheckState", "Deps", "close_matches", "port_hint"]

Deps = list[tuple[Scope, str]]


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
    top: Scope | None = None
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

    # --- the walk's steps, used by the rules ---------------------------------------------------

    @abstractmethod
    def check_scope(self, scope: Scope, outer: Deps | None) -> None: ...

    @abstractmethod
    def check_when(
        self, when: Any, loc: Loc, scope: Scope, info: NodeInfo | None, deps: Deps
    ) -> None: ...

    @abstractmethod
    def check_value(
        self,
        value: Any,
        loc: Loc,
        scope: Scope,
        info: NodeInfo | None,
        deps: Deps,
        target: Mapping[str, Any] | None,
        *,
        literal_check: bool = True,
    ) -> Any: ...

    @abstractmethod
    def resolve(
        self, ref: Reference, scope: Scope, loc: Loc, info: NodeInfo | None, deps: Deps
    ) -> Any: ...


def port_hint(target: Mapping[str, Any]) -> str:
    parts = [f"型: {_types(target)}"]
    if "enum" in target:
        parts.append(f"選択肢: {', '.join(map(str, target['enum']))}")
    return "。".join(parts)


def close_matches(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.5)
    return f"もしかして: {', '.join(close)}" if close else ""
