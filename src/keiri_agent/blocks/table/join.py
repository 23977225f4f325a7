"""``table.join``: combine two tables on key columns (結合, like VLOOKUP or SQL JOIN).

Keys are compared after NFKC, trimming and casefold by default (``normalize_keys``), so
``Ａ００１`` meets ``a001`` and ``1001`` meets ``"1001"``; the output keeps the original values.
A blank key (null or "") never matches, as in SQL. Columns present on both sides (other than
shared ``on`` keys) get ``suffixes`` (default ``_左`` / ``_右``).

Row order: for inner / left / outer, left rows in order, each followed by its matches in right
order, then (outer) the unmatched right rows in order; for right, the same with the sides
swapped. A key with several rows on both sides multiplies rows (2 × 3 = 6): that is reported in
``summary.warnings``, or refused with ``on_many_to_many: error``.

The tables are joined by columns: each key column's distinct values (of both sides at once) are
normalized once and numbered (:mod:`~keiri_agent.blocks.table.key_codes`), and the joined rows
are index pairs computed with numpy from the key codes (a stable sort of the other side's
codes, then one run of matches per row), so the cost is O(n log n) plus one call of the key
rule per distinct value, and no row is made a record. The output takes each column at those
rows, typed as it was (integers and flags of a row without a partner become nullable, not
floats), and keeps the left rows' file positions.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray, ExtensionDtype
from pandas.arrays import NumpyExtensionArray

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import choice, flag, unique_names
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.key_codes import column_codes, combine, first_rows, key_column
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import column_list, require_columns
from keiri_agent.errors import input_error

__all__ = ["DEFAULT_SUFFIXES", "HOWS", "INDICATOR_COLUMN", "TableJoinBlock"]

HOWS = ("inner", "left", "right", "outer")
DEFAULT_SUFFIXES = ("_左", "_右")
INDICATOR_COLUMN = "_結合"
INDICATOR_VALUES = ("両方", "左のみ", "右のみ")
ON_MANY_TO_MANY = ("warn", "error")
MAX_LISTED = 10  # keys spelled out in one warning or error; the rest are counted


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
        left, right = tables
        fields = ("on", "on") if cfg.shared else ("left_on", "right_on")
        require_columns(left, cfg.left_on, field=fields[0], table="left")
        require_columns(right, cfg.right_on, field=fields[1], table="right")
        names = _names(cfg, left.columns, right.columns)
        keys = _Keys.of(cfg, left, right)
        warnings = _many_to_many(cfg, left, keys)
        ctx.check_cancelled()
        if cfg.how == "right":
            right_rows, left_rows = _matches(keys.right, keys.left, keys.left_counts, True)
        else:
            left_rows, right_rows = _matches(
                keys.left, keys.right, keys.right_counts, cfg.how in ("left", "outer")
            )
            if cfg.how == "outer":
                alone = np.flatnonzero(_counts_at(keys.right, keys.left_counts) == 0)
                left_rows = np.concatenate([left_rows, np.full(len(alone), -1, np.int64)])
                right_rows = np.concatenate([right_rows, alone])
        ctx.check_cancelled()
        rows = Table(
            _frame(cfg, names, left, right, left_rows, right_rows),
            origin=left.origin,
            # A joined row is named by its left row's place in the left file (the right side's
            # rows have their own files; right-only rows have no position).
            positions=_positions(left, left_rows),
            units={
                **{names.right[c]: u for c, u in right.units.items() if c in names.right},
                **{names.left[c]: u for c, u in left.units.items() if c in names.left},
            },
        )
        matched_left = _counts_at(keys.left, keys.right_counts)
        left_only = int(np.count_nonzero(matched_left == 0))
        right_only = int(np.count_nonzero(_counts_at(keys.right, keys.left_counts) == 0))
        for label, codes in (("左", keys.left), ("右", keys.right)):
            blank = int(np.count_nonzero(codes < 0))
            if blank:
                warnings.append(
                    f"{label}の表の {blank} 行はキーが空欄のため、どの行とも結合していません。"
                )
        matched = int(matched_left.sum())
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


# --- keys ------------------------------------------------------------------------------------


def _normalized(value: Any) -> Hashable | None:
    """A key cell compared as text (NFKC, trimmed, casefolded); None when blank."""
    if type(value) is str:  # most keys: no need to walk json_cell's types first
        return normalize_key(value, keep_spaces=True) if value.strip() else None
    cell = json_cell(value)
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    return normalize_key(cell, keep_spaces=True)


def _exact(value: Any) -> Hashable | None:
    """A key cell compared as it is (``True`` is not ``1``, ``"1"`` is not ``1``)."""
    if type(value) is str:
        return (False, value) if value.strip() else None
    cell = json_cell(value)
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    return (isinstance(cell, bool), cell)


@dataclass(frozen=True)
class _Keys:
    """Every row's key code on both sides (-1: blank) and how many rows each key has."""

    left: np.ndarray
    right: np.ndarray
    left_counts: np.ndarray
    right_counts: np.ndarray
    parts: list[tuple[np.ndarray, list[Hashable]]]  # per key column: left codes, their keys

    @classmethod
    def of(cls, cfg: Config, left: Table, right: Table) -> _Keys:
        rule = _normalized if cfg.normalize else _exact
        columns = [
            column_codes([key_column(left, a), key_column(right, b)], rule)
            for a, b in zip(cfg.left_on, cfg.right_on, strict=True)
        ]
        (left_codes, right_codes), count = combine([codes for codes, _ in columns])
        return cls(
            left=left_codes,
            right=right_codes,
            left_counts=np.bincount(left_codes[left_codes >= 0], minlength=count),
            right_counts=np.bincount(right_codes[right_codes >= 0], minlength=count),
            parts=[(codes[0], values) for codes, values in columns],
        )


def _counts_at(codes: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """For each row, how many rows of the other side have its key (0 for a blank key)."""
    if not counts.size:
        return np.zeros(len(codes), dtype=np.int64)
    return np.where(codes >= 0, counts[np.maximum(codes, 0)], 0)


def _matches(
    outer: np.ndarray, inner: np.ndarray, inner_counts: np.ndarray, keep_unmatched: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(outer_rows, inner_rows)``: each outer row in order, followed by the inner rows with
    its key in inner order; an unmatched outer row once with -1 when ``keep_unmatched``."""
    order = np.argsort(inner, kind="stable")  # blank keys (-1) first, then by key, in order
    starts = np.count_nonzero(inner < 0) + np.cumsum(inner_counts) - inner_counts
    found = _counts_at(outer, inner_counts)
    runs = np.where(found > 0, found, 1 if keep_unmatched else 0)
    outer_rows = np.repeat(np.arange(len(outer), dtype=np.int64), runs)
    offsets = np.arange(len(outer_rows), dtype=np.int64) - np.repeat(np.cumsum(runs) - runs, runs)
    hit = np.repeat(found > 0, runs)
    inner_rows = np.full(len(outer_rows), -1, dtype=np.int64)
    if hit.any():
        first = np.repeat(starts[np.maximum(outer, 0)], runs)
        inner_rows[hit] = order[first[hit] + offsets[hit]]
    return outer_rows, inner_rows


# --- columns ---------------------------------------------------------------------------------


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


def _many_to_many(cfg: Config, left: Table, keys: _Keys) -> list[str]:
    """The warning about keys with several rows on both sides (or the error refusing them)."""
    both = np.flatnonzero((keys.left_counts > 1) & (keys.right_counts > 1))
    if not both.size:
        return []
    firsts = first_rows(keys.left, len(keys.left_counts))[both]
    order = np.argsort(firsts, kind="stable")  # as the left table first has them
    both, firsts = both[order], firsts[order]

    def shown(row: int) -> str:
        return " / ".join(str(json_cell(left.frame[c].iloc[row])) for c in cfg.left_on)

    listed = "、".join(
        f"「{shown(int(row))}」（左 {n} 行 × 右 {m} 行 = {n * m} 行）"
        for row, n, m in zip(
            firsts[:MAX_LISTED].tolist(),
            keys.left_counts[both[:MAX_LISTED]].tolist(),
            keys.right_counts[both[:MAX_LISTED]].tolist(),
            strict=True,
        )
    )
    more = f" ほか {len(both) - MAX_LISTED} 件" if len(both) > MAX_LISTED else ""
    message = f"左右どちらにも重複しているキーが {len(both)} 件あり、行が掛け合わされました: {listed}{more}"
    if cfg.on_many_to_many == "error":
        raise input_error(
            message.replace("行が掛け合わされました", "結合すると行が掛け合わされます"),
            "キー列を追加して 1 行に絞れるようにするか、table.dedupe で重複を除いてから結合してください。"
            "掛け合わせてよい場合は on_many_to_many: warn を指定します。",
            field="on",
            keys=[
                [str(values[codes[row]]) for codes, values in keys.parts] for row in firsts.tolist()
            ],
        )
    return [message]


# --- the joined table ------------------------------------------------------------------------

# Nullable dtypes for numpy columns that get blank cells (rows without a partner).
_NULLABLE: dict[str, ExtensionDtype] = {
    "i": pd.Int64Dtype(),
    "u": pd.UInt64Dtype(),
    "b": pd.BooleanDtype(),
}


def _take(column: pd.Series, rows: np.ndarray) -> ExtensionArray:
    """The column's cells at ``rows``, blank where a row is -1 (integers stay integers)."""
    fill = bool(rows.size) and bool((rows < 0).any())
    if fill and isinstance(column.dtype, np.dtype) and column.dtype.kind in _NULLABLE:
        column = column.astype(_NULLABLE[column.dtype.kind])
    taken: ExtensionArray = column.array.take(rows, allow_fill=fill)
    return taken


def _filled(values: ExtensionArray, other: ExtensionArray, where: np.ndarray) -> ExtensionArray:
    """``values`` with the cells at ``where`` taken from ``other``."""
    if not where.any():
        return values
    if values.dtype == other.dtype:
        out = values.copy()
        out[where] = other[where]
        return out
    mixed = np.asarray(values, dtype=object)
    mixed[where] = np.asarray(other, dtype=object)[where]
    return NumpyExtensionArray(mixed)


def _frame(
    cfg: Config,
    names: Names,
    left: Table,
    right: Table,
    left_rows: np.ndarray,
    right_rows: np.ndarray,
) -> pd.DataFrame:
    """The joined columns: left's, then right's (a shared key filled from the right side where
    a row has no left partner), then the indicator."""
    columns: dict[str, Any] = {}
    no_left = left_rows < 0
    for column, name in names.left.items():
        from_right = cfg.shared and column in cfg.left_on and bool(no_left.any())
        if column not in left.frame.columns:  # a shared key of an empty left table
            columns[name] = _take(key_column(right, column), right_rows)
            continue
        values = _take(left.frame[column], left_rows)
        if from_right and column in right.frame.columns:
            values = _filled(values, _take(right.frame[column], right_rows), no_left)
        columns[name] = values
    for column, name in names.right.items():
        columns[name] = _take(right.frame[column], right_rows)
    if cfg.indicator:
        which = np.where(no_left, 2, np.where(right_rows < 0, 1, 0))
        columns[INDICATOR_COLUMN] = np.asarray(INDICATOR_VALUES, dtype=object)[which]
    return pd.DataFrame(columns, index=pd.RangeIndex(len(left_rows)), copy=False)


def _positions(left: Table, left_rows: np.ndarray) -> np.ndarray | None:
    if left.positions is None:
        return None
    if not len(left):
        return np.full(len(left_rows), -1, dtype=np.int64)
    return np.where(left_rows >= 0, left.positions[np.maximum(left_rows, 0)], -1)
