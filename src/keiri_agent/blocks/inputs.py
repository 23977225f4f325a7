"""Input parsing every block shares: choices, positive integers, sheets, file paths, output files.

Each helper raises the same INPUT_VALIDATION_FAILED ``BlockError`` (a Japanese message naming
the input, a hint saying what to write) so every block reports the same mistake the same way.
A file port's "no file given" error is made from its spec (:func:`port_path`): the port's
label and name, and the file types its ``accept`` lists.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext, given
from keiri_agent.blocks.spec import BlockSpec, port_accept
from keiri_agent.errors import BlockError, input_error

__all__ = [
    "choice",
    "count_limit",
    "flag",
    "item_error",
    "output_file",
    "path_text",
    "path_value",
    "port_file",
    "port_path",
    "positive_int",
    "row_number",
    "sheet_ref",
    "string_list",
    "text_value",
    "unique_names",
]


def item_error(field: str, number: int, problem: str, hint: str, **details: Any) -> BlockError:
    """The error for the ``number``-th (1-based) entry of the list input ``field``: the message
    is ``「{field} の {number} 番目」`` followed by ``problem``."""
    return input_error(
        f"{field} の {number} 番目{problem}", hint, field=field, index=number, **details
    )


def unique_names(
    names: Iterable[str], field: str, message: str, hint: str, *, detail: str | None = "columns"
) -> None:
    """Refuse names given twice: ``message`` gets them at ``{names}``; ``detail`` is the key
    that lists them in the error's details (None: not listed)."""
    seen = list(names)
    repeated = sorted({n for n in seen if seen.count(n) > 1})
    if repeated:
        details = {detail: repeated} if detail else {}
        raise input_error(message.format(names=", ".join(repeated)), hint, field=field, **details)


def string_list(value: Any) -> list[str] | None:
    """A string or a list of strings as a list; None when ``value`` is neither."""
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list) and all(isinstance(item, str) for item in items):
        return items
    return None


def flag(inputs: Mapping[str, Any], name: str, default: bool, hint: str = "") -> bool:
    """A true / false input, ``default`` when absent; ``hint`` says what true does."""
    value = inputs.get(name, default)
    if not isinstance(value, bool):
        raise input_error(
            f"{name} は true か false で指定してください（指定: {value!r}）。",
            hint or f"{name} を省略すると {str(default).lower()} になります。",
            field=name,
        )
    return value


def text_value(value: Any, name: str, missing: str, hint: str) -> str:
    """A non-blank text input, stripped; ``missing`` / ``hint`` say what the block wanted."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise input_error(missing, hint, field=name)


def choice(
    inputs: Mapping[str, Any],
    name: str,
    choices: tuple[str, ...],
    note: str = "",
    *,
    default: str | None = None,
) -> str:
    """The input ``name`` as one of ``choices``; absent or null means ``default`` (else the
    first choice)."""
    value = inputs.get(name)
    if value is None:
        return default if default is not None else choices[0]
    if value not in choices:
        raise input_error(
            f"{name} に {value!r} は指定できません。",
            f"{name} には {' / '.join(choices)} のいずれかを指定してください"
            + (f"（{note}）。" if note else "。"),
            field=name,
        )
    return str(value)


def path_text(value: Any, name: str, missing: str, hint: str) -> str:
    """A non-empty path input's text, checked without looking at the file system (for
    ``check_inputs``); ``missing`` / ``hint`` say which file the block wanted.

    An empty string is refused explicitly: it would become ``Path(".")``, the current folder.
    """
    if isinstance(value, str | os.PathLike) and str(value).strip():
        return str(os.fspath(value))
    raise input_error(missing, hint, field=name)


def path_value(value: Any, name: str, missing: str, hint: str, *, ctx: BlockContext) -> Path:
    """A path input the block reads, resolved where the run may read (``ctx.access``):
    PathEscapeError naming ``name`` when it leads elsewhere."""
    return ctx.access.read(path_text(value, name, missing, hint), name)


def port_path(spec: BlockSpec, name: str, value: Any, *, note: str = "") -> str:
    """:func:`path_text` for file port ``name`` of ``spec``, its error said from the spec: the
    port's label and name (「Excel ブック（path）が指定されていません。」) and, in the hint,
    the file types its ``accept`` lists; ``note`` ends the hint (what else the port takes)."""
    types = " / ".join(port_accept(spec.inputs.get(name, {})))
    return path_text(
        value,
        name,
        f"{spec.port_label(name)}（{name}）が指定されていません。",
        f"{name} に{f' {types} の' if types else ''}ファイルのパスを指定してください。{note}",
    )


def port_file(spec: BlockSpec, name: str, value: Any, *, ctx: BlockContext) -> Path:
    """:func:`port_path`, resolved where the run may read (``ctx.access``)."""
    return ctx.access.read(port_path(spec, name, value), name)


def positive_int(value: Any, name: str, what: str) -> int:
    """``value`` as an integer ≥ 1 (booleans are not numbers here)."""
    return _at_least_one(value, name, "整数", f"{what}を整数で指定してください。")


def count_limit(inputs: Mapping[str, Any], name: str, default: int, what: str) -> int:
    """An optional upper bound on a count (files, characters...): ``default`` when absent."""
    return positive_int(given(inputs, name, default), name, f"{what}（既定 {default:,}）")


def row_number(value: Any, name: str, hint: str) -> int:
    """``value`` as a 1-based row number of a sheet or file."""
    return _at_least_one(value, name, "行番号", hint)


def _at_least_one(value: Any, name: str, noun: str, hint: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise input_error(f"{name} '{value}' は 1 以上の{noun}ではありません。", hint, field=name)
    return value


def sheet_ref(value: Any) -> str | int | None:
    """A sheet name, a 0-based sheet index, or None (the first sheet) for a cleared field."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise input_error(
        f"sheet '{value}' はシート名でもシート番号でもありません。",
        "sheet にはシート名か 0 始まりのシート番号を指定してください（省略時は先頭シート）。",
        field="sheet",
    )


def output_file(
    value: Any, ctx: BlockContext, default_name: str, name: str = "output_path"
) -> Path:
    """Where a block writes its file: ``default_name`` in the node's work directory when not
    given, a relative path under it, an absolute path as is (where the run may write:
    ``ctx.access``); never an existing folder."""
    if value is None or not str(value).strip():
        return ctx.work_dir() / default_name
    target = ctx.access.write(str(value), name, base=ctx.work_dir())
    if target.is_dir():
        suffix = Path(default_name).suffix
        raise input_error(
            f"出力先 '{str(value)[:200]}' はフォルダです。",
            f"{name} にはファイル名（{suffix}）まで指定してください。",
            field=name,
        )
    return target
