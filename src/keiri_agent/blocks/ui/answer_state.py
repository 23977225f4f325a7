"""The Session State contract of ``ui.interactive_input`` (seed 002 §3, §8.2).

One node's answers live under ``plan:{plan_id}::node:{node_id}::v{block_version}`` as a dict
requirement id → value:

1. on first use the dict is built from ``requirements`` (each field's ``default`` or its type's
   empty value) and written to the state;
2. a person's input is written back at once (:meth:`SessionStateStore.update`);
3. the node's ``out.collected_data`` is built from the current values;
4. values survive reruns; only :meth:`SessionStateStore.reset` (or ``reset_at``) clears them.

When a plan's ``requirements`` change between reruns, stored values are merged, never silently
dropped (「マージ+差分警告」): values of fields that still exist and still fit are kept, and every
field that was removed, added, retyped or whose value no longer fits (type or options) yields a
Japanese warning. Values that are no longer used are kept aside under ``{key}::dropped`` so that
a field removed by mistake gets its value back when it returns.

Two companion keys sit next to each node's key: ``{key}::requirements`` (the id/type/label/
options of the requirements the values were built for, to detect changes across reruns) and
``{key}::dropped``. The store works on any ``MutableMapping``: Streamlit's ``st.session_state``
in the app, a plain dict in tests; this module does not import Streamlit.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from keiri_agent.blocks.ui.field_types import normalize_requirements
from keiri_agent.errors import input_error
from keiri_agent.events.models import type_label

__all__ = [
    "EMPTY_VALUES",
    "MergeResult",
    "SessionStateStore",
    "initial_values",
    "merge_values",
    "session_key",
]

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


REQUIREMENTS_SUFFIX: Final = "::requirements"
DROPPED_SUFFIX: Final = "::dropped"
_COMPANIONS: Final = (REQUIREMENTS_SUFFIX, DROPPED_SUFFIX)


def session_key(plan_id: str, node_id: str, block_version: str) -> str:
    """The Session State key of one node's values (seed 002 §8.2, exactly)."""
    return f"plan:{plan_id}::node:{node_id}::v{block_version}"


def initial_values(requirements: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """Each requirement's ``default`` when given, else its type's empty value."""
    values: dict[str, Any] = {}
    for req in normalize_requirements(requirements):
        values[req["id"]] = _initial(req)
    return values


@dataclass
class MergeResult:
    """Values to use now and what the merge did to the stored ones.

    ``dropped`` holds every stored value that is no longer used (its field was removed, or the
    value was reset); ``added``, ``retyped`` and ``reset`` list field ids; ``warnings`` says all
    of it in Japanese, one line per field, for the UI to show.
    """

    values: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    dropped: dict[str, Any] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    retyped: list[str] = field(default_factory=list)
    reset: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)


def merge_values(
    stored: Mapping[str, Any] | None,
    requirements: Sequence[Mapping[str, Any]] | None,
    previous_requirements: Sequence[Mapping[str, Any]] | None = None,
    *,
    archived: Mapping[str, Any] | None = None,
) -> MergeResult:
    """Merge ``stored`` values into the fields of ``requirements`` with a warning per change.

    ``stored`` None is the first use: initial values, no warnings. ``previous_requirements``
    (the requirements ``stored`` was built for) lets type changes be named; without it only the
    stored values themselves are checked. ``archived`` holds values dropped earlier: a field
    that comes back gets its old value again if it still fits.
    """
    reqs = normalize_requirements(requirements)
    if stored is None:
        return MergeResult(values={r["id"]: _initial(r) for r in reqs})
    previous = {str(r.get("id")): r for r in previous_requirements or () if isinstance(r, Mapping)}
    archived = archived or {}
    result = MergeResult(values={})
    for req in reqs:
        rid, new_type = req["id"], req["type"]
        name = f"項目「{req['label']}」（{rid}）"
        initial = _initial(req)
        if rid not in stored:
            if rid in archived and _fits(req, archived[rid]):
                result.values[rid] = copy.deepcopy(archived[rid])
                result.restored.append(rid)
                result.warnings.append(
                    f"{name}が再び追加されたため、以前の入力値 {_short(archived[rid])} を復元しました。"
                )
            else:
                result.values[rid] = initial
                result.added.append(rid)
                result.warnings.append(f"{name}が追加されました。新しく入力してください。")
            continue
        value = stored[rid]
        old_type = previous[rid].get("type") if rid in previous else None
        reason: str | None = None
        if old_type is not None and old_type != new_type:
            result.retyped.append(rid)
            change = f"種類が {_type_name(old_type)} から {_type_name(new_type)} に変わり"
            if _is_empty(value):
                value = initial
                result.warnings.append(f"{name}の{change}ました（未入力でした）。")
            elif _same_family(str(old_type), new_type) and _fits(req, value):
                result.warnings.append(f"{name}の{change}ましたが、入力済みの値は引き継ぎました。")
            else:
                reason = f"{change}、入力済みの値 {_short(value)} は使えなくなった"
        elif not _equal(value, initial) and not _fits(req, value, check_options=False):
            reason = (
                f"入力済みの値 {_short(value)}（{type_label(value)}）が種類 "
                f"{_type_name(new_type)} に合わない"
            )
        elif not _equal(value, initial) and not _fits(req, value):
            old_options = previous[rid].get("options") if rid in previous else None
            changed = old_options is not None and _option_values(old_options) != _option_values(
                req["options"]
            )
            reason = ("選択肢が変わり、" if changed else "") + (
                f"入力済みの値 {_short(value)} が選択肢にない"
            )
        if reason is None:
            result.values[rid] = value
        else:
            result.values[rid] = initial
            result.dropped[rid] = value
            result.reset.append(rid)
            result.warnings.append(f"{name}の{reason}ため、初期値に戻しました。")
    for rid, value in stored.items():
        if rid in result.values:
            continue
        result.dropped[rid] = value
        label = previous[rid].get("label") if rid in previous else None
        name = f"項目「{label or rid}」（{rid}）"
        what = (
            "未入力でした" if _is_empty(value) else f"入力済みの値 {_short(value)} は使われません"
        )
        result.warnings.append(f"{name}は入力項目から削除されました（{what}）。")
    return result


class SessionStateStore:
    """Node values in a Session State–like mapping, following seed 002 §8.2.

    ``state`` is ``st.session_state`` in the app (or any ``MutableMapping``). Keys are only ever
    deleted by :meth:`reset`.
    """

    def __init__(self, state: MutableMapping[str, Any]) -> None:
        self._state = state

    def get(
        self,
        plan_id: str,
        node_id: str,
        block_version: str,
        requirements: Sequence[Mapping[str, Any]] | None,
        previous_requirements: Sequence[Mapping[str, Any]] | None = None,
    ) -> MergeResult:
        """The node's values: initialized on first use, merged when requirements changed.

        Call it on every rerun; warnings appear once, on the rerun that saw the change.
        """
        key = session_key(plan_id, node_id, block_version)
        return self.get_at(key, requirements, previous_requirements)

    def update(
        self, plan_id: str, node_id: str, block_version: str, field_id: str, value: Any
    ) -> None:
        """Store one field's value now; the value must fit the field's type."""
        self.update_at(session_key(plan_id, node_id, block_version), field_id, value)

    def values(self, plan_id: str, node_id: str, block_version: str) -> dict[str, Any]:
        """A copy of the node's current values (the node must have been shown with get())."""
        return dict(self._initialized(session_key(plan_id, node_id, block_version)))

    def collected_data(self, plan_id: str, node_id: str, block_version: str) -> dict[str, Any]:
        """The node's ``out.collected_data``: requirement id → current value, in field order."""
        return self.collected_at(session_key(plan_id, node_id, block_version))

    # The same contract under any key: pages that ask for fields outside a plan node (the design
    # chat) keep their values under a key of their own with the same merge/reset rules.

    def get_at(
        self,
        key: str,
        requirements: Sequence[Mapping[str, Any]] | None,
        previous_requirements: Sequence[Mapping[str, Any]] | None = None,
    ) -> MergeResult:
        """:meth:`get` for the values under ``key``."""
        reqs = normalize_requirements(requirements)
        signature = _signature(reqs)
        if key not in self._state:
            result = merge_values(None, reqs)
        else:
            stored = self._stored(key)
            built_for = self._state.get(key + REQUIREMENTS_SUFFIX)
            # Already built for these requirements (the common rerun): nothing to merge, even
            # when the caller still passes the old requirements; merging again would reset
            # values entered since the change.
            if built_for == signature and list(stored) == [r["id"] for r in reqs]:
                return MergeResult(values=dict(stored))
            if previous_requirements is None:
                previous_requirements = built_for
            archived = self._archived(key)
            result = merge_values(stored, reqs, previous_requirements, archived=archived)
            kept = {k: v for k, v in archived.items() if k not in result.restored}
            self._state[key + DROPPED_SUFFIX] = {**kept, **result.dropped}
        self._state[key] = dict(result.values)
        self._state[key + REQUIREMENTS_SUFFIX] = signature
        return result

    def update_at(self, key: str, field_id: str, value: Any) -> None:
        """:meth:`update` for the values under ``key``."""
        stored = self._initialized(key)
        reqs = {str(r["id"]): r for r in self._state.get(key + REQUIREMENTS_SUFFIX) or ()}
        req = reqs.get(field_id)
        if req is None or field_id not in stored:
            raise input_error(
                f"入力 {key} に入力項目 '{field_id}' はありません。",
                f"この入力の項目 ID: {', '.join(stored) or 'なし'}",
                key=key,
                field=field_id,
            )
        if not _fits(req, value):
            expected = _type_name(str(req.get("type")))
            raise input_error(
                f"入力項目 '{field_id}' に {type_label(value)} の値 {_short(value)} は保存できません"
                f"（種類: {expected}）。",
                _fit_hint(req),
                key=key,
                field=field_id,
                expected_type=req.get("type"),
            )
        # A new dict rather than an in-place edit: Streamlit notices assignments to its state.
        self._state[key] = {**stored, field_id: value}

    def collected_at(self, key: str) -> dict[str, Any]:
        """:meth:`collected_data` for the values under ``key``."""
        stored = self._initialized(key)
        order = [str(r["id"]) for r in self._state.get(key + REQUIREMENTS_SUFFIX) or ()]
        return {rid: copy.deepcopy(stored[rid]) for rid in order if rid in stored}

    def reset_at(self, key: str) -> list[str]:
        """Clear the values under ``key`` and their companions; the deleted keys are returned."""
        doomed = [k for k in (key, *(key + s for s in _COMPANIONS)) if k in self._state]
        for name in doomed:
            del self._state[name]
        return doomed

    def reset(
        self, plan_id: str, node_id: str | None = None, block_version: str | None = None
    ) -> list[str]:
        """Clear one node (every version unless given), or every node of a plan; the deleted
        keys (companions included) are returned. The only place values are cleared."""
        doomed = []
        for key in self.keys_for_plan(plan_id):
            rest = key.removeprefix(f"plan:{plan_id}::node:")
            this_node, _, version = rest.rpartition("::v")
            if node_id is not None and this_node != node_id:
                continue
            if block_version is not None and version != block_version:
                continue
            doomed += self.reset_at(key)
        return doomed

    def keys_for_plan(self, plan_id: str) -> list[str]:
        """The node value keys of ``plan_id`` (companion keys not included), sorted."""
        prefix = f"plan:{plan_id}::node:"
        return sorted(
            k
            for k in map(str, self._state.keys())
            if k.startswith(prefix) and not k.endswith(_COMPANIONS)
        )

    def _stored(self, key: str) -> Mapping[str, Any]:
        stored = self._state[key]
        if not isinstance(stored, Mapping):
            # Something else wrote this key; overwriting it would lose whatever it holds.
            raise input_error(
                f"Session State のキー {key} に入力値ではない値（{type_label(stored)}）があります。",
                "この入力をリセットしてから、もう一度表示してください。",
                key=key,
                actual_type=type(stored).__name__,
            )
        return stored

    def _initialized(self, key: str) -> Mapping[str, Any]:
        if key not in self._state:
            raise input_error(
                f"入力 {key} はまだ初期化されていません。",
                "先に get() で requirements から初期化してください（画面の初回表示）。",
                key=key,
            )
        return self._stored(key)

    def _archived(self, key: str) -> dict[str, Any]:
        archived = self._state.get(key + DROPPED_SUFFIX)
        return dict(archived) if isinstance(archived, Mapping) else {}
