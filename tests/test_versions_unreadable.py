"""A plan's version record that is there but cannot be read -- its permissions, a folder in its
place, a link to nothing -- is the store's ``INTEGRITY_FAILED`` error naming the plan's record,
with what to check, for every reader of a history (a list, a lookup, a save, a review; the CLI
and the server): never "no versions", never a raw OSError, and nothing is written."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.versions import JOURNAL_FILE, SaveNote, VersionStore
from tests.server.conftest import LiveServer, make_settings, serve  # noqa: F401  (the fixture)

PLAN_IDS = ["close", "keiri/close", "pay/月次振込", "a/b/c"]
CASES = 40  # base: 40 of 40 wrong (an empty history, a raw OSError, a file made)
PLAN = (
    "apiVersion: v1\nid: x\ngraph:\n  - {id: note, block: report.markdown, in: {template: メモ}}\n"
)
AS_ROOT = os.geteuid() == 0  # root reads a file whatever its permissions

Reader = Callable[[VersionStore, str], object]
READERS: dict[str, Reader] = {
    "versions": lambda store, plan: store.versions(plan),
    "get": lambda store, plan: store.get(plan, "0" * 64),
    "find": lambda store, plan: store.find(plan, "latest"),
    "approved_version": lambda store, plan: store.approved_version(plan),
    "of_text": lambda store, plan: store.of_text(plan, "id: x\n"),
    "is_approved": lambda store, plan: store.is_approved(plan, "0" * 64),
    "save": lambda store, plan: store.save(plan, "id: new\n", SaveNote("sato", "cli")),
    "decide": lambda store, plan: store.decide(plan, "0" * 64, "approve", by="kato"),
}


def _damage(journal: Path, kind: str) -> None:
    if kind == "perm":
        journal.chmod(0)
        return
    journal.unlink()
    if kind == "folder":
        journal.mkdir()
    else:  # a link to nothing
        journal.symlink_to(journal.with_name("gone.jsonl"))


def _tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``root`` with its mode, size and time (a file written or made shows)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            found[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def _store(root: Path, plan_id: str, rng: random.Random) -> VersionStore:
    store = VersionStore(root, durable=False)
    for n in range(rng.randint(1, 3)):
        version, _ = store.save(plan_id, f"id: x\n# {n}\n", SaveNote("sato", "cli"))
        if rng.random() < 0.5:
            store.decide(plan_id, version.id, "approve", by="kato")
    return store


def _refusal(call: Callable[[], object]) -> BlockError | None:
    """The store's refusal of ``call`` (None: it answered, or failed otherwise)."""
    try:
        call()
    except BlockError as error:
        return error if error.code == ErrorCode.INTEGRITY_FAILED else None
    except OSError:
        return None
    return None


def test_every_reader_of_an_unreadable_history_is_refused_naming_it(tmp_path: Path) -> None:
    rng = random.Random(21)
    kinds = ["folder", "link"] + ([] if AS_ROOT else ["perm"])
    wrong = []
    for case in range(CASES):
        root = tmp_path / str(case)
        plan_id, kind, reader = rng.choice(PLAN_IDS), rng.choice(kinds), rng.choice(list(READERS))
        store = _store(root, plan_id, rng)
        journal = store.folder(plan_id) / JOURNAL_FILE
        _damage(journal, kind)
        before = _tree(root)
        error = _refusal(lambda: READERS[reader](store, plan_id))  # noqa: B023  (called here)
        said = error is not None and (
            f"Plan {plan_id} の版の記録" in error.message
            and "ファイルを読めません" in error.message
            and "権限と置き場所" in error.hint
            and error.details["file"] == str(journal)
        )
        if not said or _tree(root) != before:
            wrong.append((plan_id, kind, reader, error))
    assert wrong == []


def _unreadable_plan(root: Path) -> tuple[Any, Path]:
    """Settings whose store holds plan ``x`` with a folder where its journal was (readable as
    root too); the journal's path."""
    settings = make_settings(root, keiri_designs_dir=root / "designs", keiri_run_log_fsync=False)
    store = VersionStore.of(settings)
    store.save("x", "id: x\n", SaveNote("sato", "cli"))
    journal = store.folder("x") / JOURNAL_FILE
    _damage(journal, "folder")
    return settings, journal


def test_plan_versions_says_the_record_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, _journal = _unreadable_plan(tmp_path)
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(settings.keiri_designs_dir))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    before = _tree(tmp_path)
    result = CliRunner().invoke(app, ["plan", "versions", "x"], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output  # base: 0, "Plan x には登録された版がありません"
    assert "エラー（記録の改ざん・破損）: Plan x の版の記録" in result.output
    assert "ヒント: まずファイルの権限と置き場所" in result.output
    assert "Traceback" not in result.output
    assert _tree(tmp_path) == before


def test_the_server_says_the_record_cannot_be_read(
    tmp_path: Path,
    serve: Callable[..., LiveServer],  # noqa: F811  (the fixture)
) -> None:
    settings, journal = _unreadable_plan(tmp_path)
    live = serve(settings)
    with live.client() as client:
        listed = client.get("/agent/plans/x/versions")
        before = _tree(settings.keiri_designs_dir)
        saved = client.post("/agent/plans/x/versions", json={"yaml": PLAN})
        after = _tree(settings.keiri_designs_dir)
    for response in (listed, saved):
        body = response.json()
        assert (response.status_code, body["code"]) == (500, "INTEGRITY_FAILED"), body
        assert body["message"].startswith("Plan x の版の記録"), body
        assert body["details"]["file"] == str(journal)
    assert after == before  # no version kept, no working copy written
