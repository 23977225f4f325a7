"""Plan versions as an accounting team really edits and approves them: property tests.

- Byte changes (seeded generator over a month-end plan with Japanese comments): CRLF line ends
  and a byte order mark (Windows Notepad) are how a file was written, not what it says: the
  same version, so an approved plan saved on Windows still runs. Every other byte (a comment, a
  trailing space, a blank line, a value) is a new version that must be approved again; the diff
  says in Japanese whether the plan itself changed.
- Approval: only an approved version runs when approval is required; the author never approves
  their own version (whoever they are).
- Two processes saving the same plan at once (also the same text as LF, CRLF and with a BOM)
  lose no version, make no duplicate and keep the journal's chain.
- A schedule pinned to a version: a newer approval does not move it (the list warns), a withdrawn
  approval stops it with the one APPROVAL_REQUIRED error; ``latest-approved`` runs the newest
  version whose approval stands.
"""

from __future__ import annotations

import multiprocessing
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import load_source
from keiri_agent.schedule import resolve_pin, working_drift
from keiri_agent.users import Users, key_hash, load_users
from keiri_agent.versions import (
    Reviewer,
    SaveNote,
    VersionStore,
    check_run,
    review,
    version_id,
)
from tests.support.versions import versions_settings

PLAN_ID = "keiri/close"
BASE = """\
apiVersion: v1
id: keiri/close
# 月次決算: 売掛金の消込と未払計上の確認
vars:
  month: "2026-11"
  tolerance: 500
graph:
  - id: total
    block: test.add
    in: {a: 1, b: 2}
  - id: check
    block: test.add
    when: "${vars.tolerance} > 0"
    in: {a: "${total.result}", b: 3}
"""
runner = CliRunner()


def _users(tmp_path: Path) -> Users:
    path = tmp_path / "users.yaml"
    lines = ["users:"]
    for name, role in {"sato": "approver", "kato": "approver", "ito": "user"}.items():
        lines += [f"  - {{name: {name}, key_sha256: {key_hash(name + '-key')}, role: {role}}}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_users(versions_settings(tmp_path, keiri_api_keys_file=path))


# --- byte changes ------------------------------------------------------------------------------


# (mutation, same version?, the plan itself changed?)
def _crlf(text: str, _rnd: random.Random) -> str:
    return text.replace("\n", "\r\n")


def _bom(text: str, _rnd: random.Random) -> str:
    return "\ufeff" + text


def _bom_crlf(text: str, rnd: random.Random) -> str:
    return _bom(_crlf(text, rnd), rnd)


def _comment(text: str, rnd: random.Random) -> str:
    lines = text.split("\n")
    at = rnd.randrange(1, len(lines) - 1)
    note = rnd.choice(["# 確認済み（経理部）", "# TODO: 税率の見直し", "#"])
    return "\n".join([*lines[:at], note, *lines[at:]])


def _trailing_space(text: str, rnd: random.Random) -> str:
    lines = text.split("\n")
    at = rnd.randrange(len(lines) - 1)
    lines[at] += rnd.choice([" ", "  ", "\t"])
    return "\n".join(lines)


def _blank_line(text: str, rnd: random.Random) -> str:
    lines = text.split("\n")
    at = rnd.randrange(2, len(lines) - 1)
    return "\n".join([*lines[:at], "", *lines[at:]])


def _no_final_newline(text: str, _rnd: random.Random) -> str:
    return text.rstrip("\n")


def _value(text: str, rnd: random.Random) -> str:
    return text.replace("tolerance: 500", f"tolerance: {rnd.choice([0, 100, 1000])}")


MUTATIONS = [
    (_crlf, True, False),
    (_bom, True, False),
    (_bom_crlf, True, False),
    (_comment, False, False),
    (_trailing_space, False, False),
    (_blank_line, False, False),
    (_no_final_newline, False, False),
    (_value, False, True),
]
CASES = 12  # seeds per mutation


@pytest.mark.parametrize(
    ("mutate", "same", "plan_changed"), MUTATIONS, ids=[m.__name__ for m, _, _ in MUTATIONS]
)
def test_a_byte_change_is_the_same_version_or_a_new_one_as_the_docs_say(
    mutate: Any, same: bool, plan_changed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = versions_settings(tmp_path)
    users = _users(tmp_path)
    store = VersionStore.of(settings)
    first, _ = store.save(PLAN_ID, BASE, SaveNote(author="sato", source="app"))
    review(store, PLAN_ID, first.id, "approve", Reviewer("kato", True, "approver"), settings)
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(settings.keiri_designs_dir))
    monkeypatch.setenv("KEIRI_REQUIRE_APPROVAL", "on")
    working = settings.keiri_designs_dir / f"{PLAN_ID}.yaml"
    working.parent.mkdir(parents=True, exist_ok=True)
    wrong = []
    seen = {first.id}
    for seed in range(CASES):
        text = mutate(BASE, random.Random(seed))
        working.write_bytes(text.encode("utf-8"))  # the bytes as the editor wrote them
        read = load_source(working).text  # as `plan run` and the API read the file
        saved, created = store.save(PLAN_ID, read, SaveNote(author="ito", source="cli"))
        if created is (saved.id in seen) or (saved.id == first.id) is not same:
            wrong.append((seed, "version", created, saved.label))
        seen.add(saved.id)
        refusal = None
        try:
            check_run(settings, [(PLAN_ID, read)], users=users)
        except BlockError as exc:
            refusal = exc.code
        ran = refusal is None
        if refusal not in (None, ErrorCode.APPROVAL_REQUIRED):
            wrong.append((seed, "refusal", refusal))
        if ran is not same:
            wrong.append((seed, "run", ran))
        if not same:
            shown = runner.invoke(app, ["plan", "diff", PLAN_ID, "v1", saved.id[:12]])
            assert shown.exit_code == 0, shown.output
            no_change = "Plan としての違いはありません" in shown.stdout
            if no_change is plan_changed or (plan_changed and "tolerance" not in shown.stdout):
                wrong.append((seed, "diff", shown.stdout))
    assert not wrong, f"{len({w[0] for w in wrong})} of {CASES} seeds wrong: {wrong[:3]}"


def test_a_version_saved_with_its_byte_order_mark_before_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version saved (and approved) before the mark was left out kept the mark and its hash:
    it still reads, runs, and a schedule pinned to it still starts it."""
    from keiri_agent.versions import store as store_module

    settings = versions_settings(tmp_path)
    store = VersionStore.of(settings)
    with monkeypatch.context() as before:  # the rule as it was: only line ends normalized
        before.setattr(
            store_module, "normalize_text", lambda t: t.replace("\r\n", "\n").replace("\r", "\n")
        )
        legacy, _ = store.save(PLAN_ID, "\ufeff" + BASE, SaveNote(author="sato", source="cli"))
    review(store, PLAN_ID, legacy.id, "approve", Reviewer("kato", True, "approver"), settings)
    assert legacy.id != version_id(BASE)
    assert store.text(legacy) == "\ufeff" + BASE
    working = settings.keiri_designs_dir / f"{PLAN_ID}.yaml"
    working.parent.mkdir(parents=True, exist_ok=True)
    working.write_bytes(("\ufeff" + BASE).replace("\n", "\r\n").encode("utf-8"))
    text = load_source(working).text
    (ran,) = check_run(settings, [(PLAN_ID, text)], users=_users(tmp_path))
    assert ran.version == legacy.id
    assert resolve_pin(settings, PLAN_ID, legacy.id) == legacy.id
    assert working_drift(settings, PLAN_ID, "latest-approved") is None
    # Saved again now, it is a new version without the mark; the approved one still runs.
    fresh, created = store.save(PLAN_ID, text, SaveNote(author="ito", source="cli"))
    assert created
    assert fresh.id == version_id(BASE)
    (ran,) = check_run(settings, [(PLAN_ID, text)], users=_users(tmp_path))
    assert ran.version == legacy.id


# --- approval ----------------------------------------------------------------------------------


def test_only_an_approved_version_runs_and_no_author_approves_their_own(tmp_path: Path) -> None:
    settings = versions_settings(tmp_path)
    users = _users(tmp_path)
    store = VersionStore.of(settings)
    rnd = random.Random(7)
    approvers = ["sato", "kato"]
    wrong = []
    for i in range(30):
        text = BASE.replace("tolerance: 500", f"tolerance: {i}")
        author = rnd.choice([*approvers, "ito"])
        version, _ = store.save(PLAN_ID, text, SaveNote(author=author, source="api"))
        with pytest.raises(BlockError) as refused:
            check_run(settings, [(PLAN_ID, text)], users=users)
        assert refused.value.code == ErrorCode.APPROVAL_REQUIRED
        if author in approvers:
            with pytest.raises(BlockError) as own:
                review(store, PLAN_ID, version.id, "approve", Reviewer(author, True), settings)
            assert own.value.code == ErrorCode.PERMISSION_DENIED
            assert "自身が登録した版なので承認できません" in own.value.message
            if store.get(PLAN_ID, version.id).status != "pending":  # type: ignore[union-attr]
                wrong.append((i, "own approval recorded"))
        other = next(a for a in approvers if a != author)
        review(store, PLAN_ID, version.id, "approve", Reviewer(other, True), settings)
        check_run(settings, [(PLAN_ID, text)], users=users)  # runs now
    assert not wrong


# --- two processes -----------------------------------------------------------------------------

TEXTS = [BASE.replace('month: "2026-11"', f'month: "2026-{m:02d}"') for m in range(1, 13)]


def _save_all(root: str, order_seed: int, result: Any) -> None:
    rnd = random.Random(order_seed)
    store = VersionStore(root, durable=True)
    shapes = [lambda t: t, lambda t: t.replace("\n", "\r\n"), lambda t: "\ufeff" + t]
    made = 0
    for text in rnd.sample(TEXTS, len(TEXTS)):
        _version, created = store.save(
            PLAN_ID, rnd.choice(shapes)(text), SaveNote(author=f"p{order_seed}", source="cli")
        )
        made += created
    result.put(made)


def test_two_processes_saving_the_same_plan_lose_nothing_and_make_no_duplicate(
    tmp_path: Path,
) -> None:
    root = tmp_path / "versions"
    ctx = multiprocessing.get_context("fork")
    result = ctx.Queue()
    for round_ in range(3):
        plan_root = root / str(round_)
        procs = [ctx.Process(target=_save_all, args=(str(plan_root), s, result)) for s in (1, 2)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(120)
            assert proc.exitcode == 0
        made = result.get(timeout=10) + result.get(timeout=10)
        store = VersionStore(plan_root, durable=False)
        found = store.versions(PLAN_ID)  # the chain is checked here
        assert made == len(TEXTS)
        assert sorted(v.id for v in found) == sorted(version_id(t) for t in TEXTS)
        assert [v.number for v in found] == list(range(1, len(TEXTS) + 1))
        assert all(store.text(v) in TEXTS for v in found)


# --- pinned versions ---------------------------------------------------------------------------


def test_a_pinned_version_superseded_or_withdrawn_behaves_as_documented(
    tmp_path: Path,
) -> None:
    settings = versions_settings(tmp_path)
    store = VersionStore.of(settings)
    sato, kato = Reviewer("sato", True, "approver"), Reviewer("kato", True, "approver")
    v1, _ = store.save(PLAN_ID, TEXTS[0], SaveNote(author="sato", source="cli"))
    review(store, PLAN_ID, v1.id, "approve", kato, settings)
    v2, _ = store.save(PLAN_ID, TEXTS[1], SaveNote(author="kato", source="cli"))
    review(store, PLAN_ID, v2.id, "approve", sato, settings)
    working = settings.keiri_designs_dir / f"{PLAN_ID}.yaml"
    working.parent.mkdir(parents=True)
    working.write_text(TEXTS[1], encoding="utf-8")

    # Superseded: a pin stays on its version (the list says another one is approved).
    assert resolve_pin(settings, PLAN_ID, v1.id) == v1.id
    assert resolve_pin(settings, PLAN_ID, "latest-approved") == v2.id
    assert "固定した別の版" in (working_drift(settings, PLAN_ID, v1.id) or "")

    # Withdrawn: the pinned version no longer runs by itself; latest-approved goes back to the
    # newest version whose approval stands.
    review(store, PLAN_ID, v1.id, "reject", sato, settings, comment="税率が古い")
    with pytest.raises(BlockError) as caught:
        resolve_pin(settings, PLAN_ID, v1.id)
    assert caught.value.code == ErrorCode.APPROVAL_REQUIRED
    assert "承認されていないため実行できません（却下（sato））" in caught.value.message
    review(store, PLAN_ID, v2.id, "reject", kato, settings)
    with pytest.raises(BlockError) as none_left:
        resolve_pin(settings, PLAN_ID, "latest-approved")
    assert none_left.value.code == ErrorCode.APPROVAL_REQUIRED
