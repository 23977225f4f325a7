"""`keiri-agent templates list|show`: what a person needs to pick templates and write --bind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app

runner = CliRunner()


@pytest.fixture
def designs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty KEIRI_DESIGNS_DIR: the bundled templates are listed."""
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    return tmp_path / "designs"


def test_list_shows_every_template_with_category_tags_and_title(designs: Path) -> None:
    result = runner.invoke(app, ["templates", "list", "--json"])

    assert result.exit_code == 0, result.output
    entries = {e["id"]: e for e in json.loads(result.stdout)}
    assert {"invoice_list", "duplicate_invoices", "excel_report", "invoice_payment"} <= set(entries)
    duplicates = entries["duplicate_invoices"]
    assert duplicates["category"] == "check"
    assert "二重計上" in duplicates["tags"]
    assert duplicates["title"] == "請求書の二重計上（重複）をチェックする"
    assert duplicates["blocks"] == ["table.dedupe"]

    human = runner.invoke(app, ["templates", "list", "--category", "output"])
    assert human.exit_code == 0, human.output
    assert "excel_report" in human.stdout
    assert "invoice_list" not in human.stdout


def test_show_gives_the_names_bind_takes(designs: Path) -> None:
    result = runner.invoke(app, ["templates", "show", "excel_report"])

    assert result.exit_code == 0, result.output
    text = result.stdout.replace("\n", "")
    assert "excel_report.table: records" in text  # the left side of --bind
    assert "excel_report.workbook: workbook（write_table.report）" in text
    assert 'sheet_name: "結果"' in text

    data = json.loads(
        runner.invoke(app, ["templates", "show", "check/duplicate_invoices", "--json"]).stdout
    )
    assert data["imports"] == {"invoices": {"type": "records", "description": "請求一覧"}}
    assert data["exports"]["duplicates"]["from"] == "find_duplicates.duplicates"
    assert data["vars"]["similarity_threshold"] == 85


def test_templates_in_the_designs_dir_are_the_ones_listed(designs: Path) -> None:
    folder = designs / "templates" / "output"
    folder.mkdir(parents=True)
    (folder / "memo.yaml").write_text(
        """id: memo
title: メモを Markdown に書く
tags: [メモ]
imports:
  text: { type: text }
graph_snippet:
  - id: write
    block: report.markdown
    in: { title: メモ, sections: [{ heading: 本文, body: "${imports.text}" }] }
""",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["templates", "list", "--json"])
    assert result.exit_code == 0, result.output
    assert [e["id"] for e in json.loads(result.stdout)] == ["memo"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "no_such"], "テンプレート 'no_such' はありません"),
        (["list", "--category", "nothing"], "カテゴリ 'nothing' のテンプレートはありません"),
    ],
)
def test_unknown_names_are_refused_with_what_exists(
    designs: Path, args: list[str], message: str
) -> None:
    result = runner.invoke(app, ["templates", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "ヒント" in result.stderr
    assert "excel_report" in result.stderr or "output" in result.stderr
