"""A subflow call of a self-started run reads each history it looks at once: the versions of
the plan it decides on are those it read to decide (``call_versions``), not read again."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from tests.schedule.conftest import team_settings

from keiri_agent.errors import BlockError
from keiri_agent.plan._graph.saved import SavedSubflows
from keiri_agent.versions import RunVersion, SaveNote, Version, VersionStore

FILES = ["close.yaml", "lib/close.yaml", "lib/double.yaml", "pay/transfer.yaml"]
CASES = 12  # base: 4 of 12 wrong -- each of the 4 that find a saved file read its plan twice


def _store(root: Path, rng: random.Random) -> tuple[str, dict[str, str]]:
    """A store of a few plans saved from the files above, a working copy now and then: (the
    call, the plan ids by file as the newest save left them)."""
    settings = team_settings(root)
    designs = Path(settings.keiri_designs_dir).resolve()
    store = VersionStore.of(settings)
    newest: dict[str, str] = {}
    for n in range(rng.randint(2, 8)):
        plan_id, file = f"p{rng.randint(0, 3)}", rng.choice(FILES)
        note = SaveNote(author="sato", source="cli", file=str(designs / file))
        if store.save(plan_id, f"id: {plan_id}\nnodes: []\n# {n}\n", note)[1]:
            newest[file] = plan_id
    call = rng.choice(FILES).removesuffix(".yaml")
    if rng.random() < 0.3:  # a working copy no version records: its id is looked under
        (designs / "memo.yaml").parent.mkdir(parents=True, exist_ok=True)
        (designs / "memo.yaml").write_text("id: p1\nnodes: []\n", encoding="utf-8")
        call = "memo"
    return call, newest


def test_a_call_reads_each_history_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[str] = Counter()
    read = VersionStore.versions

    def counted(store: VersionStore, plan_id: str) -> list[Version]:
        reads[plan_id] += 1
        return read(store, plan_id)

    rng = random.Random(21)
    wrong = []
    for case in range(CASES):
        root = tmp_path / str(case)
        call, newest = _store(root, rng)
        expected = newest.get(f"{call}.yaml", "p1" if call == "memo" else call)
        subflows = SavedSubflows(team_settings(root), RunVersion("main", "0" * 64, 1, None), False)
        reads.clear()
        monkeypatch.setattr(VersionStore, "versions", counted)
        try:
            version: Version | None = subflows.version(call)[0]
        except BlockError:  # no version of the id looked under
            version = None
        monkeypatch.setattr(VersionStore, "versions", read)
        newest_saved = (VersionStore.of(team_settings(root)).versions(expected) or [None])[-1]
        if version != newest_saved or max(reads.values()) > 1:
            wrong.append((call, expected, dict(reads)))
    assert wrong == []
