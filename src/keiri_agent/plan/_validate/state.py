"""What the validator's walk and its rules share: the plan, its surroundings and the findings.

:class:`CheckState` is plain data; the walk (``checker``), the reference checks
(``references``) and the rules (``rules``, ``control_rules``) are functions over it. A rule that
checks a nested graph (a loop body) is handed the walk's step as a :data:`CheckScope` callable,
so no rule imports the walk that calls it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from keiri_agent.plan._dsl.issues import Loc, PlanIssue, ValidationReport, format_path
from keiri_agent.plan._dsl.loader import PlanSource
from keiri_agent.plan._dsl.models import Plan
from keiri_agent.plan._graph.compiled import GraphShape
from keiri_agent.plan._graph.env import PlanEnv
from keiri_agent.plan._graph.names import PlanWords, plan_words
from keiri_agent.plan._graph.scope import StaticScope
from keiri_agent.plan._graph.scope import types_label as _types

__all__ = ["CheckScope", "CheckState", "close_matches", "port_hint"]

CheckScope = Callable[[StaticScope], None]  # the walk's step over one nested graph


@dataclass
class CheckState:
    source: PlanSource
    plan: Plan
    env: PlanEnv  # registry, config, ${env.*} and the subflow loader the later phases share
    report: ValidationReport
    shape: GraphShape  # the plan graph's nodes, edges and cycles (``_graph.compiled``)
    stack: tuple[str, ...]  # plan ids of the calling chain, this plan last
    stack_files: tuple[str | None, ...]  # their resolved files (None: not from a file)
    index_map: list[int]
    validate_subflow: Callable[[PlanSource], ValidationReport]
    used: set[tuple[int, str, str]] = field(default_factory=set)
    seen_ids: dict[str, Loc] = field(default_factory=dict)
    top: StaticScope | None = None
    dropped: set[str] = field(default_factory=set)  # top-level nodes whose schema was invalid
    requirement_types: dict[str, tuple[str, str]] = field(default_factory=dict)

    @cached_property
    def words(self) -> PlanWords:
        """How the messages name this plan's nodes, blocks, ports and references."""
        return plan_words(self.plan, self.env.registry)

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


def port_hint(target: Mapping[str, Any]) -> str:
    parts = [f"型: {_types(target)}"]
    if "enum" in target:
        parts.append(f"選択肢: {', '.join(map(str, target['enum']))}")
    return "。".join(parts)


def close_matches(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.5)
    return f"もしかして: {', '.join(close)}" if close else ""
