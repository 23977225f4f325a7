"""A versions journal edited by hand is always seen: generated edits of a real journal.

The journal of a month-end plan as a team leaves it (saved, approved, a second version saved,
approved, then its approval withdrawn) is edited every way a hand can edit a text file: each
character changed, its end cut at every length (cutting the last line restores the withdrawn
approval), each line removed, repeated or swapped with the next, the head file removed or
garbled. Every edit must make reading the versions an ``INTEGRITY_FAILED`` error, never an
answer. A writer that stopped between its journal line and the head loses nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.chain import GENESIS, chain_line, split_line
from keiri_agent.versions import SaveNote, VersionStore, check_run
from keiri_agent.versions.head import HEAD_FILE
from tests.support.versions import CLOSE_PLAN, CLOSE_PLAN_ID, versions_settings

PLAN_ID = CLOSE_PLAN_ID
V1 = CLOSE_PLAN
V2 = V1.replace("b: 2", "b: 3")


def _team_journal(tmp_path: Path) -> tuple[VersionStore, Path]:
    store = VersionStore.of(versions_settings(tmp_path))
    first, _ = store.save(PLAN_ID, V1, SaveNote(author="sato", source="cli", message="初版"))
    store.decide(PLAN_ID, first.id, "approve", by="kato", comment="確認しました")
    second, _ = store.save(PLAN_ID, V2, SaveNote(author="sato", source="app"))
    store.decide(PLAN_ID, second.id, "approve", by="kato")
    store.decide(PLAN_ID, second.id, "reject", by="kato", comment="承認を取り消します")
    return store, store.folder(PLAN_ID) / "versions.jsonl"


def _seen(store: VersionStore) -> bool:
    try:
        store.versions(PLAN_ID)
    except BlockError as exc:
        return exc.code == ErrorCode.INTEGRITY_FAILED
    return False


def _edits(text: str) -> list[tuple[str, str]]:
    """(what, the edited journal) for every edit of the module docstring."""
    edits = []
    for at, char in enumerate(text):
        edits.append(
            (f"character {at}", text[:at] + ("b" if char == "a" else "a") + text[at + 1 :])
        )
    for cut in range(1, len(text)):
        edits.append((f"cut {cut}", text[:-cut]))
    lines = text.splitlines(keepends=True)
    for at in range(len(lines)):
        rest = lines[:at] + lines[at + 1 :]
        edits.append((f"line {at + 1} removed", "".join(rest)))
        edits.append(
            (f"line {at + 1} repeated", "".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]))
        )
        edits.append((f"line {at + 1} appended again", text + lines[at]))
        if at + 1 < len(lines):
            swapped = [*lines[:at], lines[at + 1], lines[at], *lines[at + 2 :]]
            edits.append((f"lines {at + 1}-{at + 2} swapped", "".join(swapped)))
    return edits


def test_every_hand_edit_of_the_journal_is_seen(tmp_path: Path) -> None:
    store, journal = _team_journal(tmp_path)
    original = journal.read_text(encoding="utf-8")
    assert not _seen(store)
    edits = _edits(original)
    unseen = []
    for what, edited in edits:
        journal.write_text(edited, encoding="utf-8")
        if not _seen(store):
            unseen.append(what)
    journal.write_text(original, encoding="utf-8")
    assert not _seen(store)
    assert len(edits) > 2_000
    assert not unseen, f"{len(unseen)} of {len(edits)} edits not seen: {unseen[:10]}"


def test_cutting_the_withdrawal_does_not_make_the_version_run_again(tmp_path: Path) -> None:
    _store, journal = _team_journal(tmp_path)
    settings = versions_settings(tmp_path)
    with pytest.raises(BlockError) as refused:
        check_run(settings, [(PLAN_ID, V2)])
    assert refused.value.code == ErrorCode.APPROVAL_REQUIRED
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    journal.write_text("".join(lines[:-1]), encoding="utf-8")  # the withdrawal, gone
    with pytest.raises(BlockError) as caught:
        check_run(settings, [(PLAN_ID, V2)])
    assert caught.value.code == ErrorCode.INTEGRITY_FAILED
    assert "末尾の 1 行が削除されています" in caught.value.message
    (journal.parent / HEAD_FILE).unlink()  # and the head with it
    with pytest.raises(BlockError) as headless:
        check_run(settings, [(PLAN_ID, V2)])
    assert f"{HEAD_FILE} がありません" in headless.value.message


@pytest.mark.parametrize("head", ["", "{}", '{"lines": "x", "digest": 1}', "壊れた"])
def test_a_garbled_head_is_seen(tmp_path: Path, head: str) -> None:
    store, journal = _team_journal(tmp_path)
    (journal.parent / HEAD_FILE).write_text(head, encoding="utf-8")
    assert _seen(store)


def test_a_writer_stopped_between_its_line_and_the_head_loses_nothing(tmp_path: Path) -> None:
    store, journal = _team_journal(tmp_path)
    head = journal.parent / HEAD_FILE
    before = head.read_bytes()
    third, _ = store.save(PLAN_ID, V2 + "# 3\n", SaveNote(author="sato", source="cli"))
    head.write_bytes(before)  # the line is on disk, the head not yet
    assert [v.id for v in store.versions(PLAN_ID)][-1] == third.id
    store.decide(PLAN_ID, third.id, "approve", by="kato")  # the next write moves the head on
    assert store.is_approved(PLAN_ID, third.id)
    # A line cut while it was written (a crash) is no entry, with or without a head.
    with journal.open("ab") as handle:
        handle.write(b'{"kind": "approve", "plan_id": "keiri/cl')
    assert store.is_approved(PLAN_ID, third.id)
    assert len(store.versions(PLAN_ID)) == 3


def test_a_journal_kept_before_heads_still_reads_and_gets_one(tmp_path: Path) -> None:
    # A journal as it was written before heads: no entry says one is kept.
    old = VersionStore(tmp_path / "old", durable=False)
    saved, _ = old.save(PLAN_ID, V1, SaveNote(author="sato", source="cli"))
    old_journal = old.folder(PLAN_ID) / "versions.jsonl"
    (old_journal.parent / HEAD_FILE).unlink()
    body, _ = split_line(old_journal.read_text(encoding="utf-8").rstrip("\n"))
    line, _ = chain_line(body.replace(', "sealed": true', ""), GENESIS)
    old_journal.write_text(line + "\n", encoding="utf-8")
    assert old.versions(PLAN_ID)[0].id == saved.id  # read as before
    old.decide(PLAN_ID, saved.id, "approve", by="kato")
    assert (old_journal.parent / HEAD_FILE).is_file()
    old_journal.write_text(line + "\n", encoding="utf-8")  # the approval cut off again
    with pytest.raises(BlockError):
        old.versions(PLAN_ID)
