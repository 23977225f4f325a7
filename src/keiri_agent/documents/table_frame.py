"""What both halves of ``read_table`` share: the result, the header choice, the finish.

The text half (``table_text``) and the Excel half (``table_xlsx``) each turn a file into rows
of cells, a raw DataFrame and the file position of each of its rows (the line of a CSV, the
row of a sheet, both counted from 1 as an editor or Excel shows them); from there a table is
finished the same way: the header row chosen (or checked when the caller named it), columns
named, empty rows and unnamed empty columns dropped, the layout rows of a paged export
(the header and titles repeated on each page, page numbers, a unit line under the table:
``table_layout``), total rows and footer lines set aside (``table_totals``),
types converted (``table_types``), and every decision written into ``TableReadInfo``, each
cell it mentions named by its file position (:meth:`TableReadInfo.where`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import tzinfo
from typing import Any, Literal

import numpy as np
import pandas as pd
from openpyxl.utils import get_column_letter

from keiri_agent.documents.cell_forms import YEN_FACTORS
from keiri_agent.documents.cell_period import period_in
from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.documents.table_infer import detect_header, make_column_names
from keiri_agent.documents.table_layout import layout_rows, row_text
from keiri_agent.documents.table_totals import (
    TotalDifference,
    is_carry_label,
    is_total_label,
    mismatch_said,
    must_add_up,
    total_differences,
    total_rows,
)
from keiri_agent.documents.table_types import type_column, unit_in, units_of
from keiri_agent.documents.table_value import Table, TableOrigin

__all__ = [
    "MAX_LISTED_CELLS",
    "TableReadInfo",
    "TableResult",
    "choose_header",
    "finish_table",
]

# Unreadable cells listed in ``info`` per column (the count is always exact).
MAX_LISTED_CELLS = 100


@dataclass
class TableReadInfo:
    """What ``read_table`` decided, for the UI, logs and LLM prompts.

    ``header_row`` is the 0-based row index (file line / sheet row - 1) of the header, None
    when the table has no header; ``skipped_title_rows`` holds the text of the non-blank rows
    above it; ``converted`` maps column names to "number", "date", "datetime" or "month";
    ``units`` the unit of amount columns (千円...); ``unreadable`` the cells of a typed or
    mostly-typed column that could not be read (``{column, position, cell, value, reason,
    kind}``, ``kind`` what the cell was to be: amount, percent, date, datetime or month;
    at most ``MAX_LISTED_CELLS`` per column, ``unreadable_counts`` counts them all);
    ``totals`` the total rows set aside (``{position, label}``), ``footer`` the notes after the
    data (``※ 金額は税込です``, ``以上``, ``出力日: …``) set aside (``{position, text}``; see
    ``table_totals``; in ``to_dict`` only when there were any, so a table without notes reads
    as before); ``layout`` the rows of a paged export that are not data (the header and
    titles repeated, page numbers, a unit line: ``table_layout``; ``{position, text}``, in
    ``to_dict`` only when there were any); ``notes`` what was read in another form than the
    cell's value, nothing in doubt (a workbook's code shown with its leading zeros read as
    shown: ``table_xlsx``; in ``to_dict`` only when there were any). Positions are file lines of a CSV, sheet rows of a workbook
    (``position_kind``), from 1.
    """

    file: str
    format: str  # "csv" (any delimited text) | "xlsx"
    encoding: str | None = None
    delimiter: str | None = None
    sheet: str | None = None
    sheets: list[str] = field(default_factory=list)
    header_row: int | None = None
    rows: int = 0
    columns: list[str] = field(default_factory=list)
    skipped_title_rows: list[str] = field(default_factory=list)
    converted: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    position_kind: Literal["line", "row"] = "line"
    column_letters: dict[str, str] = field(default_factory=dict)  # workbooks only
    units: dict[str, str] = field(default_factory=dict)
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    unreadable_counts: dict[str, int] = field(default_factory=dict)
    totals: list[dict[str, Any]] = field(default_factory=list)
    footer: list[dict[str, Any]] = field(default_factory=list)
    layout: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        found = asdict(self)
        for optional in ("footer", "layout", "notes"):
            if not found[optional]:
                del found[optional]
        return found

    def origin(self) -> TableOrigin:
        """How this table's rows are named to the user (file, line or sheet row, letters)."""
        return TableOrigin(self.file, self.position_kind, self.sheet, dict(self.column_letters))

    def where(self, position: int | None, column: str | None = None) -> str:
        """A row or cell as the user finds it (:meth:`TableOrigin.where`)."""
        return self.origin().where(position, column)


@dataclass
class TableResult:
    """A table read by :func:`read_table`: the DataFrame, how it was read, where each row is
    in the file (``positions``, aligned with ``df``; None when it cannot be told) and the total
    rows set aside (``totals``, raw cells, with ``total_positions``); the one grand-total row
    of ``totals`` (``total_row``, -1 for none) and its amounts that are not the sums of ``df``'s
    columns (``total_differences``, found once while reading: ``table_totals.total_differences``)."""

    df: pd.DataFrame
    info: TableReadInfo
    positions: np.ndarray | None = None
    totals: pd.DataFrame | None = None
    total_positions: np.ndarray | None = None
    total_row: int = -1
    total_differences: list[TotalDifference] = field(default_factory=list)

    def amount_differences(self) -> list[TotalDifference]:
        """``total_differences`` in the columns that must add up (``table_totals.must_add_up``:
        amounts, not rates, unit prices or balances): what the ``file.read_table`` block, the
        analysis agent and conversion check."""
        return [
            d
            for d in self.total_differences
            if must_add_up(d.column, self.df[d.column], self.info.units)
        ]

    def table(self) -> Table:
        """The rows as a :class:`Table` that remembers where each came from."""
        return Table(
            self.df, origin=self.info.origin(), positions=self.positions, units=self.info.units
        )

    def totals_table(self) -> Table:
        """The total rows set aside, as a table (empty when there were none)."""
        if self.totals is None:
            return Table(pd.DataFrame(columns=self.info.columns))
        return Table(self.totals, origin=self.info.origin(), positions=self.total_positions)


def choose_header(
    rows: list[list[Any]], header_row: int | None, label: str
) -> tuple[int | None, int]:
    if header_row is not None:
        if (
            header_row < 0
            or header_row >= len(rows)
            or not any(str(v or "").strip() for v in rows[header_row])
        ):
            raise invalid_input(
                label,
                f"'{label}' の {header_row + 1} 行目（header_row={header_row}）にヘッダーがありません。",
                "header_row には列名が書かれた行の番号（0 始まり）を指定するか、指定を外して自動判定にしてください。",
                header_row=header_row,
                rows=len(rows),
            )
        return header_row, header_row + 1
    try:
        return detect_header(rows)
    except ValueError:
        raise unreadable(
            label,
            f"'{label}' にデータがありません（空の行だけです）。",
            "データの入ったファイルやシートを指定してください。",
        ) from None


def finish_table(
    frame: pd.DataFrame,
    header_cells: list[Any],
    header: int | None,
    above: list[list[Any]],
    info: TableReadInfo,
    positions: Sequence[int] | np.ndarray | None = None,
    columns: Sequence[str] | None = None,
    zone: tzinfo | None = None,
    scales: Mapping[int, tuple[int, str]] | None = None,
    header_rows: Sequence[Sequence[Any]] = (),
) -> TableResult:
    """Name columns, drop empty rows and unnamed empty columns, set total rows aside, keep
    ``columns`` (all when None; after the total rows are found, whose labels may stand in
    another column), convert types, fill ``info``. ``positions``: the file line / sheet row of
    each row of ``frame``; ``zone`` the local zone for times written with an offset;
    ``scales``: the columns (of ``frame``) a workbook shows divided by 1,000 per step, with
    the number format (``table_xlsx.display_scale``); ``header_rows``: each row of a header of
    several rows as written (a workbook's), which a paged sheet may repeat."""
    ncols = frame.shape[1]
    cells = list(header_cells) + [None] * (ncols - len(header_cells))
    named = [str(c).strip() != "" and c is not None for c in cells]
    filled = frame.notna().to_numpy()
    keep = [j for j in range(ncols) if named[j] or filled[:, j].any()]
    rows_with_values = np.asarray(filled[:, keep].any(axis=1), dtype=bool)
    where = np.asarray(positions, dtype=np.int64) if positions is not None else None
    if where is not None:
        where = where[rows_with_values]
    frame = frame.iloc[:, keep].loc[rows_with_values].reset_index(drop=True)
    names, renamed = make_column_names([cells[j] for j in keep], keep)
    scaled = {names[k]: scales[j] for k, j in enumerate(keep) if scales and j in scales}
    if info.format == "xlsx":
        info.column_letters = {
            n: get_column_letter(j + 1) for n, j in zip(names, keep, strict=True)
        }
    info.position_kind = "line" if info.format == "csv" else "row"
    info.skipped_title_rows = [text for text in map(row_text, above) if text]
    headers = [[cells[j] for j in keep]]
    headers += [[row[j] if j < len(row) else None for j in keep] for row in header_rows]
    layout, unit_lines = layout_rows(frame, headers, info.skipped_title_rows)
    if layout.any():
        at = where[layout] if where is not None else None
        what = "ページごとの見出し・タイトル・ページ番号・単位の行"
        _note_rows(info, info.layout, what, frame[layout], at, "layout")
        frame = frame[~layout].reset_index(drop=True)
        where = where[~layout] if where is not None else None
    totals_mask, footer = total_rows(frame.set_axis(names, axis=1), where)
    if footer:
        at = where[len(where) - footer :] if where is not None else None
        _note_rows(
            info, info.footer, "表の後の注記", frame.iloc[len(frame) - footer :], at, "footer"
        )
        frame = frame.iloc[: len(frame) - footer]
        where = where[: len(where) - footer] if where is not None else None
        totals_mask = totals_mask[: len(frame)]
    totals = total_positions = None
    if totals_mask.any():
        totals = frame[totals_mask].set_axis(names, axis=1).reset_index(drop=True)
        total_positions = where[totals_mask] if where is not None else None
        frame = frame[~totals_mask].reset_index(drop=True)
        where = where[~totals_mask] if where is not None else None
    if columns is not None:
        frame, names = _keep_columns(frame, names, columns, info.file)
        if totals is not None:
            totals = totals[list(names)]
    unit_texts = _unit_texts(info, [*info.skipped_title_rows, *unit_lines])
    title_unit = next((u for u in map(unit_in, unit_texts) if u), None)
    period = period_in(info.skipped_title_rows)
    # Built column by column, then assembled once: assigning into a wide frame copies it
    # every time (100,000 columns took minutes).
    typed: dict[str, pd.Series] = {}
    cell_units: dict[str, str] = {}
    dashes: dict[str, str] = {}  # a yen amount's dash as each column reads it (table_types)
    for j, col in enumerate(names):
        typing = type_column(frame.iloc[:, j], col, unit=title_unit, zone=zone, period=period)
        typed[col] = typing.series
        if typing.unit is not None:
            cell_units[col] = typing.unit
        if typing.dash is not None:
            dashes[col] = typing.dash
        if typing.kind is not None:
            info.converted[col] = typing.kind
        for note in typing.notes:
            info.warnings.append(f"列「{col}」: {note}")
        if typing.unreadable:
            _note_unreadable(info, col, typing, where)
    frame = pd.DataFrame(typed, index=frame.index) if typed else frame.set_axis(names, axis=1)
    info.units = {
        name: unit
        for name, unit in units_of(names, unit_texts).items()
        if info.converted.get(name) == "number" or unit_in(name) is not None
    }
    info.units.update(cell_units)  # written in the cells (1,200千円): table_types
    for name, (scale, number_format) in scaled.items():
        if info.converted.get(name) == "number":
            _note_scaled(info, name, scale, number_format)
    info.header_row = header
    info.rows = len(frame)
    info.columns = names
    if info.skipped_title_rows:
        titles = " / ".join(info.skipped_title_rows)
        info.warnings.append(
            f"ヘッダーより上の {len(info.skipped_title_rows)} 行をタイトル行として読み飛ばしました: {titles}"
        )
    if renamed:
        info.warnings.append(
            f"列名が空または重複していたため、次の名前を付けました: {', '.join(renamed)}"
        )
    row, differences = -1, list[TotalDifference]()
    if totals is not None:
        _note_totals(info, totals, total_positions)
        row, differences = total_differences(totals, frame, info.units, dashes)
        for found in differences:
            said = mismatch_said(found, info.where(_position(total_positions, row), found.column))
            info.warnings.append(
                f"{said}。"
                if found.rounding
                else f"{said}。行の抜けや読めなかった金額がないか、ファイルの合計が正しいかを"
                "確かめてください"
            )
    if info.units:
        listed = "、".join(f"「{n}」は{u}" for n, u in info.units.items())
        info.warnings.append(
            f"金額の単位: {listed}（数値はこの単位のまま読み、円には換算していません）"
        )
    return TableResult(frame, info, where, totals, total_positions, row, differences)


def _note_scaled(info: TableReadInfo, name: str, scale: int, number_format: str) -> None:
    """A column a workbook shows divided by 1,000 per ``scale`` (``#,##0,``): the values read
    are the cells' own, so the unit the header names is the display's, not theirs. The unit
    of the values is reported when it is one of ``YEN_FACTORS`` (千円 shown from yen: 円),
    else none, and a warning says how the display differs."""
    divisor = 1000**scale
    shown = info.units.get(name)
    held = None
    if shown is not None:
        held = next((u for u, f in YEN_FACTORS.items() if f * divisor == YEN_FACTORS[shown]), None)
        info.units.pop(name)
        if held is not None:
            info.units[name] = held
    said = f"見出しの単位は{shown}ですが、" if shown is not None else ""
    unit = f"（{held}）" if held is not None else ""
    info.warnings.append(
        f"列「{name}」: {said}セルの表示形式（{number_format}）は値を {divisor:,} で割って表示して"
        f"います。値は表示ではなくセルに入っている数値{unit}のまま読みました"
        f"（画面の表示の {divisor:,} 倍です）。"
    )


def _keep_columns(
    frame: pd.DataFrame, names: list[str], wanted: Sequence[str], file: str
) -> tuple[pd.DataFrame, list[str]]:
    """Only the ``wanted`` columns, in that order (the others are never typed)."""
    missing = [c for c in wanted if c not in names]
    if missing:
        raise invalid_input(
            file,
            f"{file} に列 {', '.join(missing)} がありません（columns）。",
            f"columns には表の見出しにある列名を指定してください。使える列: {', '.join(names) or 'なし'}"
            "（見出しの行が違う場合は header_row で指定できます）",
            field="columns",
            missing=missing,
            available=names,
        )
    return frame.iloc[:, [names.index(c) for c in wanted]], list(wanted)


# What an unreadable cell was to be (``unreadable[].kind``) and how a note names it.
_CELL_KINDS = {
    "amount": "金額",
    "percent": "割合",
    "date": "日付",
    "datetime": "日時",
    "month": "年月",
}


def _position(where: np.ndarray | None, row: int) -> int | None:
    return int(where[row]) if where is not None else None


def _note_unreadable(
    info: TableReadInfo, column: str, typing: Any, where: np.ndarray | None
) -> None:
    meant = typing.meant or typing.kind or ""
    meant = meant if meant in _CELL_KINDS else "amount"
    kind = _CELL_KINDS[meant]
    info.unreadable_counts[column] = len(typing.unreadable)
    for cell in typing.unreadable[:MAX_LISTED_CELLS]:
        position = _position(where, cell.row)
        letter = info.column_letters.get(column)
        info.unreadable.append(
            {
                "column": column,
                "position": position,
                "cell": f"{letter}{position}" if letter and position is not None else None,
                "value": cell.value,
                "reason": cell.reason,
                "kind": meant,
            }
        )
    first = typing.unreadable[0]
    more = f"ほか {len(typing.unreadable) - 1:,} 個" if len(typing.unreadable) > 1 else ""
    done = "空欄にしました" if typing.kind is not None else "列は文字のまま残しました"
    info.warnings.append(
        f"列「{column}」の {len(typing.unreadable):,} 個のセルを{kind}として読めないため{done}。"
        f"最初は {info.where(_position(where, first.row), column)} の {first.value!r}"
        f"（{first.reason}）{more}"
    )


def _note_totals(info: TableReadInfo, totals: pd.DataFrame, where: np.ndarray | None) -> None:
    carried: list[dict[str, Any]] = []
    summed: list[dict[str, Any]] = []
    for row in range(len(totals)):
        cells = totals.iloc[row].tolist()
        carry = next((str(v).strip() for v in cells if is_carry_label(v)), None)
        label = carry or next(
            (str(v).strip() for v in cells if is_total_label(v)), "見出しなし・上の行の合計と一致"
        )
        info.totals.append({"position": _position(where, row), "label": label})
        (carried if carry else summed).append(info.totals[-1])

    def listed(rows: list[dict[str, Any]]) -> str:
        shown = "、".join(f"{info.where(t['position'])}（{t['label']}）" for t in rows[:5])
        return shown + (" ほか" if len(rows) > 5 else "")

    if summed:
        info.warnings.append(
            f"合計・小計の行 {len(summed)} 行をデータから外しました: {listed(summed)}"
            "（外した行は totals で確認できます）"
        )
    if carried:
        info.warnings.append(
            f"繰越の行 {len(carried)} 行をデータから外しました: {listed(carried)}"
            "（収入・支出などの欄に書かれていても、前の月・ページから、または次へ持ち越す残高で、"
            "取引ではないため。外した行は totals で確認できます）"
        )


def _note_rows(
    info: TableReadInfo,
    kept: list[dict[str, Any]],
    what: str,
    rows: pd.DataFrame,
    where: np.ndarray | None,
    field_name: str,
) -> None:
    """Note rows set aside as ``what`` (footer lines, layout rows) in ``kept`` (``info``'s
    list ``field_name``) and in a warning; ``where``: their positions."""
    for row in range(len(rows)):
        text = row_text(rows.iloc[row].tolist())
        kept.append({"position": _position(where, row), "text": text})
    listed = "、".join(f"{info.where(f['position'])}「{f['text']}」" for f in kept[:5]) + (
        " ほか" if len(kept) > 5 else ""
    )
    info.warnings.append(
        f"{what} {len(kept)} 行をデータから外しました: {listed}"
        f"（外した行は info の {field_name} で確認できます）"
    )


def _unit_texts(info: TableReadInfo, texts: list[str]) -> list[str]:
    """The title rows and unit lines that name the table's unit: all of them when they name
    one unit (or none), none when they disagree (``単位：千円`` above, ``単位：円`` below:
    which is right cannot be known; a warning says so)."""
    named = list(dict.fromkeys(u for u in map(unit_in, texts) if u))
    if len(named) <= 1:
        return texts
    info.warnings.append(
        f"表の上下に違う単位（{'・'.join(named)}）が書かれているため、列に単位を付けませんでした"
        "（数値は書かれたまま読んでいます）。単位の行を確かめてください"
    )
    return []
