"""Approvals as a team makes them at once: racing reviewers, and a version saved mid-review.

- An approver reading ``latest`` while the author saves a newer version would approve the
  newer one unread: an approval must name a version that does not move (``v2``, a hash).
- Approving an older version after a newer one was saved approves that one only: the newer
  working copy still does not run.
- Reviewers in several processes approving and rejecting the same versions while new versions
  are saved: every review is recorded once, each reviewer is told the state their own review
  made, the journal's chain and head hold, and the status is the newest review.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.versions import Reviewer, SaveNote, VersionStore, check_run, review
from tests.support.versions import CLOSE_PLAN, CLOSE_PLAN_ID, versions_settings

PLAN_ID = CLOSE_PLAN_ID
V1 = CLOSE_PLAN
KATO = Reviewer("kato", True, "approver")
runner = CliRunner()


@pytest.mark.parametrize("ref", ["latest", "approved", " Latest "])
def test_an_approval_names_a_version_that_does_not_move(tmp_path: Path, ref: str) -> None:
    settings = versions_settings(tmp_path)
    store = VersionStore.of(settings)
    first, _ = store.save(PLAN_ID, V1, SaveNote(author="sato", source="cli"))
    store.decide(PLAN_ID, first.id, "approve", by="kato")
    second, _ = store.save(PLAN_ID, V1 + "# 2\n", SaveNote(author="sato", source="app"))
    with pytest.raises(BlockError) as caught:
        review(store, PLAN_ID, ref, "approve", KATO, settings)
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "v番号かハッシュで指定してください" in caught.value.message
    named = second if ref.strip().lower() == "latest" else first
    assert f"{named.label}" in caught.value.hint
    assert store.versions(PLAN_ID)[1].status == "pending"  # nothing recorded
    # Rejecting what moves is allowed: refusing more is never a risk.
    assert review(store, PLAN_ID, ref, "reject", KATO, settings).status == "rejected"


def test_the_cli_refuses_approve_latest_in_japanese(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    store = VersionStore.of(versions_settings(tmp_path))
    store.save(PLAN_ID, V1, SaveNote(author="sato", source="cli"))
    done = runner.invoke(app, ["plan", "approve", PLAN_ID, "latest"])
    assert done.exit_code == 2
    assert "v番号かハッシュで指定してください" in done.output
    assert store.versions(PLAN_ID)[0].status == "pending"
    done = runner.invoke(app, ["plan", "approve", PLAN_ID, "v1"])
    assert done.exit_code == 0, done.output
    assert store.versions(PLAN_ID)[0].status == "approved"


def test_approving_an_older_version_after_a_newer_one_was_saved(tmp_path: Path) -> None:
    settings = versions_settings(tmp_path)
    store = VersionStore.of(settings)
    store.save(PLAN_ID, V1, SaveNote(author="sato", source="cli"))
    newer = V1.replace("b: 2", "b: 3")
    store.save(PLAN_ID, newer, SaveNote(author="sato", source="cli"))
    done = review(store, PLAN_ID, "v1", "approve", KATO, settings)
    assert done.number == 1
    assert done.status == "approved"
    assert check_run(settings, [(PLAN_ID, V1)])[0].number == 1
    with pytest.raises(BlockError) as refused:
        check_run(settings, [(PLAN_ID, newer)])
    assert refused.value.code == ErrorCode.APPROVAL_REQUIRED
    assert "承認待ち" in refused.value.message


ROUNDS = 12


def _reviewer(root: str, name: str, kind: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    store = VersionStore(root, durable=False)
    told = []
    for i in range(ROUNDS):
        versions = store.versions(PLAN_ID)
        target = versions[i % len(versions)]
        done = store.decide(PLAN_ID, target.id, kind, by=name, comment=f"{name}-{i}")  # type: ignore[arg-type]
        last = done.decisions[-1]
        told.append((target.id, last.by, last.comment, last.kind))
    out.put(told)


def _author(root: str) -> None:
    store = VersionStore(root, durable=False)
    for i in range(ROUNDS):
        store.save(PLAN_ID, V1 + f"# {i}\n", SaveNote(author="sato", source="app"))


def test_racing_reviewers_each_recorded_once(tmp_path: Path) -> None:
    root = tmp_path / "versions"
    VersionStore(root, durable=False).save(PLAN_ID, V1, SaveNote(author="sato", source="cli"))
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    reviewers = [("kato", "approve"), ("suzuki", "approve"), ("ito", "reject")]
    procs = [ctx.Process(target=_reviewer, args=(str(root), n, k, out)) for n, k in reviewers]
    procs.append(ctx.Process(target=_author, args=(str(root),)))
    for proc in procs:
        proc.start()
    told = [item for _ in reviewers for item in out.get(timeout=120)]
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    versions = VersionStore(root, durable=False).versions(PLAN_ID)  # chain and head checked
    assert len(versions) == ROUNDS + 1
    recorded = [(v.id, d.by, d.comment, d.kind) for v in versions for d in v.decisions]
    assert sorted(recorded) == sorted(told)  # each review once, as its reviewer was told
    assert len(set(recorded)) == len(reviewers) * ROUNDS
    for version in versions:
        if version.decisions:
            newest = version.decisions[-1]
            assert version.status == ("approved" if newest.kind == "approve" else "rejected")


@pytest.mark.parametrize("plan_id", ["経理/月次決算", "keiri/月次", "ｋｅｉｒｉ/close"])
def test_a_japanese_plan_id_is_refused_in_japanese_and_nothing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plan_id: str
) -> None:
    """Plan ids are ASCII (the DSL's rule): a file saved with a Japanese id is not a version,
    and reviewing one names the plan's (absent) versions; no folder is made for it."""
    settings = versions_settings(tmp_path)
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(settings.keiri_designs_dir))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    path = tmp_path / "月次決算.yaml"
    path.write_text(V1.replace("id: keiri/close", f"id: {plan_id}"), encoding="utf-8")
    saved = runner.invoke(app, ["plan", "save", str(path)])
    assert saved.exit_code == 1
    assert "Plan の id は英数字・_・- と / で書いてください" in saved.output
    approved = runner.invoke(app, ["plan", "approve", plan_id, "v1"])
    assert approved.exit_code == 2
    assert f"Plan {plan_id} には登録された版がありません" in approved.output
    assert not (Path(settings.keiri_designs_dir) / ".versions").exists()
