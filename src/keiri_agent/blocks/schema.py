"""JSON Schema helpers for block ports: ``$ref`` resolution, JSON types, checks, compatibility.

Ports are JSON Schema (draft 2020-12) with our extensions (``required``, ``nullable``,
``examples``, ``dry_run``). ``$ref`` may name a Pydantic model (``module:Model``) or a schema file
(``jsonschema://name`` → ``block_specs/schemas/name.json|yaml``). A ``{type: string, format:
binary}`` port also accepts bytes (a file's content), and ``nullable: true`` accepts null.
"""

from __future__ import annotations

import importlib
import json
import types
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from pydantic import BaseModel

from keiri_agent.blocks.schema_words import schema_error_problem, schema_problem
from keiri_agent.blocks.spec import PORT_EXTENSIONS
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.events.models import is_table

__all__ = [
    "SCHEMA_DIR",
    "SchemaRefError",
    "check_value",
    "compatible",
    "descend",
    "json_types",
    "resolve_port",
    "type_of_value",
]

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "block_specs" / "schemas"
JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "object", "array", "null"})
_PORT_EXTENSIONS = PORT_EXTENSIONS | {"default"}


class SchemaRefError(BlockError):
    default_code = ErrorCode.CONFIGURATION_ERROR


@lru_cache(maxsize=256)
def _resolve_ref(ref: str) -> str:
    """The referenced schema as JSON text (cached; text so callers get fresh copies)."""
    if ref.startswith("jsonschema://"):
        name = ref.removeprefix("jsonschema://")
        for suffix in (".json", ".yaml", ".yml"):
            path = (SCHEMA_DIR / f"{name}{suffix}").resolve()
            if path.is_relative_to(SCHEMA_DIR) and path.is_file():
                text = path.read_text(encoding="utf-8")
                data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
                return json.dumps(data)
        raise SchemaRefError(
            f"スキーマ参照 {ref} が見つかりません（{SCHEMA_DIR}）。",
            hint="jsonschema://名前 は block_specs/schemas/名前.json か .yaml を指します。",
            details={"ref": ref},
        )
    module_name, sep, attr = ref.partition(":")
    if not sep:
        raise SchemaRefError(
            f"スキーマ参照 {ref} の形式が不正です。",
            hint="'$ref' は 'モジュール:Pydanticモデル' か 'jsonschema://名前' で書いてください。",
            details={"ref": ref},
        )
    try:
        model = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise SchemaRefError(
            f"スキーマ参照 {ref} を解決できません: {reason_of(exc)}",
            hint="モジュール名とクラス名を確認してください。",
            details={"ref": ref, "cause": cause_of(exc)},
        ) from exc
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SchemaRefError(
            f"スキーマ参照 {ref} は Pydantic モデルではありません。",
            hint="BaseModel を継承したクラスを指定してください。",
            details={"ref": ref},
        )
    return json.dumps(model.model_json_schema())


def resolve_port(port: Mapping[str, Any]) -> dict[str, Any]:
    """The port's plain JSON Schema: ``$ref`` inlined, our extensions removed."""
    schema = {
        k: v
        for k, v in port.items()
        if k not in _PORT_EXTENSIONS or (k == "required" and isinstance(v, list))
    }
    ref = schema.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        schema.pop("$ref")
        schema = {**json.loads(_resolve_ref(ref)), **schema}
    if port.get("nullable"):
        types = json_types(schema)
        if types is not None:
            schema["type"] = sorted(types | {"null"})
    return schema


def json_types(schema: Mapping[str, Any] | None) -> frozenset[str] | None:
    """The JSON types a schema allows, or None when it does not say (anything goes)."""
    if not schema:
        return None
    declared = schema.get("type")
    if isinstance(declared, str):
        return frozenset({declared}) if declared in JSON_TYPES else None
    if isinstance(declared, list) and declared:
        return frozenset(t for t in declared if isinstance(t, str))
    if "enum" in schema and isinstance(schema["enum"], list):
        return frozenset(type_of_value(v) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            found: set[str] = set()
            for option in options:
                types = json_types(option) if isinstance(option, Mapping) else None
                if types is None:
                    return None
                found |= types
            return frozenset(found)
    if "properties" in schema:
        return frozenset({"object"})
    if "items" in schema:
        return frozenset({"array"})
    return None


# Python types → JSON Schema type names, first match wins (bool before int: True is an int).
_JSON_TYPES: tuple[tuple[type | types.UnionType, str], ...] = (
    (types.NoneType, "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str | bytes, "string"),
    (list | tuple, "array"),
)


def type_of_value(value: Any) -> str:
    """The JSON Schema type of a Python value (anything else is an object)."""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "object")


def descend(schema: Mapping[str, Any] | None, path: Sequence[str | int]) -> dict[str, Any] | None:
    """The schema at ``path`` inside ``schema`` (None when unknown: no properties declared)."""
    current: Mapping[str, Any] | None = schema
    for segment in path:
        if not current:
            return None
        if isinstance(segment, int):
            items = current.get("items")
            current = items if isinstance(items, Mapping) else None
            continue
        props = current.get("properties")
        if isinstance(props, Mapping) and segment in props and isinstance(props[segment], Mapping):
            current = props[segment]
        elif isinstance(current.get("additionalProperties"), Mapping):
            current = current["additionalProperties"]
        else:
            return None
    return dict(current) if current else None


def compatible(source: Mapping[str, Any] | None, target: Mapping[str, Any] | None) -> bool:
    """Can a value described by ``source`` flow into a port described by ``target``?

    Unknown types are compatible (seed 004 §9: 未知型は緩和); integers fit numbers; a null
    source fits only targets that allow null or say nothing.
    """
    src, dst = json_types(source), json_types(target)
    if src is None or dst is None:
        return True
    widened = set(dst) | ({"integer"} if "number" in dst else set())
    return bool(set(src) & widened)


def _is_binary(checker: Any, instance: Any) -> bool:
    return isinstance(instance, str | bytes | bytearray)


def _is_array(checker: Any, instance: Any) -> bool:
    return isinstance(instance, list | tuple) or is_table(instance)


_TYPE_CHECKER = Draft202012Validator.TYPE_CHECKER.redefine("array", _is_array)
_Validator = jsonschema.validators.extend(Draft202012Validator, type_checker=_TYPE_CHECKER)  # type: ignore[no-untyped-call]
_BINARY_CHECKER = _TYPE_CHECKER.redefine("string", _is_binary)
_BinaryValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, type_checker=_BINARY_CHECKER
)


@lru_cache(maxsize=2048)
def _cached_validator(schema_json: str, binary: bool) -> Any:
    return (_BinaryValidator if binary else _Validator)(json.loads(schema_json))


@lru_cache(maxsize=2048)
def _cached_check(schema_json: str) -> None:
    Draft202012Validator.check_schema(json.loads(schema_json))


def _key(schema: Mapping[str, Any]) -> str | None:
    try:
        return json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # non-JSON values in the schema (a date in examples...)
        return None


def _validator(schema: Mapping[str, Any], key: str | None) -> Any:
    """The validator of ``schema`` whose ``_key`` is ``key`` (computed once by the caller)."""
    binary = schema.get("format") == "binary"
    if key is None:
        return (_BinaryValidator if binary else _Validator)(dict(schema))
    return _cached_validator(key, binary)


def _check_schema(schema: Mapping[str, Any], key: str | None) -> None:
    """Raises jsonschema.SchemaError when ``schema`` (whose ``_key`` is ``key``) breaks JSON
    Schema's own rules (a type ``strng``, a ``required`` that is no list), checked once per
    schema that passes."""
    if key is None:
        Draft202012Validator.check_schema(dict(schema))
    else:
        _cached_check(key)


def validator_for(schema: Mapping[str, Any]) -> Any:
    """The validator of ``schema`` (cached per schema): ``is_valid(value)`` answers quickly."""
    return _validator(schema, _key(schema))


def check_value(value: Any, schema: Mapping[str, Any]) -> str | None:
    """None when ``value`` fits ``schema``; otherwise a short Japanese description of why not."""
    try:
        key = _key(schema)  # serialised once for both caches
        _check_schema(schema, key)  # a broken schema is said as such, not as a crash while checking
        validator = _validator(schema, key)
        if is_table(value):  # by columns and a sample of rows (blocks.table_schema)
            from keiri_agent.blocks.table_schema import table_problem

            return table_problem(value, schema, validator)
        error = best_match(validator.iter_errors(value))
    except jsonschema.SchemaError as exc:
        return schema_error_problem(exc)
    except (TypeError, ValueError) as exc:  # values JSON Schema cannot inspect
        return f"値を検査できません: {reason_of(exc)}"
    if error is None:
        return None
    return schema_problem(error)
