"""The strict plan validator (seed 002 §6, seed 004 §9): every problem, at once, located.

``validate_source`` takes a plan as written and returns a :class:`ValidationReport`; it never
raises for a bad plan (only for a broken installation). Steps:

1. schema: the plan's structure (Pydantic), node by node so one bad node hides nothing else;
2. nodes: blocks exist, ``in``/``out`` keys are the spec's, required inputs are there, literal
   inputs fit their port schema, block-specific rules (``_validate.rules``);
3. references: every ``${...}`` resolves in its scope, and its type fits the input port;
4. graph: duplicate ids, cycles (through loops and subflows), unused outputs (warnings);
5. UI: ``ui.layout`` against the graph, ``ui.interactive_input`` requirements.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.llm.field_problems import field_problems
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.issues import Loc, PlanIssue, ValidationReport, format_path
from keiri_agent.plan._dsl.loader import PlanSource, load_source, parse_source
from keiri_agent.plan._dsl.models import API_VERSIONS, Node, Plan
from keiri_agent.plan._graph.compiled import graph_shape
from keiri_agent.plan._graph.env import EnvOptions, PlanEnv
from keiri_agent.plan._validate import rules
from keiri_agent.plan._validate.checker import check_plan
from keiri_agent.plan._validate.state import CheckState

__all__ = ["validate_file", "validate_source", "validate_text"]

_NODE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Node)
_TAGS = frozenset({"block", "loop", "subflow"})


def _clean_loc(loc: tuple[Any, ...], error_type: str) -> Loc:
    """Drop the discriminator tags Pydantic inserts after list indices of ``graph``."""
    out: list[str | int] = []
    previous: Any = None
    for part in loc:
        if isinstance(previous, int) and part in _TAGS and error_type != "invalid_node_type":
            previous = part
            continue
        out.append(part)
        previous = part
    return tuple(out)


def _schema_issue(source: PlanSource, err: ErrorDetails, prefix: Loc) -> PlanIssue:
    loc = (*prefix, *_clean_loc(tuple(err["loc"]), err["type"]))
    line, column = source.position(loc)
    field = str(loc[-1]) if loc else ""
    code, hint = IssueCode.PLAN_SCHEMA, "Plan DSL（docs/plan-dsl.md）の書式に合わせてください。"
    if err["type"] == "missing" and field == "max_iterations":
        code, hint = (
            IssueCode.WHILE_MAX_ITERATIONS,
            "無限ループを防ぐため while には max_iterations が必須です。",
        )
    elif err["type"] == "missing":
        hint = f"'{field}' を追加してください。"
    elif err["type"] == "extra_forbidden":
        hint = f"'{field}' はこの位置で使えないキーです。綴りを確認してください。"
    elif err["type"] == "invalid_node_type":
        code = IssueCode.UNKNOWN_NODE_TYPE
    # Japanese, with the value received; Pydantic's English stays out of what a person reads.
    (problem,) = field_problems([err])
    node_id = _node_id_at(source.raw, loc)
    return PlanIssue(
        code=code,
        message=problem.at(_fmt(loc)),
        node_id=node_id,
        path=_fmt(loc),
        line=line,
        column=column,
        hint=hint,
        file=source.file,
    )


def _fmt(loc: Loc) -> str:
    return format_path(loc)


def _node_id_at(raw: Any, loc: Loc) -> str | None:
    """The id of the innermost node that ``loc`` points into (for error messages)."""
    found: str | None = None
    current = raw
    for part in loc:
        if isinstance(current, Mapping):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
            if isinstance(current, Mapping) and isinstance(current.get("id"), str):
                found = current["id"] if found is None else f"{found}/{current['id']}"
        else:
            break
    return found


def _parse_plan(
    source: PlanSource, report: ValidationReport
) -> tuple[Plan | None, set[str], list[int]]:
    """The plan with every node that is valid on its own; invalid nodes are reported."""
    raw = source.raw
    if not isinstance(raw, Mapping):
        report.add(
            PlanIssue(
                code=IssueCode.PLAN_SCHEMA,
                message="Plan の先頭はマッピング（apiVersion, id, graph ...）である必要があります。",
                line=1,
                column=1,
                hint="`id:` と `graph:` を持つ YAML にしてください。",
                file=source.file,
            )
        )
        return None, set(), []
    try:
        plan = Plan.model_validate(raw)
        return plan, set(), list(range(len(plan.graph)))
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            report.add(_schema_issue(source, err, ()))
    # Keep the valid nodes so the other checks still run; the dropped ones are known by id.
    graph: list[Any] = raw["graph"] if isinstance(raw.get("graph"), list) else []
    kept: list[Any] = []
    dropped: set[str] = set()
    for item in graph:
        try:
            _NODE_ADAPTER.validate_python(item)
            kept.append(item)
        except ValidationError:
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                dropped.add(item["id"])
    top = {k: v for k, v in raw.items() if k != "graph"}
    try:
        plan = Plan.model_validate({**top, "graph": kept})
    except ValidationError:
        return None, dropped, []
    return plan, dropped, [i for i, item in enumerate(graph) if any(item is k for k in kept)]


def validate_source(
    source: PlanSource, registry: BlockRegistry | PlanEnv, **options: Unpack[EnvOptions]
) -> ValidationReport:
    """Validate a parsed plan source; see the module docstring for the steps.

    ``registry`` is the command's :class:`PlanEnv` (its subflow loader is the one the dry run
    or the run then uses, so that they walk exactly the files validated here), or a registry
    with ``options`` to build one from (:meth:`PlanEnv.of`).
    """
    return _validate(source, PlanEnv.given(registry, **options), (), (), set())


def _validate(
    source: PlanSource,
    env: PlanEnv,
    stack: tuple[str, ...],
    files: tuple[str | None, ...],
    seen: set[str],
) -> ValidationReport:
    """:func:`validate_source` for a plan called through ``stack`` (plan ids) and ``files``
    (their resolved files), which is how cycles are found. A subflow file is validated and
    reported once per validation (``seen``; a later call of the same file gets an empty
    report), so plans calling one subflow from many places stay linear."""
    key = str(Path(source.file).resolve()) if source.file else None
    report = ValidationReport()
    if key is not None:
        if key in seen:
            return report
        seen.add(key)
    if source.syntax_error is not None:
        report.add(source.syntax_error)
        return report
    plan, dropped, index_map = _parse_plan(source, report)
    if plan is None:
        return report
    if not dropped and report.valid:  # the whole plan parsed: it is the model a run uses
        report.plan = plan
    chain, chain_files = (*stack, plan.id), (*files, key)
    state = CheckState(
        source=source,
        plan=plan,
        env=env,
        report=report,
        shape=graph_shape(plan.graph),
        stack=chain,
        stack_files=chain_files,
        index_map=index_map,
        dropped=dropped,
        validate_subflow=lambda src: _validate(src, env, chain, chain_files, seen),
    )
    if plan.apiVersion not in API_VERSIONS:
        state.issue(
            IssueCode.UNSUPPORTED_API_VERSION,
            f"apiVersion '{plan.apiVersion}' には対応していません（対応: {', '.join(API_VERSIONS)}）。",
            ("apiVersion",),
            hint="apiVersion: v1 にしてください。",
        )
    check_plan(state)
    rules.check_ui(state)
    return report


def validate_text(
    text: str, registry: BlockRegistry | PlanEnv, **options: Unpack[EnvOptions]
) -> ValidationReport:
    return validate_source(parse_source(text), registry, **options)


def validate_file(
    path: Path | str, registry: BlockRegistry | PlanEnv, **options: Unpack[EnvOptions]
) -> ValidationReport:
    return validate_source(load_source(path), registry, **options)
