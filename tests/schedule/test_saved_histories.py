"""Which histories decide the plan a subflow call runs: only those that may record the call's
file. A tampered or unreadable history of a plan saved from other files stops no self-started
run; one that may record the call's file refuses it, naming that plan (fails closed)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.schedule.conftest import team_settings

from keiri_agent.errors import BlockError
from keiri_agent.plan._graph.saved import _saved_as, call_plan_id
from keiri_agent.versions import JOURNAL_FILE, SaveNote, VersionStore

FILES = ["close.yaml", "lib/close.yaml", "lib/double.yaml", "pay/transfer.yaml", "memo.yaml"]
CASES = 50


def _tamper(store: VersionStore, plan_id: str) -> None:
    """Edit the author of the journal's first line (the chain no longer holds)."""
    journal = store.folder(plan_id) / JOURNAL_FILE
    text = journal.read_text(encoding="utf-8")
    journal.write_text(text.replace('"by": "sato"', '"by": "kato"', 1), encoding="utf-8")


def _case(root: Path, rng: random.Random) -> tuple[str, str | None, bool, bool]:
    """A store of a few plans saved from the files above (absolute or as typed), one history
    tampered: (call, the id the call ran before, whether the tampered history records the
    call's file, whether it names it at all)."""
    settings = team_settings(root)
    designs = Path(settings.keiri_designs_dir).resolve()
    store = VersionStore.of(settings)
    plans = [f"p{i}" for i in range(rng.randint(2, 6))]
    for plan_id in plans:
        for n in range(rng.randint(1, 3)):
            file = rng.choice(FILES)
            kept = str(designs / file) if rng.random() < 0.5 else f"designs/{file}"
            note = SaveNote(author="sato", source="cli", file=kept)
            store.save(plan_id, f"id: {plan_id}\nnodes: []\n# {n}\n", note)
    call = rng.choice(FILES).removesuffix(".yaml")
    before = call_plan_id(call, settings)
    tampered = rng.choice(plans)
    files = [v.file for v in store.versions(tampered) if v.file is not None]
    called = Path(f"{call}.yaml")
    records = any(_saved_as(file, designs, called) for file in files)
    names = any(file.endswith(called.name) for file in files)
    _tamper(store, tampered)
    return call, before, records, names


def test_only_histories_that_may_record_the_call_decide_it(tmp_path: Path) -> None:
    rng = random.Random(20)
    wrong = refused = unrelated = 0
    for case in range(CASES):
        root = tmp_path / str(case)
        call, before, records, names = _case(root, rng)
        try:
            after: str | None = call_plan_id(call, team_settings(root))
        except BlockError as error:
            after = None if error.code == "INTEGRITY_FAILED" else error.code
        if records:
            refused += after is None
            wrong += after is not None  # a history that may decide must refuse
        elif not names:
            unrelated += 1
            wrong += after != before  # an unrelated history must not matter
    assert refused > 10
    assert (wrong, unrelated) == (0, unrelated)  # integ (3522c19): 29 of 29 wrong


def test_an_unreadable_history_that_may_record_the_call_names_its_plan(tmp_path: Path) -> None:
    settings = team_settings(tmp_path)
    designs = Path(settings.keiri_designs_dir).resolve()
    store = VersionStore.of(settings)
    note = SaveNote(author="sato", source="cli", file=str(designs / "lib" / "double.yaml"))
    store.save("double", "id: double\nnodes: []\n", note)
    store.save("other", "id: other\nnodes: []\n", SaveNote("sato", "cli", file="other.yaml"))
    _tamper(store, "other")
    assert call_plan_id("lib/double", settings) == "double"  # the unrelated one does not matter
    _tamper(store, "double")
    with pytest.raises(BlockError) as raised:
        call_plan_id("lib/double", settings)
    assert "サブフロー lib/double" in raised.value.message
    assert "Plan double の版の記録を読めません" in raised.value.message
    assert "keiri-agent plan versions double" in raised.value.hint
    assert raised.value.details["plan_id"] == "double"


def test_a_history_that_cannot_be_read_refuses_the_call_with_the_store_s_words(
    tmp_path: Path,
) -> None:
    """A folder where the journal was (unreadable as root too): the store's error, the call
    and its plan named -- not "no versions" (base: the call went to the working copy's id)."""
    settings = team_settings(tmp_path)
    designs = Path(settings.keiri_designs_dir).resolve()
    store = VersionStore.of(settings)
    note = SaveNote(author="sato", source="cli", file=str(designs / "lib" / "double.yaml"))
    store.save("double", "id: double\nnodes: []\n", note)
    journal = store.folder("double") / JOURNAL_FILE
    journal.unlink()
    journal.mkdir()
    with pytest.raises(BlockError) as raised:
        call_plan_id("lib/double", settings)
    assert raised.value.code == "INTEGRITY_FAILED"
    assert raised.value.message.startswith("サブフロー lib/double がどの Plan の版を実行するか")
    assert "Plan double の版の記録（" in raised.value.message
    assert "ファイルの権限と置き場所" in raised.value.hint
    assert "keiri-agent plan versions double" in raised.value.hint
    assert raised.value.details["file"] == str(journal)
