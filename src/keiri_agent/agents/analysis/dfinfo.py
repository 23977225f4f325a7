"""``DataFrameInfo``: what the model sees of a table, kept small for wide tables.

Prompt size is the most common complaint about pandas agents (LangChain's sends
``df.head().to_markdown()``, which grows with every column). This view carries the seed's
fields (shape, columns, dtypes, head) but renders them within a character budget: one short
summary per column (type, missing values, range or frequent values), sample rows cut to the
first columns with long strings shortened, and, when even that is too much, columns grouped by
type with their names only. What the file reader did to the table (``notes``: the unit
multiplied into yen, the total rows left out, dates converted) heads every rendering: a model
that does not know it sums a 千円 column as yen or adds a 合計 row back. Statistics come from
the whole column where that is cheap (min/max/missing) and from a fixed sample of rows
otherwise, so a 1,000,000-row table is fast.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

__all__ = ["DEFAULT_INFO_BUDGET", "DataFrameInfo"]

DEFAULT_INFO_BUDGET = 3_000  # characters of one table's prompt text
HEAD_ROWS = 5
MAX_HEAD_COLUMNS = 12
MAX_CELL_CHARS = 24
MAX_NAME_CHARS = 40
SAMPLE_ROWS = 20_000  # rows inspected for unique counts and frequent values
TOP_VALUES = 3


def _cut(value: Any, limit: int = MAX_CELL_CHARS) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, int | float | bool):
        return value
    return _cut(str(value))


def _summary(series: pd.Series, sample: pd.Series) -> str:
    parts = [str(series.dtype)]
    missing = int(series.isna().sum())
    if missing:
        parts.append(f"欠損{missing}")
    if pd.api.types.is_bool_dtype(series):
        pass
    elif pd.api.types.is_numeric_dtype(series) or pd.api.types.is_datetime64_any_dtype(series):
        valid = series.dropna()
        if len(valid):
            low, high = _cell(valid.min()), _cell(valid.max())
            parts.append(f"{low}〜{high}")
    else:
        unique = int(sample.nunique(dropna=True))
        parts.append(f"種類{unique}{'+' if len(sample) < len(series) else ''}")
        top = sample.dropna().astype(str).value_counts().head(TOP_VALUES).index
        if len(top):
            parts.append("例:" + "/".join(str(_cut(v, 16)) for v in top))
    return ", ".join(parts)


class DataFrameInfo(BaseModel):
    """DataFrameの概要情報（LLMプロンプト用）"""

    name: str = "df"
    shape: tuple[int, int]
    columns: list[str]
    dtypes: dict[str, str]
    head: list[dict[str, Any]] = Field(description="先頭行のサンプル（長い値は省略）")
    summaries: dict[str, str] = Field(default_factory=dict, description="列ごとの要約")
    notes: list[str] = Field(default_factory=list, description="読み込み時の処理（単位・合計行）")
    budget: int = DEFAULT_INFO_BUDGET

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        name: str = "df",
        budget: int = DEFAULT_INFO_BUDGET,
        notes: list[str] | None = None,
    ) -> DataFrameInfo:
        step = max(1, len(df) // SAMPLE_ROWS)
        sampled = df.iloc[::step] if step > 1 else df
        columns = [str(c) for c in df.columns]
        head_columns = list(df.columns[:MAX_HEAD_COLUMNS])
        head = [
            {str(k): _cell(v) for k, v in row.items()}
            for row in df[head_columns].head(HEAD_ROWS).to_dict(orient="records")
        ]
        return cls(
            name=name,
            shape=(int(df.shape[0]), int(df.shape[1])),
            columns=columns,
            dtypes={str(c): str(t) for c, t in df.dtypes.items()},
            head=head,
            summaries={
                str(c): _summary(df[c], sampled[c])
                for c in df.columns
                if isinstance(df[c], pd.Series)  # duplicate labels yield frames; skip them
            },
            notes=list(notes or []),
            budget=budget,
        )

    def to_prompt(self) -> str:
        """The table as prompt text, at most ``budget`` characters."""
        for render in (self._detailed, self._compact, self._grouped):
            text = render()
            if len(text) <= self.budget:
                return text
        return text[: self.budget - 1] + "…"

    def _title(self) -> str:
        rows, cols = self.shape
        title = f"### {self.name}（{rows:,} 行 × {cols} 列）"
        if not self.notes:
            return title
        return "\n".join([title, "読み込み時の処理:", *(f"- {note}" for note in self.notes)])

    def _head_text(self, rows: int) -> str:
        if not self.head:
            return "（行なし）"
        shown = list(self.head[0])
        more = len(self.columns) - len(shown)
        lines = [
            " | ".join(_cut(c, MAX_NAME_CHARS) for c in shown) + (f" | …他{more}列" if more else "")
        ]
        for row in self.head[:rows]:
            lines.append(" | ".join("" if row[c] is None else str(row[c]) for c in shown))
        return "\n".join(lines)

    def _detailed(self) -> str:
        lines = [self._title(), "列:"]
        for column in self.columns:
            summary = self.summaries.get(column, self.dtypes.get(column, ""))
            lines.append(f"- {_cut(column, MAX_NAME_CHARS)}: {summary}")
        lines += ["先頭行:", self._head_text(HEAD_ROWS)]
        return "\n".join(lines)

    def _compact(self) -> str:
        lines = [self._title(), "列（名前: 型）:"]
        lines.append(
            ", ".join(f"{_cut(c, MAX_NAME_CHARS)}:{self.dtypes.get(c, '')}" for c in self.columns)
        )
        lines += ["先頭行:", self._head_text(2)]
        return "\n".join(lines)

    def _grouped(self) -> str:
        groups: dict[str, list[str]] = {}
        for column in self.columns:
            groups.setdefault(self.dtypes.get(column, "?"), []).append(column)
        lines = [self._title(), "列（型ごと）:"]
        room = self.budget - len(lines[0]) - 200
        per_group = max(80, room // max(1, len(groups)))
        for dtype, names in groups.items():
            listing = ", ".join(_cut(n, 20) for n in names)
            if len(listing) > per_group:
                listing = listing[:per_group] + f"…（計{len(names)}列）"
            lines.append(f"- {dtype}（{len(names)}列）: {listing}")
        lines.append("列名の全体は df.columns で確認できます。")
        return "\n".join(lines)
