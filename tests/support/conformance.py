"""Provider conformance for the scripted LLM server: refuse the schemas real providers refuse.

A scripted server accepts any request, so a tool schema no provider would take passes every
test. With ``ScriptedLLMServer(conformance=Conformance("openai"))`` (or ``"anthropic"``) the
server checks each request's tools / ``response_format`` first and answers HTTP 400 with a
provider-style message, the way production fails. The rules follow the providers' documents
(2026): OpenAI "Structured Outputs — Supported schemas" and "Function calling", Anthropic
"Define tools" and "Strict tool use / JSON Schema limitations".

OpenAI, every function / ``json_schema``: name ``^[a-zA-Z0-9_-]{1,64}$``; the schema a valid
JSON Schema whose root is ``type: object``. With ``strict: true`` also: root not ``anyOf``;
only the supported keywords (:data:`OPENAI_STRICT_KEYWORDS`: no ``default``, ``oneOf``,
``allOf``, ``not``, ``if``, ``minLength``, ``patternProperties``...); every subschema typed (or
``anyOf``/``enum``/``const``/``$ref``); every object ``additionalProperties: false`` with every
property in ``required``; ``anyOf`` objects not sharing an identical first key; at most 5,000
object properties, 10 levels of nesting, 120,000 characters of property/definition names and
enum/const values, 1,000 enum values, and 15,000 characters in one string enum of over 250
values.

Anthropic, every custom tool: name ``^[a-zA-Z0-9_-]{1,64}$``; ``input_schema`` present, a valid
JSON Schema with root ``type: object`` and no ``oneOf``/``anyOf``/``allOf`` at the top level.
With ``strict: true`` also: every object ``additionalProperties: false``, none of the numeric,
length or count constraints (``minimum``... ``minItems`` above 1, ``maxItems``), no recursion.

``max_schema_bytes`` adds a size budget (compact UTF-8 JSON), e.g. what a guided-decoding
server is set to compile; it is the test's setting, not a provider's published limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

__all__ = [
    "ANTHROPIC_STRICT_UNSUPPORTED",
    "OPENAI_STRICT_KEYWORDS",
    "Conformance",
    "anthropic_strict_problems",
    "openai_strict_problems",
]

Provider = Literal["openai", "anthropic"]
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "definitions", "description", "title",
        "pattern", "format",  # strings
        "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",  # numbers
        "minItems", "maxItems",  # arrays
    }
)  # fmt: skip
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_STRING_CHARS = 120_000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_LARGE_ENUM = 250
OPENAI_LARGE_ENUM_CHARS = 15_000
ANTHROPIC_STRICT_UNSUPPORTED = frozenset(
    {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "maxItems", "minProperties", "maxProperties",
    }
)  # fmt: skip
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def _children(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(path part, subschema, whether it is one object level deeper) of a schema."""
    for key in _SUBSCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            if isinstance(sub, dict):
                yield f"{key}.{name}", sub, key == "properties"
    for key in _SUBSCHEMA_LISTS:
        for index, sub in enumerate(schema.get(key) or []):
            if isinstance(sub, dict):
                yield f"{key}[{index}]", sub, False
    for key in ("items", "additionalProperties", "not", "if", "then", "else"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            yield key, sub, key == "items"


def _walk(
    schema: dict[str, Any], path: str = "", depth: int = 1
) -> Iterator[tuple[str, dict[str, Any], int]]:
    yield path or "(root)", schema, depth
    for part, sub, deeper in _children(schema):
        yield from _walk(sub, f"{path}.{part}" if path else part, depth + (1 if deeper else 0))


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _kinds(schema: dict[str, Any]) -> list[object]:
    """The types ``schema`` names: its ``type`` list, else ``[its type]`` (``[None]``: none)."""
    kind: object = schema.get("type")
    return list(kind) if isinstance(kind, list) else [kind]


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema
    )


def _ref_depth(root: dict[str, Any], schema: dict[str, Any], seen: tuple[str, ...] = ()) -> int:
    """Object nesting levels of ``schema``, following ``$ref`` (recursion counted once)."""
    deepest = 0
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        target = _resolve(root, ref)
        if target is not None:
            deepest = _ref_depth(root, target, (*seen, ref))
    for part, sub, _ in _children(schema):
        if not part.startswith(("$defs.", "definitions.")):
            deepest = max(deepest, _ref_depth(root, sub, seen))
    return deepest + (1 if _is_object(schema) else 0)


def _recursive(root: dict[str, Any]) -> bool:
    def visit(schema: dict[str, Any], seen: tuple[str, ...]) -> bool:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in seen or ref == "#":
                return True
            target = _resolve(root, ref)
            if target is not None and visit(target, (*seen, ref)):
                return True
        return any(
            visit(sub, seen)
            for part, sub, _ in _children(schema)
            if not part.startswith(("$defs.", "definitions."))
        )

    return visit(root, ())


def _json_schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return "schema must be a JSON object"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"invalid JSON Schema: {exc.message}"
    if schema.get("type") != "object":
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: \"{schema.get('type')}\"'"
    return None


def openai_strict_problems(schema: dict[str, Any]) -> list[str]:
    """Why OpenAI strict mode refuses ``schema`` (empty: it is accepted)."""
    problems: list[str] = []
    if "anyOf" in schema:
        problems.append("root schema must not be 'anyOf'")
    properties = strings = enums = 0
    for path, sub, _ in _walk(schema):
        for key in sorted(set(sub) - OPENAI_STRICT_KEYWORDS):
            problems.append(f"In context={path}, '{key}' is not permitted")
        if path != "(root)" and not any(
            k in sub for k in ("type", "anyOf", "enum", "const", "$ref")
        ):
            problems.append(f"In context={path}, schema must have a 'type' key")
        kinds = _kinds(sub)
        props = sub.get("properties")
        if "object" in kinds or isinstance(props, dict):
            if sub.get("additionalProperties") is not False:
                problems.append(
                    f"In context={path}, 'additionalProperties' is required to be supplied and to be false"
                )
            missing = [p for p in props or {} if p not in (sub.get("required") or [])]
            if missing:
                problems.append(
                    f"In context={path}, 'required' is required to be supplied and to be an array "
                    f"including every key in properties. Missing '{missing[0]}'"
                )
            properties += len(props or {})
            strings += sum(len(name) for name in props or {})
        for key in ("$defs", "definitions"):
            strings += sum(len(name) for name in sub.get(key) or {})
        if isinstance(sub.get("enum"), list):
            values = sub["enum"]
            enums += len(values)
            text = sum(len(v) for v in values if isinstance(v, str))
            strings += text
            if len(values) > OPENAI_LARGE_ENUM and text > OPENAI_LARGE_ENUM_CHARS:
                problems.append(
                    f"In context={path}, a string enum with more than {OPENAI_LARGE_ENUM} values "
                    f"may have at most {OPENAI_LARGE_ENUM_CHARS} characters, got {text}"
                )
        if isinstance(sub.get("const"), str):
            strings += len(sub["const"])
        firsts = [
            (next(iter(m["properties"])), json.dumps(next(iter(m["properties"].values()))))
            for m in sub.get("anyOf") or []
            if isinstance(m, dict) and m.get("properties")
        ]
        if len(firsts) != len(set(firsts)):
            problems.append(
                f"In context={path}, objects provided via 'anyOf' must not share identical first keys"
            )
    depth = _ref_depth(schema, schema)
    if depth > OPENAI_MAX_DEPTH:
        problems.append(f"{depth} levels of nesting exceeds limit of {OPENAI_MAX_DEPTH}")
    if properties > OPENAI_MAX_PROPERTIES:
        problems.append(f"{properties} object properties exceeds limit of {OPENAI_MAX_PROPERTIES}")
    if strings > OPENAI_MAX_STRING_CHARS:
        problems.append(f"total string length {strings} exceeds limit of {OPENAI_MAX_STRING_CHARS}")
    if enums > OPENAI_MAX_ENUM_VALUES:
        problems.append(f"{enums} enum values exceeds limit of {OPENAI_MAX_ENUM_VALUES}")
    return problems


def anthropic_strict_problems(schema: dict[str, Any]) -> list[str]:
    """Why Anthropic strict tool use refuses ``schema`` (empty: it is accepted)."""
    problems: list[str] = []
    for path, sub, _ in _walk(schema):
        for key in sorted(set(sub) & ANTHROPIC_STRICT_UNSUPPORTED):
            problems.append(f"{path}: '{key}' is not supported with strict")
        if isinstance(sub.get("minItems"), int) and sub["minItems"] > 1:
            problems.append(f"{path}: 'minItems' above 1 is not supported with strict")
        kinds = _kinds(sub)
        if ("object" in kinds or "properties" in sub) and sub.get(
            "additionalProperties"
        ) is not False:
            problems.append(f"{path}: 'additionalProperties' must be false with strict")
    if _recursive(schema):
        problems.append("recursive schemas are not supported with strict")
    return problems


@dataclass
class Conformance:
    """The checks of one provider; :attr:`rejections` lists every refusal, oldest first."""

    provider: Provider
    max_schema_bytes: int | None = None
    rejections: list[str] = field(default_factory=list)

    def check(self, path: str, body: dict[str, Any]) -> str | None:
        """The refusal message for a request to ``path`` (None: accepted)."""
        problem = (
            self._check_messages(body) if path.endswith("/messages") else self._check_chat(body)
        )
        if problem is not None:
            self.rejections.append(problem)
        return problem

    def _size(self, where: str, schema: Any) -> str | None:
        if self.max_schema_bytes is None:
            return None
        size = len(json.dumps(schema, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        if size > self.max_schema_bytes:
            return f"{where}: schema is {size} bytes, over the limit of {self.max_schema_bytes}"
        return None

    def _schemas_of_chat(self, body: dict[str, Any]) -> Iterator[tuple[str, str, Any, bool]]:
        """(where, name, schema, strict) of every function and json_schema of a chat request."""
        for index, tool in enumerate(body.get("tools") or []):
            function = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(function, dict):
                yield f"tools[{index}]", "", None, False
                continue
            parameters = function.get("parameters", {"type": "object", "properties": {}})
            name = str(function.get("name", ""))
            yield f"function '{name}'", name, parameters, function.get("strict") is True
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            name = str(spec.get("name", ""))
            yield f"response_format '{name}'", name, spec.get("schema"), spec.get("strict") is True

    def _check_chat(self, body: dict[str, Any]) -> str | None:
        if self.provider != "openai":
            return None
        for where, name, schema, strict in self._schemas_of_chat(body):
            if not TOOL_NAME.match(name):
                return f"Invalid '{where}.name': string does not match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            problem = _json_schema_problem(schema) or self._size(where, schema)
            if problem is None and strict:
                found = openai_strict_problems(schema)
                problem = found[0] if found else None
            if problem is not None:
                return f"Invalid schema for {where}: {problem}."
        return None

    def _check_messages(self, body: dict[str, Any]) -> str | None:
        if self.provider != "anthropic":
            return None
        for index, tool in enumerate(body.get("tools") or []):
            if not isinstance(tool, dict) or tool.get("type") not in (None, "custom"):
                continue
            where = f"tools.{index}.custom"
            if not TOOL_NAME.match(str(tool.get("name", ""))):
                return f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            schema = tool.get("input_schema")
            if schema is None:
                return f"{where}.input_schema: Field required"
            if isinstance(schema, dict) and any(k in schema for k in ("oneOf", "anyOf", "allOf")):
                return f"{where}.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
            problem = _json_schema_problem(schema) or self._size(where, schema)
            if problem is None and tool.get("strict") is True:
                found = anthropic_strict_problems(schema)
                problem = found[0] if found else None
            if problem is not None:
                return f"{where}.input_schema: {problem}"
        return None
