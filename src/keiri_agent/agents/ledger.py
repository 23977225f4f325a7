"""The tables the agents work on: read by the ledger reader, amounts in yen, said in Japanese.

The analysis agent (``AnalysisSession.add_file``) and the conversion pipeline
(``convert.formats.read_table``) read a user's CSV or workbook with the reader the plan blocks
use (``documents.read_table``: encodings, title and period rows, blank cells, every amount and
date form, total and subtotal rows set aside). An agent differs from a block in one point, the
unit. A block keeps the numbers as written and names their unit beside them; an agent hands
the table to generated code and to a model that reports in yen, and a sum taken in 千円 and
reported as 円 is 1,000 times off. So :func:`ledger_table`

* multiplies each amount column written in 千円 / 万円 / 百万円 (named in its header or in a
  title row) into yen, and makes its header say 円 (``金額（千円）`` → ``金額（円）``; ``金額``
  under ``単位：千円`` → ``金額（円）``), so values and name agree wherever the table goes (the
  sandbox, a converted file); a workbook column that holds yen but shows them in 千円 by its
  number format (``#,##0,``) keeps its values, and its header is made to say 円 too;
* refuses a table with a cell in an amount column that is not an amount (a typo, a note
  typed into the amount): the column would stay text, or a sum would skip the cell, and the
  figures would be off without a word; the error names the cell as the user finds it (CSV
  line, or sheet, row and cell) and how many more there are. A cell of a rate column (構成比
  ``10%`` beside a bare ``0.2``: 20% or 0.2%?) is refused as a rate, not as an amount;
* refuses a table whose one grand-total row (合計, 総計, 総合計) states an amount that is not
  the sum of the data rows read (in an amount column: not a rate, a unit price or a balance;
  ``TableResult.amount_differences``, the check ``file.read_table`` makes too): a
  subtotal row nobody labelled (an amount alone under its group) reads as data and doubles its
  group, a lost or misread row changes the sum; the agent's figures would then differ from
  the file's own total without a word. The error names the total's cell, both sums and the
  difference. A difference that rounding to 千円 / 百万円 can make (each row and the total
  rounded on their own) is no error: a note says it;
* says in ``notes`` (Japanese, for the model's prompt and the user's log) what was done: the
  units applied, the total and subtotal rows left out (so the model does not add them back),
  notes under the table, the date columns converted and date cells that could not be read,
  and the title rows above the header (the company, the period).

A table a plan block read (``Table``, with its ``units``) is put in yen by :func:`in_yen`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from keiri_agent.documents.cell_forms import YEN_FACTORS
from keiri_agent.documents.failures import invalid_input
from keiri_agent.documents.table_frame import TableReadInfo, TableResult
from keiri_agent.documents.table_totals import STOPPED_SAID, is_carry_label, mismatch_said
from keiri_agent.documents.table_types import unit_in
from keiri_agent.documents.tables import read_table

__all__ = [
    "MAX_NAMED_COLUMNS",
    "MAX_NAMED_ROWS",
    "YEN",
    "LedgerTable",
    "in_yen",
    "ledger_table",
    "read_ledger",
]

YEN = "円"
# Rows (totals, unreadable dates) and columns named one by one in a note; the count is
# always given.
MAX_NAMED_ROWS = 5
MAX_NAMED_COLUMNS = 10
# Decimals kept after multiplying into yen (百万円 written to 0.1 is whole yen; float error of
# the multiplication, 12.3 * 1,000,000 = 12300000.000000002, is far below them).
_YEN_DECIMALS = 6
_DATE_KINDS = {"date": "日付", "datetime": "日時", "month": "年月"}
_NUMBER_HINT = (
    "そのセルを金額（例: 1,200、△1,200、(1,200)）に直すか空欄にして保存し直してから、"
    "もう一度指定してください。"
)
_RATE_HINT = (
    "そのセルを 10% のように % を付けて書くか（Excel ではセルの表示形式をパーセントに）、"
    "空欄にして保存し直してから、もう一度指定してください。"
)


@dataclass
class LedgerTable:
    """A table as the agents see it: ``frame`` (amounts in yen), how it was read (``info``,
    its column names as in the file), what was done to it (``notes``) and the headers made to
    say 円 (``renamed``: as written → as in ``frame``)."""

    frame: pd.DataFrame
    info: TableReadInfo
    notes: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)


def read_ledger(
    source: Path | str | bytes,
    *,
    name: str | None = None,
    sheet: str | int | None = None,
    delimiter: str | None = None,
) -> LedgerTable:
    """Read a CSV/TSV/Excel file as :func:`ledger_table` says (the file layer's errors pass
    through; an amount cell that is not an amount is an INPUT_VALIDATION_FAILED)."""
    return ledger_table(read_table(source, name=name, sheet=sheet, delimiter=delimiter))


def ledger_table(result: TableResult) -> LedgerTable:
    """``result`` with its amounts in yen and its notes (see the module docstring)."""
    info = result.info
    _refuse_unreadable_amounts(info)
    rounding = _unequal_totals(result)
    frame, notes, renamed = in_yen(result.df, info.units)
    return LedgerTable(frame, info, notes + rounding + _read_notes(info, renamed), renamed)


def in_yen(
    frame: pd.DataFrame, units: Mapping[str, str]
) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """``frame`` with each number column of ``units`` (column → the unit its values are in)
    multiplied into yen and its header made to say 円; the notes saying so (one per unit),
    and the headers changed (as written → new). ``frame`` itself is not changed."""
    scaled: dict[str, pd.Series] = {}
    renamed: dict[str, str] = {}
    told: dict[str, list[str]] = {}  # unit the values were in → their headers now
    for column, unit in units.items():
        if column not in frame.columns or not pd.api.types.is_numeric_dtype(frame[column]):
            continue
        header = _yen_header(column, unit)
        if header is None:
            continue  # yen already, and its header says nothing else
        if YEN_FACTORS[unit] != 1:
            scaled[column] = _times(frame[column], YEN_FACTORS[unit])
        if header in frame.columns or header in renamed.values():
            header = column  # the name is taken: keep it, the note says the unit
        else:
            renamed[column] = header
        told.setdefault(unit, []).append(header)
    # Assigned and renamed once: a wide frame is copied at each change.
    frame = frame.assign(**scaled).rename(columns=renamed) if told else frame
    notes = []
    for unit, headers in told.items():
        listed = "".join(f"「{h}」" for h in headers[:MAX_NAMED_COLUMNS])
        if len(headers) > MAX_NAMED_COLUMNS:
            listed += f"ほか {len(headers) - MAX_NAMED_COLUMNS} 列"
        if unit == YEN:
            notes.append(
                f"列{listed}: 見出しの単位は表示上のもので、セルの値は円です（円のまま読みました）。"
            )
        else:
            notes.append(
                f"列{listed}: 元の表は{unit}単位です。{YEN_FACTORS[unit]:,} 倍して円にしてあります"
                "（金額はすべて円です）。"
            )
    return frame, notes, renamed


def _yen_header(column: str, unit: str) -> str | None:
    """The header of ``column`` (values in ``unit``) once its values are yen; None when it
    needs no change (yen, and no other unit named)."""
    named = unit_in(column)
    if named is not None:
        return None if named == YEN else column.replace(named, YEN, 1)
    return None if unit == YEN else f"{column}（{YEN}）"


def _times(series: pd.Series, factor: int) -> pd.Series:
    if pd.api.types.is_integer_dtype(series):
        return series * factor
    scaled = (series * factor).round(_YEN_DECIMALS)
    if bool((scaled.dropna() % 1 == 0).all()):
        return scaled.astype("Int64" if scaled.isna().any() else "int64")
    return scaled


def _refuse_unreadable_amounts(info: TableReadInfo) -> None:
    """Refuse a table with a cell of an amount or a rate column that is not one (module
    docstring), said as what the cell was to be (an amount, or a rate of a percentage column)."""
    cells = [cell for cell in info.unreadable if cell.get("kind") not in _DATE_KINDS]
    if not cells:
        return
    first = cells[0]
    count = sum(
        n for column, n in info.unreadable_counts.items() if column in {c["column"] for c in cells}
    )
    more = f"（ほか {count - 1:,} 個）" if count > 1 else ""
    where = info.where(first["position"], first["column"])
    if first.get("kind") == "percent":
        said = (
            f"{where} の {first['value']!r} を率（百分率）の列の割合として読めません"
            f"（{first['reason']}）{more}。率を 100 倍違えて計算しないよう、読み込みを止めました。"
        )
        hint = _RATE_HINT
    else:
        said = f"{where} の {first['value']!r} を金額として読めません（{first['reason']}）{more}。"
        said += STOPPED_SAID
        hint = _NUMBER_HINT
    raise invalid_input(
        info.file,
        said,
        hint,
        column=first["column"],
        position=first["position"],
        cell=first["cell"],
        value=first["value"],
        unreadable=count,
    )


def _unequal_totals(result: TableResult) -> list[str]:
    """Refuse a table whose grand total differs from its amount columns' sums (module
    docstring); the notes for differences that rounding explains."""
    info = result.info
    notes: list[str] = []
    for found in result.amount_differences():
        column = found.column
        position = info.totals[result.total_row]["position"]
        said = mismatch_said(found, info.where(position, column))
        if found.rounding:
            notes.append(
                f"{said}。明細の行をそのまま使います（集計は明細の行から計算してください）。"
            )
            continue
        raise invalid_input(
            info.file,
            f"{said}。{STOPPED_SAID}",
            "ファイルの合計行と明細を確かめてください。見出しのない小計の行は最初の列に"
            "「小計」「営業部 計」のように書くか削除し、ファイルの合計の方が誤っていれば合計行を"
            "直して、保存し直してから指定してください。",
            column=column,
            position=position,
            stated=str(found.stated),
            summed=str(found.summed),
        )
    return notes


def _rows(info: TableReadInfo, found: list[dict[str, Any]], key: str) -> str:
    """``売上.csv の 8 行目（小計）、12 行目（合計）``: rows named once with their file."""
    sheet = f"シート「{info.sheet}」の " if info.position_kind == "row" and info.sheet else ""
    named = "、".join(
        f"{item['position']} 行目（{item[key]}）" if item["position"] is not None else item[key]
        for item in found[:MAX_NAMED_ROWS]
    )
    more = f" ほか {len(found) - MAX_NAMED_ROWS} 行" if len(found) > MAX_NAMED_ROWS else ""
    return f"{info.file} の {sheet}{named}{more}"


def _read_notes(info: TableReadInfo, renamed: dict[str, str]) -> list[str]:
    notes: list[str] = []
    if info.skipped_title_rows:
        notes.append(
            "表の上のタイトル行（データではありません）: " + " / ".join(info.skipped_title_rows)
        )
    carried = [row for row in info.totals if is_carry_label(row["label"])]
    summed = [row for row in info.totals if not is_carry_label(row["label"])]
    if summed:
        notes.append(
            f"合計・小計の行 {len(summed)} 行はデータから除いてあります: "
            f"{_rows(info, summed, 'label')}。合計や部門別の集計は残りの行をそのまま"
            "集計してください（合計行を足し直す必要はありません）。"
        )
    if carried:
        notes.append(
            f"繰越の行 {len(carried)} 行はデータから除いてあります: "
            f"{_rows(info, carried, 'label')}。前の月・ページからの、または次へ持ち越す残高で"
            "取引ではないため、収入・支出などの集計に足さないでください。"
        )
    if info.footer:
        notes.append(f"表の後の注記 {len(info.footer)} 行はデータから除いてあります。")
    dates = [c for c, kind in info.converted.items() if kind in _DATE_KINDS]
    if dates:
        listed = "、".join(f"「{renamed.get(c, c)}」" for c in dates)
        notes.append(
            f"列{listed}: 和暦・20260203・2026/2/3 などの書き方を日付型に変換してあります。"
        )
    for column, count in info.unreadable_counts.items():
        found = [c for c in info.unreadable if c["column"] == column]
        kind = _DATE_KINDS.get(found[0].get("kind", ""))
        if kind is None:
            continue  # amounts and rates were refused
        cells = [{"position": c["position"], "value": repr(c["value"])} for c in found]
        done = (
            "空欄（NaT）にしてあります"
            if column in info.converted
            else f"列は文字のまま残してあります（{kind}としての計算・月別の集計には使えません）"
        )
        notes.append(
            f"列「{renamed.get(column, column)}」の {count:,} 個のセルは{kind}として読めず"
            f"（最初のセルの理由: {found[0]['reason']}）、{done}: {_rows(info, cells, 'value')}。"
        )
    return notes
