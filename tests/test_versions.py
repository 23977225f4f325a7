"""Plan versions (keiri_agent.versions): every save a version named by its hash, with author,
time and message; reviews by the four-eyes rules; the journal shows an edit; the one call a
schedule needs ("the approved version of PLAN_ID", "is version X approved")."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.users import key_hash
from keiri_agent.versions import (
    JOURNAL_FILE,
    Reviewer,
    SaveNote,
    VersionStore,
    approval_required,
    check_run,
    review,
    version_id,
)

PLAN_V1 = "apiVersion: v1\nid: keiri/close\ngraph:\n  - {id: a, block: test.add}\n"
PLAN_V2 = "apiVersion: v1\nid: keiri/close\ngraph:\n  - {id: a, block: test.add, in: {a: 1}}\n"


def _settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(
        _env_file=None,
        keiri_designs_dir=tmp_path / "designs",
        keiri_run_log_fsync=False,
        **overrides,
    )


def _users(tmp_path: Path, roles: dict[str, str]) -> Path:
    path = tmp_path / "users.yaml"
    lines = ["users:"]
    for name, role in roles.items():
        lines += [f"  - {{name: {name}, key_sha256: {key_hash(name + '-key')}, role: {role}}}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_every_save_is_a_version_named_by_its_hash_with_author_time_and_message(
    tmp_path: Path,
) -> None:
    store = VersionStore.of(_settings(tmp_path))

    first, created = store.save(
        "keiri/close", PLAN_V1, SaveNote(author="sato", source="cli", message="初版")
    )
    second, _ = store.save("keiri/close", PLAN_V2, SaveNote(author="tanaka", source="app"))
    again, created_again = store.save(
        "keiri/close", PLAN_V1.replace("\n", "\r\n"), SaveNote(author="x", source="api")
    )

    assert created
    assert not created_again
    assert first.id == hashlib.sha256(PLAN_V1.encode()).hexdigest() == version_id(PLAN_V1)
    assert again == first  # the same text (line ends aside) is the same version, not a new one
    assert (first.number, first.author, first.message, first.source) == (1, "sato", "初版", "cli")
    assert (second.number, second.author) == (2, "tanaka")
    assert first.saved_at <= second.saved_at
    assert [v.id for v in store.versions("keiri/close")] == [first.id, second.id]
    assert store.text(first) == PLAN_V1
    assert store.plans() == ["keiri/close"]
    # On disk: the text under its hash, and one journal line per save.
    folder = tmp_path / "designs" / ".versions" / "keiri" / "close"
    assert (folder / f"{first.id}.yaml").read_text(encoding="utf-8") == PLAN_V1
    assert len((folder / JOURNAL_FILE).read_text(encoding="utf-8").splitlines()) == 2


def test_versions_are_named_by_hash_prefix_number_latest_and_approved(tmp_path: Path) -> None:
    settings = _settings(tmp_path, keiri_allow_self_approval=True)
    store = VersionStore.of(settings)
    first, _ = store.save(
        "p", PLAN_V1.replace("keiri/close", "p"), SaveNote(author="sato", source="cli")
    )
    second, _ = store.save(
        "p", PLAN_V2.replace("keiri/close", "p"), SaveNote(author="sato", source="cli")
    )
    review(store, "p", "v1", "approve", Reviewer("sato", True), settings)

    assert store.find("p", first.id[:6]) == store.find("p", "v1") == store.find("p", "approved")
    assert store.find("p", "latest").id == second.id
    for ref in ("v9", "zz", first.id[:3], "ffff" if not first.id.startswith("ffff") else "eeee"):
        with pytest.raises(BlockError) as caught:
            store.find("p", ref)
        assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
        assert "v1（" in caught.value.hint  # the versions there are, named
    with pytest.raises(BlockError) as none:
        store.find("never_saved", "latest")
    assert "登録された版がありません" in none.value.message


def test_only_an_approver_reviews_and_never_their_own_version_unless_self_approval_is_on(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path)
    store = VersionStore.of(settings)
    mine, _ = store.save("keiri/close", PLAN_V1, SaveNote(author="suzuki", source="app"))

    with pytest.raises(BlockError) as role:
        review(store, "keiri/close", "v1", "approve", Reviewer("sato", False, "user"), settings)
    assert role.value.code == ErrorCode.PERMISSION_DENIED
    assert "role: approver" in role.value.hint
    with pytest.raises(BlockError) as own:
        review(store, "keiri/close", "v1", "approve", Reviewer("suzuki", True), settings)
    assert own.value.code == ErrorCode.PERMISSION_DENIED
    assert "自身が登録した版" in own.value.message
    assert store.get("keiri/close", mine.id).status == "pending"  # nothing was recorded

    approved = review(
        store, "keiri/close", "v1", "approve", Reviewer("takahashi", True), settings, comment="OK"
    )
    assert approved.status == "approved"
    assert (approved.approval.by, approved.approval.comment) == ("takahashi", "OK")
    assert not approved.approval.self_approved
    # The author may withdraw (reject) their own version; the newest review decides.
    withdrawn = review(store, "keiri/close", "v1", "reject", Reviewer("suzuki", True), settings)
    assert withdrawn.status == "rejected"
    assert withdrawn.approval is None

    alone = _settings(tmp_path, keiri_allow_self_approval=True)
    self_approved = review(store, "keiri/close", "v1", "approve", Reviewer("suzuki", True), alone)
    assert self_approved.approval is not None
    assert self_approved.approval.self_approved


def test_the_approved_version_and_is_approved_are_one_call_each(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    store = VersionStore.of(settings)
    assert store.approved_version("keiri/close") is None
    first, _ = store.save("keiri/close", PLAN_V1, SaveNote(author="sato", source="cli"))
    second, _ = store.save("keiri/close", PLAN_V2, SaveNote(author="sato", source="cli"))
    review(store, "keiri/close", first.id, "approve", Reviewer("suzuki", True), settings)

    approved = store.approved_version("keiri/close")
    assert approved is not None
    assert approved.id == first.id
    assert store.text(approved) == PLAN_V1
    assert store.is_approved("keiri/close", first.id)
    assert not store.is_approved("keiri/close", second.id)
    assert not store.is_approved("keiri/close", version_id("unsaved"))


def test_approval_is_required_once_the_users_file_names_an_approver(tmp_path: Path) -> None:
    plain = _users(tmp_path, {"sato": "user", "ops": "admin"})
    assert not approval_required(_settings(tmp_path))  # one person, no users file
    assert not approval_required(_settings(tmp_path, keiri_api_keys_file=plain))
    team = _users(tmp_path, {"sato": "user", "suzuki": "approver"})
    assert approval_required(_settings(tmp_path, keiri_api_keys_file=team))
    assert not approval_required(
        _settings(tmp_path, keiri_api_keys_file=team, keiri_require_approval="off")
    )
    assert approval_required(_settings(tmp_path, keiri_require_approval="true"))


def test_a_run_of_an_unapproved_version_is_refused_naming_it_and_who_can_approve(
    tmp_path: Path,
) -> None:
    team = _users(tmp_path, {"sato": "user", "suzuki": "approver", "kato": "approver"})
    settings = _settings(tmp_path, keiri_api_keys_file=team)
    store = VersionStore.of(settings)
    saved, _ = store.save("keiri/close", PLAN_V1, SaveNote(author="suzuki", source="app"))

    with pytest.raises(BlockError) as unsaved:
        check_run(settings, [("keiri/close", PLAN_V2)])
    with pytest.raises(BlockError) as pending:
        check_run(settings, [("keiri/close", PLAN_V1)])

    assert unsaved.value.code == pending.value.code == ErrorCode.APPROVAL_REQUIRED
    assert version_id(PLAN_V2)[:12] in unsaved.value.message
    assert "登録されていません" in unsaved.value.message
    assert pending.value.message == (
        f"Plan keiri/close の版 {saved.short} は承認されていないため実行できません（承認待ち）。"
    )
    assert "承認できる人: kato" in pending.value.hint  # suzuki wrote it: not their own
    assert f"keiri-agent plan approve keiri/close {saved.short}" in pending.value.hint
    assert pending.value.details["approvers"] == ["kato"]

    review(store, "keiri/close", "v1", "approve", Reviewer("kato", True, "approver"), settings)
    (ran,) = check_run(settings, [("keiri/close", PLAN_V1)])
    assert ran.version == saved.id
    assert ran.approval is not None
    assert ran.approval["by"] == "kato"


def _journal(tmp_path: Path) -> Path:
    return tmp_path / "designs" / ".versions" / "keiri" / "close" / JOURNAL_FILE


def test_an_edited_journal_or_text_is_refused_not_believed(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    store = VersionStore.of(settings)
    saved, _ = store.save("keiri/close", PLAN_V1, SaveNote(author="sato", source="cli"))
    journal = _journal(tmp_path)
    original = journal.read_text(encoding="utf-8")

    # An approval written by hand (no chain value), and an author changed in place.
    forged = {
        "kind": "approve",
        "plan_id": "keiri/close",
        "version": saved.id,
        "at": "2026-01-01T00:00:00Z",
        "by": "suzuki",
    }
    journal.write_text(original + json.dumps(forged) + "\n", encoding="utf-8")
    with pytest.raises(BlockError) as appended:
        store.is_approved("keiri/close", saved.id)
    journal.write_text(original.replace('"by": "sato"', '"by": "kato"'), encoding="utf-8")
    with pytest.raises(BlockError) as changed:
        store.versions("keiri/close")

    for caught in (appended, changed):
        assert caught.value.code == ErrorCode.INTEGRITY_FAILED
        assert "1 行目" in str(caught.value.details["problems"]) or "2 行目" in str(
            caught.value.details["problems"]
        )
    journal.write_text(original, encoding="utf-8")
    text = journal.parent / f"{saved.id}.yaml"
    text.write_text(PLAN_V2, encoding="utf-8")
    with pytest.raises(BlockError) as body:
        store.text(saved)
    assert body.value.code == ErrorCode.INTEGRITY_FAILED
    assert "ハッシュと一致しません" in body.value.message


def test_a_too_long_message_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = VersionStore.of(_settings(tmp_path))
    with pytest.raises(BlockError) as caught:
        store.save(
            "keiri/close", PLAN_V1, SaveNote(author="sato", source="cli", message="あ" * 2001)
        )
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "2000 文字以内" in caught.value.hint
    assert store.versions("keiri/close") == []


def _save_many(root: str, worker: int, count: int) -> None:
    store = VersionStore(root, durable=False)
    for i in range(count):
        text = f"apiVersion: v1\nid: shared\nvars: {{w: {worker}, i: {i}}}\ngraph:\n  - {{id: a, block: x}}\n"
        store.save("shared", text, SaveNote(author=f"w{worker}", source="cli"))


def test_saves_from_several_processes_keep_one_unbroken_journal(tmp_path: Path) -> None:
    root = tmp_path / "versions"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_save_many, args=(str(root), w, 15)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    found = VersionStore(root, durable=False).versions("shared")  # the chain is checked here
    assert len(found) == 60
    assert [v.number for v in found] == list(range(1, 61))
