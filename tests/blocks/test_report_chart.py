"""report.chart: charts with Japanese labels, exact image sizes, and clear errors on bad data."""

from __future__ import annotations

import struct
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

MONTHS = [
    {"月": "2025-01", "売上": 1200000, "経費": "¥800,000"},
    {"月": "2025-02", "売上": 1350000, "経費": "820,000"},
    {"月": "2025-03", "売上": 1100000.5, "経費": "▲10,000"},
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("report.chart")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    return width, height


def render(block: Block, inputs: dict[str, Any], ctx: Any) -> tuple[dict[str, Any], list[str]]:
    """Run the block and return its outputs and every warning raised while drawing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run_like_runner(block, inputs, ctx)
    return out, [str(w.message) for w in caught]


def test_bar_chart_png_with_japanese_labels(block: Block, make_ctx: ContextFactory) -> None:
    ctx = make_ctx("chart")
    inputs = {
        "table": MONTHS,
        "x": "月",
        "y": "売上",
        "title": "月別売上（税込）",
        "ylabel": "売上金額（円）",
    }
    out, caught = render(block, inputs, ctx)
    assert not [w for w in caught if "missing from font" in w]
    chart = out["chart"]
    assert chart == {
        "path": str(ctx.work_dir() / "chart.png"),
        "format": "png",
        "kind": "bar",
        "points": 3,
        "series": ["売上"],
    }
    assert png_size(Path(chart["path"])) == (1200, 675)  # 8 × 4.5 inches at 150 dpi


@pytest.mark.parametrize("kind", ["line", "bar", "barh", "scatter"])
def test_several_series_in_every_kind(block: Block, make_ctx: ContextFactory, kind: str) -> None:
    table = (
        [{**row, "月": index + 1} for index, row in enumerate(MONTHS)]
        if kind == "scatter"
        else MONTHS
    )
    inputs = {
        "table": {"rows": table},
        "x": "月",
        "y": ["売上", "経費"],
        "kind": kind,
        "output_path": f"推移_{kind}.png",
        "width": 6,
        "height": 4,
        "dpi": 100,
    }
    ctx = make_ctx()
    out, caught = render(block, inputs, ctx)
    assert not [w for w in caught if "missing from font" in w]
    assert out["chart"]["series"] == ["売上", "経費"]
    path = Path(out["chart"]["path"])
    assert path == ctx.work_dir() / f"推移_{kind}.png"
    assert png_size(path) == (600, 400)


def test_pie_chart_as_svg(block: Block, make_ctx: ContextFactory, tmp_path: Path) -> None:
    target = tmp_path / "構成比.svg"
    table = [{"科目": "旅費交通費", "金額": 120000}, {"科目": "会議費", "金額": 30000}]
    inputs = {
        "table": table,
        "x": "科目",
        "y": ["金額"],
        "kind": "pie",
        "format": "svg",
        "output_path": str(target),
        "title": "経費の構成比",
    }
    out, caught = render(block, inputs, make_ctx())
    assert not [w for w in caught if "missing from font" in w]
    assert out["chart"]["path"] == str(target)
    text = target.read_text(encoding="utf-8")
    assert "<svg" in text
    for label in ("経費の構成比", "旅費交通費", "会議費", "80.0%", "20.0%"):
        assert f"<!-- {label} -->" in text  # matplotlib names each drawn text in a comment
    assert not list(tmp_path.glob(".構成比*"))  # no temporary file left


def test_charts_drawn_in_threads_do_not_mix(block: Block, make_ctx: ContextFactory) -> None:
    def draw(n: int) -> tuple[int, int]:
        ctx = make_ctx(f"chart{n}")
        inputs = {"table": MONTHS, "x": "月", "y": "売上", "width": 2 + n, "height": 2, "dpi": 50}
        out = run_like_runner(block, inputs, ctx)
        return png_size(Path(out["chart"]["path"]))

    with ThreadPoolExecutor(max_workers=4) as pool:
        sizes = list(pool.map(draw, range(4)))
    assert sizes == [(100, 100), (150, 100), (200, 100), (250, 100)]


# ① is a list marker, not the amount 1 (NFKC would make the digit 1 of it).
@pytest.mark.parametrize("text", ["未確定", "①"])
def test_a_value_that_is_not_a_number_names_its_row_and_column(
    block: Block, make_ctx: ContextFactory, text: str
) -> None:
    ctx = make_ctx()
    table = [*MONTHS, {"月": "2025-04", "売上": text, "経費": 1}]
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"table": table, "x": "月", "y": ["経費", "売上"]}, ctx)
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "4 行目" in error.message
    assert "「売上」" in error.message
    assert text in error.message
    assert "数値" in error.hint
    assert list(ctx.work_dir().iterdir()) == []


def test_missing_column_lists_the_columns(block: Block) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"table": MONTHS, "x": "月", "y": "利益"})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "利益" in info.value.message
    assert "月, 売上, 経費" in info.value.hint


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ({"y": ["売上", "経費"], "kind": "pie"}, "kind: bar"),
        ({"y": "売上", "output_path": "図.svg"}, ".png"),
        ({"y": "売上", "table": []}, "上流"),
        ({"y": "売上", "kind": "area"}, "line / bar"),
        ({"y": "売上", "dpi": 5000}, "dpi"),
    ],
    ids=["pie-two-series", "suffix", "empty", "kind", "too-large"],
)
def test_bad_inputs_are_refused_with_a_hint(
    block: Block, inputs: dict[str, Any], words: str
) -> None:
    with pytest.raises(BlockError) as info:
        block.check_inputs({"table": MONTHS, "x": "月", **inputs})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert words in info.value.hint


def test_negative_values_cannot_make_a_pie(block: Block, make_ctx: ContextFactory) -> None:
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"table": MONTHS, "x": "月", "y": "経費", "kind": "pie"}, make_ctx())
    assert "マイナス" in info.value.message
    assert "kind: bar" in info.value.hint
