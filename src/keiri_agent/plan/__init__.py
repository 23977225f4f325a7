"""The plan engine (seed 002 §5-§8): the one public surface of ``keiri_agent.plan``.

Plans go YAML → models → validate → compiled graph → dry-run or run. The names exported here are
the ones callers outside this package use; the phases live in private subpackages that nothing
outside ``plan/`` imports (an import-linter contract in pyproject.toml checks it). Tests reach
the phases' other names (limits, the expression parser, the migration of one text...) in those
private modules directly.

- ``_dsl``       the Plan DSL: models, the YAML loader with its source map, ``${...}`` references,
                 the ``when``/``while`` expression language, issue codes, migration of legacy UI
- ``_graph``     the compiled graph (edges, order, parsed conditions), static scopes, subflow loading
- ``_validate``  the strict validator: the checker's walk and its rules
- ``_dryrun``    the dry run over declared samples
- ``_run``       the runner: frames, loops and subflows, backends, run logs, resume and rerun

Names are loaded on first use, so ``import keiri_agent.plan`` stays cheap for the CLI's start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.plan._dryrun.report import DryRunFinding, DryRunReport
    from keiri_agent.plan._dryrun.source import dry_run_source
    from keiri_agent.plan._dsl.diff import PlanDiff, diff_plans
    from keiri_agent.plan._dsl.expr import compile_when
    from keiri_agent.plan._dsl.issue_codes import IssueCode
    from keiri_agent.plan._dsl.issues import Loc, PlanIssue, ValidationReport, format_path
    from keiri_agent.plan._dsl.loader import (
        MAX_PLAN_BYTES,
        PLAN_SUFFIXES,
        PlanSource,
        load_source,
        load_yaml,
        parse_source,
        resolve_plan_file,
    )
    from keiri_agent.plan._dsl.migrate import migrate_file
    from keiri_agent.plan._dsl.models import (
        PLAN_ID_RE,
        BlockNode,
        LoopNode,
        Node,
        Plan,
        SubflowNode,
        When,
        node_kind,
        when_raw,
    )
    from keiri_agent.plan._dsl.refs import (
        Reference,
        bare_reference,
        find_references,
        iter_references,
        single_reference,
    )
    from keiri_agent.plan._graph.compiled import AnyNode, GraphShape, graph_shape, references_in
    from keiri_agent.plan._graph.env import PlanEnv, load_config
    from keiri_agent.plan._graph.inputs import input_requests
    from keiri_agent.plan._graph.names import (
        PlanNames,
        block_said,
        category_word,
        description_name,
        plan_names,
    )
    from keiri_agent.plan._graph.path_inputs import VarPath, var_paths
    from keiri_agent.plan._graph.saved import kept_versions
    from keiri_agent.plan._graph.scope import block_outputs
    from keiri_agent.plan._run.answers import answer_paths
    from keiri_agent.plan._run.output_store import OutputStore
    from keiri_agent.plan._run.progress import STATUS_LABELS, describe_event
    from keiri_agent.plan._run.record import read_seal
    from keiri_agent.plan._run.results import (
        ResultTable,
        result_tables,
        table_summary,
        written_files,
    )
    from keiri_agent.plan._run.runner import PlanRunner, RunResult, cancelled_error
    from keiri_agent.plan._run.runstate import RunSummary, find_run, list_plan_runs, load_run
    from keiri_agent.plan._validate.validator import (
        validate_file,
        validate_source,
        validate_text,
    )

_LOCATIONS: dict[str, str] = {
    "answer_paths": "_run.answers",
    "AnyNode": "_graph.compiled",
    "bare_reference": "_dsl.refs",
    "block_outputs": "_graph.scope",
    "BlockNode": "_dsl.models",
    "cancelled_error": "_run.runner",
    "compile_when": "_dsl.expr",
    "describe_event": "_run.progress",
    "diff_plans": "_dsl.diff",
    "dry_run_source": "_dryrun.source",
    "DryRunFinding": "_dryrun.report",
    "DryRunReport": "_dryrun.report",
    "GraphShape": "_graph.compiled",
    "graph_shape": "_graph.compiled",
    "find_references": "_dsl.refs",
    "find_run": "_run.runstate",
    "format_path": "_dsl.issues",
    "input_requests": "_graph.inputs",
    "IssueCode": "_dsl.issue_codes",
    "iter_references": "_dsl.refs",
    "list_plan_runs": "_run.runstate",
    "load_config": "_graph.env",
    "kept_versions": "_graph.saved",
    "kept_subflows": "_run.runner",
    "load_run": "_run.runstate",
    "load_source": "_dsl.loader",
    "load_yaml": "_dsl.loader",
    "Loc": "_dsl.issues",
    "LoopNode": "_dsl.models",
    "PlanEnv": "_graph.env",
    "MAX_PLAN_BYTES": "_dsl.loader",
    "migrate_file": "_dsl.migrate",
    "Node": "_dsl.models",
    "node_kind": "_dsl.models",
    "OutputStore": "_run.output_store",
    "parse_source": "_dsl.loader",
    "Plan": "_dsl.models",
    "PLAN_ID_RE": "_dsl.models",
    "plan_names": "_graph.names",
    "block_said": "_graph.names",
    "category_word": "_graph.names",
    "description_name": "_graph.names",
    "PLAN_SUFFIXES": "_dsl.loader",
    "PlanDiff": "_dsl.diff",
    "PlanIssue": "_dsl.issues",
    "PlanNames": "_graph.names",
    "PlanRunner": "_run.runner",
    "PlanSource": "_dsl.loader",
    "read_seal": "_run.record",
    "Reference": "_dsl.refs",
    "references_in": "_graph.compiled",
    "resolve_plan_file": "_dsl.loader",
    "result_tables": "_run.results",
    "ResultTable": "_run.results",
    "RunResult": "_run.runner",
    "RunSummary": "_run.runstate",
    "single_reference": "_dsl.refs",
    "STATUS_LABELS": "_run.progress",
    "SubflowNode": "_dsl.models",
    "table_summary": "_run.results",
    "validate_file": "_validate.validator",
    "validate_source": "_validate.validator",
    "validate_text": "_validate.validator",
    "ValidationReport": "_dsl.issues",
    "var_paths": "_graph.path_inputs",
    "VarPath": "_graph.path_inputs",
    "When": "_dsl.models",
    "when_raw": "_dsl.models",
    "written_files": "_run.results",
}

__all__ = [
    "MAX_PLAN_BYTES",
    "PLAN_ID_RE",
    "PLAN_SUFFIXES",
    "STATUS_LABELS",
    "AnyNode",
    "BlockNode",
    "DryRunFinding",
    "DryRunReport",
    "GraphShape",
    "IssueCode",
    "Loc",
    "LoopNode",
    "Node",
    "OutputStore",
    "Plan",
    "PlanDiff",
    "PlanEnv",
    "PlanIssue",
    "PlanNames",
    "PlanRunner",
    "PlanSource",
    "Reference",
    "ResultTable",
    "RunResult",
    "RunSummary",
    "SubflowNode",
    "ValidationReport",
    "VarPath",
    "When",
    "answer_paths",
    "bare_reference",
    "block_outputs",
    "block_said",
    "cancelled_error",
    "category_word",
    "compile_when",
    "describe_event",
    "description_name",
    "diff_plans",
    "dry_run_source",
    "find_references",
    "find_run",
    "format_path",
    "graph_shape",
    "input_requests",
    "iter_references",
    "kept_subflows",
    "kept_versions",
    "list_plan_runs",
    "load_config",
    "load_run",
    "load_source",
    "load_yaml",
    "migrate_file",
    "node_kind",
    "parse_source",
    "plan_names",
    "read_seal",
    "references_in",
    "resolve_plan_file",
    "result_tables",
    "single_reference",
    "table_summary",
    "validate_file",
    "validate_source",
    "validate_text",
    "var_paths",
    "when_raw",
    "written_files",
]


__getattr__, __dir__ = lazy_exports(globals(), {n: f".{m}" for n, m in _LOCATIONS.items()})
