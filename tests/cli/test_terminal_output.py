"""What a person at a terminal reads: each error once, tables that wrap at any width (never "…"),
and a clear word for a folder given to `extract`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.agents.helpdesk.knowledge import ingest
from keiri_agent.blocks.catalog import summary
from keiri_agent.blocks.registry import default_registry
from keiri_agent.cli import app

runner = CliRunner()
WIDTHS = (60, 80, 120)
PROCESS_TIMEOUT_S = 300  # a loaded machine can take long to import everything
MISSING_KEY = "を使うための設定がありません"
LONG_LINE = (
    "経費精算の申請は毎月二十五日までに上長の承認を得たうえで経理部へ提出してください"
    "期限を過ぎた申請は翌月の処理となり立替金の支払いも翌月になります"
)


def _column(output: str, index: int) -> str:
    """The text of one table column, every row's lines joined, whitespace removed."""
    cells = [line.split("│")[1:-1] for line in output.splitlines() if line.count("│") > 2]
    return "".join("".join(cell[index].split()) for cell in cells if len(cell) > index)


def _keiri_agent(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "keiri-agent"), *args]
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S
    )


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "経費規程.md").write_text(f"# 経費精算\n\n{LONG_LINE}\n", encoding="utf-8")
    ingest(tmp_path / "index", manuals=[manual])
    return tmp_path / "index"


@pytest.mark.parametrize("width", WIDTHS)
def test_blocks_list_shows_every_description_whole(width: int) -> None:
    result = runner.invoke(app, ["blocks", "list"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    ids, descriptions = _column(result.stdout, 1), _column(result.stdout, 3)
    for spec in default_registry().list():
        assert spec.id in ids
        assert "".join(summary(spec.description).split()) in descriptions


@pytest.mark.parametrize("width", WIDTHS)
def test_helpdesk_search_shows_the_source_and_text_whole(width: int, index_dir: Path) -> None:
    result = runner.invoke(
        app,
        ["helpdesk", "search", "経費精算", "--index", str(index_dir)],
        env={"COLUMNS": str(width)},
    )
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    assert "経費規程.md" in _column(result.stdout, 1)
    assert LONG_LINE in _column(result.stdout, 4)  # after the score and relevance columns


@pytest.mark.parametrize("width", WIDTHS)
def test_extract_header_names_a_long_path_whole(width: int, tmp_path: Path) -> None:
    folder = tmp_path / ("とても長いフォルダ名の経理資料置き場" * 3)
    folder.mkdir()
    memo = folder / "経費精算の手引き.txt"
    memo.write_text(LONG_LINE, encoding="utf-8")
    result = runner.invoke(app, ["extract", str(memo)], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    assert str(memo) in result.stdout.replace("\n", "")


def test_extract_says_a_folder_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "請求書"
    folder.mkdir()
    result = runner.invoke(app, ["extract", str(folder)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "フォルダです" in result.stderr
    assert "拡張子" not in result.stderr
    assert f"keiri-agent extract {folder}/*.pdf" in result.stderr


def test_helpdesk_ask_without_a_key_says_so_once(index_dir: Path, tmp_path: Path) -> None:
    result = _keiri_agent(
        "helpdesk", "ask", "経費精算の期限は？", "--index", str(index_dir), cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert (result.stdout + result.stderr).count(MISSING_KEY) == 1
    assert result.stderr.count("ヒント:") == 1


def test_convert_without_a_key_says_so_once(tmp_path: Path) -> None:
    source = tmp_path / "売上.csv"
    source.write_text("月,売上\n2024-04,120000\n", encoding="utf-8")
    env_root = tmp_path / "work"
    env_root.mkdir()
    result = _keiri_agent("convert", "売上を Parquet にして", "--source", str(source), cwd=env_root)
    assert result.returncode == 2, result.stderr
    assert (result.stdout + result.stderr).count(MISSING_KEY) == 1
    assert result.stderr.count("ヒント:") == 1
