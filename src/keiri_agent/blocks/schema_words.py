"""Why a value does not fit a port's JSON Schema, in Japanese.

jsonschema words its errors in English (``'total' is not one of ['sum', 'count']``,
``'path' is a required property``); a plan's author reads them in ``plan validate``, the
design page and a failed run. :func:`schema_problem` says the same in Japanese for every
keyword the block specs use, naming the value, the place and what is allowed. A keyword
without a Japanese wording keeps jsonschema's own sentence after a Japanese lead
(``値が条件 <keyword> に合いません（原文: …）``), never silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from jsonschema.exceptions import ValidationError

__all__ = ["MAX_SHOWN_CHOICES", "MAX_VALUE_CHARS", "schema_problem", "type_name"]

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
        return f"{_types(expected)}が必要ですが、{_of_value(value)} {_value(value)} です"
    if kind == "required":
        missing = [name for name in expected if isinstance(value, dict) and name not in value]
        return f"必須の項目 {'、'.join(missing) or _choices(expected)} がありません"
    if kind in ("additionalProperties", "unevaluatedProperties"):
        schema: Any = error.schema
        known = set(schema.get("properties", {})) if isinstance(schema, Mapping) else set()
        extra = [name for name in value if name not in known] if isinstance(value, dict) else []
        where = f"（使える項目: {'、'.join(sorted(known))}）" if known else ""
        return f"使えない項目 {'、'.join(map(str, extra)) or '（不明）'} があります{where}"
    if kind == "minimum":
        return f"{_value(value)} は {expected} 以上にしてください"
    if kind == "maximum":
        return f"{_value(value)} は {expected} 以下にしてください"
    if kind == "exclusiveMinimum":
        return f"{_value(value)} は {expected} より大きくしてください"
    if kind == "exclusiveMaximum":
        return f"{_value(value)} は {expected} より小さくしてください"
    if kind == "multipleOf":
        return f"{_value(value)} は {expected} の倍数にしてください"
    if kind == "minLength":
        return f"{_value(value)} は {expected} 文字以上にしてください"
    if kind == "maxLength":
        return f"{_value(value)} は {expected} 文字以下にしてください"
    if kind == "pattern":
        return f"{_value(value)} は決められた書式（正規表現 {expected}）に合いません"
    if kind == "format":
        return f"{_value(value)} は {expected} の書式ではありません"
    if kind == "minItems":
        return f"要素を {expected} 個以上にしてください（いま {len(value)} 個）"
    if kind == "maxItems":
        return f"要素を {expected} 個以下にしてください（いま {len(value)} 個）"
    if kind == "uniqueItems":
        return "同じ要素が重複しています"
    if kind == "minProperties":
        return f"項目を {expected} 個以上にしてください"
    if kind == "maxProperties":
        return f"項目を {expected} 個以下にしてください"
    if kind in ("anyOf", "oneOf"):
        return f"{_value(value)} は使える形のどれにも合いません"
    if kind == "not":
        return f"{_value(value)} はここには書けません"
    return None


def schema_problem(error: ValidationError) -> str:
    """``error`` in Japanese: where (``0/func``) and why."""
    where = "/".join(str(part) for part in error.absolute_path)
    said = _wording(error)
    if said is None:
        said = f"値が条件 {error.validator} に合いません（原文: {error.message}）"
    return f"{where}: {said}" if where else said
