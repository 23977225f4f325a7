"""Which plan a subflow call runs, when the versions of older stores kept their file as typed
(a path relative to wherever ``plan save`` ran): a file name alone must not send a call of
``lib/close`` to the versions of another folder's ``close.yaml``."""

from __future__ import annotations

from pathlib import Path

from tests.schedule.conftest import team_settings

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
