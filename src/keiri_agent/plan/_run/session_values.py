"""What a ``ui.interactive_input`` field's value may be: empty values, type names, fitting.

The Session State store (``session_state``) keeps values by these rules when requirements change.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["EMPTY_VALUES"]

# The value a field starts from when the plan gives no default. Lists are copied per use.
EMPTY_VALUES: Final[Mapping[str, Any]] = {
    "file": None,
    "files": [],
    "folder": None,
    "text": None,
    "select": None,
    "boolean": False,
    "number": None,
    "chat": None,
    "table": [],
    "enum": None,
}
_TYPE_NAMES: Final[Mapping[str, str]] = {
    "file": "ファイル",
    "files": "複数ファイル",
    "folder": "フォルダ",
    "text": "テキスト",
    "select": "選択",
    "boolean": "はい/いいえ",
    "number": "数値",
    "chat": "チャット",
    "table": "表",
    "enum": "列挙",
}
# Type changes inside one family keep a value that still fits (a text answer is a valid chat
# answer); any other change resets it, since e.g. a path is no number.
_FAMILIES: Final = (frozenset({"text", "chat"}), frozenset({"select", "enum"}))
_SHORT: Final = 40


def _initial(req: Mapping[str, Any]) -> Any:
    default = req.get("default")
    # Copied so that editing a stored list never edits the plan's requirements.
    return copy.deepcopy(default if default is not None else EMPTY_VALUES[req["type"]])


def _signature(reqs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What the merge compares, as plain data (Session State may be serialized)."""
    return [
        {
            "id": r["id"],
            "type": r["type"],
            "label": r["label"],
            "options": _option_values(r["options"]),
        }
        for r in reqs
    ]


def _option_values(options: Any) -> list[Any]:
    if not isinstance(options, list | tuple):
        return []
    return [o["value"] if isinstance(o, Mapping) and "value" in o else o for o in options]


def _is_path(value: Any) -> bool:
    return isinstance(value, str | os.PathLike)


def _fits(req: Mapping[str, Any], value: Any, *, check_options: bool = True) -> bool:
    """Whether ``value`` can stand as an answer of ``req`` (by Python type; files are not
    opened here: existence is checked when the block runs). None is an empty answer."""
    if value is None:
        return True
    kind = req.get("type")
    if kind in ("file", "folder"):
        return _is_path(value)
    if kind == "files":
        return isinstance(value, list | tuple) and all(_is_path(v) for v in value)
    if kind in ("text", "chat"):
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "table":
        return isinstance(value, list | tuple) and all(isinstance(r, Mapping) for r in value)
    if kind in ("select", "enum"):
        return not check_options or value in _option_values(req.get("options"))
    return False


def _fit_hint(req: Mapping[str, Any]) -> str:
    kind = req.get("type")
    hints = {
        "file": "ファイルのパスを文字列で保存してください。",
        "folder": "フォルダのパスを文字列で保存してください。",
        "files": "ファイルのパスのリストを保存してください。",
        "text": "文字列を保存してください。",
        "chat": "文字列を保存してください。",
        "boolean": "true / false を保存してください。",
        "number": "数値（int / float）に変換してから保存してください。",
        "table": "1 行を {列名: 値} とするリストを保存してください。",
    }
    if kind in ("select", "enum"):
        shown = ", ".join(str(v) for v in _option_values(req.get("options")))
        return f"次の選択肢から選んでください: {shown}"
    return hints.get(str(kind), "項目の種類に合う値を保存してください。")


def _same_family(old: str, new: str) -> bool:
    return any(old in family and new in family for family in _FAMILIES)


def _type_name(kind: Any) -> str:
    return f"{_TYPE_NAMES.get(str(kind), str(kind))}（{kind}）"


def _equal(a: Any, b: Any) -> bool:
    """Equality that never asks an array-like for its truth (a DataFrame would raise)."""
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def _is_empty(value: Any) -> bool:
    if isinstance(value, str | list | tuple | dict):
        return not value
    return value is None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"
