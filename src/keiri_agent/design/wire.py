"""The JSON Schemas plan generation sends to providers, built from the candidate blocks' specs.

Pydantic's schema of the parsing models (``design.schema``) is not what a provider can take: it
has untyped ports, defaults, ``oneOf`` and open dicts, and with every block it was about 88 KB.
These schemas describe the same shape by hand, small and typed, in two variants:

- ``strict`` — the OpenAI strict structured-outputs subset: every object closed
  (``additionalProperties: false``) with every property in ``required`` (optional ones are
  nullable), only supported keywords (no ``default``, ``oneOf``, ``minLength``...), and values a
  closed schema cannot describe — objects, arrays of objects, untyped ports — as JSON text
  (:data:`JSON_TEXT_NOTE`), which the parsing models decode.
- ``tool`` — non-strict tool use (OpenAI function calling without ``strict``, Anthropic tool
  use, vLLM and Ollama): the same shape, optional properties left out, objects as objects.

Every port has a JSON type (:func:`port_schema`): the spec's type plus ``string``, since any
input may be a ``${node.output}`` reference. Block ids are a ``const`` per node variant, which
also makes the variants' first keys differ (OpenAI refuses ``anyOf`` objects that share one);
a loop body refers to ``$defs.block_node``, so the catalog appears once however loops nest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.blocks.ui.field_types import FIELD_TYPES
from keiri_agent.privacy import Ours, compose

__all__ = [
    "JSON_TEXT_NOTE",
    "SCHEMA_VARIANTS",
    "SchemaVariant",
    "WireSchema",
    "block_node_schema",
    "json_text_ports",
    "port_schema",
    "schema_bytes",
    "skeleton_schema",
    "wiring_schema",
]

SchemaVariant = Literal["strict", "tool"]
SCHEMA_VARIANTS: tuple[SchemaVariant, ...] = ("strict", "tool")
JSON_TEXT_NOTE = "JSON文字列か${参照}"
FIELD_KINDS = FIELD_TYPES  # what a missing-information question may ask for (one list)
_SCALARS = ("string", "integer", "number", "boolean")
_ORDER = ("string", "integer", "number", "boolean", "array", "object", "null")
_REF_TYPES = {"records": "array"}  # jsonschema://<name> → the JSON type it stands for


@dataclass(frozen=True)
class WireSchema:
    """One schema as sent: the JSON Schema, its variant and its size in bytes (UTF-8 JSON)."""

    schema: dict[str, Any]
    variant: SchemaVariant

    @property
    def size(self) -> int:
        return schema_bytes(self.schema)


def schema_bytes(schema: Mapping[str, Any]) -> int:
    """The size of a schema as it travels: compact UTF-8 JSON."""
    return len(json.dumps(schema, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _declared_types(port: Mapping[str, Any]) -> list[str]:
    declared = port.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [str(t) for t in declared]
    ref = port.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("jsonschema://")
        return [_REF_TYPES.get(name, "object")]
    return []


def _scalar_items(port: Mapping[str, Any]) -> str | None:
    items = port.get("items")
    kind = items.get("type") if isinstance(items, Mapping) else None
    return kind if isinstance(kind, str) and kind in _SCALARS else None


def port_schema(port: Mapping[str, Any], *, strict: bool) -> tuple[dict[str, Any], bool]:
    """The wire schema of one port and whether its value travels as JSON text.

    A string-valued ``enum`` stays an enum. Otherwise the type is the spec's JSON types plus
    ``string`` (references). In strict mode objects, arrays of non-scalars and untyped ports
    become JSON text; elsewhere untyped ports accept any JSON type.
    """
    enum = port.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        if strict:
            return {"type": ["string", "null"], "enum": [*enum, None]}, False
        return {"type": "string", "enum": list(enum)}, False
    declared = _declared_types(port)
    wire: set[str] = {"string"}
    items: str | None = None
    as_text = not declared and strict
    if not declared and not strict:
        wire.update(_ORDER[:-1])
    for kind in declared:
        if kind in _SCALARS:
            wire.add(kind)
        elif kind == "array" and (items := _scalar_items(port)) is not None:
            wire.add("array")
        elif kind in ("array", "object"):
            as_text = as_text or strict
            if not strict:
                wire.add(kind)
    if strict:
        wire.add("null")
    types = [t for t in _ORDER if t in wire]
    schema: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
    if items is not None:
        schema["items"] = {"type": items}
    if as_text:
        schema["description"] = JSON_TEXT_NOTE
    return schema, as_text


def json_text_ports(ports: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The ports whose values the strict variant sends as JSON text."""
    return {name for name, port in ports.items() if port_schema(port, strict=True)[1]}


def _obj(
    properties: dict[str, Any], *, strict: bool, required: Sequence[str] = ()
) -> dict[str, Any]:
    """A closed object: every property required in strict mode, ``required`` otherwise."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    needed = list(properties) if strict else [r for r in required if r in properties]
    if needed:
        schema["required"] = needed
    schema["additionalProperties"] = False
    return schema


def _opt(schema: dict[str, Any], *, strict: bool) -> dict[str, Any]:
    """An optional value: nullable in strict mode (where everything is required)."""
    if not strict:
        return schema
    kind = schema.get("type")
    if kind == "object" or "anyOf" in schema or "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    kinds = kind if isinstance(kind, list) else [kind]
    nullable = {**schema, "type": [*kinds, "null"]}
    if "enum" in schema:
        nullable["enum"] = [*schema["enum"], None]
    return nullable


def _ports_object(ports: Mapping[str, Mapping[str, Any]], *, strict: bool) -> dict[str, Any]:
    properties = {name: port_schema(port, strict=strict)[0] for name, port in ports.items()}
    return _obj(properties, strict=strict)


def block_node_schema(spec: BlockSpec, *, strict: bool) -> dict[str, Any]:
    """One block's node: ``block`` (its id, first), ``id``, ``in``/``out`` with its ports."""
    string = {"type": "string"}
    outputs = {name: _opt(string, strict=strict) for name in spec.outputs}
    properties = {
        "block": {"type": "string", "const": spec.id},
        "id": string,
        "description": _opt(string, strict=strict),
        "in": _ports_object(spec.inputs, strict=strict),
        "out": _opt(_obj(outputs, strict=strict), strict=strict),
        "when": _opt({"type": "string", "description": "条件式"}, strict=strict),
    }
    return _obj(properties, strict=strict, required=("block", "id", "in"))


def _exports(strict: bool) -> dict[str, Any]:
    export = _obj(
        {"from": {"type": "string"}, "as": {"type": "string"}},
        strict=strict,
        required=("from", "as"),
    )
    return _opt({"type": "array", "items": export}, strict=strict)


def _control_nodes(strict: bool) -> list[dict[str, Any]]:
    string, opt_string = {"type": "string"}, _opt({"type": "string"}, strict=strict)
    foreach = _obj(
        {
            "items": string,
            "var": opt_string,
            "max_concurrency": _opt({"type": "integer"}, strict=strict),
        },
        strict=strict,
        required=("items",),
    )
    while_ = _obj(
        {"condition": string, "max_iterations": {"type": "integer"}},
        strict=strict,
        required=("condition", "max_iterations"),
    )
    body_plan = _obj(
        {
            "graph": {"type": "array", "items": {"$ref": "#/$defs/block_node"}, "minItems": 1},
            "exports": _exports(strict),
        },
        strict=strict,
        required=("graph",),
    )
    loop = _obj(
        {
            "type": {"type": "string", "const": "loop"},
            "id": string,
            "description": opt_string,
            "foreach": _opt(foreach, strict=strict),
            "while": _opt(while_, strict=strict),
            "body": _obj({"plan": body_plan}, strict=strict, required=("plan",)),
            "collect": _opt({"type": "array", "items": string}, strict=strict),
            "when": opt_string,
        },
        strict=strict,
        required=("type", "id", "body"),
    )
    inputs: dict[str, Any] = (
        {"type": ["string", "null"], "description": JSON_TEXT_NOTE}
        if strict
        else {"type": "object"}
    )
    call = _obj({"plan_id": string, "inputs": inputs}, strict=strict, required=("plan_id",))
    subflow = _obj(
        {
            "type": {"type": "string", "const": "subflow"},
            "id": string,
            "description": opt_string,
            "call": call,
            "exports": _exports(strict),
            "when": opt_string,
        },
        strict=strict,
        required=("type", "id", "call"),
    )
    return [loop, subflow]


def _vars(strict: bool) -> dict[str, Any]:
    if not strict:
        return {"type": "object", "description": "${vars.名前} で参照する値（未定は null）"}
    entry = _obj(
        {"name": {"type": "string"}, "value": {"type": ["string", "number", "boolean", "null"]}},
        strict=True,
    )
    return {"type": "array", "items": entry, "description": "${vars.名前} の値（未定は null）"}


def _var_labels(strict: bool) -> dict[str, Any]:
    """``ui.vars``: each var's Japanese label (a ``[{name, label}]`` list in strict mode)."""
    # ours (privacy.ours): the wire masks a schema's texts, and 名前（例: ...） reads as a name
    description = compose(
        Ours(
            "vars の名前 → 利用者が読む日本語の名前（例: 差し引かれてもよい振込手数料の上限（円））"
        )
    )
    if not strict:
        return {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": description,
        }
    entry = _obj({"name": {"type": "string"}, "label": {"type": "string"}}, strict=True)
    return {"type": "array", "items": entry, "description": description}


def _specs(registry: BlockRegistry, block_ids: Sequence[str]) -> list[BlockSpec]:
    return [registry.get(block_id) for block_id in dict.fromkeys(block_ids)]


def wiring_schema(
    registry: BlockRegistry,
    block_ids: Sequence[str],
    *,
    variant: SchemaVariant,
    loops: bool = True,
) -> WireSchema:
    """Stage 2 (the wiring): the plan with nodes of the candidate blocks, loops and subflows."""
    strict = variant == "strict"
    blocks = [block_node_schema(spec, strict=strict) for spec in _specs(registry, block_ids)]
    block_node: dict[str, Any] = blocks[0] if len(blocks) == 1 else {"anyOf": blocks}
    node: dict[str, Any] = {"$ref": "#/$defs/block_node"}
    if loops:
        node = {"anyOf": [node, *_control_nodes(strict)]}
    string, opt_string = {"type": "string"}, _opt({"type": "string"}, strict=strict)
    policy = _obj(
        {
            "on_error": {"type": "string", "enum": ["halt", "continue", "retry"]},
            "retries": {"type": "integer"},
        },
        strict=strict,
    )
    ui = _obj(
        {"layout": {"type": "array", "items": string}, "vars": _var_labels(strict)}, strict=strict
    )
    properties = {
        "id": string,
        "version": opt_string,
        "description": opt_string,
        "vars": _vars(strict),
        "policy": _opt(policy, strict=strict),
        "ui": _opt(ui, strict=strict),
        "graph": {"type": "array", "items": node, "minItems": 1},
        "exports": _exports(strict),
        "reasoning": {"type": "string", "description": "設計の意図（日本語、短く）"},
    }
    schema = _obj(properties, strict=strict, required=("id", "graph"))
    schema["$defs"] = {"block_node": block_node}
    return WireSchema(schema=schema, variant=variant)


def skeleton_schema(block_ids: Sequence[str], *, variant: SchemaVariant) -> WireSchema:
    """Stage 1 (the skeleton): flow, steps with their blocks, UI, loops, questions."""
    strict = variant == "strict"
    string, opt_string = {"type": "string"}, _opt({"type": "string"}, strict=strict)
    step = _obj(
        {
            "id": string,
            "purpose": string,
            "kind": {"type": "string", "enum": ["block", "loop", "subflow"]},
            "block": _opt(
                {"type": "string", "enum": list(dict.fromkeys(block_ids))}, strict=strict
            ),
            "parent": opt_string,
        },
        strict=strict,
        required=("id", "purpose"),
    )
    question = _obj(
        {
            "id": string,
            "question": string,
            "type": {"type": "string", "enum": list(FIELD_KINDS)},
            "options": {"type": "array", "items": string},
            "hint": opt_string,
        },
        strict=strict,
        required=("id", "question"),
    )
    properties = {
        "plan_id": string,
        "title": string,
        "flow": string,
        "steps": {"type": "array", "items": step, "minItems": 1},
        "needs_ui": {"type": "boolean"},
        "uses_loop": {"type": "boolean"},
        "uses_subflow": {"type": "boolean"},
        "missing_information": {"type": "array", "items": question},
    }
    schema = _obj(
        properties, strict=strict, required=("plan_id", "title", "flow", "steps", "needs_ui")
    )
    return WireSchema(schema=schema, variant=variant)
