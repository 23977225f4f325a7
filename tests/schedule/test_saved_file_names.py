"""Which plan a subflow call runs, when the versions of older stores kept their file as typed
(a path relative to wherever ``plan save`` ran): a file name alone must not send a call of
``lib/close`` to the versions of another folder's ``close.yaml``."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.schedule.conftest import team_settings
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.plan._graph.saved import call_plan_id
from keiri_agent.versions import SaveNote, VersionStore

TOP = "id: close\nnodes: []\n"
LIB = "id: lib_close\nnodes: []\n"


def _saved(tmp_path: Path, kept_top: str, kept_lib: str) -> str:
    """Save the top-level ``close`` and then ``lib/close`` (older first) with their files kept
    as given, then save the top-level one again so that it is the newest save; the plan id a
    call of ``lib/close`` runs."""
    settings = team_settings(tmp_path)
    designs = Path(settings.keiri_designs_dir)
    (designs / "lib").mkdir(parents=True, exist_ok=True)
    (designs / "close.yaml").write_text(TOP, encoding="utf-8")
    (designs / "lib" / "close.yaml").write_text(LIB, encoding="utf-8")
    store = VersionStore.of(settings)
    store.save("lib_close", LIB, SaveNote(author="sato", source="cli", file=kept_lib))
    store.save("close", TOP, SaveNote(author="sato", source="cli", file=kept_top))
    store.save("close", TOP + "# 改訂\n", SaveNote(author="sato", source="cli", file=kept_top))
    return call_plan_id("lib/close", settings)


def test_a_bare_file_name_kept_by_an_older_save_names_no_file_of_a_subfolder(
    tmp_path: Path,
) -> None:
    # `plan save close.yaml` run inside designs/: the name alone is all that was kept.
    assert _saved(tmp_path, "close.yaml", "designs/lib/close.yaml") == "lib_close"


def test_a_kept_path_is_matched_by_the_whole_of_the_call(tmp_path: Path) -> None:
    assert _saved(tmp_path, "designs/close.yaml", "lib/close.yaml") == "lib_close"
    assert _saved(tmp_path / "b", "./designs/close.yaml", "../x/designs/lib/close.yaml") == (
        "lib_close"
    )


def test_a_kept_absolute_path_is_matched_whole(tmp_path: Path) -> None:
    designs = Path(team_settings(tmp_path).keiri_designs_dir).resolve()
    assert _saved(tmp_path, str(designs / "close.yaml"), str(designs / "lib" / "close.yaml")) == (
        "lib_close"
    )


def test_plan_generate_out_keeps_the_file_it_wrote_whole(
    design_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``plan generate --out double.yaml`` typed inside ``designs/lib``: its version names
    ``designs/lib/double.yaml`` as ``plan save`` would (absolute), so a call of ``lib/double``
    runs it and a call of a top-level ``double`` does not (base: kept as typed, the bare name
    -- ``lib/double`` went to the working copy's id, ``double`` to this plan)."""
    settings = team_settings(design_env)
    lib = Path(settings.keiri_designs_dir) / "lib"
    lib.mkdir(parents=True)
    monkeypatch.chdir(lib)
    args = ["plan", "generate", "-i", "請求書と入金明細を照合", "--out", "double.yaml"]
    args += ["--apply-mode", "compose", "--plan-id", "gen/double"]
    args += ["--templates", "evidence_zip_invoices,bank_statement,invoice_payment"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (version,) = VersionStore.of(settings).versions("gen/double")
    assert version.file == str((lib / "double.yaml").resolve())
    assert call_plan_id("lib/double", settings) == "gen/double"
    assert call_plan_id("double", settings) == "double"
