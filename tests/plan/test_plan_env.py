"""One ``PlanEnv`` per command (issue 39): its defaults built in one place, shared by the phases.

A command builds one ``PlanEnv`` (registry, designs folder, ``${config.*}`` and ``${env.*}``
sources, settings, subflow loader) and hands it to validate, dry-run and run. Before, each
phase built its own defaults from the settings (the validator, the dry run and the runner each
had a copy), and ``plan run`` read the settings twice.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.cli import app
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan import PlanEnv, PlanRunner, dry_run_source, load_source, validate_source
from keiri_agent.plan._graph.subflows import SubflowLoader
from tests.plan.blockkit import SPEC_DIR

FIXTURES = Path(__file__).parent / "golden" / "plans"  # read only
PLAN = FIXTURES / "subflow.yaml"  # calls lib/double with 21, then adds 1
DESIGNS = FIXTURES / "designs"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "plan_config.yaml"
    config.write_text("start: 5\n", encoding="utf-8")
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(DESIGNS))
    monkeypatch.setenv("KEIRI_PLAN_CONFIG", str(config))
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_BLOCK_SPEC_DIRS", str(SPEC_DIR))
    return DESIGNS


@pytest.mark.parametrize("command", ["validate", "dry-run", "run"])
def test_a_plan_command_builds_one_plan_env(
    command: str, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: Counter[str] = Counter()
    original = PlanEnv.of.__func__

    def counted(cls: type[PlanEnv], *args: Any, **kwargs: Any) -> PlanEnv:
        built["PlanEnv"] += 1
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(PlanEnv, "of", classmethod(counted))
    result = CliRunner().invoke(app, ["plan", command, str(PLAN), "--json"])

    assert result.exit_code == 0, result.output
    assert built["PlanEnv"] == 1
    if command == "run":  # the subflow validation read is the one that ran: 21 × 2 + 1
        assert json.loads(result.stdout)["outputs"]["after"] == {"sum": 43}


def test_the_defaults_come_from_the_settings_and_a_caller_overrides_them(folder: Path) -> None:
    env = PlanEnv.of()
    assert env.designs_dir == folder
    assert dict(env.config) == {"start": 5}
    assert env.environ is os.environ
    assert env.registry.find("test.add") is not None
    assert env.subflows.designs_dir == folder

    mine = BlockRegistry([SPEC_DIR])
    given = PlanEnv.of(mine, designs_dir=folder.parent, config={"start": 1}, env={"X": "1"})
    assert (given.registry, given.designs_dir) == (mine, folder.parent)
    assert (dict(given.config), dict(given.environ)) == ({"start": 1}, {"X": "1"})


def test_the_registry_reads_the_block_folders_of_the_given_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller's settings name the block folders (the server's, the app's), not the process
    environment: a block defined only in the settings' folder is known to the plan."""
    monkeypatch.delenv("KEIRI_BLOCK_SPEC_DIRS", raising=False)
    settings = Settings(
        _env_file=None, keiri_block_spec_dirs=str(SPEC_DIR), keiri_designs_dir=tmp_path
    )

    assert PlanEnv.of().registry.find("test.add") is None
    assert PlanEnv.of(settings=settings).registry.find("test.add") is not None


def test_validate_and_dry_run_of_one_env_read_each_subflow_once(folder: Path) -> None:
    env = PlanEnv.of()
    source = load_source(PLAN)

    assert validate_source(source, env).valid
    read = env.subflows.load("lib/double")
    report = dry_run_source(source, env)

    assert report.ok, report.findings
    assert [s.plan_id for s in env.subflows.loaded()] == ["lib/double"]
    assert env.subflows.load("lib/double") is read  # the dry run walked the text validation read
    assert env.fresh().subflows is not env.subflows  # a runner's next run reads anew


@pytest.mark.parametrize("again", [None, "rerun"])
def test_a_run_reads_its_subflows_with_one_loader(
    again: str | None, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run (answers checked first) and a rerun (what it drops decided first) each read
    subflows with one loader: the one its validation, its answers check and the run share."""
    made: list[SubflowLoader] = []
    original = SubflowLoader.__init__

    def counted(self: SubflowLoader, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    with PlanRunner(PlanEnv.of()) as runner:  # its runs under KEIRI_RUNS_DIR (tmp_path)
        monkeypatch.setattr(SubflowLoader, "__init__", counted)
        result = runner.run(load_source(PLAN), answers={})
        if again == "rerun":
            made.clear()
            result = runner.rerun(result.run_id, "after", answers={})

    assert result.status == "success", result.error
    assert result.outputs["after"] == {"sum": 43}
    assert len(made) == 1
    assert [s.plan_id for s in made[0].loaded()] == ["lib/double"]


def test_a_plan_config_that_cannot_be_read_is_a_configuration_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("start: [1,\n", encoding="utf-8")
    settings = Settings(keiri_designs_dir=tmp_path, keiri_plan_config=broken)

    with pytest.raises(BlockError) as raised:
        PlanEnv.of(settings=settings)

    assert raised.value.code == ErrorCode.CONFIGURATION_ERROR
    assert f"設定ファイル {broken} を読めません" in raised.value.message
    assert "KEIRI_PLAN_CONFIG" in raised.value.hint


@pytest.mark.parametrize(
    ("text", "top"), [("- tax_rate\n- 0.1\n", "リスト"), ("0.1\n", "数値"), ("税率\n", "文字列")]
)
def test_a_plan_config_whose_top_is_not_a_mapping_is_a_configuration_error(
    tmp_path: Path, text: str, top: str
) -> None:
    """Never an empty config in its place: ``${config.*}`` would miss every value its author set."""
    config = tmp_path / "plan_config.yaml"
    config.write_text(text, encoding="utf-8")
    settings = Settings(keiri_designs_dir=tmp_path, keiri_plan_config=config)

    with pytest.raises(BlockError) as raised:
        PlanEnv.of(settings=settings)

    assert raised.value.code == ErrorCode.CONFIGURATION_ERROR
    assert raised.value.message.startswith(f"設定ファイル {config} の中身が「項目名: 値」の並び")
    assert f"（いちばん上が{top}です）" in raised.value.message
    assert "KEIRI_PLAN_CONFIG" in raised.value.hint


def test_an_empty_plan_config_is_an_empty_mapping(tmp_path: Path) -> None:
    config = tmp_path / "plan_config.yaml"
    config.write_text("# 設定はまだありません\n", encoding="utf-8")

    env = PlanEnv.of(settings=Settings(keiri_designs_dir=tmp_path, keiri_plan_config=config))

    assert dict(env.config) == {}


def test_a_plan_env_shows_no_value_of_its_environment_or_config(folder: Path) -> None:
    env = PlanEnv.of(config={"password": "cfg-secret-1"}, env={"TOKEN": "env-secret-2"})

    shown = repr(env)

    assert "cfg-secret-1" not in shown
    assert "env-secret-2" not in shown
    assert "designs_dir=" in shown  # what the env is, still said


def test_a_plan_env_takes_no_options_beside_it(folder: Path) -> None:
    env = PlanEnv.of()
    with pytest.raises(TypeError):
        validate_source(load_source(PLAN), env, designs_dir=folder)
