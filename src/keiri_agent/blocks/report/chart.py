"""``report.chart``: a line, bar, pie or scatter chart of a table, as PNG or SVG.

Figures are built with ``matplotlib.figure.Figure`` and the Agg canvas, never ``pyplot``: the
plan runner runs nodes in threads, and pyplot's current-figure state is global. Japanese text
uses IPAexGothic from ``matplotlib_fontja`` (registered once, on import). Every y value must be
a number (``parse_amount`` reads "1,234", "¥1,234", "▲500"); one that is not stops the block
naming its row and column, rather than leaving a gap nobody notices. Amount axes get thousands
separators instead of matplotlib's ``1e7`` offset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib_fontja  # noqa: F401  (registers IPAexGothic as the default font family)
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import choice, output_file
from keiri_agent.blocks.table.cells import amount_problem, parse_amount
from keiri_agent.blocks.table.records import Table, column_list, require_columns, table_from
from keiri_agent.errors import input_error
from keiri_agent.workspace import atomic_path

__all__ = ["FORMATS", "KINDS", "MAX_POINTS", "ChartBlock"]

KINDS = ("line", "bar", "barh", "pie", "scatter")
FORMATS = ("png", "svg")
MAX_POINTS = 5_000  # rows; more is unreadable as a chart (aggregate first)
MAX_PIE_SLICES = 30
MAX_PIXELS = 40_000_000  # width × height × dpi²
ROTATE_LABELS_OVER = 6  # categories before x labels are slanted


class ChartBlock(ProcessingBlock):
    """Plots ``y`` against ``x`` from ``table``; returns ``chart``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _options(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        options = _options(inputs)
        rows, x, ys, kind, fmt = (options[k] for k in ("rows", "x", "ys", "kind", "format"))
        labels = ["" if r.get(x) is None else str(r.get(x)) for r in rows]
        table = options["table"]
        series = {y: [_number(r.get(y), i, y, table) for i, r in enumerate(rows)] for y in ys}
        xs = (
            [_number(r.get(x), i, x, table, "x") for i, r in enumerate(rows)]
            if kind == "scatter"
            else None
        )
        if kind == "pie":
            _check_pie(series[ys[0]], ys[0])
        target = _output_path(inputs.get("output_path"), fmt, ctx)
        ctx.check_cancelled()
        figure = Figure(figsize=(options["width"], options["height"]), layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        _plot(axes, kind, labels, xs, series)
        if inputs.get("title"):
            axes.set_title(str(inputs["title"]))
        if kind != "pie":
            xlabel = inputs.get("xlabel") or x
            ylabel = inputs.get("ylabel") or (ys[0] if len(ys) == 1 else "")
            if kind == "barh":
                xlabel, ylabel = ylabel, xlabel
            axes.set_xlabel(str(xlabel))
            axes.set_ylabel(str(ylabel))
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target, suffix=f".{fmt}", prefix=ctx.claim_output(target)) as tmp:
            figure.savefig(tmp, format=fmt, dpi=options["dpi"])
        ctx.log(
            f"{target.name} に{_KIND_LABELS[kind]}を作成しました"
            f"（{len(rows)} 件、系列 {', '.join(ys)}）"
        )
        return {
            "chart": {
                "path": str(target),
                "format": fmt,
                "kind": kind,
                "points": len(rows),
                "series": ys,
            }
        }


_KIND_LABELS = {
    "line": "折れ線グラフ",
    "bar": "棒グラフ",
    "barh": "横棒グラフ",
    "pie": "円グラフ",
    "scatter": "散布図",
}


def _plot(
    axes: Axes, kind: str, labels: list[str], xs: list[float] | None, series: dict[str, list[float]]
) -> None:
    names = list(series)
    positions = list(range(len(labels)))
    thousands = FuncFormatter(
        lambda value, _pos: f"{value:,.0f}" if abs(value) >= 1000 else f"{value:g}"
    )
    if kind == "pie":
        values = series[names[0]]
        axes.pie(values, labels=labels, autopct="%1.1f%%", startangle=90, counterclock=False)
        axes.set_aspect("equal")
        return
    if kind == "scatter" and xs is not None:
        for name in names:
            axes.scatter(xs, series[name], label=name)
        axes.xaxis.set_major_formatter(thousands)
    elif kind == "line":
        for name in names:
            axes.plot(positions, series[name], marker="o", label=name)
    else:
        width = 0.8 / len(names)
        for index, name in enumerate(names):
            offsets = [p - 0.4 + width * (index + 0.5) for p in positions]
            if kind == "bar":
                axes.bar(offsets, series[name], width=width, label=name)
            else:
                axes.barh(offsets, series[name], height=width, label=name)
    if kind in ("line", "bar"):
        axes.set_xticks(positions, labels)
        if len(labels) > ROTATE_LABELS_OVER or max(map(len, labels), default=0) > 8:
            for tick in axes.get_xticklabels():
                tick.set_rotation(45)
                tick.set_horizontalalignment("right")
    if kind == "barh":
        axes.set_yticks(positions, labels)
        axes.invert_yaxis()  # first row on top, as in the table
        axes.xaxis.set_major_formatter(thousands)
    else:
        axes.yaxis.set_major_formatter(thousands)
    axes.grid(True, axis="x" if kind == "barh" else "y", alpha=0.3)
    if len(names) > 1:
        axes.legend()


def _number(value: Any, index: int, column: str, table: Table, field: str = "y") -> float:
    number = parse_amount(value)
    if number is None:
        raise input_error(
            f"{table.where(index, column)}の値 {str(value)[:50]!r} は数値ではありません"
            f"（{amount_problem(str(value)) if value is not None else '空欄です'}）。",
            "グラフにする列には数値（または「1,234」「¥1,234」のような金額）だけを入れてください。"
            "空欄の行は table.filter などで除いてから渡してください。",
            field=field,
            row=index + 1,
            column=column,
            value=str(value)[:200],
        )
    return number


def _check_pie(values: list[float], column: str) -> None:
    if any(v < 0 for v in values) or sum(values) <= 0:
        raise input_error(
            f"列「{column}」にマイナスの値があるか合計が 0 のため、円グラフにできません。",
            "円グラフには 0 以上で合計が正の値を使うか、kind: bar を指定してください。",
            field="y",
        )
    if len(values) > MAX_PIE_SLICES:
        raise input_error(
            f"円グラフの項目が多すぎます（{len(values)} 件、上限 {MAX_PIE_SLICES} 件）。",
            "上位の項目以外を「その他」にまとめるか、kind: bar / barh を指定してください。",
            field="table",
        )


def _options(inputs: dict[str, Any]) -> dict[str, Any]:
    table = table_from(inputs.get("table"), field="table")
    rows = table.records()
    if not rows:
        raise input_error(
            "グラフにする表（table）が 0 行です。",
            "上流のブロックがデータを出力しているか確認してください。",
            field="table",
        )
    if len(rows) > MAX_POINTS:
        raise input_error(
            f"グラフにする表が大きすぎます（{len(rows):,} 行、上限 {MAX_POINTS:,} 行）。",
            "月別・取引先別などに集計してから渡してください。",
            field="table",
        )
    x = column_list(inputs.get("x"), field="x")
    if len(x) != 1:
        raise input_error("x には列名を 1 つだけ指定してください。", "例: x: 月", field="x")
    ys = column_list(inputs.get("y"), field="y")
    require_columns(rows, [x[0]], field="x", table="table")
    require_columns(rows, ys, field="y", table="table")
    kind = choice(inputs, "kind", KINDS, default="bar")
    fmt = choice(inputs, "format", FORMATS)
    if kind == "pie" and len(ys) > 1:
        raise input_error(
            "円グラフ（kind: pie）に描ける系列は 1 つだけです。",
            "y に列を 1 つだけ指定するか、kind: bar を指定してください。",
            field="y",
        )
    _check_suffix(inputs.get("output_path"), fmt)
    width = _positive(given(inputs, "width", 8), "width")
    height = _positive(given(inputs, "height", 4.5), "height")
    dpi = _positive(given(inputs, "dpi", 150), "dpi")
    if width * height * dpi * dpi > MAX_PIXELS:
        raise input_error(
            f"画像が大きすぎます（{width}×{height} インチ、{dpi} dpi）。",
            "width・height・dpi を小さくしてください（既定 8×4.5 インチ、150 dpi）。",
            field="dpi",
        )
    return {
        "rows": rows,
        "table": table,
        "x": x[0],
        "ys": ys,
        "kind": kind,
        "format": fmt,
        "width": width,
        "height": height,
        "dpi": dpi,
    }


def _check_suffix(value: Any, fmt: str) -> None:
    if value is not None and str(value).strip() and Path(str(value)).suffix.lower() != f".{fmt}":
        raise input_error(
            f"出力先 '{value}' の拡張子が format（{fmt}）と合いません。",
            f"output_path を .{fmt} で終わる名前にするか、format を拡張子に合わせてください。",
            field="output_path",
        )


def _positive(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise input_error(
            f"{field} '{value}' は正の数ではありません。",
            f"{field} には 0 より大きい数を指定してください。",
            field=field,
        )
    return float(value)


def _output_path(value: Any, fmt: str, ctx: BlockContext) -> Path:
    if value is not None and str(value).strip():
        _check_suffix(value, fmt)
    return output_file(value, ctx, f"chart.{fmt}")
