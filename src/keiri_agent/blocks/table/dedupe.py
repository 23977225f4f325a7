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

Complexity: O(n) to normalize and block by ``keys``; inside a block, identical texts are merged
in O(b), and only the u distinct texts are compared, pairwise in rapidfuzz's C++ ``cdist``, and
only pairs whose lengths allow the threshold (ratio ≥ t needs ``long ≤ short·(200 − t)/t``):
O(u²) comparisons in the worst case per block, far fewer for real names and keys.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.table.base import Records, TableBlock
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import (
    input_error,
    optional_columns,
    require_columns,
)

__all__ = [
    "ADDED_COLUMNS",
    "DEFAULT_THRESHOLD",
    "SCORERS",
    "TableDedupeBlock",
]

DEFAULT_THRESHOLD = 90.0
SCORERS: dict[str, Callable[..., float]] = {
    "ratio": fuzz.ratio,
    "token_sort_ratio": fuzz.token_sort_ratio,
}
KEEP = ("first", "last")
ADDED_COLUMNS = ("行番号", "重複グループ", "重複元行", "類似度")  # added to ``duplicates``
CHUNK = 256  # texts compared at once (a CHUNK × candidates float32 matrix)


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

    def compute(self, cfg: Config, tables: list[Records], ctx: BlockContext) -> dict[str, Any]:
        records = tables[0]
        used = [*cfg.keys, *([cfg.fuzzy.column] if cfg.fuzzy else [])]
        require_columns(records, used, field="keys / fuzzy.column", table="table")
        clashes = [c for c in ADDED_COLUMNS if any(c in r for r in records)]
        if clashes:
            raise input_error(
                f"表に列 {', '.join(clashes)} が既にあります（重複の結果に使う列名です）。",
                "前回の table.dedupe の duplicates ではなく unique を渡すか、列名を変えてください。",
                field="table",
                columns=clashes,
            )
        texts = [_text(r, cfg.fuzzy) for r in records]
        parent = list(range(len(records)))
        blocks: dict[tuple[str, ...], list[int]] = {}
        skipped = 0
        for index, record in enumerate(records):
            key = tuple(normalize_key(record.get(c)) for c in cfg.keys)
            if not all(key) or (cfg.fuzzy is not None and not texts[index]):
                skipped += 1  # blank keys or names are not evidence of a duplicate
                continue
            blocks.setdefault(key, []).append(index)
        for rows in blocks.values():
            ctx.check_cancelled()
            if cfg.fuzzy is None:
                for row in rows[1:]:
                    _union(parent, rows[0], row)
            else:
                _fuzzy_block(rows, texts, cfg.fuzzy, parent)
        members: dict[int, list[int]] = {}
        for index in range(len(records)):
            members.setdefault(_find(parent, index), []).append(index)
        groups = sorted((rows for rows in members.values() if len(rows) > 1), key=lambda g: g[0])
        out = _outputs(records, groups, texts, cfg)
        warnings = []
        if skipped:
            what = "キーまたは fuzzy.column " if cfg.fuzzy else "キー"
            warnings.append(
                f"{skipped} 行は{what}が空欄のため、重複の判定から外しました（unique に残ります）。"
            )
        summary = {
            "input_rows": len(records),
            "unique_rows": len(out["unique"]),
            "duplicate_rows": len(out["duplicates"]),
            "groups": len(groups),
            "warnings": warnings,
        }
        ctx.log(
            f"{len(records)} 行から重複 {summary['duplicate_rows']} 行（{len(groups)} グループ）を除き、"
            f"{summary['unique_rows']} 行を残しました"
        )
        return {**out, "summary": summary}


# --- configuration ---------------------------------------------------------------------------


def _fuzzy(value: Any) -> Fuzzy | None:
    if value is None:
        return None
    hint = (
        "fuzzy は {column: 列名, threshold: 0〜100, normalize_company: true/false,"
        " normalize_reading: true/false, scorer: ratio / token_sort_ratio} の形です。"
        "例: {column: 取引先名, threshold: 90}"
    )
    allowed = {"column", "threshold", "normalize_company", "normalize_reading", "scorer"}
    if not isinstance(value, Mapping) or set(value) - allowed:
        raise input_error(f"fuzzy の形が正しくありません（{value!r}）。", hint, field="fuzzy")
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


def _text(record: Mapping[str, Any], fuzzy: Fuzzy | None) -> str:
    if fuzzy is None:
        return ""
    spaces = fuzzy.scorer == "token_sort_ratio"
    return normalize_key(
        record.get(fuzzy.column), company=fuzzy.company, keep_spaces=spaces, reading=fuzzy.reading
    )


def _find(parent: list[int], item: int) -> int:
    while parent[item] != item:
        parent[item] = parent[parent[item]]
        item = parent[item]
    return item


def _union(parent: list[int], a: int, b: int) -> None:
    root_a, root_b = _find(parent, a), _find(parent, b)
    if root_a != root_b:
        parent[max(root_a, root_b)] = min(root_a, root_b)


def _fuzzy_block(rows: list[int], texts: list[str], fuzzy: Fuzzy, parent: list[int]) -> None:
    """Union the rows of one key block whose texts are identical or similar enough."""
    first_of: dict[str, int] = {}
    for row in rows:
        text = texts[row]
        if text in first_of:
            _union(parent, first_of[text], row)
        else:
            first_of[text] = row
    if len(first_of) < 2:
        return
    distinct = sorted(first_of, key=lambda t: (len(t), t))
    lengths = [len(t) for t in distinct]
    t = fuzzy.threshold
    scorer = SCORERS[fuzzy.scorer]
    for start in range(0, len(distinct), CHUNK):
        queries = distinct[start : start + CHUNK]
        # Indel similarity ≤ 200·short/(short + long): longer texts cannot reach t.
        limit = len(queries[-1]) * (200 - t) / t if t > 0 else float("inf")
        end = bisect_right(lengths, limit + 1e-9) if t > 0 else len(distinct)
        candidates = distinct[start:end]
        scores = process.cdist(
            queries, candidates, scorer=scorer, score_cutoff=t, dtype=np.float32, workers=1
        )
        for qi, ci in zip(*np.nonzero(scores >= t), strict=True):
            if ci > qi:  # candidates start at ``start``: position ci is distinct[start + ci]
                _union(parent, first_of[queries[int(qi)]], first_of[candidates[int(ci)]])


def _similarity(a: str, b: str, fuzzy: Fuzzy | None) -> float:
    if fuzzy is None or a == b:
        return 100.0
    return round(SCORERS[fuzzy.scorer](a, b), 1)


# --- output ----------------------------------------------------------------------------------


def _outputs(
    records: list[dict[str, Any]], groups: list[list[int]], texts: list[str], cfg: Config
) -> dict[str, list[dict[str, Any]]]:
    plain = [{str(k): json_cell(v) for k, v in r.items()} for r in records]
    dropped: dict[int, tuple[int, int]] = {}  # row → (group id, kept row)
    group_records = []
    for number, rows in enumerate(groups, start=1):
        kept = rows[0] if cfg.keep == "first" else rows[-1]
        for row in rows:
            if row != kept:
                dropped[row] = (number, kept)
        entry: dict[str, Any] = {
            "重複グループ": number,
            "残した行": kept + 1,
            "行番号": ", ".join(str(r + 1) for r in rows),
            "件数": len(rows),
        }
        for column in cfg.keys:
            entry.setdefault(column, plain[kept].get(column))
        if cfg.fuzzy is not None:
            column = cfg.fuzzy.column
            entry.setdefault(column, plain[kept].get(column))
            variants = dict.fromkeys(str(plain[r].get(column)) for r in rows)
            entry.setdefault("表記", " / ".join(variants))
        group_records.append(entry)
    duplicates = []
    for row in sorted(dropped):
        number, kept = dropped[row]
        duplicates.append(
            {
                **plain[row],
                "行番号": row + 1,
                "重複グループ": number,
                "重複元行": kept + 1,
                "類似度": json_cell(_similarity(texts[row], texts[kept], cfg.fuzzy)),
            }
        )
    unique = [plain[i] for i in range(len(records)) if i not in dropped]
    return {"unique": unique, "duplicates": duplicates, "groups": group_records}
