"""`keiri-agent blocks list|docs` over the built-in catalog."""

from __future__ import annotations

import json
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


def test_blocks_search_json_lists_the_ranked_blocks_with_scores() -> None:
    result = CliRunner().invoke(
        app, ["blocks", "search", "請求書と入金明細を照合して消込したい", "--k", "3", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["rank"] for r in data["results"]] == [1, 2, 3]
    assert data["results"][0]["id"] == "table.reconcile"
    assert data["results"][0]["score"] >= data["results"][1]["score"] > 0
    assert data["mode_requested"] == "hybrid"
    assert data["mode_used"] == "bm25"
    assert "KEIRI_LLM_MODEL_EMBEDDING" in data["note"]  # BM25 only, and it says so


def test_blocks_search_table_shows_the_scores_and_the_note() -> None:
    result = CliRunner().invoke(
        app, ["blocks", "search", "フォルダ内のファイル一覧", "--mode", "bm25"]
    )
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if " file.list_folder " in line]
    assert rows
    assert rows[0].split("│")[1].strip() == "1"
    assert len([line for line in result.stdout.splitlines() if line.startswith("│")]) == 10
    assert "注意" not in result.stdout  # bm25 was asked for: nothing to explain
    hybrid = CliRunner().invoke(app, ["blocks", "search", "フォルダ内のファイル一覧"])
    assert "注意: 埋め込みモデルが未設定のため BM25 のみで検索しました" in hybrid.stdout


def test_blocks_search_rejects_a_bad_mode_in_japanese() -> None:
    result = CliRunner().invoke(app, ["blocks", "search", "入金消込", "--mode", "semantic"])
    assert result.exit_code == 2
    assert "--mode 'semantic' は使えません" in result.output
    assert "bm25 / dense / hybrid" in result.output


def test_blocks_search_dense_without_an_embedding_model_names_the_setting() -> None:
    result = CliRunner().invoke(app, ["blocks", "search", "入金消込", "--mode", "dense"])
    assert result.exit_code == 2
    assert "KEIRI_LLM_MODEL_EMBEDDING" in result.output
    zero = CliRunner().invoke(app, ["blocks", "search", "入金消込", "--k", "0"])
    assert zero.exit_code == 2
    assert "--k の値が正しくありません: 1 以上にしてください" in zero.output
