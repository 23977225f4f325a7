"""Charts: every kind to PNG and SVG with Japanese labels; bad specs name the parameter."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from keiri_agent.agents.convert.formats import write_table
from keiri_agent.agents.convert.models import ChartSpec, UnsupportedVizParamError
from keiri_agent.agents.convert.viz import _numbers, render_chart
from keiri_agent.documents.cell_forms import read_amount
from tests.documents.amount_texts import amount_texts

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

SALES = pd.DataFrame(
    {
        "月": ["4月", "5月", "6月"] * 2,
        "部門": ["営業部"] * 3 + ["経理部"] * 3,
        "売上": [1200, 3400, 2800, 800, 950, 1020],
        "費用": ["1,000", "¥2,000", "▲300", "10", "20", ""],
        "計上日": pd.to_datetime(["2024-04-30", "2024-05-31", "2024-06-30"] * 2),
    }
)

SPECS = {
    "line": ChartSpec(kind="line", x="月", y=["売上"], group_by="部門"),
    "bar": ChartSpec(kind="bar", x="月", y=["売上"], group_by="部門"),
    "scatter": ChartSpec(kind="scatter", x="計上日", y=["売上", "費用"]),
    "hist": ChartSpec(kind="hist", y=["売上"], bins=5),
    "box": ChartSpec(kind="box", y=["売上"], group_by="部門"),
}


@pytest.mark.parametrize("kind", list(SPECS))
@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_every_kind_in_both_formats(kind: str, fmt: str, tmp_path: Path) -> None:
    title = f"部門別の売上（{kind}）"
    spec = SPECS[kind].model_copy(update={"format": fmt, "title": title})
    out = render_chart(SALES, spec, tmp_path / "charts")
    assert out == tmp_path / "charts" / f"chart_{kind}.{fmt}"
    data = out.read_bytes()
    if fmt == "png":
        assert data.startswith(PNG_MAGIC)
        assert len(data) > 5_000
    else:
        text = data.decode("utf-8")
        assert text.lstrip().startswith("<?xml")
        assert "<svg" in text
        # Text is drawn as glyph paths (portable without the font) and kept in comments.
        assert title in re.findall(r"<!-- (.*?) -->", text)
        assert "IPAexGothic-" in text
        assert "DejaVu" not in text


def test_reads_a_table_file_and_names_the_output(tmp_path: Path) -> None:
    source = write_table(SALES, tmp_path / "売上.parquet", "parquet")
    out = render_chart(
        source,
        ChartSpec(kind="line", x="計上日", y=["売上"], xlabel="計上日（月末）", format="svg"),
        tmp_path,
        output_name="../売上推移.png",
    )
    assert out == tmp_path / "売上推移.svg"
    assert "計上日（月末）" in out.read_text(encoding="utf-8")


def test_y_defaults_to_numeric_columns(tmp_path: Path) -> None:
    out = render_chart(SALES, ChartSpec(kind="box"), tmp_path)
    assert out.stat().st_size > 0


@pytest.mark.parametrize(
    ("spec", "param", "words"),
    [
        (ChartSpec(kind="pie", y=["売上"]), "kind", "pie"),
        (ChartSpec(kind="line", y=["売上"], format="jpg"), "format", "jpg"),
        (ChartSpec(kind="line", x="年度", y=["売上"]), "x", "年度"),
        (ChartSpec(kind="line", x="月", y=["利益"]), "y", "利益"),
        (ChartSpec(kind="line", x="月", y=["部門"]), "y", "営業部"),
        (ChartSpec(kind="scatter", x="月", y=["売上"]), "x", "散布図"),
        (ChartSpec(kind="bar", x="月", y=["売上"]), "x", "4月"),
        (ChartSpec(kind="hist", y=["売上"], bins=0), "bins", "bins=0"),
        (ChartSpec(kind="line", x="月", y=["売上", "費用"], group_by="部門"), "group_by", "1 列"),
        (ChartSpec(kind="line", x="月", y=["売上"], group_by="支店"), "group_by", "支店"),
    ],
)
def test_bad_specs_name_the_parameter(
    spec: ChartSpec, param: str, words: str, tmp_path: Path
) -> None:
    with pytest.raises(UnsupportedVizParamError) as info:
        render_chart(SALES, spec, tmp_path / "out")
    error = info.value
    assert isinstance(error, ValueError)
    assert error.param == param
    assert words in error.message
    assert error.hint
    assert error.to_dict()["details"] == {"param": param}
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_no_numeric_columns(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedVizParamError) as info:
        render_chart(pd.DataFrame({"名前": ["a", "b"]}), ChartSpec(kind="hist"), tmp_path)
    assert info.value.param == "y"


@given(st.lists(amount_texts(), min_size=1, max_size=5))
def test_a_chart_reads_a_value_column_as_read_amount_does(texts: list[str]) -> None:
    frame = pd.DataFrame({"金額": texts})
    read = [read_amount(t) for t in texts]
    if None in read:
        with pytest.raises(UnsupportedVizParamError, match=f"{read.index(None) + 1} 行目"):
            _numbers(frame, "金額")
    else:
        assert _numbers(frame, "金額").tolist() == [float(r) for r in read if r is not None]
