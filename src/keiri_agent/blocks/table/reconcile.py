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
in exactly one of ``matched``, ``differences``, ``unmatched_left``, ``unmatched_right``.

Complexity: O(n + m) to group, O(a·b·log(a·b)) inside a key of a left and b right rows (at most
:data:`MAX_PAIRS_PER_KEY`). Keys are compared with ``table.dedupe``'s :func:`normalize_key`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeGuard

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.inputs import flag, item_error
from keiri_agent.blocks.table.base import Table, TableBlock
from keiri_agent.blocks.table.cells import json_cell, parse_amount, parse_date
from keiri_agent.blocks.table.normalize import normalize_key
from keiri_agent.blocks.table.records import columns_of, input_error, require_columns
from keiri_agent.errors import BlockError

__all__ = ["MAX_PAIRS_PER_KEY", "TableReconcileBlock"]

MAX_PAIRS_PER_KEY = 1_000_000
MAX_LISTED = 10  # problems spelled out in one error message; all are in details
DEFAULT_LABELS = ("請求", "入金")
SIDES = ("left", "right")
TOLERANCES = {  # the tolerance option of amount / date, and an example for hints
    "amount": ("tolerance", "{left: 請求金額, right: 入金額, tolerance: 660}"),
    "date": ("tolerance_days", "{left: 支払期日, right: 入金日, tolerance_days: 5}"),
}


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


@dataclass(frozen=True)
class Row:
    index: int  # 0-based position in its table
    record: dict[str, Any]
    key: tuple[str, ...] | None  # None when a key part is blank: such a row cannot match
    amount: Decimal
    day: dt.date | None


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
        tables = [table.records() for table in given]
        for side, records in zip(cfg.sides, tables, strict=True):
            where = f"keys / amount / date の {side.field}"
            require_columns(records, side.used, field=where, table=side.field)
        problems: list[dict[str, Any]] = []
        left, right = (
            _rows(t, s, cfg, problems, g) for s, t, g in zip(cfg.sides, tables, given, strict=True)
        )
        if problems:
            raise _unreadable(problems)
        ctx.check_cancelled()
        others = _other_columns(cfg, tables)
        paired = _pair_all(left, right, cfg, ctx)
        matched: list[dict[str, Any]] = []
        differences: list[dict[str, Any]] = []
        for lrow, rrow in paired:
            kind = _kind(lrow, rrow, cfg)
            target = matched if kind in ("一致", "許容範囲内") else differences
            target.append(_pair_record(lrow, rrow, kind, cfg, others))
        used = {(0, lrow.index) for lrow, _ in paired} | {(1, rrow.index) for _, rrow in paired}
        unmatched = [
            table.take([r.index for r in rows if (n, r.index) not in used])
            for n, (rows, table) in enumerate(zip((left, right), given, strict=True))
        ]
        (lname, rname), warnings = (s.label for s in cfg.sides), []
        for name, rows in ((lname, left), (rname, right)):
            if blank := sum(r.key is None for r in rows):
                warnings.append(
                    f"{name}の {blank} 行はキーが空欄のため照合できず、{name}のみとして残しました。"
                )
        summary = {
            "left_rows": len(left),
            "right_rows": len(right),
            "matched": len(matched),
            "differences": len(differences),
            "unmatched_left": len(unmatched[0]),
            "unmatched_right": len(unmatched[1]),
            "left_total": json_cell(sum((r.amount for r in left), Decimal(0))),
            "right_total": json_cell(sum((r.amount for r in right), Decimal(0))),
            "warnings": warnings,
        }
        ctx.log(
            f"{lname} {len(left)} 行と{rname} {len(right)} 行を照合しました: "
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


# --- reading rows ----------------------------------------------------------------------------


def _rows(
    records: list[dict[str, Any]],
    side: Side,
    cfg: Config,
    problems: list[dict[str, Any]],
    table: Table,
) -> list[Row]:
    rows: list[Row] = []
    for index, record in enumerate(records):
        parts = tuple(
            normalize_key(record.get(column), company=company, reading=reading)
            for column, company, reading in zip(side.keys, cfg.company, cfg.reading, strict=True)
        )
        amount = parse_amount(record.get(side.amount))
        day = parse_date(record.get(side.date)) if side.date else None
        for column, ok, kind in (
            (side.amount, amount is not None, "金額"),
            (side.date, day, "日付"),
        ):
            if column and not ok:
                value = record.get(column)
                shown = "空欄" if value is None or not str(value).strip() else repr(value)[:100]
                problems.append(
                    {"label": side.label, "side": side.field, "row": index + 1}
                    | {"position": table.position(index), "where": table.where(index, column)}
                    | {"column": column, "kind": kind, "value": shown}
                )
        key = parts if all(parts) else None
        rows.append(Row(index, record, key, Decimal(repr(amount or 0)), day))
    return rows


def _unreadable(problems: list[dict[str, Any]]) -> BlockError:
    listed = "、".join(
        f"{p['label']}（{p['side']}）の {p['where']}（値: {p['value']}）"
        for p in problems[:MAX_LISTED]
    )
    more = len(problems) - MAX_LISTED
    kinds = "・".join(dict.fromkeys(p["kind"] for p in problems))
    return input_error(
        f"{kinds}として読めない値が {len(problems)} 件あります: {listed}"
        + (f" ほか {more} 件" if more > 0 else ""),
        "金額は 110000、¥110,000、110,000円 のように、日付は 2025-01-31、2025/1/31、"
        "2025年1月31日 のように書かれている必要があります。元の表の値を直すか、"
        "table.filter（not_null など）で対象外の行を除いてから照合してください。",
        problems=problems,
    )


# --- pairing ---------------------------------------------------------------------------------


def _pair_all(
    left: list[Row], right: list[Row], cfg: Config, ctx: BlockContext
) -> list[tuple[Row, Row]]:
    """Every pair (matched or different), in left-row order."""
    by_key: dict[tuple[str, ...], tuple[list[Row], list[Row]]] = {}
    for side, rows in enumerate((left, right)):
        for row in rows:
            if row.key is not None:
                by_key.setdefault(row.key, ([], []))[side].append(row)
    pairs: list[tuple[Row, Row]] = []
    for key, (lrows, rrows) in by_key.items():
        ctx.check_cancelled()
        if len(lrows) * len(rrows) > MAX_PAIRS_PER_KEY:
            raise input_error(
                f"キー「{' / '.join(key)}」の行が多すぎて照合できません"
                f"（{cfg.sides[0].label} {len(lrows)} 行 × {cfg.sides[1].label} {len(rrows)} 行）。",
                "請求番号などのキー列を keys に加えるか、月ごとなどに分けて照合してください。",
                field="keys",
                key=list(key),
            )
        pairs.extend(_pair_key(lrows, rrows, cfg))
    return sorted(pairs, key=lambda p: (p[0].index, p[1].index))


def _pair_key(lrows: list[Row], rrows: list[Row], cfg: Config) -> list[tuple[Row, Row]]:
    """Greedy one-to-one pairing inside one key: in tolerance, then amount, date, row order."""
    candidates = []
    for li, lrow in enumerate(lrows):
        for ri, rrow in enumerate(rrows):
            amount_diff, day_diff = _diffs(lrow, rrow)
            outside = amount_diff > cfg.tolerance or day_diff > cfg.tolerance_days
            candidates.append((outside, amount_diff, day_diff, li, ri))
    candidates.sort()
    used_left: set[int] = set()
    used_right: set[int] = set()
    pairs: list[tuple[Row, Row]] = []
    for *_, li, ri in candidates:
        if li not in used_left and ri not in used_right:
            used_left.add(li)
            used_right.add(ri)
            pairs.append((lrows[li], rrows[ri]))
    return pairs


def _days(lrow: Row, rrow: Row) -> int:
    return (rrow.day - lrow.day).days if lrow.day and rrow.day else 0


def _diffs(lrow: Row, rrow: Row) -> tuple[Decimal, int]:
    return abs(rrow.amount - lrow.amount), abs(_days(lrow, rrow))


def _kind(lrow: Row, rrow: Row, cfg: Config) -> str:
    amount_diff, day_diff = _diffs(lrow, rrow)
    amount_off, day_off = amount_diff > cfg.tolerance, day_diff > cfg.tolerance_days
    if amount_off or day_off:
        return (
            "金額・日付差異" if amount_off and day_off else "金額差異" if amount_off else "日付差異"
        )
    return "一致" if amount_diff == 0 and day_diff == 0 else "許容範囲内"


# --- output ----------------------------------------------------------------------------------


def _other_columns(cfg: Config, tables: list[list[dict[str, Any]]]) -> tuple[list[str], list[str]]:
    """The columns copied with a label prefix; BlockError when two output columns clash."""
    left, right = cfg.sides
    others = (
        [c for c in columns_of(tables[0]) if c not in left.used],
        [c for c in columns_of(tables[1]) if c not in (right.amount, right.date)],
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


def _pair_record(
    lrow: Row, rrow: Row, kind: str, cfg: Config, others: tuple[list[str], list[str]]
) -> dict[str, Any]:
    left, right = cfg.sides
    out: dict[str, Any] = {k: json_cell(lrow.record.get(k)) for k in left.keys}
    out["区分"] = kind
    out[f"{left.label}金額"] = json_cell(lrow.amount)
    out[f"{right.label}金額"] = json_cell(rrow.amount)
    out["差額"] = json_cell(rrow.amount - lrow.amount)
    if lrow.day and rrow.day:
        out[f"{left.label}日付"] = lrow.day.isoformat()
        out[f"{right.label}日付"] = rrow.day.isoformat()
        out["日数差"] = _days(lrow, rrow)
    out[f"{left.label}行番号"] = lrow.index + 1
    out[f"{right.label}行番号"] = rrow.index + 1
    for side, row, columns in ((left, lrow, others[0]), (right, rrow, others[1])):
        out.update({f"{side.label}_{c}": json_cell(row.record.get(c)) for c in columns})
    return out


def _plain(record: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): json_cell(v) for k, v in record.items()}
