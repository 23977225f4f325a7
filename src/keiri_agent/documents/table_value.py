"""The table value: typed columns (pandas), and where each row came from in the user's file.

A table read from a file keeps, beside its DataFrame, the file position of every row (the line
of a CSV, the row of a sheet) and the file's name, so that any block downstream can name a
cell as the user finds it (``売上.csv の 7 行目の列「金額」``) after filters, sorts and joins
have moved rows around. Rows that blocks make themselves (groups, computed rows) have no
position; they are named by their place in the table (``3 行目``).

Outside the engine a table is what it always was, a list of records: iterating a
:class:`Table`, indexing it with an integer or calling :meth:`Table.records` gives JSON-safe
``{column: value}`` dicts (blank cells as None, dates as ISO text, numbers as numbers), made
when asked for. :func:`json_cell` is that one conversion of a cell.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

__all__ = ["Table", "TableOrigin", "json_cell", "load_table", "save_table"]


def json_cell(value: Any) -> Any:
    """One cell as a JSON scalar: NaN/NaT/NA → None, dates → ISO, numpy → Python, Decimal →
    number, a month (Period) → ``2026-02``."""
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 2**53 else value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0) and value.tzinfo is None:
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, pd.Period):
        return str(value)
    if isinstance(value, str | int | bool):
        return value
    return str(value)


@dataclass(frozen=True)
class TableOrigin:
    """The file a table's rows come from: how a position is named to the user."""

    file: str
    # CSV lines / sheet rows / 全銀協 records / data rows under a bank statement's header,
    # counted from 1
    kind: Literal["line", "row", "record", "data_row"] = "line"
    sheet: str | None = None
    column_letters: Mapping[str, str] = field(default_factory=dict)

    def where(self, position: int | None, column: str | None = None) -> str:
        """``売上.csv の 7 行目の列「金額」`` / ``売上.xlsx のシート「明細」の 9 行目の列「金額」
        （D9 セル）`` / ``入金.txt の 3 件目のレコード`` / ``明細.csv のデータ 2 行目``;
        without a position, the file (and column) only."""
        named = f"の列「{column}」" if column is not None else ""
        if position is None:
            return f"{self.file}{named}"
        if self.kind == "line":
            return f"{self.file} の {position} 行目{named}"
        if self.kind == "record":
            return f"{self.file} の {position} 件目のレコード{named}"
        if self.kind == "data_row":
            return f"{self.file} のデータ {position} 行目{named}"
        letter = self.column_letters.get(column or "")
        cell = f"（{letter}{position} セル）" if letter else ""
        return f"{self.file} のシート「{self.sheet}」の {position} 行目{named}{cell}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableOrigin:
        return cls(
            file=str(data["file"]),
            kind=data["kind"] if data.get("kind") in ("row", "record", "data_row") else "line",
            sheet=data.get("sheet"),
            column_letters=dict(data.get("column_letters") or {}),
        )


class Table:
    """A table: ``frame`` (typed columns), per-row ``positions`` in ``origin`` (or None), and
    the ``units`` of amount columns (千円...: the numbers are as written, never converted).

    Immutable by convention: blocks make new tables (:meth:`take`, :meth:`derive`) instead of
    changing one, so a table stored for a resume is the one the next node read.
    """

    __slots__ = ("frame", "origin", "positions", "units")

    def __init__(
        self,
        frame: pd.DataFrame,
        *,
        origin: TableOrigin | None = None,
        positions: Sequence[int | None] | np.ndarray | None = None,
        units: Mapping[str, str] | None = None,
    ) -> None:
        frame = frame.reset_index(drop=True) if not _is_range(frame.index) else frame
        self.frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
        self.origin = origin
        self.positions = _positions(positions, len(frame)) if origin is not None else None
        self.units = {k: v for k, v in (units or {}).items() if k in self.frame.columns}

    # --- making tables ------------------------------------------------------------------------

    @classmethod
    def from_records(
        cls, records: Sequence[Mapping[str, Any]], *, columns: Sequence[str] | None = None
    ) -> Table:
        """A table of ``records`` (columns in first-seen order, absent cells blank)."""
        names = list(columns) if columns is not None else _columns_of(records)
        frame = pd.DataFrame.from_records(
            [dict(r) for r in records], columns=names, coerce_float=False
        )
        return cls(frame.astype(object).where(frame.notna(), None))

    def take(self, rows: Sequence[int] | np.ndarray) -> Table:
        """These rows (0-based, in this order), with their positions."""
        index = np.asarray(rows, dtype=np.int64)
        return Table(
            self.frame.iloc[index].reset_index(drop=True),
            origin=self.origin,
            positions=None if self.positions is None else self.positions[index],
            units=self.units,
        )

    def derive(
        self, frame: pd.DataFrame | Sequence[Mapping[str, Any]], rows: Sequence[int] | None = None
    ) -> Table:
        """A table whose row ``i`` comes from row ``rows[i]`` of this one (default: the same
        rows in the same order): it keeps their positions and the units of kept columns."""
        made = frame if isinstance(frame, pd.DataFrame) else Table.from_records(frame).frame
        if self.positions is None:
            positions = None
        elif rows is None:
            positions = self.positions if len(made) == len(self) else None
        else:
            positions = self.positions[np.asarray(rows, dtype=np.int64)]
        return Table(made, origin=self.origin, positions=positions, units=self.units)

    # --- reading it ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]

    def records(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        """Rows ``start:stop`` as JSON-safe records (blank cells as None)."""
        names = self.columns
        part = self.frame.iloc[start:stop]
        return [
            {name: json_cell(value) for name, value in zip(names, row, strict=True)}
            for row in part.itertuples(index=False, name=None)
        ]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        step = 1024
        for start in range(0, len(self), step):
            yield from self.records(start, start + step)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        """Row ``index`` as a record, or the records of a slice (as a list does)."""
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return self.records(start, max(start, stop))
            return [self.records(i, i + 1)[0] for i in range(start, stop, step)]
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"table rows are indexed by integers, not {type(index).__name__}")
        size = len(self)
        position = int(index) + size if index < 0 else int(index)
        if not 0 <= position < size:
            raise IndexError(index)
        return self.records(position, position + 1)[0]

    def position(self, row: int) -> int | None:
        """Where row ``row`` (0-based) is in the file, or None for a row a block made."""
        if self.positions is None:
            return None
        value = self.positions[row]
        return None if value < 0 else int(value)

    def where(self, row: int, column: str | None = None) -> str:
        """Row ``row`` (0-based; and ``column``) as the user finds it: its file line or sheet
        row when it came from a file, else its place in this table (``3 行目``)."""
        position = self.position(row)
        if self.origin is not None and position is not None:
            return self.origin.where(position, column)
        named = f"の列「{column}」" if column is not None else ""
        return f"{row + 1} 行目{named}"

    def __eq__(self, other: object) -> bool:
        """Two tables are equal when rows, columns, origin, positions and units are; a table
        equals a list of records holding the same rows (what it is outside the engine)."""
        if isinstance(other, list):
            return self.records() == other
        if not isinstance(other, Table):
            return NotImplemented
        same_positions = (self.positions is None and other.positions is None) or (
            self.positions is not None
            and other.positions is not None
            and np.array_equal(self.positions, other.positions)
        )
        return (
            self.records() == other.records()
            and self.columns == other.columns
            and self.origin == other.origin
            and same_positions
            and self.units == other.units
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        where = f"、{self.origin.file}" if self.origin is not None else ""
        return f"<表 {len(self):,} 行 × {len(self.frame.columns)} 列{where}>"


def _is_range(index: pd.Index) -> bool:
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _positions(values: Sequence[int | None] | np.ndarray | None, rows: int) -> np.ndarray | None:
    """Positions as int64, -1 where a row has none; None when none is known."""
    if values is None:
        return None
    array = (
        np.asarray([-1 if v is None else v for v in values], dtype=np.int64)
        if not (isinstance(values, np.ndarray))
        else values.astype(np.int64, copy=False)
    )
    if len(array) != rows:
        raise ValueError(f"{len(array)} positions for {rows} rows")
    return array


def _columns_of(records: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(key) for record in records for key in record))


# --- storage beside a run log ----------------------------------------------------------------


def save_table(
    table: Table, folder: Path, stem: str, base: Path
) -> tuple[dict[str, Any], list[Path]]:
    """Write ``table`` exactly under ``folder`` (Parquet, or JSON records when a column mixes
    types Parquet cannot hold; positions as ``.npy``); returns its description (paths relative
    to ``base``) and the files written."""
    written: list[Path] = []
    data = folder / f"{stem}.parquet"
    try:
        table.frame.to_parquet(data, index=False)
        fmt = "parquet"
    except Exception:  # mixed object columns (records made by blocks): keep them as JSON
        data.unlink(missing_ok=True)
        data = folder / f"{stem}.records.json"
        data.write_text(
            json.dumps({"columns": table.columns, "records": table.records()}, ensure_ascii=False),
            encoding="utf-8",
        )
        fmt = "records"
    written.append(data)
    meta: dict[str, Any] = {
        "format": fmt,
        "data": str(data.relative_to(base)),
        "origin": table.origin.to_dict() if table.origin is not None else None,
        "units": dict(table.units),
        "positions": None,
    }
    if table.positions is not None:
        positions = folder / f"{stem}.positions.npy"
        np.save(positions, table.positions, allow_pickle=False)
        meta["positions"] = str(positions.relative_to(base))
        written.append(positions)
    return meta, written


def load_table(meta: Mapping[str, Any], base: Path) -> Table:
    """The table :func:`save_table` described with ``meta`` (paths relative to ``base``)."""
    data = base / str(meta["data"])
    if meta.get("format") == "records":
        stored = json.loads(data.read_text(encoding="utf-8"))
        frame = Table.from_records(stored["records"], columns=stored["columns"]).frame
    else:
        frame = pd.read_parquet(data)
    origin = meta.get("origin")
    positions = meta.get("positions")
    return Table(
        frame,
        origin=TableOrigin.from_dict(origin) if origin else None,
        positions=np.load(base / positions, allow_pickle=False) if positions else None,
        units=meta.get("units") or {},
    )
