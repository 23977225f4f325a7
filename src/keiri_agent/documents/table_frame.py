"""What both halves of ``read_table`` share: the result, the header choice, the finish.

The text half (``table_text``) and the Excel half (``table_xlsx``) each turn a file into rows
of cells and a raw DataFrame; from there a table is finished the same way: the header row
chosen (or checked when the caller named it), columns named, empty rows and unnamed empty
columns dropped, types converted, and every decision written into ``TableReadInfo``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from keiri_agent.documents.failures import invalid_input, unreadable
from keiri_agent.documents.table_infer import convert_column, detect_header, make_column_names

__all__ = ["TableReadInfo", "TableResult", "choose_header", "finish_table"]


@dataclass
class TableReadInfo:
    """What ``read_table`` decided, for the UI, logs and LLM prompts.

    ``header_row`` is the 0-based row index (file line / sheet row - 1) of the header, None
    when the table has no header; ``skipped_title_rows`` holds the text of the non-blank rows
    above it; ``converted`` maps column names to "number" or "datetime".
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TableResult:
    """A table read by :func:`read_table`: the DataFrame and how it was read."""

    df: pd.DataFrame
    info: TableReadInfo


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
) -> TableResult:
    """Name columns, drop empty rows and unnamed empty columns, convert types, fill ``info``."""
    ncols = frame.shape[1]
    cells = list(header_cells) + [None] * (ncols - len(header_cells))
    named = [str(c).strip() != "" and c is not None for c in cells]
    filled = frame.notna().to_numpy()
    keep = [j for j in range(ncols) if named[j] or filled[:, j].any()]
    rows_with_values = pd.Series(filled[:, keep].any(axis=1), index=frame.index)
    frame = frame.iloc[:, keep].loc[rows_with_values].reset_index(drop=True)
    names, renamed = make_column_names([cells[j] for j in keep], keep)
    # Built column by column, then assembled once: assigning into a wide frame copies it
    # every time (100,000 columns took minutes).
    columns: dict[str, pd.Series] = {}
    for j, col in enumerate(names):
        converted, kind = convert_column(frame.iloc[:, j])
        columns[col] = converted
        if kind is not None:
            info.converted[col] = kind
    frame = pd.DataFrame(columns, index=frame.index) if columns else frame.set_axis(names, axis=1)
    info.header_row = header
    info.rows = len(frame)
    info.columns = names
    info.skipped_title_rows = [
        " ".join(str(v).strip() for v in row if v is not None and str(v).strip())
        for row in above
        if any(v is not None and str(v).strip() for v in row)
    ]
    if info.skipped_title_rows:
        titles = " / ".join(info.skipped_title_rows)
        info.warnings.append(
            f"ヘッダーより上の {len(info.skipped_title_rows)} 行をタイトル行として読み飛ばしました: {titles}"
        )
    if renamed:
        info.warnings.append(
            f"列名が空または重複していたため、次の名前を付けました: {', '.join(renamed)}"
        )
    return TableResult(frame, info)
