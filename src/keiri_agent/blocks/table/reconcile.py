"""``table.reconcile``: match two tables row by row on a key, an amount and a date (消込).

The core of invoice-vs-bank reconciliation: ``left`` (請求) and ``right`` (入金) rows are grouped
by their key (vendor, invoice number...), compared after NFKC, whitespace removal and casefold,
and optionally with company-form words removed (``(株)山田商事`` = ``山田商事株式会社``) or by
reading (``normalize_reading``: the invoice's ``株式会社山田商事`` meets the bank's
``ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ``). Inside one key, rows are paired one to one, greedily: first the
pairs within both tolerances, then the smallest amount difference (so exact amounts first), then
the smallest date difference, ties broken by row order. A pair within tolerance is matched (its
difference is kept: a 660 yen bank fee shows as 差額 -660); a pair outside is a difference;
rows left over are unmatched on their side. Nothing is dropped: every row of both tables ends
in exactly one of ``matched``, ``differences``, ``unmatched_left``, ``unmatched_right``; each is a table whose rows keep their
file positions (a pair is named by its left row's).

The tables are read by columns: amounts and dates with the shared column readers (exact
decimals: a 0.1 difference is 0.1), keys numbered once per distinct value
(:mod:`~keiri_agent.blocks.table.key_codes`, compared with :func:`normalize_key`), and the
pairs chosen with numpy by :mod:`~keiri_agent.blocks.table.pairing` (a band join within the
tolerances, then the leftovers of each key all with all): no row becomes a record. A key of
``a`` left and ``b`` right rows may have at most :data:`MAX_PAIRS_PER_KEY` pairs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import flag, item_error
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import json_cell
from keiri_agent.blocks.table.column_values import (
    exact_amounts,
    exact_sums,
    ordinal_days,
    read_amounts,
    read_dates,
)
from keiri_agent.blocks.table.key_codes import (
    KeyRule,
    column_codes,
    combine,
    first_rows,
    key_column,
)
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.pairing import Pairing, pair_rows
from keiri_agent.blocks.table.pairing import Side as PairSide
from keiri_agent.blocks.table.records import require_columns
from keiri_agent.errors import BlockError, input_error

__all__ = ["MAX_PAIRS_PER_KEY", "TableReconcileBlock"]

MAX_PAIRS_PER_KEY = 1_000_000
MAX_LISTED = 10  # problems spelled out in one error message
# Problems kept in the error's details (all are counted): a million unreadable cells would
# otherwise make a million dicts.
MAX_DETAILED = 1_000
DEFAULT_LABELS = ("請求", "入金")
SIDES = ("left", "right")
TOLERANCES = {  # the tolerance option of amount / date, and an example for hints
    "amount": ("tolerance", "{left: 請求金額, right: 入金額, tolerance: 660}"),
    "date": ("tolerance_days", "{left: 支払期日, right: 入金日, tolerance_days: 5}"),
}
# What the pairs are called (区分): within tolerance, then outside it.
KINDS = np.array(["一致", "許容範囲内", "金額差異", "日付差異", "金額・日付差異"], dtype=object)
# Tolerances beyond any difference (exact amounts are below 2**52 units) are clipped here, so
# that the comparisons stay in int64.
_HUGE = 2**62
# Cells that are no table cell: copied into a pair as their text.
_NESTED = (list, tuple, set, Mapping)


@dataclass(frozen=True)
class Side:
    field: str  # "left" / "right"
    label: str  # 請求 / 入金: the prefix of its output columns
    keys: list[str]
    amount: str
    date: str | None

    @property
    def used(self) -> list[str]:
        return [*self.keys, self.amount, *([self.date] if self.date else [])]


@dataclass(frozen=True)
class Config:
    sides: tuple[Side, Side]
    company: list[bool]  # per key: drop company forms before comparing
    reading: list[bool]  # per key: compare by kana reading (kanji read by SudachiPy)
    tolerance: Decimal
    tolerance_days: int


class TableReconcileBlock(TableBlock[Config]):
    """Pairs ``left`` and ``right`` rows; returns matched, differences and the leftovers."""

    tables = SIDES

    def configure(self, inputs: Mapping[str, Any]) -> Config:
        company = flag(
            inputs,
            "normalize_company",
            False,
            "会社の種類（株式会社、(株) など）を無視して照合するときは normalize_company: true。",
        )
        reading = flag(
            inputs,
            "normalize_reading",
            False,
            "漢字の取引先名と銀行のカナの振込依頼人名を読みで照合するときは normalize_reading: true。",
        )
        keys = _keys(inputs.get("keys"), company, reading)
        amount = _columns(inputs.get("amount"), "amount")
        date = _columns(inputs.get("date"), "date") if inputs.get("date") is not None else None
        raw = [inputs.get(f"{f}_label", d) for f, d in zip(SIDES, DEFAULT_LABELS, strict=True)]
        labels = [label.strip() for label in raw if _name(label)]
        if len(labels) != 2 or labels[0] == labels[1]:
            raise input_error(
                f"left_label と right_label には別々の空でない文字列を指定してください（指定: {raw!r}）。",
                "ラベルは出力の列名（例: 請求金額、入金日付）とメッセージに使われます。",
                field="left_label",
            )
        left, right = (
            Side(
                f, labels[n], [k[n] for k, _, _ in keys], amount[0][n], date[0][n] if date else None
            )
            for n, f in enumerate(SIDES)
        )
        return Config(
            sides=(left, right),
            company=[c for _, c, _ in keys],
            reading=[r for _, _, r in keys],
            tolerance=amount[1],
            tolerance_days=int(date[1]) if date else 0,
        )

    def compute(self, cfg: Config, given: list[Table], ctx: BlockContext) -> dict[str, Any]:
        for side, table in zip(cfg.sides, given, strict=True):
            where = f"keys / amount / date の {side.field}"
            require_columns(table, side.used, field=where, table=side.field)
        read = (
            _Read.of(given[0], cfg.sides[0], ctx.zone),
            _Read.of(given[1], cfg.sides[1], ctx.zone),
        )
        _check_readable(cfg, given, read)
        ctx.check_cancelled()
        others = _other_columns(cfg, given)
        codes = _key_codes(cfg, given)
        ctx.check_cancelled()
        pairing, scale = _pair(cfg, read, codes, ctx)
        pairs = _Pairs.of(pairing, scale)
        matched, differences = (
            _pair_table(cfg, given, read, others, pairs, np.flatnonzero(chosen))
            for chosen in (~pairing.outside, pairing.outside)
        )
        unmatched = [_unpaired(t, rows) for t, rows in zip(given, pairs.rows, strict=True)]
        (lname, rname), warnings = (s.label for s in cfg.sides), []
        for name, side_codes in ((lname, codes[0]), (rname, codes[1])):
            if blank := int(np.count_nonzero(side_codes < 0)):
                warnings.append(
                    f"{name}の {blank} 行はキーが空欄のため照合できず、{name}のみとして残しました。"
                )
        summary = {
            "left_rows": len(given[0]),
            "right_rows": len(given[1]),
            "matched": len(matched),
            "differences": len(differences),
            "unmatched_left": len(unmatched[0]),
            "unmatched_right": len(unmatched[1]),
            "left_total": json_cell(_total(read[0].amounts)),
            "right_total": json_cell(_total(read[1].amounts)),
            "warnings": warnings,
        }
        ctx.log(
            f"{lname} {len(given[0])} 行と{rname} {len(given[1])} 行を照合しました: "
            f"一致 {len(matched)} 件、差異 {len(differences)} 件、"
            f"{lname}のみ {len(unmatched[0])} 件、{rname}のみ {len(unmatched[1])} 件"
        )
        return {
            "matched": matched,
            "differences": differences,
            "unmatched_left": unmatched[0],
            "unmatched_right": unmatched[1],
            "summary": summary,
        }


# --- configuration ---------------------------------------------------------------------------


def _keys(value: Any, company: bool, reading: bool) -> list[tuple[tuple[str, str], bool, bool]]:
    hint = "keys は照合に使う列の組のリストです。例: keys: [{left: 取引先, right: 振込名義}]"
    if not isinstance(value, list) or not value:
        raise input_error("keys（照合キーの列）が指定されていません。", hint, field="keys")
    out = []
    for number, item in enumerate(value, start=1):
        item = item if isinstance(item, Mapping) else {}
        left, right = item.get("left"), item.get("right")
        own = item.get("normalize_company", company)
        spoken = item.get("normalize_reading", reading)
        if not (
            _name(left) and _name(right) and isinstance(own, bool) and isinstance(spoken, bool)
        ):
            raise item_error(
                "keys",
                number,
                f"（{value[number - 1]!r}）が {{left: 列名, right: 列名}} の形ではありません。",
                hint,
            )
        out.append(((left.strip(), right.strip()), own, spoken))
    return out


def _columns(value: Any, field: str) -> tuple[tuple[str, str], Decimal]:
    """``amount`` / ``date``: the left and right column names and the tolerance (≥ 0)."""
    option, example = TOLERANCES[field]
    tolerance = value.get(option, 0) if isinstance(value, Mapping) else None
    kind = "整数" if field == "date" else "数値"
    if (
        not isinstance(value, Mapping)
        or not _name(value.get("left"))
        or not _name(value.get("right"))
        or set(value) - {"left", "right", option}
        or isinstance(tolerance, bool)
        or not isinstance(tolerance, int if field == "date" else int | float)
        or tolerance < 0
    ):
        raise input_error(
            f"{field} は {{left: 列名, right: 列名, {option}: 0 以上の{kind}}} の形で指定してください"
            f"（指定: {value!r}）。",
            f"例: {field}: {example}（{option} を省略すると 0: 差のないものだけを一致とします）",
            field=field,
        )
    return (value["left"].strip(), value["right"].strip()), Decimal(repr(tolerance))


def _name(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


# --- reading the columns ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Read:
    """One table's amounts and dates as the rule reads them (NaN / NaT where unreadable)."""

    amounts: np.ndarray  # float64
    days: pd.Series | None  # datetime64 days, None without dates

    @classmethod
    def of(cls, table: Table, side: Side, zone: dt.tzinfo) -> _Read:
        amounts = read_amounts(key_column(table, side.amount))[0].to_numpy(dtype="float64")
        days = read_dates(key_column(table, side.date), zone)[0] if side.date else None
        return cls(amounts, days)

    @property
    def ordinals(self) -> np.ndarray:
        """The days as proleptic ordinals (int64)."""
        assert self.days is not None
        return ordinal_days(self.days).astype(np.int64)

    def problems(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows whose amount, and rows whose date, cannot be read (blank ones included)."""
        amount = ~np.isfinite(self.amounts)
        day = np.zeros(len(amount), dtype=bool) if self.days is None else self.days.isna()
        return amount, np.asarray(day, dtype=bool)


def _check_readable(cfg: Config, tables: list[Table], read: tuple[_Read, _Read]) -> None:
    """BlockError naming the unreadable amounts and dates, in the order of the tables (left
    first), their rows, and amount before date; the first :data:`MAX_DETAILED` in detail."""
    problems: list[dict[str, Any]] = []
    firsts: list[tuple[int, int, int, str]] = []  # where each kind first appears
    count = 0
    for number, (side, table, part) in enumerate(zip(cfg.sides, tables, read, strict=True)):
        masks = list(zip(part.problems(), (side.amount, side.date), ("金額", "日付"), strict=True))
        for order, (mask, _, kind) in enumerate(masks):
            if mask.any():
                firsts.append((number, int(np.argmax(mask)), order, kind))
                count += int(np.count_nonzero(mask))
        for row in np.flatnonzero(masks[0][0] | masks[1][0])[:MAX_DETAILED].tolist():
            problems += [
                _problem(side, table, row, column, kind)
                for mask, column, kind in masks
                if column and mask[row]
            ]
    if count:
        kinds = list(dict.fromkeys(kind for *_, kind in sorted(firsts)))
        raise _unreadable(problems[:MAX_DETAILED], count, kinds)


def _problem(side: Side, table: Table, row: int, column: str, kind: str) -> dict[str, Any]:
    value = json_cell(table.frame[column].iloc[row]) if column in table.frame.columns else None
    shown = "空欄" if value is None or not str(value).strip() else repr(value)[:100]
    return (
        {"label": side.label, "side": side.field, "row": row + 1}
        | {"position": table.position(row), "where": table.where(row, column)}
        | {"column": column, "kind": kind, "value": shown}
    )


def _unreadable(problems: list[dict[str, Any]], count: int, kinds: list[str]) -> BlockError:
    listed = "、".join(
        f"{p['label']}（{p['side']}）の {p['where']}（値: {p['value']}）"
        for p in problems[:MAX_LISTED]
    )
    more = count - MAX_LISTED
    return input_error(
        f"{'・'.join(kinds)}として読めない値が {count} 件あります: {listed}"
        + (f" ほか {more} 件" if more > 0 else ""),
        "金額は 110000、¥110,000、110,000円 のように、日付は 2025-01-31、2025/1/31、"
        "2025年1月31日 のように書かれている必要があります。元の表の値を直すか、"
        "table.filter（not_null など）で対象外の行を除いてから照合してください。",
        problems=problems,
    )


# --- keys ------------------------------------------------------------------------------------


def _key_codes(cfg: Config, tables: list[Table]) -> tuple[np.ndarray, np.ndarray]:
    """Every row's key code on both sides (-1 where a key part is blank: such a row cannot
    match); BlockError when a key has more than :data:`MAX_PAIRS_PER_KEY` pairs."""
    left, right = cfg.sides
    columns = [
        column_codes(
            [key_column(tables[0], a), key_column(tables[1], b)], _key_rule(company, reading)
        )
        for a, b, company, reading in zip(
            left.keys, right.keys, cfg.company, cfg.reading, strict=True
        )
    ]
    (lcodes, rcodes), count = combine([codes for codes, _ in columns])
    lcount = np.bincount(lcodes[lcodes >= 0], minlength=count)
    rcount = np.bincount(rcodes[rcodes >= 0], minlength=count)
    large = np.flatnonzero(lcount * rcount > MAX_PAIRS_PER_KEY)
    if large.size:  # the first in the order keys first appear (left table first)
        code = int(large[0])
        row = int(first_rows(lcodes, count)[code])
        key = [str(values[codes[0][row]]) for codes, values in columns]
        raise input_error(
            f"キー「{' / '.join(key)}」の行が多すぎて照合できません"
            f"（{left.label} {lcount[code]} 行 × {right.label} {rcount[code]} 行）。",
            "請求番号などのキー列を keys に加えるか、月ごとなどに分けて照合してください。",
            field="keys",
            key=key,
        )
    return lcodes, rcodes


def _key_rule(company: bool, reading: bool) -> KeyRule:
    """What a key cell compares by (:func:`normalize_key`: company forms dropped, or the kana
    reading); None when that is blank."""

    def rule(value: Any) -> str | None:
        return normalize_key(value, company=company, reading=reading) or None

    return rule


# --- pairing ---------------------------------------------------------------------------------


def _pair(
    cfg: Config,
    read: tuple[_Read, _Read],
    codes: tuple[np.ndarray, np.ndarray],
    ctx: BlockContext,
) -> tuple[Pairing, int | None]:
    """The pairs, and the scale of their exact amount differences (None: Decimals)."""
    size = len(read[0].amounts)
    amounts, scale = exact_amounts(np.concatenate([read[0].amounts, read[1].amounts]))
    if scale is None:
        tolerance: int | Decimal = cfg.tolerance
    else:  # a difference of whole units is within tolerance when it is within its floor
        units = (cfg.tolerance * 10**scale).to_integral_value(ROUND_FLOOR)
        tolerance = min(int(units), _HUGE)
    left, right = (
        PairSide(code, part, None if r.days is None else r.ordinals)
        for code, part, r in zip(codes, np.split(amounts, [size]), read, strict=True)
    )
    days = min(cfg.tolerance_days, _HUGE)
    return pair_rows(left, right, tolerance, days, check=ctx.check_cancelled), scale


@dataclass(frozen=True)
class _Pairs:
    """The pairs with what the output shows of them."""

    rows: tuple[np.ndarray, np.ndarray]  # left rows, right rows
    difference: np.ndarray  # float64: right amount minus left (exact as a decimal)
    days: np.ndarray  # int64: right day minus left
    kinds: np.ndarray  # 区分

    @classmethod
    def of(cls, pairing: Pairing, scale: int | None) -> _Pairs:
        if scale is None:
            difference = np.array([float(d) for d in pairing.amount_diff], dtype="float64")
        else:  # whole units below 2**52: the quotient is the decimal's float, correctly rounded
            difference = pairing.amount_diff.astype("float64") / 10.0**scale
        same = np.asarray(pairing.amount_diff == 0, dtype=bool) & (pairing.day_diff == 0)
        both = pairing.amount_off & pairing.day_off
        off = np.where(both, 4, np.where(pairing.amount_off, 2, 3))
        kind = np.where(pairing.outside, off, np.where(same, 0, 1))
        return cls((pairing.left, pairing.right), difference, pairing.day_diff, KINDS[kind])


def _unpaired(table: Table, rows: np.ndarray) -> Table:
    """The rows of ``table`` in no pair, in order."""
    paired = np.zeros(len(table), dtype=bool)
    paired[rows] = True
    return table.take(np.flatnonzero(~paired))


def _total(amounts: np.ndarray) -> Decimal:
    return exact_sums(pd.Series(amounts), np.zeros(len(amounts), dtype=np.int64), 1)[0]


# --- output ----------------------------------------------------------------------------------


def _other_columns(cfg: Config, tables: list[Table]) -> tuple[list[str], list[str]]:
    """The columns copied with a label prefix; BlockError when two output columns clash."""
    left, right = cfg.sides
    present = [t.columns if len(t) else [] for t in tables]  # an empty table shows no columns
    others = (
        [c for c in present[0] if c not in left.used],
        [c for c in present[1] if c not in (right.amount, right.date)],
    )
    names = [*left.keys, "区分", f"{left.label}金額", f"{right.label}金額", "差額"]
    if left.date:
        names += [f"{left.label}日付", f"{right.label}日付", "日数差"]
    names += [f"{left.label}行番号", f"{right.label}行番号"]
    names += [f"{s.label}_{c}" for s, cols in zip(cfg.sides, others, strict=True) for c in cols]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise input_error(
            f"照合結果の列名 {', '.join(clashes)} が重複します。",
            "left_label / right_label を変えるか、キー列の名前を変えてください"
            "（区分、差額、日数差 などは照合結果が使う列名です）。",
            field="keys",
            columns=clashes,
        )
    return others


def _pair_table(
    cfg: Config,
    tables: list[Table],
    read: tuple[_Read, _Read],
    others: tuple[list[str], list[str]],
    pairs: _Pairs,
    chosen: np.ndarray,
) -> Table:
    """The ``chosen`` pairs as a table (in left-row order): the left key columns, 区分, both
    amounts and their difference, both dates and theirs, both row numbers (1-based), then the
    other columns of each side with its label; rows keep the left row's file position. No
    pairs make an empty table without columns (as an empty list of records is)."""
    (left, right), ltable = cfg.sides, tables[0]
    lrows, rrows = pairs.rows[0][chosen], pairs.rows[1][chosen]
    if not len(lrows):
        return Table(pd.DataFrame(), origin=ltable.origin, positions=np.zeros(0, np.int64))
    columns: dict[str, Any] = {k: _cells(ltable, k, lrows) for k in left.keys}
    columns["区分"] = pairs.kinds[chosen]
    columns[f"{left.label}金額"] = read[0].amounts[lrows]
    columns[f"{right.label}金額"] = read[1].amounts[rrows]
    columns["差額"] = pairs.difference[chosen]
    if read[0].days is not None and read[1].days is not None:
        columns[f"{left.label}日付"] = read[0].days.array.take(lrows)
        columns[f"{right.label}日付"] = read[1].days.array.take(rrows)
        columns["日数差"] = pairs.days[chosen]
    columns[f"{left.label}行番号"] = lrows + 1
    columns[f"{right.label}行番号"] = rrows + 1
    units = {k: ltable.units[k] for k in left.keys if k in ltable.units}
    amount_units = [t.units.get(s.amount) for s, t in zip(cfg.sides, tables, strict=True)]
    for side, unit in zip(cfg.sides, amount_units, strict=True):
        if unit is not None:
            units[f"{side.label}金額"] = unit
    if amount_units[0] is not None and amount_units[0] == amount_units[1]:
        units["差額"] = amount_units[0]
    for side, table, rows, names in zip(cfg.sides, tables, (lrows, rrows), others, strict=True):
        for column in names:
            columns[f"{side.label}_{column}"] = _cells(table, column, rows)
            if column in table.units:
                units[f"{side.label}_{column}"] = table.units[column]
    return Table(
        pd.DataFrame(columns, index=pd.RangeIndex(len(lrows)), copy=False),
        origin=ltable.origin,
        positions=None if ltable.positions is None else ltable.positions[lrows],
        units=units,
    )


def _cells(table: Table, column: str, rows: np.ndarray) -> Any:
    """The column's cells at ``rows``, typed as they are; a list or a mapping (in records other
    blocks made) becomes its text, as a record of the pair shows it."""
    cells = key_column(table, column).array.take(rows)
    nested = pd.api.types.is_object_dtype(cells.dtype) and any(
        issubclass(t, _NESTED) for t in set(map(type, cells))
    )
    if nested:
        return np.array([json_cell(value) for value in cells], dtype=object)
    return cells
