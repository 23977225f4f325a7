"""The seed's simple JSON-Schema-like output schema → a dynamic Pydantic model (seed 002 §4).

A schema is either a full object schema ``{type: object, properties: {...}, required: [...]}``
or, as in the seed's plans, the properties mapping itself. Each property is a schema
(``{type: object, properties: ...}``, ``{type: array, items: ...}``, ``{enum: [...]}``,
``{type: [string, "null"]}``) or a bare type name (``file: string``, ``count: integer``).

Fields are optional and nullable (the model is told "unknown → null") unless a schema lists
them under ``required``. Property names are kept exactly through aliases, so Japanese or
hyphenated keys and names such as ``json`` or ``schema`` do not clash with Pydantic.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from keiri_agent.errors import BlockError, input_error

__all__ = ["SCALAR_TYPES", "TYPE_ALIASES", "object_properties", "schema_to_model"]

SCALAR_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
# Python spellings that plan authors (and plan-writing LLMs) use for the JSON Schema names.
TYPE_ALIASES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}
_KNOWN = (*SCALAR_TYPES, "object", "array")
_MODEL_CONFIG = ConfigDict(populate_by_name=True)


def _schema_error(path: str, problem: str) -> BlockError:
    return input_error(
        f"output_schema の {path} を解釈できません: {problem}",
        "型は string / integer / number / boolean / object / array（または enum: [...]）で"
        "書いてください。例: {items: {type: array, items: {type: object, properties:"
        " {file: string, count: integer}}}}",
        field="output_schema",
        path=path,
        problem=problem,
    )


def object_properties(schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """Properties and required names of the top level, in either of the two forms."""
    if schema.get("type") in ("object", "dict") and isinstance(schema.get("properties"), Mapping):
        return schema["properties"], [str(r) for r in schema.get("required") or []]
    return schema, []


def schema_to_model(
    output_schema: Mapping[str, Any],
    *,
    name: str = "ProcessOutput",
    required: Collection[str] = (),
) -> type[BaseModel]:
    """A Pydantic model for ``output_schema``; ``required`` adds top-level required fields.

    Raises BlockError (INPUT_VALIDATION_FAILED) naming the property whose type is unknown.
    """
    if not isinstance(output_schema, Mapping) or not output_schema:
        raise _schema_error("(全体)", "プロパティが 1 つもありません")
    properties, listed = object_properties(output_schema)
    if not properties:
        raise _schema_error("properties", "プロパティが 1 つもありません")
    return _model(name, properties, {*listed, *required}, "")


def _model(
    name: str, properties: Mapping[str, Any], required: Collection[str], path: str
) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for index, (key, spec) in enumerate(properties.items()):
        key = str(key)
        where = f"{path}.{key}" if path else key
        # A nested model's name is sent to the model as a $defs key and $ref, places the wire
        # does not mask (they are the schema's grammar): it says where, never the user's words.
        nested_name = f"{name}_{index}"
        annotation, nullable, description = _annotation(spec, nested_name, where)
        # Internal names are positional; the alias is the schema's key, used for I/O, and its
        # title: the plan author's name for it, what a reply that does not fit is told by.
        if key in required and not nullable:
            field = Field(alias=key, title=key, description=description)
            fields[f"f{index}"] = (annotation, field)
        else:
            field = Field(default=None, alias=key, title=key, description=description)
            fields[f"f{index}"] = (annotation | None, field)
    model: type[BaseModel] = create_model(name, __config__=_MODEL_CONFIG, **fields)
    return model


def _annotation(spec: Any, name: str, path: str) -> tuple[Any, bool, str | None]:
    """(type annotation, nullable, description) of one property schema."""
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, Mapping):
        raise _schema_error(path, f"型名かマッピングで書いてください（{type(spec).__name__}）")
    description = spec.get("description")
    description = str(description) if description is not None else None
    nullable = bool(spec.get("nullable", False))
    type_name = spec.get("type")
    if isinstance(type_name, list):  # {type: [string, "null"]}
        names = [t for t in type_name if t != "null"]
        nullable = nullable or len(names) < len(type_name)
        if len(names) != 1:
            raise _schema_error(path, f"型は 1 つにしてください（{type_name}）")
        type_name = names[0]
    if "enum" in spec:
        return _literal(spec["enum"], path), nullable, description
    if type_name is None:
        if "properties" in spec:
            type_name = "object"
        elif "items" in spec:
            type_name = "array"
        else:
            raise _schema_error(path, "type がありません")
    type_name = TYPE_ALIASES.get(str(type_name), str(type_name))
    if type_name in SCALAR_TYPES:
        return SCALAR_TYPES[type_name], nullable, description
    if type_name == "object":
        properties = spec.get("properties")
        if properties is None:
            return dict[str, Any], nullable, description
        if not isinstance(properties, Mapping) or not properties:
            raise _schema_error(path, "properties は 1 つ以上の項目を持つマッピングにしてください")
        listed = [str(r) for r in spec.get("required") or []]
        return _model(name, properties, listed, path), nullable, description
    if type_name == "array":
        items = spec.get("items")
        if items is None:
            return list[Any], nullable, description
        inner, inner_nullable, _ = _annotation(items, f"{name}_item", f"{path}[]")
        element = inner | None if inner_nullable else inner
        return list[element], nullable, description  # type: ignore[valid-type]
    raise _schema_error(path, f"型 '{type_name}' は使えません（使える型: {', '.join(_KNOWN)}）")


def _literal(values: Any, path: str) -> Any:
    if (
        not isinstance(values, list)
        or not values
        or not all(isinstance(v, str | int | float | bool) for v in values)
    ):
        raise _schema_error(path, "enum は文字列や数値の空でないリストにしてください")
    return Literal[tuple(values)]
