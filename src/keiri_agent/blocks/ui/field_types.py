"""Field definitions of ``ui.interactive_input`` (seed 002 §3, seed 004 §7).

``FIELD_TYPES`` is the one list of field types (file, files, folder, text, select, boolean,
number, chat, table, enum). ``normalize_requirements`` checks the ``requirements`` a plan
declares and fills their defaults; :mod:`keiri_agent.blocks.ui.answers` checks a person's
answers against them. Problems are ``FieldError``s carrying a Japanese message and a fix,
gathered by the caller into one ``BlockError`` so that a person sees every problem at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from keiri_agent.errors import BlockError, ErrorCode, KeiriError, input_error, reason_of

__all__ = [
    "FIELD_TYPES",
    "PATH_FIELD_TYPES",
    "RESERVED_IDS",
    "FieldError",
    "FieldType",
    "accepted_extensions",
    "is_number",
    "normalize_requirements",
    "problem",
    "problems_error",
]

# The field types of ui.interactive_input: the one list. The plan validator, the Session State
# contract, plan generation (design) and the app all take it from here.
FieldType = Literal[
    "file", "files", "folder", "text", "select", "boolean", "number", "chat", "table", "enum",
]  # fmt: skip
FIELD_TYPES: tuple[str, ...] = get_args(FieldType)
# The field types whose answers are paths (read where the run may read: ``FileAccess``).
PATH_FIELD_TYPES = frozenset({"file", "files", "folder"})
# Answer keys with a meaning of their own; a field with one of these ids would be shadowed.
RESERVED_IDS = frozenset({"approved", "response"})
# Which validation keys make sense for which field types (anything else is a plan mistake).
_VALIDATION_TYPES: dict[str, frozenset[str]] = {
    "regex": frozenset({"text", "chat"}),
    "min": frozenset({"number"}),
    "max": frozenset({"number"}),
    "min_length": frozenset({"text", "chat", "files", "table"}),
    "max_length": frozenset({"text", "chat", "files", "table"}),
}
# Ids become keys in `${node.collected.<id>}`: an identifier (Japanese letters allowed).
_ID_RE = re.compile(r"[^\W\d]\w*")


class FieldError(KeiriError):
    """One answer (or definition) problem: what is wrong and how to fix it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


def problem(req_id: str, label: str, message: str, fix: str) -> dict[str, str]:
    """One entry of ``details["problems"]``: which field, what is wrong, how to fix it."""
    return {"id": req_id, "label": label, "message": message, "hint": fix}


def problems_error(
    headline: str, problems: list[dict[str, str]], *, recoverable: bool, **details: Any
) -> BlockError:
    """One INPUT_VALIDATION_FAILED error listing every problem in its message and hint."""
    listed = "；".join(f"{p['label']}: {p['message']}" for p in problems)
    fixes = " / ".join(f"{p['label']} — {p['hint']}" for p in problems)
    return BlockError(
        f"{headline}（{len(problems)} 件）: {listed}",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint=f"次の点をすべて直してから、もう一度実行してください: {fixes}",
        details={**details, "problems": problems},
        recoverable=recoverable,
    )


# --- requirement definitions ---------------------------------------------------------------


def normalize_requirements(raw: Sequence[Any] | None) -> list[dict[str, Any]]:
    """Check requirement definitions and fill their defaults (for the runner, UI and design).

    Each result has every key: id, type, label (defaults to id), description, required
    (default true), options, accept, validation, default, hint. Raises one BlockError
    (INPUT_VALIDATION_FAILED) listing every problem, each naming its requirement.
    """
    if raw is None:
        return []
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise input_error(
            "requirements はリストで指定してください。",
            "例: requirements: [{id: evidence_zip, type: file, label: 証跡ZIP}]",
            actual_type=type(raw).__name__,
        )
    problems: list[dict[str, str]] = []
    normalized: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        name = f"requirements[{index}]"
        if not isinstance(item, Mapping):
            problems.append(
                problem(
                    name, name, "マッピングではありません", "{id, type, label} の形で書いてください"
                )
            )
            continue
        req_id = item.get("id")
        if not isinstance(req_id, str) or not _ID_RE.fullmatch(req_id):
            problems.append(
                problem(
                    name,
                    name,
                    f"id {req_id!r} が不正です",
                    "id は英字（または日本語）で始まり、英数字・_ だけからなる名前にしてください",
                )
            )
            continue
        label = str(item.get("label") or req_id)
        if req_id in RESERVED_IDS:
            problems.append(
                problem(
                    req_id,
                    label,
                    f"id '{req_id}' は予約語です",
                    "approved / response 以外の id にしてください",
                )
            )
        if req_id in seen:
            problems.append(
                problem(req_id, label, f"id '{req_id}' が重複しています", "id を一意にしてください")
            )
        seen.add(req_id)
        try:
            normalized.append(_normalize_one(req_id, label, item))
        except FieldError as exc:
            problems.append(problem(req_id, label, exc.message, exc.fix))
    if problems:
        raise problems_error("requirements の定義に問題があります", problems, recoverable=False)
    return normalized


def _normalize_one(req_id: str, label: str, item: Mapping[str, Any]) -> dict[str, Any]:
    field_type = item.get("type")
    if field_type not in FIELD_TYPES:
        raise FieldError(
            f"type {field_type!r} は使えません",
            f"type は {', '.join(FIELD_TYPES)} のいずれかにしてください",
        )
    required = item.get("required", True)
    if not isinstance(required, bool):
        raise FieldError(
            "required が true / false ではありません",
            "required には true か false を指定してください",
        )
    raw_options, raw_validation = item.get("options") or [], item.get("validation") or {}
    if not isinstance(raw_options, list) or not isinstance(raw_validation, Mapping):
        raise FieldError(
            "options はリスト、validation はマッピングで書いてください",
            "例: options: [A社, B社] / validation: {min: 0}",
        )
    options = list(raw_options)
    if field_type in ("select", "enum") and not options:
        raise FieldError(
            f"{field_type} に選択肢（options）がありません",
            "options に 1 つ以上の選択肢を書いてください",
        )
    accept = item.get("accept")
    if accept is not None and (not isinstance(accept, str) or not accepted_extensions(accept)):
        raise FieldError(
            f"accept {accept!r} を解釈できません",
            'accept は ".zip,.xlsx" のように拡張子をカンマ区切りで書いてください',
        )
    validation = dict(raw_validation)
    _check_validation(str(field_type), validation)
    for key in ("description", "hint"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise FieldError(f"{key} が文字列ではありません", f"{key} は文字列で書いてください")
    return {
        "id": req_id,
        "type": field_type,
        "label": label,
        "description": item.get("description"),
        "required": required,
        "options": options,
        "accept": accept,
        "validation": validation,
        "default": item.get("default"),
        "hint": item.get("hint"),
    }


def _check_validation(field_type: str, validation: dict[str, Any]) -> None:
    for key, value in validation.items():
        types = _VALIDATION_TYPES.get(key)
        if types is None:
            raise FieldError(
                f"validation.{key} は使えません",
                f"validation に使えるのは {', '.join(_VALIDATION_TYPES)} です",
            )
        if field_type not in types:
            raise FieldError(
                f"validation.{key} は type {field_type} には使えません",
                f"validation.{key} は {', '.join(sorted(types))} の項目にだけ指定してください",
            )
        if key == "regex":
            try:
                re.compile(str(value))
            except re.error as exc:
                raise FieldError(
                    f"validation.regex {value!r} は正規表現として不正です（{reason_of(exc)}）",
                    "正しい正規表現を書いてください（例: '^[0-9]{4}$'）",
                ) from exc
        elif key in ("min", "max") and not is_number(value):
            raise FieldError(
                f"validation.{key} が数値ではありません",
                f"validation.{key} には数値を指定してください",
            )
        elif key in ("min_length", "max_length") and not (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            raise FieldError(
                f"validation.{key} が 0 以上の整数ではありません",
                f"validation.{key} には 0 以上の整数を指定してください",
            )
    for low, high in (("min", "max"), ("min_length", "max_length")):
        if low in validation and high in validation and validation[low] > validation[high]:
            raise FieldError(
                f"validation.{low} が {high} より大きくなっています",
                f"{low} ≤ {high} にしてください",
            )


def accepted_extensions(accept: str) -> list[str]:
    """ ".zip, XLSX" → [".zip", ".xlsx"]; empty when any entry is not an extension."""
    exts = []
    for part in accept.split(","):
        ext = part.strip().lower()
        if not ext:
            continue
        if "/" in ext or "*" in ext:  # MIME types and wildcards cannot be checked on a path
            return []
        exts.append(ext if ext.startswith(".") else "." + ext)
    return exts


def is_number(value: Any) -> bool:
    """An int or float, not a bool (YAML's true is no number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)
