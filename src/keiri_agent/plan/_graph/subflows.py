"""The one subflow loader and the one cycle guard of validate, dry-run and run (seed 002 §5.3).

A :class:`SubflowLoader` reads each ``designs/<plan_id>.yaml`` once and keeps what it read: the
validator, the dry run and the runner of one command share a loader, so a run executes exactly
the subflow files its validation checked, even when a file changes while the run goes on. A run
keeps the texts it read beside its log (:meth:`SubflowLoader.keep`); a resume or rerun of it
loads those first (``pinned``), so it calls the subflow versions its run started with, even if
the working copies changed since (a subflow that was not kept is read from ``designs/``).

A run of a saved version that starts by itself (a schedule or a trigger: the server's task of a
``version``, ``schedule run-now``) reads no working copy: its loader is ``saved`` (a
:class:`~keiri_agent.plan._graph.saved.SavedSubflows`, resolved once at the run's door and
handed on by :meth:`SubflowLoader.again`), and each subflow, at any depth, is the saved version
that object names, whatever ``designs/`` holds now. A subflow with no version to run is no
defect of the plan but a refusal: :meth:`load` raises it (naming the subflow and who can
approve it), so validation, the dry run and the run stop with it before any block runs. A run of a file (``plan run``, the 実行 page)
reads ``designs/`` as before; with approval required its runner refuses any subflow text that
is not approved (``versions.check_run``).

What cannot be loaded is a :class:`BlockError` with the same code in every phase, its message
naming the subflow as people read it (``names.subflow_said``: the first sentence of the file's
``description``, its ``plan_id`` after it) and a schema problem in Japanese (``field_problems``):

- ``SUBFLOW_NOT_FOUND``  no file for the plan id
- ``YAML_SYNTAX``         the file is not YAML
- ``SUBFLOW_INVALID``     the file does not describe a plan (its schema issues are the validator's)

:func:`call_cycle` is the cycle guard: a call back into a plan of the calling chain, found by
file identity (the resolved path; a plan's ``id`` need not match its file name) or by plan id.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from keiri_agent.errors import BlockError
from keiri_agent.llm.field_problems import field_problems, lines_of
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.loader import PlanSource, load_source, parse_source, resolve_plan_file
from keiri_agent.plan._dsl.models import MAX_SUBFLOW_DEPTH, LoopNode, Plan, SubflowNode
from keiri_agent.plan._graph.compiled import CompiledGraph, compile_graph
from keiri_agent.plan._graph.names import subflow_said
from keiri_agent.plan._graph.saved import SavedSubflows
from keiri_agent.versions import VersionStore

__all__ = [
    "SUBFLOW_HINT",
    "Chain",
    "Subflow",
    "SubflowLoader",
    "call_cycle",
    "call_too_deep",
    "file_key",
]

SUBFLOW_HINT = "designs/ からの相対名で plan_id を指定してください（拡張子なし）。"
CYCLE_HINT = "Plan が自分自身を（間接的にでも）呼ばないようにしてください。"

Chain = Sequence[tuple[str, str | None]]  # the calling plans as (plan id, file), outermost first


def file_key(source: PlanSource | None) -> str | None:
    """A plan file's identity: its resolved path (None for a plan not read from a file)."""
    return str(Path(source.file).resolve()) if source is not None and source.file else None


@dataclass(frozen=True)
class Subflow:
    """What ``plan_id`` names: its source and plan, or the error that stands for them."""

    plan_id: str
    source: PlanSource | None
    plan: Plan | None
    error: BlockError | None

    @property
    def file(self) -> str | None:
        return file_key(self.source)


class SubflowLoader:
    """Subflow plans under ``designs_dir``, each read once and compiled once (thread-safe);
    ``pinned``: a folder :meth:`keep` wrote, whose texts come before ``designs_dir``'s;
    ``saved``: the saved versions that come instead of ``designs_dir``'s files."""

    def __init__(
        self, designs_dir: Path, *, pinned: Path | None = None, saved: SavedSubflows | None = None
    ) -> None:
        self.designs_dir = designs_dir
        self.pinned = pinned
        self.saved = saved
        self._loaded: dict[str, Subflow] = {}
        self._graphs: dict[str, CompiledGraph] = {}
        self._lock = threading.Lock()

    def load(self, plan_id: str) -> Subflow:
        with self._lock:
            found = self._loaded.get(plan_id)
            if found is None:
                found = self._loaded[plan_id] = self._read(plan_id)
            return found

    def loaded(self) -> list[Subflow]:
        """Every subflow read so far, in the order first asked for."""
        with self._lock:
            return list(self._loaded.values())

    def plan(self, plan_id: str) -> tuple[Plan, CompiledGraph]:
        """The subflow's plan and compiled graph; its loading error raised as it is."""
        sub = self.load(plan_id)
        if sub.error is not None:
            raise sub.error
        assert sub.plan is not None
        with self._lock:
            graph = self._graphs.get(plan_id)
            if graph is None:
                graph = self._graphs[plan_id] = compile_graph(list(sub.plan.graph))
        return sub.plan, graph

    def called(self, plan: Plan) -> list[Subflow]:
        """Every subflow ``plan`` calls, at any depth (in loop bodies and under conditions
        too), each loaded once, in the order first met; a refusal :meth:`load` raises, the
        other errors are left in each :class:`Subflow` for validation to report."""
        found: dict[str, Subflow] = {}
        todo = list(_calls(plan.graph))
        while todo:
            plan_id = todo.pop(0)
            if plan_id in found:
                continue
            sub = found[plan_id] = self.load(plan_id)
            if sub.plan is not None:
                todo += _calls(sub.plan.graph)
        return list(found.values())

    def keep(self, folder: Path) -> list[Path]:
        """Write the text of every subflow read so far under ``folder`` as ``<plan_id>.yaml``
        (what ``pinned`` reads back), and what the door of a saved run resolved
        (``SavedSubflows.write``: what its continuations reopen); the files written."""
        written = [self.saved.write(folder)] if self.saved is not None else []
        for sub in self.loaded():
            if sub.source is None:
                continue
            target = folder / f"{sub.plan_id}.yaml"
            if not target.resolve().is_relative_to(folder.resolve()):
                continue  # resolve_plan_file never loads such an id; nothing to keep
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(sub.source.text, encoding="utf-8")
            written.append(target)
        return written

    def again(
        self, *, pinned: Path | None = None, saved: SavedSubflows | None = None
    ) -> SubflowLoader:
        """A new loader reading from where this one does (``pinned`` first, when given; the
        same saved versions, resolved once, unless ``saved`` reopened a run's)."""
        return SubflowLoader(
            self.designs_dir, pinned=pinned, saved=saved if saved is not None else self.saved
        )

    def _read(self, plan_id: str) -> Subflow:
        file = resolve_plan_file(plan_id, self.pinned) if self.pinned is not None else None
        if file is None and self.saved is not None:
            version, text = self.saved.version(plan_id)  # or refused
            store = VersionStore.of(self.saved.settings)
            kept = store.folder(version.plan_id) / f"{version.id}.yaml"
            return self._parsed(plan_id, parse_source(text, file=str(kept)))
        if file is None:
            file = resolve_plan_file(plan_id, self.designs_dir)
        if file is None:
            error = BlockError(
                f"サブフロー '{plan_id}' が見つかりません（{self.designs_dir}/{plan_id}.yaml）。",
                code=IssueCode.SUBFLOW_NOT_FOUND,
                hint=SUBFLOW_HINT,
                details={"plan_id": plan_id},
            )
            return Subflow(plan_id, None, None, error)
        try:
            source = load_source(file)
        except BlockError as exc:  # unreadable, too large: the file's own error, named
            error = BlockError(
                f"サブフロー {plan_id}: {exc.message}",
                code=exc.code,
                hint=exc.hint,
                details={**exc.details, "plan_id": plan_id},
            )
            return Subflow(plan_id, None, None, error)
        return self._parsed(plan_id, source)

    def _parsed(self, plan_id: str, source: PlanSource) -> Subflow:
        if source.syntax_error is not None:
            issue = source.syntax_error
            error = BlockError(
                f"{subflow_said(plan_id, _mapping(source.raw))}: {issue.message}",
                code=issue.code,
                hint=issue.hint,
                details={"plan_id": plan_id, "file": source.file, "line": issue.line},
            )
            return Subflow(plan_id, source, None, error)
        try:
            return Subflow(plan_id, source, Plan.model_validate(source.raw), None)
        except ValidationError as exc:
            # Said in Japanese (a check's own text; Pydantic's English never reaches a person).
            problems = "; ".join(lines_of(field_problems(exc, data=source.raw)))
            error = BlockError(
                f"{subflow_said(plan_id, _mapping(source.raw))}の形式が不正です: {problems}",
                code=IssueCode.SUBFLOW_INVALID,
                hint="`keiri-agent plan validate` で確認してください。",
                details={"plan_id": plan_id},
            )
            return Subflow(plan_id, source, None, error)


def _mapping(raw: Any) -> Mapping[str, Any] | None:
    return raw if isinstance(raw, Mapping) else None


def _calls(graph: Sequence[Any]) -> Iterator[str]:
    """The plan ids the nodes of ``graph`` call, loop bodies included."""
    for node in graph:
        if isinstance(node, SubflowNode):
            yield node.call.plan_id
        elif isinstance(node, LoopNode):
            yield from _calls(node.body.plan.graph)


def call_too_deep(chain: Chain, plan_id: str) -> BlockError | None:
    """``SUBFLOW_TOO_DEEP`` when calling ``plan_id`` from ``chain`` nests past the limit."""
    if len(chain) < MAX_SUBFLOW_DEPTH:
        return None
    return BlockError(
        f"サブフローの入れ子が {MAX_SUBFLOW_DEPTH} 段を超えます: "
        f"{' → '.join([*(c[0] for c in chain), plan_id])}",
        code=IssueCode.SUBFLOW_TOO_DEEP,
        hint=f"サブフローから呼ぶサブフローは {MAX_SUBFLOW_DEPTH} 段までです。"
        " 途中の Plan をまとめて段数を減らしてください（docs/limits.md）。",
        details={"plan_id": plan_id},
    )


def call_cycle(chain: Chain, plan_id: str, sub: Subflow) -> BlockError | None:
    """``SUBFLOW_CYCLE`` when calling ``sub`` from the end of ``chain`` ((plan id, file) pairs,
    the outermost first) calls back into a plan of the chain; None otherwise."""
    file = sub.file
    ids = {plan_id, *([sub.plan.id] if sub.plan is not None else [])}
    for index, (chain_id, chain_file) in enumerate(chain):
        if (file is not None and chain_file == file) or chain_id in ids:
            names = [c[0] for c in chain[index:]]
            chain_text = " → ".join([*names, sub.plan.id if sub.plan is not None else plan_id])
            return BlockError(
                f"サブフローの呼び出しが循環しています: {chain_text}",
                code=IssueCode.SUBFLOW_CYCLE,
                hint=CYCLE_HINT,
                details={"plan_id": plan_id, "chain": [*names, plan_id]},
            )
    return None
