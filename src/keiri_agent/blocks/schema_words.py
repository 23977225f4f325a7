"""Why a value does not fit a port's JSON Schema, in Japanese.

jsonschema words its errors in English (``'total' is not one of ['sum', 'count']``,
``'path' is a required property``); a plan's author reads them in ``plan validate``, the
design page and a failed run. :func:`schema_problem` says the same in Japanese for every
keyword the block specs use, naming the value, the place and what is allowed. A keyword
without a Japanese wording keeps jsonschema's own sentence after a Japanese lead
(``値が条件 <keyword> に合いません（原文: …）``), never silently dropped.
:func:`schema_error_problem` says why a port's schema itself breaks JSON Schema's rules: the
keyword whose value is wrong and where it is in the schema (jsonschema's sentence stays out).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from jsonschema.exceptions import SchemaError, ValidationError

__all__ = [
    "MAX_SHOWN_CHOICES",
    "MAX_VALUE_CHARS",
    "WORDINGS",
    "schema_error_problem",
    "schema_problem",
    "type_name",
]

MAX_SHOWN_CHOICES: Final = 12  # choices listed in one message; more are counted
MAX_VALUE_CHARS: Final = 60  # a value quoted in a message is cut past this, with its length
TYPE_NAMES: Final = {
    "string": "文字列",
    "integer": "整数",
    "number": "数値",
    "boolean": "真偽値（true / false）",
    "array": "リスト",
    "object": "マッピング（名前: 値）",
    "null": "null（空）",
}

# The keywords whose failure is said from the value, the keyword's value (``expected``) and,
# for arrays, how many items there are (``count``): one sentence each, filled in by format().
WORDINGS: Final = {
    "minimum": "{value} は {expected} 以上にしてください",
    "maximum": "{value} は {expected} 以下にしてください",
    "exclusiveMinimum": "{value} は {expected} より大きくしてください",
    "exclusiveMaximum": "{value} は {expected} より小さくしてください",
    "multipleOf": "{value} は {expected} の倍数にしてください",
    "minLength": "{value} は {expected} 文字以上にしてください",
    "maxLength": "{value} は {expected} 文字以下にしてください",
    "pattern": "{value} は決められた書式（正規表現 {expected}）に合いません",
    "format": "{value} は {expected} の書式ではありません",
    "minItems": "要素を {expected} 個以上にしてください（いま {count} 個）",
    "maxItems": "要素を {expected} 個以下にしてください（いま {count} 個）",
    "uniqueItems": "同じ要素が重複しています",
    "minProperties": "項目を {expected} 個以上にしてください",
    "maxProperties": "項目を {expected} 個以下にしてください",
    "anyOf": "{value} は使える形のどれにも合いません",
    "oneOf": "{value} は使える形のどれにも合いません",
    "not": "{value} はここには書けません",
}


def type_name(kind: str) -> str:
    """A JSON type in Japanese (``object`` → マッピング（名前: 値））."""
    return TYPE_NAMES.get(kind, kind)


def _value(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > MAX_VALUE_CHARS:
        return f"{text[:MAX_VALUE_CHARS]}…（{len(text):,} 文字）"
    return text


def _choices(values: Iterable[Any]) -> str:
    shown = [_value(v) for v in values]
    more = len(shown) - MAX_SHOWN_CHOICES
    listed = "、".join(shown[:MAX_SHOWN_CHOICES])
    return listed + (f" ほか {more} 件" if more > 0 else "")


def _of_value(value: Any) -> str:
    """The JSON type of ``value``, in Japanese."""
    if value is None:
        return type_name("null")
    if isinstance(value, bool):
        return type_name("boolean")
    if isinstance(value, int):
        return type_name("integer")
    if isinstance(value, float):
        return type_name("number")
    if isinstance(value, str):
        return type_name("string")
    if isinstance(value, list | tuple):
        return type_name("array")
    if isinstance(value, dict):
        return type_name("object")
    return type(value).__name__


def _types(expected: Any) -> str:
    kinds: Sequence[Any] = expected if isinstance(expected, list) else [expected]
    return "か".join(type_name(str(kind)) for kind in kinds)


def _wording(error: ValidationError) -> str | None:
    kind: Any = error.validator
    expected: Any = error.validator_value
    value: Any = error.instance
    if kind == "enum":
        return f"{_value(value)} は使えません（使える値: {_choices(expected)}）"
    if kind == "const":
        return f"{_value(value)} ではなく {_value(expected)} にしてください"
    if kind == "type":
        # null is said once: its type name says it (「null（空）」), its value would repeat it
        given = _of_value(value) if value is None else f"{_of_value(value)} {_value(value)}"
        return f"{_types(expected)}が必要ですが、{given} です"
    if kind == "required":
        missing = [name for name in expected if isinstance(value, dict) and name not in value]
        return f"必須の項目 {'、'.join(missing) or _choices(expected)} がありません"
    if kind in ("additionalProperties", "unevaluatedProperties"):
        schema: Any = error.schema
        known = set(schema.get("properties", {})) if isinstance(schema, Mapping) else set()
        extra = [name for name in value if name not in known] if isinstance(value, dict) else []
        where = f"（使える項目: {'、'.join(sorted(known))}）" if known else ""
        return f"使えない項目 {'、'.join(map(str, extra)) or '（不明）'} があります{where}"
    template = WORDINGS.get(kind)
    if template is None:
        return None
    return template.format(
        # Only what the sentence shows is worked out: the value may be a long list.
        value=_value(value) if "{value}" in template else "",
        expected=expected,
        count=len(value) if "{count}" in template else 0,
    )


def schema_problem(error: ValidationError) -> str:
    """``error`` in Japanese: where (``0/func``) and why."""
    where = "/".join(str(part) for part in error.absolute_path)
    said = _wording(error)
    if said is None:
        said = f"値が条件 {error.validator} に合いません（原文: {error.message}）"
    return f"{where}: {said}" if where else said


def schema_error_problem(error: SchemaError) -> str:
    """A schema that breaks JSON Schema's rules, in Japanese: which keyword, where, what value
    (``スキーマ自体が不正です: properties/金額 の type に書けない値 "int" があります``)."""
    path = [str(part) for part in error.absolute_path]
    # The keyword is the last name of the path that is not an index into the keyword's list.
    cut = max((i for i, part in enumerate(path) if not part.isdigit()), default=-1)
    if cut < 0:
        return f"スキーマ自体が不正です: スキーマがマッピング（名前: 値）ではありません（{_value(error.instance)}）"
    keyword, where = path[cut], "/".join(path[:cut])
    said = f"{where} の {keyword}" if where else keyword
    allowed = f"（使える型: {'、'.join(TYPE_NAMES)}）" if keyword == "type" else ""
    return (
        f"スキーマ自体が不正です: {said} に書けない値 {_value(error.instance)} があります{allowed}"
    )
