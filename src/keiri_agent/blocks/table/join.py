"""``table.join``: combine two tables on key columns (結合, like VLOOKUP or SQL JOIN).

Keys are compared after NFKC, trimming and casefold by default (``normalize_keys``), so
``Ａ００１`` meets ``a001`` and ``1001`` meets ``"1001"``; the output keeps the original values.
A blank key (null or "") never matches, as in SQL. Columns present on both sides (other than
shared ``on`` keys) get ``suffixes`` (default ``_左`` / ``_右``).

Row order: for inner / left / outer, left rows in order, each followed by its matches in right
order, then (outer) the unmatched right rows in order; for right, the same with the sides
swapped. A key with several rows on both sides multiplies rows (2 × 3 = 6): that is reported in
``summary.warnings``, or refused with ``on_many_to_many: error``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import choice, flag, unique_names
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import (
    column_list,
    columns_of,
    input_error,
    require_columns,
)

__all__ = ["DEFAULT_SUFFIXES", "HOWS", "INDICATOR_COLUMN", "TableJoinBlock"]

HOWS = ("inner", "left", "right", "outer")
DEFAULT_SUFFIXES = ("_左", "_右")
INDICATOR_COLUMN = "_結合"
INDICATOR_VALUES = ("両方", "左のみ", "右のみ")
ON_MANY_TO_MANY = ("warn", "error")
MAX_LISTED = 10  # keys spelled out in one warning or error; the rest are counted

Key = tuple[Any, ...]


@dataclass(frozen=True)
class Config:
    left_on: list[str]
    right_on: list[str]
    shared: bool  # ``on``: one key column in the output
    how: str
    suffixes: tuple[str, str]
    normalize: bool
    indicator: bool
    on_many_to_many: str


class TableJoinBlock(TableBlock[Config]):
    """Returns the rows of ``left`` and ``right`` combined on their keys."""

    tables = ("left", "right")

    def configure(self, inputs: Mapping[str, Any]) -> Config:
        on, left_on, right_on = inputs.get("on"), inputs.get("left_on"), inputs.get("right_on")
        hint = (
            "両方の表で同じ列名なら on: 取引先コード、列名が違うなら"
            " left_on: 取引先コード と right_on: コード のように指定してください（複数列はリスト）。"
        )
        if on is not None and (left_on is not None or right_on is not None):
            raise input_error("on と left_on / right_on が両方指定されています。", hint, field="on")
        if on is not None:
            left_keys = right_keys = column_list(on, field="on")
        elif left_on is not None and right_on is not None:
            left_keys = column_list(left_on, field="left_on")
            right_keys = column_list(right_on, field="right_on")
            if len(left_keys) != len(right_keys):
                raise input_error(
                    f"left_on（{len(left_keys)} 列）と right_on（{len(right_keys)} 列）の列数が違います。",
                    hint,
                    field="left_on",
                )
        else:
            raise input_error(
                "結合に使うキー列（on または left_on と right_on）がありません。", hint, field="on"
            )
        how = choice(
            inputs, "how", HOWS, "inner: 両方にある行だけ、left: 左の行はすべて、outer: すべて"
        )
        suffixes = inputs.get("suffixes", list(DEFAULT_SUFFIXES))
        if (
            not isinstance(suffixes, list | tuple)
            or len(suffixes) != 2
            or not all(isinstance(s, str) and s for s in suffixes)
            or suffixes[0] == suffixes[1]
        ):
            raise input_error(
                f"suffixes {suffixes!r} は 2 つの異なる文字列のリストではありません。",
                '例: suffixes: ["_請求", "_入金"]（左の列名、右の列名に付けます）',
                field="suffixes",
            )
        flags = {
            name: flag(
                inputs,
                name,
                default,
                "normalize_keys の既定は true、indicator の既定は false です。",
            )
            for name, default in (("normalize_keys", True), ("indicator", False))
        }
        return Config(
            left_on=left_keys,
            right_on=right_keys,
            shared=on is not None,
            how=how,
            suffixes=(suffixes[0], suffixes[1]),
            normalize=flags["normalize_keys"],
            indicator=flags["indicator"],
            on_many_to_many=choice(
                inputs, "on_many_to_many", ON_MANY_TO_MANY, "warn: 警告して続ける"
            ),
        )

    def compute(self, cfg: Config, tables: list[Table], ctx: BlockContext) -> dict[str, Any]:
        left_table, right_table = tables
        left, right = left_table.records(), right_table.records()
        fields = ("on", "on") if cfg.shared else ("left_on", "right_on")
        require_columns(left, cfg.left_on, field=fields[0], table="left")
        require_columns(right, cfg.right_on, field=fields[1], table="right")
        names = _names(cfg, columns_of(left), columns_of(right))
        left_keys = [_key(r, cfg.left_on, cfg.normalize) for r in left]
        right_keys = [_key(r, cfg.right_on, cfg.normalize) for r in right]
        left_index = _index(left_keys)
        right_index = _index(right_keys)
        warnings = _many_to_many(cfg, left, left_index, right_index)
        ctx.check_cancelled()
        pairs: list[tuple[int | None, int | None]] = []
        if cfg.how == "right":
            for j, key in enumerate(right_keys):
                found = left_index.get(key, []) if key is not None else []
                if found:
                    pairs.extend((i, j) for i in found)
                else:
                    pairs.append((None, j))
        else:
            for i, key in enumerate(left_keys):
                found = right_index.get(key, []) if key is not None else []
                if found:
                    pairs.extend((i, j) for j in found)
                elif cfg.how in ("left", "outer"):
                    pairs.append((i, None))
            if cfg.how == "outer":
                pairs.extend((None, j) for j, k in enumerate(right_keys) if k not in left_index)
        records = [_row(left, right, i, j, names, cfg) for i, j in pairs]
        # A joined row is named by its left row's place in the left file (the right side's
        # rows have their own files; right-only rows have no position).
        rows = Table(
            Table.from_records(records, columns=names.order).frame,
            origin=left_table.origin,
            positions=[None if i is None else left_table.position(i) for i, _j in pairs],
            units={
                **{names.right[c]: u for c, u in right_table.units.items() if c in names.right},
                **{names.left[c]: u for c, u in left_table.units.items() if c in names.left},
            },
        )
        left_only = sum(k is None or k not in right_index for k in left_keys)
        right_only = sum(k is None or k not in left_index for k in right_keys)
        for label, keys in (("左", left_keys), ("右", right_keys)):
            blank = sum(k is None for k in keys)
            if blank:
                warnings.append(
                    f"{label}の表の {blank} 行はキーが空欄のため、どの行とも結合していません。"
                )
        matched = sum(i is not None and j is not None for i, j in pairs)
        ctx.log(
            f"左 {len(left)} 行と右 {len(right)} 行を {cfg.how} 結合し、{len(rows)} 行にしました"
            f"（一致 {matched}、左のみ {left_only}、右のみ {right_only}）"
        )
        return {
            "rows": rows,
            "summary": {
                "left_rows": len(left),
                "right_rows": len(right),
                "output_rows": len(rows),
                "matched": matched,
                "left_only": left_only,
                "right_only": right_only,
                "warnings": warnings,
            },
        }


# --- configuration ---------------------------------------------------------------------------


# --- keys and columns ------------------------------------------------------------------------


def _key(record: Mapping[str, Any], columns: list[str], normalize: bool) -> Key | None:
    """The comparable key of a row; None when a part is blank (such rows never match)."""
    parts: list[Any] = []
    for column in columns:
        cell = json_cell(record.get(column))
        if cell is None or (isinstance(cell, str) and not cell.strip()):
            return None
        if normalize:
            parts.append(normalize_key(cell, keep_spaces=True))
        else:
            parts.append((isinstance(cell, bool), cell))
    return tuple(parts)


def _index(keys: list[Key | None]) -> dict[Key, list[int]]:
    index: dict[Key, list[int]] = {}
    for position, key in enumerate(keys):
        if key is not None:
            index.setdefault(key, []).append(position)
    return index


@dataclass(frozen=True)
class Names:
    left: dict[str, str]  # left column → output column
    right: dict[str, str]  # right column → output column (shared keys excluded)
    order: list[str]


def _names(cfg: Config, left_cols: list[str], right_cols: list[str]) -> Names:
    shared = set(cfg.left_on) if cfg.shared else set()
    # A shared key is an output column even when the left table is empty (right / outer join).
    left_cols = [*(k for k in cfg.left_on if k in shared and k not in left_cols), *left_cols]
    right_rest = [c for c in right_cols if c not in shared]
    both = {c for c in left_cols if c not in shared} & set(right_rest)
    left = {c: c + cfg.suffixes[0] if c in both else c for c in left_cols}
    right = {c: c + cfg.suffixes[1] if c in both else c for c in right_rest}
    order = [*left.values(), *right.values()] + ([INDICATOR_COLUMN] if cfg.indicator else [])
    unique_names(
        order,
        "suffixes",
        "結合後の列名 {names} が重複します。",
        'suffixes を別の文字列（例: ["_請求", "_入金"]）にするか、元の表の列名を変えてください。',
    )
    return Names(left, right, order)


def _many_to_many(
    cfg: Config,
    left: list[dict[str, Any]],
    left_index: dict[Key, list[int]],
    right_index: dict[Key, list[int]],
) -> list[str]:
    found = [
        (key, len(rows), len(right_index[key]))
        for key, rows in left_index.items()
        if len(rows) > 1 and len(right_index.get(key, [])) > 1
    ]
    if not found:
        return []
    listed = "、".join(
        f"「{' / '.join(str(left[left_index[key][0]].get(c)) for c in cfg.left_on)}」"
        f"（左 {n} 行 × 右 {m} 行 = {n * m} 行）"
        for key, n, m in found[:MAX_LISTED]
    )
    more = f" ほか {len(found) - MAX_LISTED} 件" if len(found) > MAX_LISTED else ""
    message = f"左右どちらにも重複しているキーが {len(found)} 件あり、行が掛け合わされました: {listed}{more}"
    if cfg.on_many_to_many == "error":
        raise input_error(
            message.replace("行が掛け合わされました", "結合すると行が掛け合わされます"),
            "キー列を追加して 1 行に絞れるようにするか、table.dedupe で重複を除いてから結合してください。"
            "掛け合わせてよい場合は on_many_to_many: warn を指定します。",
            field="on",
            keys=[list(map(str, key)) for key, _, _ in found],
        )
    return [message]


def _row(
    left: list[dict[str, Any]],
    right: list[dict[str, Any]],
    i: int | None,
    j: int | None,
    names: Names,
    cfg: Config,
) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(names.order)
    if i is not None:
        for column, value in left[i].items():
            out[names.left[column]] = json_cell(value)
    if j is not None:
        record = right[j]
        for column, value in record.items():
            if column in names.right:
                out[names.right[column]] = json_cell(value)
        if i is None and cfg.shared:
            for column in cfg.left_on:
                out[column] = json_cell(record.get(column))
    if cfg.indicator:
        out[INDICATOR_COLUMN] = INDICATOR_VALUES[
            0 if i is not None and j is not None else 1 if j is None else 2
        ]
    return out
