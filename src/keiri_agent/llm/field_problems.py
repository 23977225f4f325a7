"""What a value that failed a Pydantic model got wrong, said in Japanese: field, problem, value.

Pydantic explains a failure in English (``Input should be a valid string``) at a dotted location
(``sections.0.content``). A person reads neither, so every notice built from a
``ValidationError`` in the LLM layer and in plan generation goes through :func:`field_problems`:

- the field as a readable path (``sections の 1 番目の content``; ``全体`` for the whole value),
- what was wrong, in Japanese, from :data:`PROBLEM_TEXTS` (one entry per Pydantic error type,
  filled from the error's context: the allowed values, the limits),
- what was received, as short JSON (:data:`MAX_VALUE_SHOWN` characters).

A ``ValueError`` of one of our validators and a ``PydanticCustomError`` of ours already speak
Japanese: their message is the problem. A Pydantic type the table lacks reads as
:data:`GENERIC_PROBLEM`, never as its English.

The validator's own English text stays in :attr:`FieldProblem.message` (error ``details``) and in
:meth:`FieldProblem.for_model`, the line sent back to a model in a repair round: models act on the
exact location and wording, people do not need them.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_core.core_schema import ErrorType

__all__ = [
    "GENERIC_PROBLEM",
    "MAX_PROBLEMS_IN_DETAILS",
    "MAX_PROBLEMS_LISTED",
    "MAX_VALUE_SHOWN",
    "PROBLEM_TEXTS",
    "REPLY",
    "REPLY_TEXTS",
    "WHOLE",
    "FieldProblem",
    "details_of",
    "field_label",
    "field_problems",
    "lines_of",
    "readable_path",
]

MAX_VALUE_SHOWN = 80  # characters of a received value quoted back (a notice stays one line)
MAX_PROBLEMS_LISTED = 8  # problems a notice lists; the rest are counted ("ほか 3 件")
MAX_PROBLEMS_IN_DETAILS = 50  # problems kept in an error's details (a reply may have hundreds)
WHOLE = "全体"  # the field of a problem with the whole value (an empty location)
GENERIC_PROBLEM = "値が条件に合いません"  # an error type the table does not know
REPLY = "応答"  # a labelled path with no labelled field: the reply itself

# Pydantic error type -> what was wrong, in Japanese; ``{name}`` takes the error's ``ctx`` value
# (``{allowed}`` / ``{allowed_tags}``: the allowed values of literal_error, enum and
# union_tag_invalid, joined with " / "; see _context).
PROBLEM_TEXTS: dict[str, str] = {
    "missing": "必須の項目がありません",
    "extra_forbidden": "定義にない項目です（削除してください）",
    "string_type": "文字列ではありません",
    "string_unicode": "文字列として読めません（UTF-8 ではありません）",
    "string_too_short": "短すぎます（{min_length} 文字以上にしてください）",
    "string_too_long": "長すぎます（{max_length} 文字以内にしてください）",
    "string_pattern_mismatch": "決められた書式に合いません（書式: {pattern}）",
    "string_not_ascii": "半角英数字と記号だけにしてください",
    "int_type": "整数ではありません",
    "int_parsing": "整数として読めません",
    "int_parsing_size": "整数が大きすぎて扱えません",
    "int_from_float": "小数ではなく整数にしてください",
    "float_type": "数値ではありません",
    "float_parsing": "数値として読めません",
    "finite_number": "有限の数値にしてください（無限大・NaN は使えません）",
    "decimal_type": "数値ではありません",
    "decimal_parsing": "数値として読めません",
    "decimal_max_digits": "桁数が多すぎます（{max_digits} 桁以内）",
    "decimal_max_places": "小数点以下の桁数が多すぎます（{decimal_places} 桁以内）",
    "decimal_whole_digits": "整数部の桁数が多すぎます（{whole_digits} 桁以内）",
    "bool_type": "真偽値（true / false）ではありません",
    "bool_parsing": "真偽値（true / false）として読めません",
    "none_required": "null にしてください",
    "list_type": "リスト（配列）ではありません",
    "tuple_type": "リスト（配列）ではありません",
    "set_type": "リスト（配列）ではありません",
    "frozen_set_type": "リスト（配列）ではありません",
    "iterable_type": "リスト（配列）ではありません",
    "dict_type": "オブジェクト（{{...}}）ではありません",
    "mapping_type": "オブジェクト（{{...}}）ではありません",
    "model_type": "オブジェクト（{{...}}）ではありません",
    "model_attributes_type": "オブジェクト（{{...}}）ではありません",
    "dataclass_type": "オブジェクト（{{...}}）ではありません",
    "invalid_key": "項目名は文字列にしてください",
    "too_short": "数が足りません（{min_length} 個以上必要、{actual_length} 個でした）",
    "too_long": "数が多すぎます（{max_length} 個まで、{actual_length} 個でした）",
    "greater_than": "{gt} より大きい値にしてください",
    "greater_than_equal": "{ge} 以上にしてください",
    "less_than": "{lt} より小さい値にしてください",
    "less_than_equal": "{le} 以下にしてください",
    "multiple_of": "{multiple_of} の倍数にしてください",
    "literal_error": "使えない値です。使える値: {allowed}",
    "enum": "使えない値です。使える値: {allowed}",
    "union_tag_invalid": "{discriminator} の値 '{tag}' は使えません。使える値: {allowed_tags}",
    "union_tag_not_found": "種類を決める項目 {discriminator} がありません",
    "json_invalid": "JSON として読めません",
    "json_type": "JSON の文字列ではありません",
    "date_type": "日付ではありません",
    "date_parsing": "日付として読めません（例: 2025-04-01）",
    "date_from_datetime_parsing": "日付として読めません（例: 2025-04-01）",
    "date_from_datetime_inexact": "時刻を含まない日付にしてください",
    "time_type": "時刻ではありません",
    "time_parsing": "時刻として読めません（例: 09:30:00）",
    "datetime_type": "日時ではありません",
    "datetime_parsing": "日時として読めません（例: 2025-04-01T09:30:00）",
    "datetime_from_date_parsing": "日時として読めません（例: 2025-04-01T09:30:00）",
    "time_delta_type": "期間ではありません",
    "time_delta_parsing": "期間として読めません",
    "url_type": "URL ではありません",
    "url_parsing": "URL として読めません",
    "url_scheme": "URL の種類が使えません（使える種類: {expected_schemes}）",
    "uuid_type": "UUID ではありません",
    "uuid_parsing": "UUID として読めません",
    "bytes_type": "バイト列ではありません",
    "is_instance_of": "型が違います",
}

# What differs when the value is a model's reply a person reads about (a field and a value
# the person never typed): no JSON word (true / false, null) to type.
REPLY_TEXTS: dict[str, str] = {
    "bool_type": "はい・いいえの値ではありません",
    "bool_parsing": "はい・いいえの値として読めません",
    "none_required": "空にしてください",
}

# Error types whose context carries our own message (a validator's ValueError or assert).
_OWN_MESSAGE_TYPES = frozenset({"value_error", "assertion_error"})
# Pydantic's own error types; any other type is a PydanticCustomError, whose message is ours.
_PYDANTIC_TYPES = frozenset(get_args(ErrorType))
# A location part Pydantic adds for a union member ('str', 'list[str]', 'function-after[...]'),
# not a field of the data.
_UNION_MEMBER = re.compile(r"^[a-z_-]+\[.*\]$|^(str|int|float|bool|bytes|none|list|dict)$")
_QUOTED = re.compile(r"'([^']*)'")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_VALUE_SHOWN else text[:MAX_VALUE_SHOWN] + "…"


def _allowed(expected: str) -> list[str]:
    """The allowed values Pydantic lists in English ("'a', 'b' or 'c'")."""
    quoted = _QUOTED.findall(expected)
    return quoted or [v for v in re.split(r", | or ", expected) if v]


def readable_path(loc: Sequence[int | str]) -> str:
    """``("sections", 0, "content")`` as 「sections の 1 番目の content」; ``()`` as 「全体」."""
    text = ""
    for part in loc:
        piece = f"{part + 1} 番目" if isinstance(part, int) else str(part)
        if text:
            text += "の " if text.endswith("番目") else " の "
        text += piece
    return text or WHOLE


def _is_union_part(parts: Sequence[int | str], index: int, current: Any) -> bool:
    """Whether ``parts[index]`` (a string) is a part Pydantic inserts for a union, not a key of
    the data at ``current``: a member's type (``str``, ``list[str]``), a tag the data does not
    have (``graph.0.excel.read_data.id`` is ``graph.0.id``), or a tag that is also one of the
    keys with a plain value, which has no keys to go into (``graph.0.block.in`` is
    ``graph.0.in``; a schedule rule's ``day.offset`` is ``offset``: its tag ``day`` is a key
    too)."""
    part = parts[index]
    if isinstance(current, Mapping):
        if part in current and index == len(parts) - 1:
            return False
        if index < len(parts) - 1:
            if part not in current:
                return True
            plain = not isinstance(current[part], (Mapping, list))
            return plain and isinstance(parts[index + 1], str)
    elif current is not None:  # a list or a value has no keys: a union's part
        return True
    return bool(_UNION_MEMBER.match(str(part)))


def _inside(current: Any, part: int | str) -> Any:
    """The value at ``part`` of ``current`` (a key of a mapping, an index of a list), else None."""
    if isinstance(current, Mapping):
        return current.get(part)
    if isinstance(current, list) and isinstance(part, int) and part < len(current):
        return current[part]
    return None


def _field_loc(err: ErrorDetails, data: Any) -> tuple[int | str, ...]:
    """The location of the failing value in ``data`` (the validated value, when known)."""
    parts = list(err["loc"])
    out: list[int | str] = []
    current = data
    for index, part in enumerate(parts):
        if isinstance(part, str) and _is_union_part(parts, index, current):
            continue
        out.append(part)
        current = _inside(current, part)
    return tuple(out)


# The head of a description that names its field: up to a bracket, a full stop, a colon or an
# arrow; a head with a name of the code in it (``kind=block``, ``${vars.名前}``) names nothing.
_LABEL_END = re.compile(r"[（(。：:]|→")
_CODE_IN_LABEL = re.compile(r"(?<![A-Za-z])[a-z]{2,}|[_${}=/\\]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def field_label(info: FieldInfo) -> str | None:
    """What a person calls a field of a schema: its ``title`` (the words whoever set it chose: a
    product schema's Japanese, the name a plan's author gave a property of ``ai.process_llm``'s
    output), else the head of its Japanese ``description`` (``判断理由``; ``ノード ID（英字で
    始まり…）`` → ``ノード ID``); None when it has neither (the field's name is the program's,
    never shown)."""
    if info.title and info.title.strip():
        return info.title.strip()
    head = _LABEL_END.split(info.description or "", maxsplit=1)[0].strip()
    if head and _NON_ASCII.search(head) and not _CODE_IN_LABEL.search(head):
        return head
    return None


def _models_of(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds (a list's items, a union's members, an optional)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) is Annotated:
        return _models_of(get_args(annotation)[0])
    return [m for arg in get_args(annotation) for m in _models_of(arg)]


def _literal_values(annotation: Any) -> set[Any]:
    if get_origin(annotation) is Literal:
        return set(get_args(annotation))
    return {v for arg in get_args(annotation) for v in _literal_values(arg)}


def _member(models: list[type[BaseModel]], data: Any, key: str) -> type[BaseModel] | None:
    """Which of a union's ``models`` ``data`` is: the one whose fixed fields (a ``Literal``,
    such as a node's ``block``) all match, else the first with field ``key``."""
    having = [m for m in models if _field_info(m, key) is not None]
    if isinstance(data, Mapping):
        for model in having:
            fixed = {
                info.alias or name: _literal_values(info.annotation)
                for name, info in model.model_fields.items()
                if _literal_values(info.annotation)
            }
            given = [k for k in fixed if k in data]
            if given and all(any(data[k] == v for v in fixed[k]) for k in given):
                return model
    return having[0] if having else None


def _field_info(model: type[BaseModel], key: str) -> FieldInfo | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _labelled_path(schema: type[BaseModel], loc: Sequence[int | str], data: Any) -> str:
    """``loc`` said by the fields' labels (``ステップの 2 番目の目的``); a field without a label
    is left out, an empty path is the reply (:data:`REPLY`)."""
    parts: list[str] = []
    models: list[type[BaseModel]] = [schema]
    current = data
    for part in loc:
        if isinstance(part, int):
            if parts:
                parts[-1] += f"の {part + 1} 番目"
            else:
                parts.append(f"{part + 1} 番目")
        else:
            model = _member(models, current, part) if models else None
            info = _field_info(model, part) if model is not None else None
            label = field_label(info) if info is not None else None
            if label is not None:
                parts.append(label)
            models = _models_of(info.annotation) if info is not None else []
        current = _inside(current, part)
    return "の".join(parts) if parts else REPLY


def _said(value: Any) -> str:
    """A received value in words: a text quoted, a number as written, はい / いいえ, 空, and a
    list or an object by its size (their keys are the model's names, not the person's)."""
    if value is None:
        return "空"
    if isinstance(value, bool):
        return "はい" if value else "いいえ"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        text = value if len(value) <= MAX_VALUE_SHOWN else value[:MAX_VALUE_SHOWN] + "…"
        return f"「{text}」"
    if isinstance(value, list):
        return f"一覧 {len(value)} 件" if value else "空の一覧"
    if isinstance(value, Mapping):
        return f"まとまり（項目 {len(value)} 個）" if value else "空のまとまり"
    return _short(value)


class _Context(dict[str, Any]):
    """An error's context for a template; a value Pydantic did not give reads as "?"."""

    def __missing__(self, key: str) -> str:
        return "?"


def _context(err: ErrorDetails) -> _Context:
    ctx = _Context(err.get("ctx") or {})
    if str(ctx.get("discriminator", "")).endswith("()"):  # a function reads the tag: its
        ctx["discriminator"] = str(ctx["discriminator"])[:-2].lstrip("_")  # name names the key
    for given, joined in (("expected", "allowed"), ("expected_tags", "allowed_tags")):
        if given in ctx:
            ctx[joined] = " / ".join(f"'{v}'" for v in _allowed(str(ctx[given])))
    return ctx


def _problem_text(err: ErrorDetails, *, reply: bool = False) -> str:
    kind = err["type"]
    template = (REPLY_TEXTS.get(kind) if reply else None) or PROBLEM_TEXTS.get(kind)
    if template is not None:
        text = template.format_map(_context(err))
        if kind in ("literal_error", "enum"):
            allowed = _allowed(str((err.get("ctx") or {}).get("expected", "")))
            close = difflib.get_close_matches(str(err.get("input")), allowed, n=1, cutoff=0.5)
            if close:
                text += f"（'{close[0]}' のことではありませんか）"
        return text
    if kind in _OWN_MESSAGE_TYPES:  # our validator's own words (Japanese by the house rule)
        text = str((err.get("ctx") or {}).get("error") or "")
    elif kind not in _PYDANTIC_TYPES:  # a PydanticCustomError of ours
        text = str(err["msg"])
    else:  # a Pydantic type the table lacks: its English stays in the details
        text = ""
    return text or GENERIC_PROBLEM


@dataclass(frozen=True)
class FieldProblem:
    """One failure of one field: where, what was wrong, what came (Japanese), and Pydantic's
    own location, type and English message."""

    loc: tuple[int | str, ...]
    field: str
    type: str
    problem: str
    received: str | None
    message: str

    @property
    def text(self) -> str:
        """The line a person reads: 「field: problem（受け取った値: …）」."""
        return self.at(self.field)

    def at(self, where: str) -> str:
        """The line with the field named by the caller (e.g. a YAML path of a larger file)."""
        seen = f"（受け取った値: {self.received}）" if self.received is not None else ""
        return f"{where}: {self.problem}{seen}"

    def for_model(self) -> str:
        """The line sent back to a model: the Japanese line plus the exact location and the
        validator's wording, which a model can act on."""
        where = ".".join(str(part) for part in self.loc) or "(root)"
        return f"{self.text} [{where}: {self.type}: {self.message}]"

    def as_detail(self) -> dict[str, Any]:
        """The problem for an error's ``details`` (the English message only here)."""
        return {
            "field": self.field,
            "loc": list(self.loc),
            "type": self.type,
            "problem": self.problem,
            "received": self.received,
            "message": self.message,
        }


def _one(err: ErrorDetails, data: Any, schema: type[BaseModel] | None) -> FieldProblem:
    loc = _field_loc(err, data)
    shows_input = err["type"] not in ("missing", "union_tag_not_found")
    if schema is None:
        field, received = readable_path(loc), _short(err.get("input"))
    else:
        field, received = _labelled_path(schema, loc, data), _said(err.get("input"))
    return FieldProblem(
        loc=loc,
        field=field,
        type=err["type"],
        problem=_problem_text(err, reply=schema is not None),
        received=received if shows_input else None,
        message=str(err["msg"]),
    )


def field_problems(
    exc: ValidationError | Iterable[ErrorDetails],
    *,
    data: Any = None,
    schema: type[BaseModel] | None = None,
) -> list[FieldProblem]:
    """The problems of ``exc`` (or of its ``errors()``); ``data``, the value that was validated,
    tells its keys from the union tags Pydantic puts in a location. With the ``schema`` that was
    validated against (a model's reply), fields are named by their labels and received values
    said in words (see the module docstring)."""
    errors = exc.errors(include_url=False) if isinstance(exc, ValidationError) else list(exc)
    return [_one(err, data, schema) for err in errors]


def details_of(problems: Sequence[FieldProblem]) -> list[Mapping[str, Any]]:
    """The problems for an error's ``details`` (the first :data:`MAX_PROBLEMS_IN_DETAILS`)."""
    return [problem.as_detail() for problem in problems[:MAX_PROBLEMS_IN_DETAILS]]


def lines_of(
    problems: Sequence[FieldProblem], limit: int = MAX_PROBLEMS_LISTED, *, model: bool = False
) -> list[str]:
    """The first ``limit`` problems as lines (:attr:`FieldProblem.text`, or with ``model`` the
    lines for a model), then how many more there are."""
    shown = problems[:limit]
    lines = [p.for_model() if model else p.text for p in shown]
    if len(problems) > len(shown):
        lines.append(f"ほか {len(problems) - len(shown)} 件")
    return lines
