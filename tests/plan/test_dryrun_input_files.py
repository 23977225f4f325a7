"""A dry run given the run's file access says which file a block will not find (DRY_RUN_INPUT_FILE).

Generated (seeded): plans of real read blocks whose path comes from the plan (written in it, a
var, a ``--var``), from an upstream node's sample or from a loop's item, with the file there,
missing, or a folder. Only what the plan itself gives is looked up; a dry run not given the
file access (a plan being designed, with placeholder paths) looks nothing up.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.file_access import FileAccess
from keiri_agent.plan import PlanEnv, dry_run_source, parse_source

CODE = "DRY_RUN_INPUT_FILE"
NAMES = ["4月 締め/売上 一覧.csv", "経理部 共有/入金 明細 (3月).xlsx", "令和6年/取引先 マスタ.csv"]
PLAN = """\
apiVersion: v1
id: monthly
vars:
  data: {data}
graph:
  - id: sales
    block: file.read_table
    in: {{path: {given}}}
"""
SAMPLED = """\
apiVersion: v1
id: monthly
graph:
  - id: folder
    block: file.list_folder
    in: {path: .}
  - id: each
    foreach: {input: "${folder.files}", itemVar: f}
    body:
      plan:
        graph:
          - id: sales
            block: file.read_table
            in: {path: "${f}"}
"""


@pytest.fixture(scope="module")
def env() -> PlanEnv:
    return PlanEnv.of(default_registry())


def _cases(seed: int) -> list[tuple[str, str, dict[str, str], str | None]]:
    """(plan text, where, vars given, the path that must be named or None)."""
    rng = random.Random(seed)
    found: list[tuple[str, str, dict[str, str], str | None]] = []
    for _ in range(30):
        name = rng.choice(NAMES)
        state = rng.choice(["there", "missing", "a folder"])
        how = rng.choice(["written", "var", "--var"])
        given = f'"{name}"' if how == "written" else '"${vars.data}"'
        data = "x.csv" if how == "--var" else name
        overrides = {"data": name} if how == "--var" else {}
        found.append((PLAN.format(data=f'"{data}"', given=given), state, overrides, name))
    return found


@pytest.mark.parametrize("seed", [1, 2])
def test_a_dry_run_names_the_file_the_plan_gives_that_is_not_there(
    seed: int, env: PlanEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for number, (text, state, overrides, name) in enumerate(_cases(seed)):
        here = tmp_path / f"case{number}"
        here.mkdir()
        monkeypatch.chdir(here)
        assert name is not None
        if state != "missing":
            (here / name).parent.mkdir(parents=True, exist_ok=True)
            (here / name).mkdir() if state == "a folder" else (here / name).write_text("a\n1\n")
        report = dry_run_source(
            parse_source(text), env, vars_override=overrides or None, files=FileAccess()
        )
        found = [f for f in report.findings if f.code == CODE]
        if state == "there":
            assert found == [], (text, overrides)
            continue
        assert len(found) == 1, (text, state, overrides)
        assert f"「{name}」" in found[0].message
        assert found[0].hint
        assert found[0].node_id == "sales"
        assert found[0].path == "in.path"
        assert not report.ok
        unasked = dry_run_source(parse_source(text), env, vars_override=overrides or None)
        assert CODE not in unasked.codes()  # a designed plan's placeholders are not looked up


def test_a_path_from_an_upstream_sample_is_not_looked_up(
    env: PlanEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    report = dry_run_source(parse_source(SAMPLED), env, files=FileAccess())
    assert CODE not in report.codes()
