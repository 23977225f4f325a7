"""`plan runs` when a plan's version record cannot be read: the listing goes on to its end,
each run of that plan says 記録を読めません on its version line, the store's error (with its
hint) is said once at the end, and the exit code is 1; ``--json`` marks each such run
(``version_unreadable``) and lists the errors once per plan (``version_errors``). Each plan's
history is read once per listing.

Seeded generator: a runs folder of real runs of four plans (three saved, one not), and for each
case a random set of saved plans whose journal is a folder or a link to nothing, a random
``--plan`` filter and ``--limit``, with and without ``--json``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.versions import JOURNAL_FILE, VersionStore
from tests.plan.blockkit import SPEC_DIR

SEED = 2222
CASES = 12
SAVED = ("calc", "keiri/close", "pay")  # saved as versions; "draft" never is
RUNS = {"calc": 2, "keiri/close": 1, "pay": 1, "draft": 1}
UNREADABLE = "記録を読めません"

runner = CliRunner()


def _plan(plan_id: str) -> str:
    return (
        f"apiVersion: v1\nid: {plan_id}\ngraph:\n"
        "  - {id: first, block: test.add, in: {a: 1, b: 2}}\n"
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a workspace with the runs of :data:`RUNS` (read-only for cases)."""
    root = tmp_path_factory.mktemp("runs_versions")
    env = {
        "KEIRI_BLOCK_SPEC_DIRS": str(SPEC_DIR),
        "KEIRI_RUNS_DIR": str(root / "runs"),
        "KEIRI_DESIGNS_DIR": str(root / "designs"),
        "COLUMNS": "200",
    }
    for plan_id, count in RUNS.items():
        path = root / "designs" / f"{plan_id}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_plan(plan_id), encoding="utf-8")
        if plan_id in SAVED:
            saved = runner.invoke(app, ["plan", "save", str(path)], env=env)
            assert saved.exit_code == 0, saved.output
        for _ in range(count):
            ran = runner.invoke(app, ["plan", "run", str(path)], env=env)
            assert ran.exit_code == 0, ran.output
    return env


def _journal(env: dict[str, str], plan_id: str) -> Path:
    return Path(env["KEIRI_DESIGNS_DIR"]) / ".versions" / plan_id / JOURNAL_FILE


@pytest.fixture
def broken(workspace: dict[str, str]) -> Iterator[dict[str, str]]:
    """Journals to put out of reach (plan id -> "folder" or "link"), restored afterwards."""
    chosen: dict[str, str] = {}
    yield chosen
    _restore(workspace, chosen)


def _break(env: dict[str, str], broken: dict[str, str], plan_id: str, how: str) -> None:
    journal = _journal(env, plan_id)
    journal.rename(journal.with_suffix(".kept"))
    if how == "folder":
        journal.mkdir()
    else:
        journal.symlink_to(journal.with_name("nowhere.jsonl"))
    broken[plan_id] = how


def _restore(env: dict[str, str], broken: dict[str, str]) -> None:
    for plan_id in list(broken):
        journal = _journal(env, plan_id)
        if journal.is_symlink():
            journal.unlink()
        else:
            journal.rmdir()
        journal.with_suffix(".kept").rename(journal)
        del broken[plan_id]


def _problems(
    env: dict[str, str], plan: str | None, limit: int, broken: dict[str, str], as_json: bool
) -> list[str]:
    """What is wrong with one listing (empty: right)."""
    filters = [*(["--plan", plan] if plan else []), "--limit", str(limit)]
    expected = [
        (plan_id, run_id) for plan_id, run_id in _all_runs(env) if plan is None or plan_id == plan
    ][:limit]
    broken_shown = {plan_id for plan_id, _ in expected if plan_id in broken}
    result = runner.invoke(
        app, ["plan", "runs", *filters, *(["--json"] if as_json else [])], env=env
    )
    problems = []
    if result.exit_code != (1 if broken_shown else 0):
        problems.append(f"exit {result.exit_code}")
    if as_json:
        try:
            data = json.loads(result.stdout)
        except json.JSONDecodeError:
            return [*problems, "no JSON document"]
        listed = [(r.get("plan_id"), r.get("run_id")) for r in data.get("runs", [])]
        if listed != expected:
            problems.append("runs")
        for run in data.get("runs", []):
            if run.get("version_unreadable") != (run["plan_id"] in broken):
                problems.append(f"version_unreadable of {run['plan_id']}")
            known = run["plan_id"] in SAVED and run["plan_id"] not in broken
            if (run.get("version_number") == 1) != known:
                problems.append(f"version_number of {run['plan_id']}")
        named = [e["message"] for e in data.get("version_errors", [])]
        if sorted(_plan_named(m) for m in named) != sorted(broken_shown):
            problems.append(f"version_errors {named}")
        return problems
    lines = result.stdout.splitlines()
    for plan_id, run_id in expected:
        at = next((i for i, line in enumerate(lines) if line.startswith(run_id)), None)
        if at is None:
            problems.append(f"{run_id} not listed")
            continue
        version = lines[at + 1] if at + 1 < len(lines) else "（なし）"
        if (UNREADABLE in version) != (plan_id in broken):
            problems.append(f"version line of {plan_id}: {version}")
        if plan_id in SAVED and plan_id not in broken and "版 v1（" not in version:
            problems.append(f"version line of {plan_id}: {version}")
    said = Counter(
        _plan_named(line) for line in result.stderr.splitlines() if line.startswith("エラー")
    )
    if said != Counter(broken_shown):
        problems.append(f"errors said {dict(said)}")
    if len([line for line in result.stderr.splitlines() if line.startswith("ヒント")]) != len(
        broken_shown
    ):
        problems.append("hints")
    return problems


def _plan_named(message: str) -> str:
    """The plan an error of the version store names (``Plan x の版の記録（...）``)."""
    return message.split("Plan ", 1)[1].split(" の版の記録", 1)[0]


def _all_runs(env: dict[str, str]) -> list[tuple[str, str]]:
    """Every run of the workspace (plan id, run id), newest first, from the run logs."""
    from keiri_agent.plan import list_plan_runs

    found, _ = list_plan_runs(Path(env["KEIRI_RUNS_DIR"]))
    return [(run.plan_id, run.run_id) for run in found]


def test_a_listing_goes_on_past_a_plan_whose_version_record_cannot_be_read(
    workspace: dict[str, str], broken: dict[str, str]
) -> None:
    rng = random.Random(SEED)
    wrong = []
    for case in range(CASES):
        chosen = {p: rng.choice(("folder", "link")) for p in SAVED if rng.random() < 0.5}
        for plan_id, how in chosen.items():
            _break(workspace, broken, plan_id, how)
        plan = rng.choice([None, None, *RUNS])
        limit = rng.randint(1, sum(RUNS.values()) + 1)
        problems = _problems(workspace, plan, limit, broken, as_json=case % 2 == 1)
        if problems:
            wrong.append((case, chosen, plan, limit, problems))
        _restore(workspace, broken)  # the next case starts whole
    assert not wrong, wrong[:3]


def test_each_plans_history_is_read_once_per_listing(
    workspace: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: Counter[str] = Counter()
    read = VersionStore.versions

    def counted(self: VersionStore, plan_id: str) -> list[object]:
        reads[plan_id] += 1
        return read(self, plan_id)  # type: ignore[return-value]

    monkeypatch.setattr(VersionStore, "versions", counted)
    for args in ([], ["--json"]):
        reads.clear()
        result = runner.invoke(app, ["plan", "runs", *args], env=workspace)
        assert result.exit_code == 0, result.output
        assert reads == Counter({p: 1 for p in SAVED} | {"draft": 1}), reads
