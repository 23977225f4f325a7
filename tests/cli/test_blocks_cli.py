"""`keiri-agent blocks list|docs` over the built-in catalog."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.blocks.catalog import render_markdown, summary
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.cli import app
from keiri_agent.cli.common import console


@pytest.fixture(autouse=True)
def builtin_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KEIRI_BLOCK_SPEC_DIRS", raising=False)
    monkeypatch.setattr(console, "width", 400)  # one table row per block


def test_blocks_list_shows_every_block_with_its_japanese_description() -> None:
    result = CliRunner().invoke(app, ["blocks", "list"])
    assert result.exit_code == 0, result.output
    specs = BlockRegistry().list()
    assert len(specs) >= 18
    lines = result.stdout.splitlines()
    for spec in specs:
        row = next(line for line in lines if f" {spec.id} " in line)
        assert summary(spec.description) in row
    assert f"{len(specs)} 件" in result.stdout


def test_blocks_docs_writes_the_catalog_and_check_detects_drift(tmp_path: Path) -> None:
    out = tmp_path / "blocks.md"
    runner = CliRunner()
    assert runner.invoke(app, ["blocks", "docs", "--out", str(out)]).exit_code == 0
    assert out.read_text(encoding="utf-8") == render_markdown(BlockRegistry().list())
    assert runner.invoke(app, ["blocks", "docs", "--out", str(out), "--check"]).exit_code == 0
    out.write_text(out.read_text(encoding="utf-8") + "手で編集\n", encoding="utf-8")
    stale = runner.invoke(app, ["blocks", "docs", "--out", str(out), "--check"])
    assert stale.exit_code != 0
    assert "keiri-agent blocks docs" in stale.output
