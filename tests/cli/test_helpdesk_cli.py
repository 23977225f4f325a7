"""`keiri-agent helpdesk ingest|search` over the sample knowledge base (examples/helpdesk)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import keiri_agent.cli.helpdesk  # noqa: F401  (registers `helpdesk` until the lead adds it to cli/__init__)
from keiri_agent.cli import app
from keiri_agent.cli.common import console, err_console
from tests.conftest import SAMPLE_KB_TIMEOUT_S
from tests.support.helpdesk import sample_embedding_cache

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "helpdesk"
PDF = "XYZシステム_ユーザーマニュアル.pdf"
# A test whose index is the first of the session to ask for the shared embedding cache waits for it
# to be filled, as the conftest's SAMPLE_KB_FIXTURES do.
waits_for_the_sample_cache = pytest.mark.timeout(SAMPLE_KB_TIMEOUT_S)


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "width", 300)
    monkeypatch.setattr(err_console, "width", 300)


@pytest.fixture
def index(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The sample knowledge base ingested through the CLI (no embedding model: the default
    semantic search with the bundled model). Its embeddings come from the session's cache of the
    sample's texts (keyed by each text's hash), so the bundled model embeds only the queries: a
    fresh cache per test made the model embed every chunk and Q/A row again, past the 120 s
    timeout on a loaded two-core machine. What the CLI reports of the ingest is unchanged."""
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(sample_embedding_cache(tmp_path_factory)))
    target = tmp_path / "index"
    result = CliRunner().invoke(
        app,
        [
            "helpdesk",
            "ingest",
            "--manual",
            str(EXAMPLES / "manual" / PDF),
            str(EXAMPLES / "manual" / "リリースノート.md"),
            "--qa",
            str(EXAMPLES / "qa.csv"),
            "--index",
            str(target),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "│ 追加                   │    2 │" in result.stdout
    assert "Q/A: qa.csv（文字コード cp932、36 件、更新）" in result.stdout
    assert "意味検索: 同梱の埋め込みモデル multilingual-e5-small" in result.stdout
    return target


@waits_for_the_sample_cache
def test_re_ingest_in_json_reports_nothing_re_chunked(index: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "helpdesk",
            "ingest",
            "--manual",
            str(EXAMPLES / "manual"),
            "--index",
            str(index),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["files_seen"], report["unchanged"], report["rechunked"]) == (2, 2, 0)
    assert (report["chunks_total"], report["qa_rows_total"], report["qa_mode"]) == (41, 36, "dense")
    assert report["semantic_embedded"] == 0  # nothing changed: no text embedded again


@waits_for_the_sample_cache
def test_search_prints_sources_and_scores(index: Path) -> None:
    runner = CliRunner()
    manual = runner.invoke(app, ["helpdesk", "search", "E-1004", "--index", str(index)])
    assert manual.exit_code == 0, manual.output
    assert f"{PDF} p.12" in manual.stdout
    qa = runner.invoke(
        app, ["helpdesk", "search", "パスワードを忘れた", "--tool", "qa", "--index", str(index)]
    )
    assert "qa.csv 1 行目" in qa.stdout
    assert "検索方式: 同梱の埋め込みモデル multilingual-e5-small" in qa.stdout

    found = runner.invoke(
        app,
        [
            "helpdesk",
            "search",
            "締め日",
            "--tool",
            "hybrid",
            "--k",
            "5",
            "--index",
            str(index),
            "--json",
        ],
    )
    payload = json.loads(found.stdout)
    assert (payload["tool"], payload["qa_mode"]) == ("hybrid", "dense")
    assert len(payload["results"]) == 5
    assert {r["source"] for r in payload["results"]} == {"manual", "qa"}
    assert all(r["chunk_id"] and r["score"] is not None for r in payload["results"])


def test_the_default_index_comes_from_the_settings(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_HELPDESK_INDEX", str(index))
    result = CliRunner().invoke(app, ["helpdesk", "search", "代理承認", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["page"] == 6


def test_a_broken_file_is_named_and_the_exit_status_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "manuals"
    shutil.copytree(EXAMPLES / "manual", folder)
    (folder / "古い手順.pdf").write_text(
        "<html><body>ログインしてください</body></html>", encoding="utf-8"
    )
    result = CliRunner().invoke(
        app, ["helpdesk", "ingest", "--manual", str(folder), "--index", str(tmp_path / "index")]
    )
    assert result.exit_code == 1
    assert "失敗 古い手順.pdf" in result.stderr
    assert "HTML" in result.stderr
    assert "1 件のファイルを取り込めませんでした" in result.stderr
    assert "│ 追加                   │    2 │" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["helpdesk", "search", "E-1004", "--tool", "web"], "--tool 'web' は使えません"),
        (["helpdesk", "search", "E-1004", "--index", "nowhere"], "helpdesk ingest --manual"),
        (["helpdesk", "ingest", "--index", "x"], "指定されていません"),
        (["helpdesk", "ingest", "--manual", "missing-dir"], "見つかりません"),
    ],
)
def test_user_errors_exit_2_with_a_hint(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert message in result.stderr
