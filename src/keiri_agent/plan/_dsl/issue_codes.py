"""The codes of plan findings: every code ``plan validate`` and ``plan dry-run`` report.

What each code means and how to fix it is in docs/issue-codes.md; ``tests/plan/test_issue_codes.py``
checks that this enum, that page and the codes the source emits agree. A finding can also carry
an ``ErrorCode`` passed on from a failure underneath (a subflow file that cannot be read is
``FILE_UNREADABLE`` or ``FILE_TOO_LARGE``, as when the plan itself cannot be read); the page
lists those too. The values are the codes as users read them: never rename one (give a new
name the old value as an alias).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["IssueCode"]


class IssueCode(StrEnum):
    """A finding's code, grouped by what it is about (docs/issue-codes.md, same order)."""

    # The YAML text.
    YAML_SYNTAX = "YAML_SYNTAX"
    YAML_LIMIT = "YAML_LIMIT"
    # The plan's shape.
    PLAN_SCHEMA = "PLAN_SCHEMA"
    UNKNOWN_NODE_TYPE = "UNKNOWN_NODE_TYPE"
    WHILE_MAX_ITERATIONS = "WHILE_MAX_ITERATIONS"
    UNSUPPORTED_API_VERSION = "UNSUPPORTED_API_VERSION"
    DUPLICATE_NODE_ID = "DUPLICATE_NODE_ID"
    CYCLE = "CYCLE"
    UNKNOWN_POLICY_NODE = "UNKNOWN_POLICY_NODE"
    # Blocks and their ports.
    UNKNOWN_BLOCK = "UNKNOWN_BLOCK"
    UNKNOWN_BLOCK_VERSION = "UNKNOWN_BLOCK_VERSION"
    BLOCK_VERSION_OUTDATED = "BLOCK_VERSION_OUTDATED"
    UNKNOWN_INPUT = "UNKNOWN_INPUT"
    UNKNOWN_OUTPUT = "UNKNOWN_OUTPUT"
    MISSING_REQUIRED_INPUT = "MISSING_REQUIRED_INPUT"
    SCHEMA_REF_UNRESOLVED = "SCHEMA_REF_UNRESOLVED"
    PROCESS_LLM_SCHEMA = "PROCESS_LLM_SCHEMA"
    PROCESS_LLM_PROMPT = "PROCESS_LLM_PROMPT"
    UNUSED_OUTPUT = "UNUSED_OUTPUT"
    # References, expressions and values.
    INVALID_REFERENCE = "INVALID_REFERENCE"
    UNRESOLVED_REFERENCE = "UNRESOLVED_REFERENCE"
    INVALID_VAR_REFERENCE = "INVALID_VAR_REFERENCE"
    UNKNOWN_VAR = "UNKNOWN_VAR"
    ENV_NOT_SET = "ENV_NOT_SET"
    INVALID_EXPRESSION = "INVALID_EXPRESSION"
    INVALID_INPUT_VALUE = "INVALID_INPUT_VALUE"
    TYPE_MISMATCH = "TYPE_MISMATCH"
    # Requirements (what the user is asked) and the UI layout.
    INVALID_REQUIREMENT = "INVALID_REQUIREMENT"
    DUPLICATE_REQUIREMENT_ID = "DUPLICATE_REQUIREMENT_ID"
    REQUIREMENT_TYPE_CONFLICT = "REQUIREMENT_TYPE_CONFLICT"
    UI_LAYOUT_DUPLICATE = "UI_LAYOUT_DUPLICATE"
    UI_LAYOUT_UNKNOWN_NODE = "UI_LAYOUT_UNKNOWN_NODE"
    UI_LAYOUT_MISSING = "UI_LAYOUT_MISSING"
    UI_VAR_UNKNOWN = "UI_VAR_UNKNOWN"
    # Loops and exports.
    LOOP_VAR_CONFLICT = "LOOP_VAR_CONFLICT"
    LOOP_UNKNOWN_EXPORT = "LOOP_UNKNOWN_EXPORT"
    LOOP_UNKNOWN_COLLECT = "LOOP_UNKNOWN_COLLECT"
    PLAN_UNKNOWN_EXPORT = "PLAN_UNKNOWN_EXPORT"
    # Subflows.
    SUBFLOW_NOT_FOUND = "SUBFLOW_NOT_FOUND"
    SUBFLOW_INVALID = "SUBFLOW_INVALID"
    SUBFLOW_CYCLE = "SUBFLOW_CYCLE"
    SUBFLOW_TOO_DEEP = "SUBFLOW_TOO_DEEP"
    SUBFLOW_UNKNOWN_INPUT = "SUBFLOW_UNKNOWN_INPUT"
    SUBFLOW_UNKNOWN_EXPORT = "SUBFLOW_UNKNOWN_EXPORT"
    # The dry run only.
    DRY_RUN_NO_SAMPLE = "DRY_RUN_NO_SAMPLE"
    DRY_RUN_INTERNAL_ERROR = "DRY_RUN_INTERNAL_ERROR"
    DRY_RUN_INPUT_FILE = "DRY_RUN_INPUT_FILE"
