"""`audit export` of a period with nothing to export says so, in Japanese, on stderr: an empty
runs folder (a mistyped or unused one) and a quiet period are told apart; the export itself
(standard output, or the --out file) is still written, empty but for its CSV header, and the
exit code is 0 (a quiet month is an answer, as `audit verify --all` of no logs is)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from tests.plan.blockkit import SPEC_DIR

runner = CliRunner()

PLAN = """\
apiVersion: v1
id: t/add
graph:
  - id: first
    block: test.add
    in: {a: 1, b: 2}
"""


@pytest.fixture(autouse=True)
def folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An empty runs folder and designs folder; the test block kit."""
    for name in ("runs", "designs"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KEIRI_{name.upper()}_DIR", str(tmp_path / name))
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")


def _export(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(
        app,
        ["audit", "export", "--from", "2001-03-01", "--to", "2001-03-31", *map(str, args)],
        env={"COLUMNS": "200"},
    )
    return result.exit_code, result.stdout, result.stderr


def test_an_empty_runs_folder_is_said_to_have_nothing_to_export(tmp_path: Path) -> None:
    code, out, err = _export()
    assert code == 0, err
    assert out.splitlines()[0].startswith("実行 ID,Plan,")  # the header, and nothing else
    assert len(out.splitlines()) == 1
    assert "書き出す実行はありません" in err
    assert "Plan の実行ログが 1 件もありません" in err
    assert "--runs-dir" in err

    target = tmp_path / "audit" / "2001-03.csv"
    code, out, err = _export("--out", target)
    assert code == 0, err
    assert "書き出す実行はありません" in err
    assert str(target) in err
    assert "見出しの行だけ" in err
    assert target.read_text(encoding="utf-8-sig").startswith("実行 ID,Plan,")

    code, out, err = _export("--format", "jsonl")
    assert (code, out) == (0, "")
    assert "書き出す実行はありません" in err


def test_a_period_with_no_runs_is_told_apart_from_an_empty_folder(tmp_path: Path) -> None:
    plan = tmp_path / "designs" / "add.yaml"
    plan.write_text(PLAN, encoding="utf-8")
    ran = runner.invoke(app, ["plan", "run", str(plan), "--json"])
    assert ran.exit_code == 0, ran.output  # a run today, not in March 2001

    code, out, err = _export()
    assert code == 0, err
    assert len(out.splitlines()) == 1
    assert "書き出す実行はありません" in err
    assert "2001-03-01〜2001-03-31 に開始した Plan の実行" in err
    assert "1 件もありません" not in err
