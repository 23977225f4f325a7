r"""Answer checks of ``ui.interactive_input``: one person's answer against its field.

``check_answer`` checks a non-empty answer against its (normalized) requirement and returns the
converted value (a path, a number, a bool, rows...); ``missing_fix`` says how to fill in a
required field left empty. Problems are :class:`~keiri_agent.blocks.ui.field_types.FieldError`\ s.

Paths (``file``, ``files``, ``folder``) are looked up through the run's ``FileAccess``: a path
that does not exist is a problem to fix, one leading where the run may not read is a
``PathEscapeError`` (PERMISSION_DENIED) that stops the node.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from keiri_agent.blocks.ui.field_types import FieldError, accepted_extensions, is_number
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.file_access import FileAccess

__all__ = ["check_answer", "is_empty", "missing_fix", "to_bool"]

_TRUE_WORDS = frozenset({"true", "はい"})
_FALSE_WORDS = frozenset({"false", "いいえ"})


def is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, list | tuple | dict) and not value


def _to_path(value: Any, what: str, access: FileAccess, field: str) -> Path:
    if not isinstance(value, str | os.PathLike):
        raise FieldError(
            f"{what}のパスが文字列ではありません（{type(value).__name__}）",
            f"{what}のパスを文字列で指定してください",
        )
    try:
        return access.read(value, field)
    except BlockError as exc:
        if exc.code != ErrorCode.INPUT_VALIDATION_FAILED:  # PERMISSION_DENIED: not a typo
            raise
        raise FieldError(exc.message, exc.hint) from None


def _check_file(req: Mapping[str, Any], value: Any, access: FileAccess, field: str) -> str:
    path = _to_path(value, "ファイル", access, field)
    if not path.is_file():
        raise FieldError(
            f"ファイル {path} が見つかりません",
            "存在するファイルを指定（アップロード）し直してください",
        )
    exts = accepted_extensions(req["accept"] or "")
    if exts and not path.name.lower().endswith(tuple(exts)):
        allowed = ", ".join(exts)
        raise FieldError(
            f"{path.name} は受け付けない形式です（受け付ける拡張子: {allowed}）",
            f"{allowed} のファイルを指定してください",
        )
    return str(path)


def _check_folder(value: Any, access: FileAccess, field: str) -> str:
    path = _to_path(value, "フォルダ", access, field)
    if not path.is_dir():
        raise FieldError(
            f"フォルダ {path} が見つかりません", "存在するフォルダのパスを指定してください"
        )
    return str(path)


def _check_files(req: Mapping[str, Any], value: Any, access: FileAccess, field: str) -> list[str]:
    if not isinstance(value, list | tuple):
        raise FieldError(
            "ファイルの一覧（リスト）ではありません", "ファイルのパスをリストで指定してください"
        )
    paths: list[str] = []
    messages: list[str] = []
    for index, item in enumerate(value):
        try:
            paths.append(_check_file(req, item, access, f"{field}[{index}]"))
        except FieldError as exc:
            messages.append(exc.message)
    if messages:
        raise FieldError(
            "、".join(messages), "すべてのファイルを存在する、受け付ける形式のものにしてください"
        )
    return paths


def to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise FieldError(
        f"{value!r} は はい/いいえ として解釈できません",
        "true / false（または はい / いいえ）で答えてください",
    )


def _to_number(req: Mapping[str, Any], value: Any) -> int | float:
    number: int | float
    if is_number(value):
        number = value
    elif isinstance(value, str):
        text = value.strip().replace(",", "")
        try:
            number = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise FieldError(
                    f"{value!r} は数値ではありません", "半角の数字で入力してください（例: 1200）"
                ) from None
    else:
        raise FieldError(f"{value!r} は数値ではありません", "数値で入力してください")
    if not math.isfinite(number):
        raise FieldError(f"{value!r} は有限の数値ではありません", "通常の数値で入力してください")
    rules = req["validation"]
    low, high = rules.get("min"), rules.get("max")
    if (low is not None and number < low) or (high is not None and number > high):
        span = f"{'' if low is None else low} 〜 {'' if high is None else high}"
        raise FieldError(
            f"{number} は範囲外です（{span}）", f"{span} の範囲の数値を入力してください"
        )
    return number


def _option_values(options: Sequence[Any]) -> list[Any]:
    return [o["value"] if isinstance(o, Mapping) and "value" in o else o for o in options]


def _check_choice(req: Mapping[str, Any], value: Any) -> Any:
    values = _option_values(req["options"])
    if value not in values:
        shown = ", ".join(str(v) for v in values)
        raise FieldError(f"{value!r} は選択肢にありません", f"次の中から選んでください: {shown}")
    return value


def _check_length(req: Mapping[str, Any], size: int, unit: str) -> None:
    rules = req["validation"]
    low, high = rules.get("min_length"), rules.get("max_length")
    if low is not None and size < low:
        raise FieldError(
            f"{size} {unit}で、{low} {unit}以上が必要です", f"{low} {unit}以上にしてください"
        )
    if high is not None and size > high:
        raise FieldError(
            f"{size} {unit}で、上限 {high} {unit}を超えています", f"{high} {unit}以下にしてください"
        )


def _check_text(req: Mapping[str, Any], value: Any) -> str:
    if not isinstance(value, str):
        raise FieldError(
            f"文字列ではありません（{type(value).__name__}）", "文字で入力してください"
        )
    _check_length(req, len(value), "文字")
    pattern = req["validation"].get("regex")
    if pattern is not None and not re.fullmatch(str(pattern), value):
        example = f"（例: {req['hint']}）" if req.get("hint") else ""
        raise FieldError(
            f"'{_shorten(value)}' は求められた形式（{pattern}）に合いません",
            f"形式 {pattern} に合わせて入力してください{example}",
        )
    return value


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_table(req: Mapping[str, Any], value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list | tuple) or not all(isinstance(row, Mapping) for row in value):
        raise FieldError(
            "表（行のリスト）ではありません", "1 行を {列名: 値} とするリストで入力してください"
        )
    _check_length(req, len(value), "行")
    return [dict(row) for row in value]


def check_answer(
    req: Mapping[str, Any], value: Any, access: FileAccess | None = None, field: str = ""
) -> Any:
    """The checked (and converted) value of one non-empty answer; raises ``FieldError``.

    Paths are looked up through ``access`` (default: unrestricted); ``field`` names the answer
    in a refusal (default: the requirement's id).
    """
    field_type = req["type"]
    where, name = access or FileAccess(), field or str(req["id"])
    if field_type == "file":
        return _check_file(req, value, where, name)
    if field_type == "files":
        paths = _check_files(req, value, where, name)
        _check_length(req, len(paths), "件")
        return paths
    if field_type == "folder":
        return _check_folder(value, where, name)
    if field_type == "boolean":
        return to_bool(value)
    if field_type == "number":
        return _to_number(req, value)
    if field_type in ("select", "enum"):
        return _check_choice(req, value)
    if field_type == "table":
        return _check_table(req, value)
    return _check_text(req, value)  # text, chat


def missing_fix(req: Mapping[str, Any]) -> str:
    """How to fill in a required field that was left empty."""
    field_type = req["type"]
    if field_type in ("file", "files"):
        accept = f"（{req['accept']}）" if req["accept"] else ""
        return f"ファイル{accept}を指定してください"
    if field_type in ("select", "enum"):
        return "選択肢から 1 つ選んでください: " + ", ".join(
            str(v) for v in _option_values(req["options"])
        )
    if field_type == "boolean":
        return "はい / いいえ を選んでください"
    if field_type == "folder":
        return "フォルダのパスを指定してください"
    example = f"（例: {req['hint']}）" if req.get("hint") else ""
    return f"値を入力してください{example}"
