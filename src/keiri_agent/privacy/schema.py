"""The texts of a JSON Schema sent to a model, found by their place in it.

A model is sent schemas besides messages: a tool's parameters (the help desk's search tools) and
the schema a structured reply must fit. Most are the product's (the agents' reply models, plan
generation's schemas), but ``ai.process_llm`` builds its schema from the plan's
``output_schema``, so a user's words reach it: property names (``石川さんの担当件数``),
descriptions, enum values (``担当者: {enum: [石川 太郎, 山田 花子]}``). The texts of a schema are at
known places: the names under ``properties`` (and the ``required`` list naming them), ``title``,
``description``, and the values of ``enum``, ``const``, ``default`` and ``examples``. Everything
else is the schema's grammar (type names, ``$ref`` and ``$defs`` names, formats, patterns,
bounds) and is kept as it is. :func:`map_schema_texts` applies a function to every text; the wire
(``llm.masking``) masks them as it masks message text, the product's own pieces
(``privacy.ours``) left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["map_schema_texts"]

_TEXTS = frozenset({"title", "description"})
_VALUES = frozenset({"enum", "const", "default", "examples"})
_NAMED = frozenset({"properties", "dependentSchemas"})  # keyed by the properties' names


def _values(value: Any, fn: Callable[[str], str]) -> Any:
    """A value a schema gives (an enum member, a default): every string in it mapped."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, Mapping):
        return {fn(k) if isinstance(k, str) else k: _values(v, fn) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_values(v, fn) for v in value]
    return value


def _subschemas(value: Any, fn: Callable[[str], str]) -> Any:
    """A keyword's value that holds schemas (``items``, ``anyOf``, ``$defs``...)."""
    if isinstance(value, Mapping):
        return map_schema_texts(value, fn)
    if isinstance(value, list | tuple):
        return [_subschemas(v, fn) for v in value]
    return value


def map_schema_texts(schema: Mapping[str, Any], fn: Callable[[str], str]) -> dict[str, Any]:
    """``schema`` with ``fn`` applied to each of its texts (see the module docstring)."""
    mapped: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _TEXTS and isinstance(value, str):
            mapped[key] = fn(value)
        elif key in _VALUES:
            mapped[key] = _values(value, fn)
        elif key == "required" and isinstance(value, list):
            mapped[key] = [fn(v) if isinstance(v, str) else v for v in value]
        elif key in _NAMED and isinstance(value, Mapping):
            mapped[key] = {
                fn(name) if isinstance(name, str) else name: _subschemas(sub, fn)
                for name, sub in value.items()
            }
        elif isinstance(value, Mapping):
            # a schema ($defs and patternProperties map names and patterns to schemas: their
            # keys are grammar, the schemas under them are walked)
            if key in ("$defs", "definitions", "patternProperties"):
                mapped[key] = {name: _subschemas(sub, fn) for name, sub in value.items()}
            else:
                mapped[key] = map_schema_texts(value, fn)
        elif isinstance(value, list | tuple):
            mapped[key] = [_subschemas(v, fn) for v in value]
        else:
            mapped[key] = value
    return mapped
