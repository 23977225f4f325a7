"""Values of ``${...}`` references (seed 002 §5): walking a path in the data, and rendering
references into inputs and text.

Walking a path only looks keys up in mappings and indices up in lists: user data is never
reached through ``getattr`` or any other call, so a plan cannot read attributes of the Python
objects that blocks return. The only call made on user data is ``len()`` for ``.length``.
Parsing the references themselves is :mod:`.refs`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sized
from decimal import Decimal
from itertools import islice
from typing import Any, Final, NoReturn

from keiri_agent.blocks.schema_words import type_label
from keiri_agent.events.models import is_table
from keiri_agent.plan._dsl.refs import (
    Reference,
    ReferencePathError,
    ReferenceValueError,
    single_reference,
    split_template,
)

_MAX_KEYS_IN_HINT: Final = 20

__all__ = [
    "format_interpolated",
    "render",
    "resolve_env_config",
    "resolve_path",
]


def _path_error(ref: Reference, at: str, message: str, hint: str, **extra: Any) -> NoReturn:
    raise ReferencePathError(
        f"参照 {ref.text} を解決できません: {message}",
        hint=hint,
        details={"reference": ref.text, "at": at, **extra},
    )


def resolve_path(value: Any, ref: Reference) -> Any:
    """Walk ``ref.path`` (and ``.length``) starting from ``value``, the root's value."""
    current = value
    for depth, segment in enumerate(ref.path):
        # The common case first: a key of a mapping (``at``, for messages, only on the way out).
        if type(current) is dict and type(segment) is str and segment in current:
            current = current[segment]
            continue
        at = ".".join([ref.root, *(str(s) for s in ref.path[:depth])])
        if current is None:
            _path_error(
                ref,
                at,
                f"{at} が null のため「{segment}」をたどれません",
                "前のノードがスキップされたか、値が空の可能性があります。"
                " when に exists(...) を使って先に確かめてください。",
                segment=segment,
            )
        if isinstance(current, Mapping):
            # YAML turns `1: x` into an int key, so an index-like segment may name either.
            key: Any = str(segment)
            if key not in current and isinstance(segment, int) and segment in current:
                key = segment
            if key not in current:
                keys = [str(k) for k in islice(current.keys(), _MAX_KEYS_IN_HINT)]
                more = len(current) - len(keys)
                hint = f"{at} にあるキー: {', '.join(keys)}" if keys else f"{at} は空の辞書です。"
                if more > 0:
                    hint += f" ほか {more} 件"
                _path_error(
                    ref,
                    at,
                    f"{at} にキー「{segment}」がありません",
                    hint,
                    segment=segment,
                    available_keys=keys,
                )
            current = current[key]
        elif isinstance(current, list | tuple) or is_table(current):
            size = len(current)
            if not isinstance(segment, int):
                _path_error(
                    ref,
                    at,
                    f"{at} はリストなので「{segment}」では参照できません",
                    f"リストの要素は番号（例: {at}.0）で、件数は {at}.length で参照します。",
                    segment=segment,
                )
            elif segment >= size:
                _path_error(
                    ref,
                    at,
                    f"{at} は {size} 件のリストで、{segment} 番目の要素はありません",
                    f"番号は 0 から {size - 1} までです。" if size else f"{at} は空のリストです。",
                    segment=segment,
                    size=size,
                )
            current = current[segment]
        else:
            _path_error(
                ref,
                at,
                f"{at} は{type_label(current)}なので「{segment}」をたどれません",
                "たどれるのは辞書のキーとリストの番号だけです。",
                segment=segment,
            )
    if ref.length:
        # Sized is checked on the type (__len__ in the MRO), so no user code runs before len().
        if current is None or not isinstance(current, Sized):
            _path_error(
                ref,
                ref.dotted,
                f"{ref.dotted} は{type_label(current)}なので length を求められません",
                "length が使えるのは文字列・リスト・辞書・表です。",
                segment="length",
            )
        return len(current)
    return current


def format_interpolated(value: Any, ref: Reference) -> str:
    """How a resolved value reads inside a longer string (JSON for null/bools/containers)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | dict | list | tuple):
        # default=str keeps dates and Decimals found in extracted data readable.
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, int | float | Decimal | dt.date | dt.time):
        return str(value)
    raise ReferenceValueError(
        f"参照 {ref.text} の値（{type_label(value)}）は文字列の中に埋め込めません",
        hint=f"{ref.text} を前後に文字を付けずに単独で指定すると、値をそのまま渡せます。",
        details={"reference": ref.text, "type": type(value).__name__},
    )


def render(value: Any, resolve: Callable[[Reference], Any]) -> Any:
    """Replace the references in ``value`` (recursively through dicts and lists).

    A string that is exactly one reference becomes the referenced value itself, keeping its
    type; references inside longer strings are interpolated as text.
    """
    if isinstance(value, str):
        if "$" not in value:
            return value
        single = single_reference(value)
        if single is not None:
            return resolve(single)
        return "".join(
            p if isinstance(p, str) else format_interpolated(resolve(p), p)
            for p in split_template(value)
        )
    if isinstance(value, dict):
        return {key: render(item, resolve) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, resolve) for item in value]
    return value


def resolve_env_config(ref: Reference, env: Mapping[str, str], config: Mapping[str, Any]) -> Any:
    """``${env.X}`` or ``${config.a.b}`` (ReferencePathError when it is not there).

    A missing environment variable is named on its own: the generic path error would list the
    other variables as "available keys", putting the environment's names into logs and the UI.
    """
    if ref.root == "config":
        return resolve_path(config, ref)
    name = str(ref.path[0]) if ref.path else ""
    if name not in env:
        raise ReferencePathError(
            f"参照 {ref.text} を解決できません: 環境変数 {name} が設定されていません。",
            hint=f"ドライラン・実行の前に環境変数 {name} を設定してください。",
            details={"reference": ref.text},
        )
    return resolve_path({name: env[name]}, ref)
