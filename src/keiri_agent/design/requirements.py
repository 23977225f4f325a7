"""The requirements builder (seed 004 §7): what a generated plan still needs from a person.

``build_requirements`` reads a plan (and, when given, its validation errors) and returns the
``Requirement``s to ask for in the design chat, following the seed's mapping rules:

- an unresolved ``${vars.foo}`` (not declared, or declared as null / "") → a field ``foo``, its type
  taken from the input port that uses it (number, boolean, select, file for paths, else text);
- ``excel.read_data`` without ``path`` → a file field with ``sheet``/``range`` text fields beside it;
- ``ai.process_llm`` without ``output_schema`` → an enum of schema templates
  (:data:`SCHEMA_TEMPLATES`); without ``prompt``/``instruction`` → a text field;
- any other missing required input → a field of the port's type.

``apply_answers`` puts checked answers where their requirement's target says.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from keiri_agent.blocks.catalog import port_type
from keiri_agent.blocks.registry import BlockRegistry, default_registry
from keiri_agent.blocks.spec import BlockSpec, port_accept, port_is_required
from keiri_agent.blocks.ui.answers import check_answer, missing_fix
from keiri_agent.blocks.ui.field_types import (
    FieldError,
    normalize_requirements,
    problem,
    problems_error,
)
from keiri_agent.design.models import Requirement, RequirementTarget
from keiri_agent.design.plan_nodes import iter_nodes
from keiri_agent.plan import IssueCode, PlanIssue

__all__ = ["SCHEMA_TEMPLATES", "apply_answers", "build_requirements"]

# Output schemas a person can pick for ai.process_llm instead of writing JSON Schema.
SCHEMA_TEMPLATES: dict[str, dict[str, Any]] = {
    "請求書の項目": {
        "results": {
            "type": "object",
            "properties": {
                "取引先": "string",
                "請求書番号": "string",
                "請求日": "string",
                "支払期限": "string",
                "請求金額": "number",
            },
        }
    },
    "経費明細": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "日付": "string",
                    "費目": "string",
                    "金額": "number",
                    "支払先": "string",
                    "備考": "string",
                },
            },
        }
    },
    "判定と理由": {
        "results": {
            "type": "object",
            "properties": {"判定": {"enum": ["OK", "要確認", "NG"]}, "理由": "string"},
        }
    },
    "要約": {"summary": {"type": "object", "properties": {"要約": "string", "要点": "array"}}},
}
_VAR_REF = re.compile(r"\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)")
_WHOLE_VAR_REF = re.compile(r"^\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}$")
_FILE_PORTS = frozenset({"path", "file", "zip_bytes", "source", "folder", "input_path"})
_READ_DATA = "excel.read_data"
_PROCESS_LLM = "ai.process_llm"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _field_type(name: str, port: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The requirement type (and extra keys) for a value that feeds ``port``."""
    if port is None:
        return "text", {}
    if port.get("enum"):
        return "select", {"options": list(port["enum"])}
    kind = port_type(dict(port))
    if kind in ("integer", "number"):
        return "number", {}
    if kind == "boolean":
        return "boolean", {}
    if name in _FILE_PORTS or port.get("format") in ("path", "binary") or port_accept(port):
        accept = port.get("x-accept") or port.get("accept")
        return "file", ({"accept": accept} if isinstance(accept, str) else {})
    return "text", {}


def _spec(registry: BlockRegistry, block: Any) -> BlockSpec | None:
    return registry.find(block) if isinstance(block, str) else None


def _label(port: Mapping[str, Any] | None, fallback: str) -> str:
    if port is None:
        return fallback
    text = str(port.get("title") or port.get("description") or "").strip().splitlines()
    first = text[0] if text else ""
    return first[:40] if first else fallback


def _var_requirements(plan: Mapping[str, Any], registry: BlockRegistry) -> list[Requirement]:
    declared = plan.get("vars") if isinstance(plan.get("vars"), dict) else {}
    assert isinstance(declared, dict)
    ports: dict[str, tuple[str, Mapping[str, Any] | None]] = {}
    used: list[str] = []
    for node in iter_nodes(plan.get("graph")):
        spec = _spec(registry, node.get("block"))
        inputs = node.get("in") if isinstance(node.get("in"), dict) else {}
        assert isinstance(inputs, dict)
        for key, value in inputs.items():
            whole = _WHOLE_VAR_REF.match(value) if isinstance(value, str) else None
            if whole and spec is not None:
                ports.setdefault(whole.group(1), (key, spec.inputs.get(key)))
        for text in _strings({k: v for k, v in node.items() if k != "body"}):
            used += _VAR_REF.findall(text)
    for text in _strings(plan.get("exports")):
        used += _VAR_REF.findall(text)
    found: list[Requirement] = []
    for name in dict.fromkeys(used):
        if name in declared and declared[name] not in (None, ""):
            continue
        port_name, port = ports.get(name, (name, None))
        kind, extra = _field_type(port_name, port)
        found.append(
            Requirement(
                id=name,
                type=kind,
                label=_label(port, name),
                description=f"Plan の ${{vars.{name}}} に入る値です。",
                target=RequirementTarget(kind="var", var=name),
                **extra,
            )
        )
    return found


def _input_requirement(node_id: str, port_name: str, port: Mapping[str, Any]) -> Requirement:
    kind, extra = _field_type(port_name, port)
    return Requirement(
        id=f"{node_id}_{port_name}",
        type=kind,
        label=f"{node_id}: {_label(port, port_name)}",
        description=f"ノード {node_id} の入力 {port_name} です。",
        target=RequirementTarget(kind="input", node=node_id, port=port_name),
        **extra,
    )


def _node_requirements(node: dict[str, Any], spec: BlockSpec) -> list[Requirement]:
    node_id = str(node.get("id"))
    inputs = node.get("in") if isinstance(node.get("in"), dict) else {}
    assert isinstance(inputs, dict)
    missing = [k for k, p in spec.inputs.items() if port_is_required(p) and inputs.get(k) is None]
    found: list[Requirement] = []
    if spec.id == _READ_DATA and "path" in missing:
        found.append(
            Requirement(
                id=f"{node_id}_path",
                type="file",
                label=f"{node_id}: 読み込む Excel ブック",
                accept=spec.inputs["path"].get("accept"),  # the port says what it reads
                target=RequirementTarget(kind="input", node=node_id, port="path"),
            )
        )
        for port_name, label, hint in (
            ("sheet", "シート名", "空欄なら先頭のシート"),
            ("range", "読み込む範囲", "例: A1:F200（空欄なら表全体）"),
        ):
            if port_name in spec.inputs and inputs.get(port_name) is None:
                found.append(
                    Requirement(
                        id=f"{node_id}_{port_name}",
                        label=f"{node_id}: {label}",
                        required=False,
                        hint=hint,
                        target=RequirementTarget(kind="input", node=node_id, port=port_name),
                    )
                )
        missing.remove("path")
    if spec.id == _PROCESS_LLM:
        if not inputs.get("output_schema"):
            found.append(
                Requirement(
                    id=f"{node_id}_output_schema",
                    type="enum",
                    label=f"{node_id}: LLM に返させる項目",
                    options=list(SCHEMA_TEMPLATES),
                    hint="近いものを選んでください。あとで YAML エディタで項目を直せます。",
                    target=RequirementTarget(kind="input", node=node_id, port="output_schema"),
                )
            )
        if not inputs.get("prompt") and not inputs.get("instruction"):
            found.append(
                Requirement(
                    id=f"{node_id}_prompt",
                    label=f"{node_id}: LLM への指示",
                    hint="例: 各請求書から取引先・請求書番号・金額を抜き出してください",
                    target=RequirementTarget(kind="input", node=node_id, port="prompt"),
                )
            )
        missing = [m for m in missing if m != "output_schema"]
    found += [_input_requirement(node_id, m, spec.inputs[m]) for m in missing]
    return found


def build_requirements(
    plan_or_errors: Mapping[str, Any] | Sequence[PlanIssue],
    *,
    errors: Sequence[PlanIssue] = (),
    registry: BlockRegistry | None = None,
) -> list[Requirement]:
    """The missing items of a plan (or of a list of validation errors), each asked once."""
    registry = registry or default_registry()
    if isinstance(plan_or_errors, Mapping):
        plan: Mapping[str, Any] = plan_or_errors
    else:
        plan, errors = {}, list(plan_or_errors)
    found = _var_requirements(plan, registry) if plan else []
    for node in iter_nodes(plan.get("graph")):
        spec = _spec(registry, node.get("block"))
        if spec is not None:
            found += _node_requirements(node, spec)
    # Errors name problems the plan alone may not show (a plan that failed to parse).
    for issue in errors:
        if issue.code == IssueCode.UNRESOLVED_REFERENCE and "vars" in issue.message:
            match = _VAR_REF.search(issue.message)
            if match:
                name = match.group(1)
                found.append(
                    Requirement(
                        id=name,
                        label=name,
                        description=issue.message,
                        target=RequirementTarget(kind="var", var=name),
                    )
                )
    unique: dict[str, Requirement] = {}
    for requirement in found:
        unique.setdefault(requirement.id, requirement)
    return list(unique.values())


def _find_node(graph: Any, node_id: str) -> dict[str, Any] | None:
    return next((n for n in iter_nodes(graph) if n.get("id") == node_id), None)


def apply_answers(
    plan: Mapping[str, Any],
    requirements: Sequence[Requirement],
    answers: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of ``plan`` with the answers in place, and the answers meant as context.

    Each answer is checked like ``ui.interactive_input`` checks it (types, files that exist,
    choices); every problem is reported at once in one BlockError and nothing is applied.
    Unanswered optional items are left as they are.
    """
    updated = copy.deepcopy(dict(plan))
    context: dict[str, Any] = {}
    problems: list[dict[str, str]] = []
    checked: list[tuple[Requirement, Any]] = []
    fields = normalize_requirements([r.to_field() for r in requirements])
    for requirement, field in zip(requirements, fields, strict=True):
        value = answers.get(requirement.id)
        if value is None or value == "":
            if requirement.required:
                problems.append(
                    problem(field["id"], field["label"], "回答がありません", missing_fix(field))
                )
            continue
        try:
            checked.append((requirement, check_answer(field, value)))
        except FieldError as exc:
            problems.append(problem(field["id"], field["label"], exc.message, exc.fix))
    if problems:
        raise problems_error("設計チャットの回答に問題があります", problems, recoverable=True)
    for requirement, value in checked:
        target = requirement.target
        if target.kind == "var" and target.var:
            updated.setdefault("vars", {})
            updated["vars"] = {**(updated.get("vars") or {}), target.var: value}
        elif target.kind == "input" and target.node and target.port:
            node = _find_node(updated.get("graph"), target.node)
            if node is not None:
                if target.port == "output_schema" and value in SCHEMA_TEMPLATES:
                    value = copy.deepcopy(SCHEMA_TEMPLATES[value])
                node["in"] = {**(node.get("in") or {}), target.port: value}
        else:
            context[requirement.id] = value
    return updated, context
