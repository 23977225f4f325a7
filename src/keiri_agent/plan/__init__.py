"""The plan engine (seed 002 §5-§8): the one public surface of ``keiri_agent.plan``.

Plans go YAML → models → validate → compiled graph → dry-run or run. Everything a caller outside
this package may use is exported here; the phases live in private subpackages that nothing outside
``plan/`` imports (an import-linter contract in pyproject.toml checks it):

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
    from keiri_agent.plan._dryrun.dryrun import DryRunReport, dry_run
    from keiri_agent.plan._dryrun.report import DryRunFinding
    from keiri_agent.plan._dryrun.source import dry_run_source
    from keiri_agent.plan._dsl.diff import FieldChange, NodeChange, PlanDiff, diff_plans
    from keiri_agent.plan._dsl.expr import (
        MAX_EXPRESSION_CHARS,
        MAX_NESTING,
        ExpressionEvalError,
        ExpressionSyntaxError,
        truthy,
    )
    from keiri_agent.plan._dsl.expr_parse import compile_when, parse_expression
    from keiri_agent.plan._dsl.issue_codes import IssueCode
    from keiri_agent.plan._dsl.issues import (
        Loc,
        PlanIssue,
        ValidationReport,
        format_path,
    )
    from keiri_agent.plan._dsl.loader import (
        MAX_PLAN_BYTES,
        MAX_YAML_ALIAS_NODES,
        MAX_YAML_ALIASES,
        MAX_YAML_DEPTH,
        MAX_YAML_NODES,
        PLAN_SUFFIXES,
        PlanSource,
        load_source,
        load_yaml,
        parse_source,
        resolve_plan_file,
    )
    from keiri_agent.plan._dsl.migrate import migrate_plan, migrate_text
    from keiri_agent.plan._dsl.migrate_file import migrate_file
    from keiri_agent.plan._dsl.models import (
        MAX_LOOP_ITERATIONS,
        MAX_SUBFLOW_DEPTH,
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
    from keiri_agent.plan._dsl.ref_values import render, resolve_path
    from keiri_agent.plan._dsl.refs import (
        Reference,
        ReferencePathError,
        ReferenceSyntaxError,
        ReferenceValueError,
        bare_reference,
        find_references,
        iter_references,
        single_reference,
    )
    from keiri_agent.plan._dsl.yaml_words import yaml_problem
    from keiri_agent.plan._graph.compiled import AnyNode, references_in
    from keiri_agent.plan._graph.inputs import input_requests
    from keiri_agent.plan._graph.names import PlanNames, plan_names
    from keiri_agent.plan._graph.path_inputs import VarPath, var_paths
    from keiri_agent.plan._graph.scope import block_outputs
    from keiri_agent.plan._run.answers import answer_paths
    from keiri_agent.plan._run.output_store import OutputStore
    from keiri_agent.plan._run.progress import (
        STATUS_LABELS,
        describe_event,
    )
    from keiri_agent.plan._run.record import RunSeal, read_seal
    from keiri_agent.plan._run.results import (
        ResultTable,
        result_tables,
        table_summary,
        written_files,
    )
    from keiri_agent.plan._run.runner import (
        PlanRunner,
        RunResult,
        cancelled_error,
    )
    from keiri_agent.plan._run.runstate import (
        AnswersFile,
        RunSummary,
        find_run,
        list_plan_runs,
        load_run,
    )
    from keiri_agent.plan._run.session_state import (
        SessionStateStore,
        initial_values,
        merge_values,
        session_key,
    )
    from keiri_agent.plan._validate.validator import (
        load_config,
        validate_file,
        validate_source,
        validate_text,
    )

_LOCATIONS: dict[str, str] = {
    "answer_paths": "_run.answers",
    "AnswersFile": "_run.runstate",
    "AnyNode": "_graph.compiled",
    "bare_reference": "_dsl.refs",
    "block_outputs": "_graph.scope",
    "BlockNode": "_dsl.models",
    "cancelled_error": "_run.runner",
    "compile_when": "_dsl.expr_parse",
    "describe_event": "_run.progress",
    "diff_plans": "_dsl.diff",
    "dry_run": "_dryrun.dryrun",
    "dry_run_source": "_dryrun.source",
    "DryRunFinding": "_dryrun.report",
    "DryRunReport": "_dryrun.dryrun",
    "ExpressionEvalError": "_dsl.expr",
    "ExpressionSyntaxError": "_dsl.expr",
    "FieldChange": "_dsl.diff",
    "find_references": "_dsl.refs",
    "find_run": "_run.runstate",
    "format_path": "_dsl.issues",
    "initial_values": "_run.session_state",
    "input_requests": "_graph.inputs",
    "IssueCode": "_dsl.issue_codes",
    "iter_references": "_dsl.refs",
    "list_plan_runs": "_run.runstate",
    "load_config": "_validate.validator",
    "load_run": "_run.runstate",
    "load_source": "_dsl.loader",
    "load_yaml": "_dsl.loader",
    "yaml_problem": "_dsl.yaml_words",
    "Loc": "_dsl.issues",
    "LoopNode": "_dsl.models",
    "MAX_EXPRESSION_CHARS": "_dsl.expr",
    "MAX_LOOP_ITERATIONS": "_dsl.models",
    "MAX_NESTING": "_dsl.expr",
    "MAX_PLAN_BYTES": "_dsl.loader",
    "MAX_SUBFLOW_DEPTH": "_dsl.models",
    "MAX_YAML_ALIAS_NODES": "_dsl.loader",
    "MAX_YAML_ALIASES": "_dsl.loader",
    "MAX_YAML_DEPTH": "_dsl.loader",
    "MAX_YAML_NODES": "_dsl.loader",
    "merge_values": "_run.session_state",
    "migrate_file": "_dsl.migrate_file",
    "migrate_plan": "_dsl.migrate",
    "migrate_text": "_dsl.migrate",
    "Node": "_dsl.models",
    "NodeChange": "_dsl.diff",
    "node_kind": "_dsl.models",
    "OutputStore": "_run.output_store",
    "parse_expression": "_dsl.expr_parse",
    "parse_source": "_dsl.loader",
    "Plan": "_dsl.models",
    "plan_names": "_graph.names",
    "PlanNames": "_graph.names",
    "PlanDiff": "_dsl.diff",
    "PLAN_ID_RE": "_dsl.models",
    "PLAN_SUFFIXES": "_dsl.loader",
    "PlanIssue": "_dsl.issues",
    "PlanRunner": "_run.runner",
    "PlanSource": "_dsl.loader",
    "Reference": "_dsl.refs",
    "ReferencePathError": "_dsl.refs",
    "references_in": "_graph.compiled",
    "ReferenceSyntaxError": "_dsl.refs",
    "ReferenceValueError": "_dsl.refs",
    "read_seal": "_run.record",
    "render": "_dsl.ref_values",
    "resolve_path": "_dsl.ref_values",
    "resolve_plan_file": "_dsl.loader",
    "result_tables": "_run.results",
    "table_summary": "_run.results",
    "ResultTable": "_run.results",
    "RunResult": "_run.runner",
    "RunSeal": "_run.record",
    "RunSummary": "_run.runstate",
    "session_key": "_run.session_state",
    "SessionStateStore": "_run.session_state",
    "single_reference": "_dsl.refs",
    "STATUS_LABELS": "_run.progress",
    "SubflowNode": "_dsl.models",
    "truthy": "_dsl.expr",
    "validate_file": "_validate.validator",
    "validate_source": "_validate.validator",
    "validate_text": "_validate.validator",
    "ValidationReport": "_dsl.issues",
    "var_paths": "_graph.path_inputs",
    "written_files": "_run.results",
    "VarPath": "_graph.path_inputs",
    "When": "_dsl.models",
    "when_raw": "_dsl.models",
}

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "MAX_LOOP_ITERATIONS",
    "MAX_NESTING",
    "MAX_PLAN_BYTES",
    "MAX_SUBFLOW_DEPTH",
    "MAX_YAML_ALIASES",
    "MAX_YAML_ALIAS_NODES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "PLAN_ID_RE",
    "PLAN_SUFFIXES",
    "STATUS_LABELS",
    "AnswersFile",
    "AnyNode",
    "BlockNode",
    "DryRunFinding",
    "DryRunReport",
    "ExpressionEvalError",
    "ExpressionSyntaxError",
    "FieldChange",
    "IssueCode",
    "Loc",
    "LoopNode",
    "Node",
    "NodeChange",
    "OutputStore",
    "Plan",
    "PlanDiff",
    "PlanIssue",
    "PlanNames",
    "PlanRunner",
    "PlanSource",
    "Reference",
    "ReferencePathError",
    "ReferenceSyntaxError",
    "ReferenceValueError",
    "ResultTable",
    "RunResult",
    "RunSeal",
    "RunSummary",
    "SessionStateStore",
    "SubflowNode",
    "ValidationReport",
    "VarPath",
    "When",
    "answer_paths",
    "bare_reference",
    "block_outputs",
    "cancelled_error",
    "compile_when",
    "describe_event",
    "diff_plans",
    "dry_run",
    "dry_run_source",
    "find_references",
    "find_run",
    "format_path",
    "initial_values",
    "input_requests",
    "iter_references",
    "list_plan_runs",
    "load_config",
    "load_run",
    "load_source",
    "load_yaml",
    "merge_values",
    "migrate_file",
    "migrate_plan",
    "migrate_text",
    "node_kind",
    "parse_expression",
    "parse_source",
    "plan_names",
    "read_seal",
    "references_in",
    "render",
    "resolve_path",
    "resolve_plan_file",
    "result_tables",
    "session_key",
    "single_reference",
    "table_summary",
    "truthy",
    "validate_file",
    "validate_source",
    "validate_text",
    "var_paths",
    "when_raw",
    "written_files",
    "yaml_problem",
]


__getattr__, __dir__ = lazy_exports(globals(), {n: f".{m}" for n, m in _LOCATIONS.items()})
