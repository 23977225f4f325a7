"""``table.dedupe``: find duplicate rows, exactly on key columns and optionally by similar names.

Rows are duplicates when their ``keys`` are equal after NFKC, whitespace removal and casefold
(:func:`normalize_key`, also ``table.reconcile``'s key comparison) and, with ``fuzzy``, when the
similarity of their ``fuzzy.column`` is at least ``threshold``. Similarity is rapidfuzz
``fuzz.ratio`` (Indel similarity, 0–100) on the normalized text, company forms (株式会社, (株),
㈱...) removed by default: ``株式会社山田商事`` / ``(株)山田商事`` / ``山田商事株式会社`` score 100,
``山田商事`` / ``山田工業`` 50; with ``normalize_reading`` the kana readings are compared, so a
list mixing ``山田商事株式会社`` and ``ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ`` finds them. ``scorer: token_sort_ratio`` sorts space-separated words first
(``Yamada Trading`` / ``Trading Yamada``). Duplicates are grouped transitively (union-find); the
first (or last, ``keep``) row of a group is kept. Blank keys or names never make duplicates.

The table is read by columns: keys and names are normalized once per distinct value
(:mod:`~keiri_agent.blocks.table.key_codes`), rows are blocked by their key codes, and names
are compared only inside a block, distinct texts only (:mod:`~keiri_agent.blocks.table.similar`:
O(u²) comparisons for a block of u distinct texts in the worst case, far fewer for real names
and keys). ``unique`` and ``duplicates`` are tables of the input's rows (positions kept), so
``行番号`` is the file line or sheet row; ``groups`` is a table of one row per group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.key_codes import (
    column_codes,
    combine,
    distinct_values,
    first_rows,
    key_column,
)
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import optional_columns, optional_mapping, require_columns
from keiri_agent.blocks.table.similar import SCORERS, Texts, similar_labels, similarities
from keiri_agent.errors import input_error

__all__ = [
    "ADDED_COLUMNS",
    "DEFAULT_THRESHOLD",
    "SCORERS",
    "TableDedupeBlock",
]

DEFAULT_THRESHOLD = 90.0
KEEP = ("first", "last")
ADDED_COLUMNS = ("行番号", "重複グループ", "重複元行", "類似度")  # added to ``duplicates``


@dataclass(frozen=True)
class Fuzzy:
    column: str
    threshold: float
    company: bool
    reading: bool  # compare the kana readings (kanji read by SudachiPy, bank kana folded)
    scorer: str


@dataclass(frozen=True)
class Config:
    keys: list[str]
    fuzzy: Fuzzy | None
    keep: str


class TableDedupeBlock(TableBlock[Config]):
    """Splits ``table`` into the rows kept (``unique``) and the duplicates dropped."""

    def configure(self, inputs: Mapping[str, Any]) -> Config:
        keys = optional_columns(inputs, "keys")
        fuzzy = _fuzzy(inputs.get("fuzzy"))
        if not keys and fuzzy is None:
            raise input_error(
                "重複の判定に使う列（keys か fuzzy）が指定されていません。",
                "例: keys: [請求書番号]、または fuzzy: {column: 取引先名, threshold: 90}"
                "（keys と fuzzy を併用すると、keys が同じ行の中で名前の似たものを探します）",
                field="keys",
            )
        keep = inputs.get("keep", "first")
        if keep not in KEEP:
            raise input_error(
                f"keep に {keep!r} は指定できません。",
                "keep には first（最初の行を残す）か last（最後の行を残す）を指定してください。",
                field="keep",
            )
        return Config(keys, fuzzy, str(keep))

    def compute(self, cfg: Config, tables: list[Table], ctx: BlockContext) -> dict[str, Any]:
        table = tables[0]
        used = [*cfg.keys, *([cfg.fuzzy.column] if cfg.fuzzy else [])]
        require_columns(table, used, field="keys / fuzzy.column", table="table")
        clashes = [c for c in ADDED_COLUMNS if len(table) and c in table.columns]
        if clashes:
            raise input_error(
                f"表に列 {', '.join(clashes)} が既にあります（重複の結果に使う列名です）。",
                "前回の table.dedupe の duplicates ではなく unique を渡すか、列名を変えてください。",
                field="table",
                columns=clashes,
            )
        rows = len(table)
        if cfg.keys:
            key_parts = [column_codes([key_column(table, c)], _key_rule)[0] for c in cfg.keys]
            (blocks,), _ = combine(key_parts)
        else:
            blocks = np.zeros(rows, dtype=np.int64)
        texts = _texts(table, cfg.fuzzy)
        counted = blocks >= 0
        if texts is not None:
            counted &= texts.codes >= 0
        skipped = rows - int(np.count_nonzero(counted))  # blank keys or names prove nothing
        ctx.check_cancelled()
        if texts is None:
            labels = np.where(counted, blocks, -1)
        else:
            labels = similar_labels(np.where(counted, blocks, -1), texts, ctx.check_cancelled)
        found = Duplicates.of(labels, cfg.keep)
        out = _outputs(table, found, texts, cfg)
        warnings = []
        if skipped:
            what = "キーまたは fuzzy.column " if cfg.fuzzy else "キー"
            warnings.append(
                f"{skipped} 行は{what}が空欄のため、重複の判定から外しました（unique に残ります）。"
            )
        summary = {
            "input_rows": rows,
            "unique_rows": len(out["unique"]),
            "duplicate_rows": len(out["duplicates"]),
            "groups": found.count,
            "warnings": warnings,
        }
        ctx.log(
            f"{rows} 行から重複 {summary['duplicate_rows']} 行（{found.count} グループ）を除き、"
            f"{summary['unique_rows']} 行を残しました"
        )
        return {**out, "summary": summary}


# --- configuration ---------------------------------------------------------------------------


def _fuzzy(given: Any) -> Fuzzy | None:
    hint = (
        "fuzzy は {column: 列名, threshold: 0〜100, normalize_company: true/false,"
        " normalize_reading: true/false, scorer: ratio / token_sort_ratio} の形です。"
        "例: {column: 取引先名, threshold: 90}"
    )
    keys = {"column", "threshold", "normalize_company", "normalize_reading", "scorer"}
    value = optional_mapping(given, field="fuzzy", keys=keys, hint=hint)
    if value is None:
        return None
    column = value.get("column")
    threshold = value.get("threshold", DEFAULT_THRESHOLD)
    company = value.get("normalize_company", True)
    reading = value.get("normalize_reading", False)
    scorer = value.get("scorer", "ratio")
    if not isinstance(column, str) or not column.strip():
        raise input_error(
            "fuzzy.column（似た値を探す列）がありません。", hint, field="fuzzy.column"
        )
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 <= threshold <= 100
    ):
        raise input_error(
            f"fuzzy.threshold {threshold!r} は 0〜100 の数値ではありません。",
            "類似度のしきい値です。既定の 90 なら表記ゆれ程度の違いだけを重複とみなします。",
            field="fuzzy.threshold",
        )
    if not isinstance(company, bool) or not isinstance(reading, bool) or scorer not in SCORERS:
        raise input_error(
            "fuzzy.normalize_company と fuzzy.normalize_reading は true / false、"
            "scorer は ratio / token_sort_ratio で指定してください。",
            hint,
            field="fuzzy",
        )
    return Fuzzy(column.strip(), float(threshold), company, reading, str(scorer))


# --- matching --------------------------------------------------------------------------------


def _key_rule(value: Any) -> str | None:
    """A key cell's normalized text; None when blank (a blank key proves no duplicate)."""
    return normalize_key(value) or None


def _texts(table: Table, fuzzy: Fuzzy | None) -> Texts | None:
    """The fuzzy column's normalized texts (company forms dropped unless told otherwise)."""
    if fuzzy is None:
        return None
    spaces = fuzzy.scorer == "token_sort_ratio"

    def rule(value: Any) -> str | None:
        return (
            normalize_key(value, company=fuzzy.company, keep_spaces=spaces, reading=fuzzy.reading)
            or None
        )

    (codes,), distinct = column_codes([key_column(table, fuzzy.column)], rule)
    values = np.empty(len(distinct), dtype=object)
    values[:] = distinct
    return Texts(codes, values, fuzzy.scorer, fuzzy.threshold)


# --- output ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Duplicates:
    """The groups of two rows or more, numbered in order of their first row."""

    rows: np.ndarray  # every row in a group, ascending
    group: np.ndarray  # each of those rows' group (0-based)
    kept: np.ndarray  # each group's kept row
    count: int

    @classmethod
    def of(cls, labels: np.ndarray, keep: str) -> Duplicates:
        """Groups from each row's label (-1: none); ``keep`` first or last row of each."""
        counted = labels >= 0
        sizes = np.bincount(labels[counted]) if counted.any() else np.zeros(1, np.int64)
        rows = np.flatnonzero(counted & (sizes[np.maximum(labels, 0)] >= 2))
        group, _ = pd.factorize(labels[rows])  # first appearance: by first row
        count = int(group.max()) + 1 if group.size else 0
        if keep == "first":
            kept = rows[first_rows(group, count)]
        else:
            kept = np.full(count, -1, dtype=np.int64)
            np.maximum.at(kept, group, rows)
        return cls(rows, np.asarray(group, dtype=np.int64), kept, count)


def _joined(strings: list[str], found: Duplicates, sep: str) -> list[str]:
    """One text per group: ``strings`` (one per ``found.rows``, grouped) joined by ``sep``."""
    sizes = np.bincount(found.group, minlength=found.count)
    ends = np.cumsum(sizes)
    return [
        sep.join(strings[a:b]) for a, b in zip((ends - sizes).tolist(), ends.tolist(), strict=True)
    ]


def _spellings(column: pd.Series, found: Duplicates) -> list[str]:
    """Each group's different spellings of ``column``, in row order (``a / b``)."""
    raw, values = distinct_values(column)
    spelled, names = pd.factorize(np.asarray([str(json_cell(v)) for v in values] + ["None"]))
    order = np.argsort(found.group, kind="stable")
    pairs = pd.DataFrame(
        {"group": found.group[order], "spelling": spelled[raw[found.rows[order]]]}
    ).drop_duplicates()
    texts = [str(names[code]) for code in pairs["spelling"].tolist()]
    sizes = np.bincount(pairs["group"].to_numpy(), minlength=found.count)
    ends = np.cumsum(sizes)
    return [
        " / ".join(texts[a:b]) for a, b in zip((ends - sizes).tolist(), ends.tolist(), strict=True)
    ]


def _outputs(table: Table, found: Duplicates, texts: Texts | None, cfg: Config) -> dict[str, Any]:
    """unique (the kept rows), duplicates (the dropped rows) and groups, as tables; rows are
    numbered as the user finds them (the file line or sheet row when the table came from a
    file, else the row's place from 1)."""
    numbers = np.arange(1, len(table) + 1, dtype=np.int64)
    if table.positions is not None:
        numbers = np.where(table.positions >= 0, table.positions, numbers)
    kept_of = found.kept[found.group]
    dropping = found.rows != kept_of
    dropped, kept = found.rows[dropping], kept_of[dropping]
    if dropped.size:
        remaining = np.ones(len(table), dtype=bool)
        remaining[dropped] = False
        unique = table.take(np.flatnonzero(remaining))
    else:
        unique = table  # nothing dropped: the same rows (tables are not changed in place)
    taken = table.take(dropped)
    duplicates = taken.derive(
        taken.frame.assign(
            **{
                "行番号": numbers[dropped],
                "重複グループ": found.group[dropping] + 1,
                "重複元行": numbers[kept],
                "類似度": similarities(texts, dropped, kept),
            }
        )
    )
    order = np.argsort(found.group, kind="stable")
    listed = numbers[found.rows[order]].astype(str).tolist()
    columns: dict[str, Any] = {
        "重複グループ": np.arange(1, found.count + 1, dtype=np.int64),
        "残した行": numbers[found.kept],
        "行番号": _joined(listed, found, ", "),
        "件数": np.bincount(found.group, minlength=found.count),
    }
    shown = [*cfg.keys, *([cfg.fuzzy.column] if cfg.fuzzy else [])]
    from_table = [c for c in dict.fromkeys(shown) if c not in columns]
    for column in from_table:
        columns[column] = key_column(table, column).array.take(found.kept)
    if cfg.fuzzy is not None:
        columns.setdefault("表記", _spellings(key_column(table, cfg.fuzzy.column), found))
    groups = Table(
        pd.DataFrame(columns, index=pd.RangeIndex(found.count), copy=False),
        units={c: u for c, u in table.units.items() if c in from_table},
    )
    return {"unique": unique, "duplicates": duplicates, "groups": groups}
