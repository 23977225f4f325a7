"""A report carries its images: report.markdown puts the charts it links beside the .md
(linked by file name), and the report opens with them anywhere: drawn in parts (the app), as
one self-contained HTML page, or as a ZIP of the .md and its images."""

from __future__ import annotations

import base64
import io
import re
import zipfile
from pathlib import Path

import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents.markdown_report import (
    ReportImage,
    report_html,
    report_images,
    report_parts,
    report_zip,
)
from keiri_agent.errors import BlockError
from keiri_agent.file_access import FileAccess

# The smallest valid PNG (1x1, transparent).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
TEMPLATE = "## 月別売上\n\n![月別売上]({{ chart }})\n\n本文の続き\n"


def _ctx(tmp_path: Path, access: FileAccess | None = None) -> BlockContext:
    return BlockContext(
        run_id="r",
        plan_id="p",
        node_id="write_report",
        block_version="0.1.0",
        workspace=tmp_path / "run",
        access=access or FileAccess(),
    )


def _chart(tmp_path: Path) -> Path:
    chart = tmp_path / "run" / "chart" / "月別売上.png"
    chart.parent.mkdir(parents=True)
    chart.write_bytes(PNG)
    return chart


def test_a_chart_linked_by_an_absolute_path_is_put_beside_the_report(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    block = BlockRegistry().load("report.markdown")
    out = block.run(
        {"template": TEMPLATE, "data": {"chart": str(chart)}, "output_path": "売上.md"},
        _ctx(tmp_path),
    )
    report = Path(out["path"])
    assert "![月別売上](月別売上.png)" in out["markdown"]
    assert str(tmp_path) not in out["markdown"]  # no path of this machine in the report
    assert (report.parent / "月別売上.png").read_bytes() == PNG
    assert report.read_text(encoding="utf-8") == out["markdown"]


def test_a_missing_image_stops_the_report_with_its_name(tmp_path: Path) -> None:
    block = BlockRegistry().load("report.markdown")
    with pytest.raises(BlockError) as caught:
        block.run(
            {"template": TEMPLATE, "data": {"chart": str(tmp_path / "無い.png")}},
            _ctx(tmp_path),
        )
    assert caught.value.message == "報告書に載せる画像「無い.png」が見つかりません。"
    assert not (tmp_path / "run" / "write_report" / "report.md").exists()


def test_an_image_outside_what_the_run_may_read_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "秘密.png"
    secret.parent.mkdir()
    secret.write_bytes(PNG)
    (tmp_path / "run").mkdir()
    access = FileAccess.confined(search=[tmp_path / "run"], writable=[tmp_path / "run"])
    block = BlockRegistry().load("report.markdown")
    with pytest.raises(BlockError) as caught:
        block.run({"template": TEMPLATE, "data": {"chart": str(secret)}}, _ctx(tmp_path, access))
    assert "秘密.png" in caught.value.message
    assert not list((tmp_path / "run").rglob("秘密.png"))


def _report(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "月別売上.png").write_bytes(PNG)
    (tmp_path / "外.png").write_bytes(PNG)
    path = folder / "報告.md"
    path.write_text(
        "# 報告\n\n![月別売上](月別売上.png)\n\n| 月 | 金額 |\n| --- | ---: |\n| 1月 | 1,000 |\n\n"
        "![外](../外.png)\n\n<script>alert(1)</script>\n",
        encoding="utf-8",
    )
    return path


def test_the_html_export_carries_its_images_and_runs_no_script(tmp_path: Path) -> None:
    page = report_html(_report(tmp_path))
    assert "data:image/png;base64," in page
    assert "月別売上.png" not in page.split("<body>")[1].split('alt="月別売上"')[0]
    assert "<table>" in page
    assert "<script>" not in page  # the template's HTML is text
    assert '<img src="../' in page or "%E5%A4%96" in page  # a link outside stays a link
    assert not re.search(r"https?://", page)


def test_the_zip_holds_the_report_and_its_own_images_only(tmp_path: Path) -> None:
    path = _report(tmp_path)
    names = zipfile.ZipFile(io.BytesIO(report_zip(path))).namelist()
    assert names == ["報告.md", "月別売上.png"]
    assert [image.path.name for image in report_images(path)] == ["月別売上.png"]


def test_the_report_in_parts_puts_each_image_between_its_text(tmp_path: Path) -> None:
    parts = list(report_parts(_report(tmp_path)))
    text, image, rest = parts
    assert isinstance(text, str)
    assert text.startswith("# 報告")
    assert isinstance(image, ReportImage)
    assert image.path.name == "月別売上.png"
    assert isinstance(rest, str)
    assert "| 1月 | 1,000 |" in rest
    assert "../外.png" in rest  # not read: it leaves the report's folder
