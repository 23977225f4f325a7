"""Charts for the conversion pipeline: line, bar, scatter, histogram and box plots as PNG or SVG.

``render_chart`` draws a ``ChartSpec`` from a DataFrame or a table file. As in ``report.chart``,
figures are built on ``matplotlib.figure.Figure`` with the Agg canvas, never ``pyplot`` (its
global current-figure state is unsafe in threads), and Japanese text uses IPAexGothic from
``matplotlib_fontja``. SVG keeps matplotlib's default of drawing text as paths, so the chart
looks the same on machines without a Japanese font; the text itself is kept in comments.

Anything the spec asks that cannot be drawn as asked raises ``UnsupportedVizParamError(param)``
naming the ``ChartSpec`` field (kind, format, x, y, bins, group_by) with a Japanese message: the
seed's fallback trigger, so the CodeAct fallback can aggregate or reshape first. Nothing is
dropped or aggregated silently: a y value that is not a number, a bar chart whose x repeats, or
more rows than a readable chart holds are errors, not gaps.

Defaults: ``y`` empty means every numeric column other than ``x`` and ``group_by``; ``x``
empty means row order for line and bar; line charts over numeric or date x are drawn in x order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib_fontja  # noqa: F401  (registers IPAexGothic as the default font family)
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from keiri_agent.agents.convert.formats import read_table
from keiri_agent.agents.convert.models import (
    CHART_KINDS,
    IMAGE_FORMATS,
    ChartSpec,
    UnsupportedVizParamError,
)
from keiri_agent.documents.cell_forms import read_amount
from keiri_agent.workspace import atomic_path, confine

__all__ = [
    "DEFAULT_BINS",
    "KIND_LABELS",
    "MAX_BAR_CATEGORIES",
    "MAX_BINS",
    "MAX_GROUPS",
    "MAX_PLOT_ROWS",
    "render_chart",
]

DEFAULT_BINS = 20
MAX_BINS = 500
MAX_GROUPS = 20  # series from group_by; more is an unreadable legend
MAX_BAR_CATEGORIES = 200
MAX_PLOT_ROWS = 100_000  # line, bar and scatter; hist and box summarise any number of rows
FIGSIZE = (8.0, 4.5)  # inches
DPI = 150
ROTATE_LABELS_OVER = 6  # categories before x labels are slanted
MAX_TICK_LABELS = 40  # more categories than this: label every n-th

KIND_LABELS = {
    "line": "折れ線グラフ",
    "bar": "棒グラフ",
    "scatter": "散布図",
    "hist": "ヒストグラム",
    "box": "箱ひげ図",
}
_COLUMN_HINT = "表にある列名をそのまま（全角・半角も含めて）指定してください。"

_Drawn = list[tuple[str, pd.Series, pd.Series]]  # (label, x, y) per plotted series


def render_chart(
    data: pd.DataFrame | Path | str,
    spec: ChartSpec,
    out_dir: Path,
    *,
    output_name: str | None = None,
) -> Path:
    """Draw ``spec`` from ``data`` (a DataFrame or a table file) into ``out_dir``.

    The file is ``<output_name or chart_<kind>>.<png|svg>``, written atomically; returns its
    path. Raises ``UnsupportedVizParamError`` for a spec that cannot be drawn as asked.
    """
    kind = spec.kind.strip().lower()
    if kind not in CHART_KINDS:
        raise UnsupportedVizParamError(
            "kind",
            f"グラフの種類 '{spec.kind}' には対応していません"
            "（対応: line 折れ線、bar 棒、scatter 散布図、hist ヒストグラム、box 箱ひげ図）。",
        )
    fmt = spec.format.strip().lower().lstrip(".")
    if fmt not in IMAGE_FORMATS:
        raise UnsupportedVizParamError(
            "format",
            f"画像形式 '{spec.format}' には対応していません（対応: png、svg）。",
            hint="format には png か svg を指定してください。",
        )
    if spec.bins is not None and not 1 <= spec.bins <= MAX_BINS:
        raise UnsupportedVizParamError(
            "bins",
            f"階級数 bins={spec.bins} は使えません（1〜{MAX_BINS}）。",
            hint=f"bins には 1〜{MAX_BINS} の整数を指定するか、省略してください（既定 {DEFAULT_BINS}）。",
        )
    df = data if isinstance(data, pd.DataFrame) else read_table(Path(data))
    spec = _as_read(spec, df.attrs.get("renamed", {}))
    for param, name in (("x", spec.x), ("group_by", spec.group_by)):
        if name is not None:
            _require_column(df, name, param)
    ys = _value_columns(df, spec)
    if kind in ("line", "bar", "scatter") and len(df) > MAX_PLOT_ROWS:
        raise UnsupportedVizParamError(
            "kind",
            f"{KIND_LABELS[kind]}にするには行が多すぎます（{len(df):,} 行、上限 {MAX_PLOT_ROWS:,} 行）。",
            hint="月別・部門別などに集計してから描くか、hist（ヒストグラム）か box（箱ひげ図）を選んでください。",
        )
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    series = _series(df, spec, ys, kind)
    _plot(axes, kind, series, spec)
    _label(axes, kind, spec, ys, len(series))
    out_dir.mkdir(parents=True, exist_ok=True)
    target = _image_path(out_dir, output_name or f"chart_{kind}", fmt)
    with atomic_path(target, suffix=f".{fmt}") as tmp:
        figure.savefig(tmp, format=fmt, dpi=DPI)
    return target


def _as_read(spec: ChartSpec, renamed: dict[str, str]) -> ChartSpec:
    """``spec`` naming the columns as read: a header the reading made say 円 (``金額（千円）``
    → ``金額（円）``, ``agents.ledger``) is still found by the name the user wrote."""
    if not renamed:
        return spec
    return spec.model_copy(
        update={
            "x": renamed.get(spec.x, spec.x) if spec.x is not None else None,
            "group_by": renamed.get(spec.group_by, spec.group_by) if spec.group_by else None,
            "y": [renamed.get(name, name) for name in spec.y],
        }
    )


def _require_column(df: pd.DataFrame, name: str, param: str) -> None:
    if name not in df.columns:
        listed = "、".join(map(str, df.columns[:20])) + (" ほか" if df.shape[1] > 20 else "")
        raise UnsupportedVizParamError(
            param,
            f"{param} の列「{name}」が表にありません（表の列: {listed}）。",
            hint=_COLUMN_HINT,
        )


def _value_columns(df: pd.DataFrame, spec: ChartSpec) -> list[str]:
    for name in spec.y:
        _require_column(df, name, "y")
    if spec.y:
        return list(spec.y)
    skip = {spec.x, spec.group_by}
    found = [
        str(c)
        for c in df.columns
        if c not in skip
        and pd.api.types.is_numeric_dtype(df[c])
        and not pd.api.types.is_bool_dtype(df[c])
    ]
    if not found:
        raise UnsupportedVizParamError(
            "y",
            "グラフにする数値の列が見つかりません（y が指定されておらず、表に数値の列がありません）。",
            hint="y に数値の列名を指定してください。",
        )
    return found


def _numbers(df: pd.DataFrame, column: str) -> pd.Series:
    """The column as floats; a value that is not a number is an error naming its row."""
    series = df[column]
    textual = pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
    numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if not (numeric or textual):
        raise UnsupportedVizParamError(
            "y",
            f"y の列「{column}」は数値の列ではありません（{series.dtype}）。",
            hint=_NUMBER_HINT,
        )
    if numeric:
        values = series.astype(float)
    else:
        raw = series.to_numpy(dtype=object)
        blank = np.array([_blank(v) for v in raw], dtype=bool)
        numbers = np.array(
            [np.nan if b else _as_number(v) for v, b in zip(raw, blank, strict=True)], dtype=float
        )
        bad = np.flatnonzero(np.isnan(numbers) & ~blank)
        if bad.size:
            raise UnsupportedVizParamError(
                "y",
                f"y の列「{column}」の {bad[0] + 1} 行目の値 {str(raw[bad[0]])[:40]!r} は数値ではありません。",
                hint=_NUMBER_HINT,
            )
        values = pd.Series(numbers, index=series.index)
    if values.notna().sum() == 0:
        raise UnsupportedVizParamError(
            "y",
            f"y の列「{column}」に数値がありません（0 行か、空欄だけです）。",
            hint=_NUMBER_HINT,
        )
    return values


_NUMBER_HINT = (
    "y には数値（「1,234」「¥1,234」のような金額も可）の列を指定してください。"
    "文字の列を数えたい場合は、集計してから描いてください。"
)


def _blank(value: Any) -> bool:
    return (
        value is None
        or (isinstance(value, float) and np.isnan(value))
        or value is pd.NA
        or (isinstance(value, str) and not value.strip())
    )


def _as_number(value: Any) -> float:
    if isinstance(value, bool):
        return np.nan
    if isinstance(value, int | float | np.number):
        return float(value)
    number = read_amount(str(value))
    return np.nan if number is None else float(number)


def _is_axis_numeric(series: pd.Series) -> bool:
    return (
        pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    ) or pd.api.types.is_datetime64_any_dtype(series)


def _series(df: pd.DataFrame, spec: ChartSpec, ys: list[str], kind: str) -> _Drawn:
    """(label, x, y) for every series to draw, after every check of x, y and group_by."""
    x = df[spec.x] if spec.x is not None else pd.Series(np.arange(1, len(df) + 1), index=df.index)
    if kind == "scatter" and (spec.x is None or not _is_axis_numeric(x)):
        raise UnsupportedVizParamError(
            "x",
            "散布図の x には数値か日付の列が必要です"
            + (
                f"（列「{spec.x}」は {x.dtype}）。"
                if spec.x is not None
                else "（x が未指定です）。"
            ),
            hint="x に数値か日付の列を指定するか、kind に line や bar を選んでください。",
        )
    values = {name: _numbers(df, name) for name in ys}
    if spec.group_by is None:
        out = [(name, x, values[name]) for name in ys]
    else:
        if len(ys) != 1:
            raise UnsupportedVizParamError(
                "group_by",
                f"group_by（{spec.group_by}）は y が 1 列のときだけ使えます（y: {', '.join(ys)}）。",
                hint="y を 1 列にするか、group_by を外してください。",
            )
        keys = df[spec.group_by].astype(object).where(df[spec.group_by].notna(), "（空欄）")
        groups = list(dict.fromkeys(keys))
        if len(groups) > MAX_GROUPS:
            raise UnsupportedVizParamError(
                "group_by",
                f"group_by の列「{spec.group_by}」の値が多すぎます（{len(groups)} 種類、上限 {MAX_GROUPS}）。",
                hint="値の種類が少ない列を選ぶか、主な値以外をまとめてから描いてください。",
            )
        y = values[ys[0]]
        out = [(str(g), x[keys == g], y[keys == g]) for g in groups]
    if kind == "bar":
        for label, sx, _sy in out:
            repeated = sx[sx.duplicated()]
            if len(repeated):
                raise UnsupportedVizParamError(
                    "x",
                    f"棒グラフの x の列「{spec.x}」に同じ値（{str(repeated.iloc[0])[:30]}）が複数あります"
                    f"（系列 {label}）。集計方法が決まらないため描けません。",
                    hint="x の値ごとに合計・平均などへ集計してから描くか、group_by で系列を分けてください。",
                )
        categories = pd.unique(pd.concat([sx for _l, sx, _y in out]))
        if len(categories) > MAX_BAR_CATEGORIES:
            raise UnsupportedVizParamError(
                "x",
                f"棒グラフの項目が多すぎます（{len(categories)} 件、上限 {MAX_BAR_CATEGORIES} 件）。",
                hint="上位の項目に絞るか集計してから描くか、kind に line を選んでください。",
            )
    return out


def _plot(axes: Axes, kind: str, series: _Drawn, spec: ChartSpec) -> None:
    if kind == "hist":
        many = len(series) > 1
        for label, _x, y in series:
            axes.hist(
                y.dropna().to_numpy(),
                bins=spec.bins or DEFAULT_BINS,
                alpha=0.6 if many else 1.0,
                label=label,
            )
        return
    if kind == "box":
        axes.boxplot(
            [y.dropna().to_numpy() for _l, _x, y in series], tick_labels=[s[0] for s in series]
        )
        return
    xs = pd.concat([x for _l, x, _y in series])
    if kind != "bar" and _is_axis_numeric(xs):
        for label, x, y in series:
            order = np.argsort(x.to_numpy(), kind="stable")
            xv, yv = x.to_numpy()[order], y.to_numpy()[order]
            if kind == "line":
                axes.plot(xv, yv, marker="o", markersize=3, label=label)
            else:
                axes.scatter(xv, yv, s=12, label=label)
        if pd.api.types.is_datetime64_any_dtype(xs):
            locator = AutoDateLocator()  # type: ignore[no-untyped-call]
            axes.xaxis.set_major_locator(locator)
            axes.xaxis.set_major_formatter(
                ConciseDateFormatter(  # type: ignore[no-untyped-call]
                    locator,
                    formats=["%Y年", "%m月", "%d日", "%H:%M", "%H:%M", "%S.%f"],
                    zero_formats=["", "%Y年", "%m月", "%m/%d", "%H:%M", "%H:%M"],
                    offset_formats=[
                        "",
                        "%Y年",
                        "%Y年%m月",
                        "%Y-%m-%d",
                        "%Y-%m-%d",
                        "%Y-%m-%d %H:%M",
                    ],
                )
            )
        return
    # Categories (text x, and every bar chart) in order of first appearance.
    categories = list(dict.fromkeys(_category(v) for v in xs))
    position = {c: i for i, c in enumerate(categories)}
    width = 0.8 / len(series)
    for index, (label, x, y) in enumerate(series):
        pos = np.array([position[_category(v)] for v in x], dtype=float)
        if kind == "bar":
            axes.bar(pos - 0.4 + width * (index + 0.5), y.to_numpy(), width=width, label=label)
        else:
            axes.plot(pos, y.to_numpy(), marker="o", markersize=3, label=label)
    step = max(1, -(-len(categories) // MAX_TICK_LABELS))
    axes.set_xticks(range(0, len(categories), step), categories[::step])
    if len(categories) > ROTATE_LABELS_OVER or max(map(len, categories), default=0) > 8:
        for tick in axes.get_xticklabels():
            tick.set_rotation(45)
            tick.set_horizontalalignment("right")


def _category(value: Any) -> str:
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d" if value == value.normalize() else "%Y-%m-%d %H:%M")
    if _blank(value):
        return "（空欄）"
    return str(value)


def _label(axes: Axes, kind: str, spec: ChartSpec, ys: list[str], count: int) -> None:
    thousands = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}")
    single = ys[0] if len(ys) == 1 else ""
    if kind == "hist":
        xlabel, ylabel = spec.xlabel or single, spec.ylabel or "度数"
        axes.xaxis.set_major_formatter(thousands)
    elif kind == "box":
        xlabel, ylabel = spec.xlabel or (spec.group_by or ""), spec.ylabel or single
    else:
        xlabel, ylabel = spec.xlabel or (spec.x or ""), spec.ylabel or single
    axes.yaxis.set_major_formatter(thousands)
    if spec.title:
        axes.set_title(spec.title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, axis="y", alpha=0.3)
    if count > 1 and kind != "box":
        axes.legend(title=spec.group_by)


def _image_path(out_dir: Path, name: str, fmt: str) -> Path:
    base = Path(str(name).replace("\\", "/")).name.strip()
    if base.lower().endswith((".png", ".svg")):
        base = base[:-4]
    base = "".join("_" if ord(ch) < 32 else ch for ch in base).strip(" .") or "chart"
    return confine(out_dir, f"{base}.{fmt}")
