"""``agents.staging``: a job's files reach its folder all together when it succeeds, or not at
all; a staging folder left by a killed process is swept by the next job in that folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from keiri_agent.agents import staging as staging_module
from keiri_agent.agents.staging import STAGING_PREFIX, is_staging, staged


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """The user's output folder."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}


def _stopped_job(folder: Path, stop: type[BaseException], *, made: bool = False) -> None:
    """A job that wrote half a file and was stopped before publishing."""
    with staged(folder, made=made) as staging:
        (staging.path / "a.csv").write_text("half", encoding="utf-8")
        raise stop


def _job(folder: Path, names: list[str]) -> None:
    with staged(folder) as staging:
        for name in names:
            (staging.path / name).write_text(name, encoding="utf-8")
        staging.publish([staging.path / name for name in names])


def test_published_files_replace_older_ones_and_nothing_else_is_left(out: Path) -> None:
    (out / "a.csv").write_text("old", encoding="utf-8")
    (out / "memo.txt").write_text("mine", encoding="utf-8")
    with staged(out) as staging:
        for name in ("a.csv", "b.csv"):
            (staging.path / name).write_text(f"new {name}", encoding="utf-8")
        (staging.path / "scratch.tmp").write_text("x", encoding="utf-8")
        published = staging.publish([staging.path / "a.csv", staging.path / "b.csv"])

    assert published == [out / "a.csv", out / "b.csv"]
    assert _files(out) == {"a.csv": "new a.csv", "b.csv": "new b.csv", "memo.txt": "mine"}


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_job_stopped_before_publishing_leaves_the_folder_as_it_was(
    out: Path, stop: type[BaseException]
) -> None:
    (out / "a.csv").write_text("old", encoding="utf-8")
    with pytest.raises(stop):
        _stopped_job(out, stop)

    assert _files(out) == {"a.csv": "old"}


def test_a_folder_made_for_a_job_that_published_nothing_is_removed(out: Path) -> None:
    folder = out / "new" / "out"
    with pytest.raises(KeyboardInterrupt):
        _stopped_job(folder, KeyboardInterrupt)

    assert not folder.exists()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_folder_the_caller_made_for_the_job_goes_by_the_same_rule(
    out: Path, stop: type[BaseException]
) -> None:
    """A new session folder (made by ``new_session_dir`` before staging) that the job left
    empty is removed; one it published into is kept."""
    stopped, done = out / "20261206120000", out / "20261206120000-2"
    for folder in (stopped, done):
        folder.mkdir()
    with pytest.raises(stop):
        _stopped_job(stopped, stop, made=True)
    with staged(done, made=True) as staging:
        (staging.path / "a.csv").write_text("whole", encoding="utf-8")
        staging.publish([staging.path / "a.csv"])

    assert sorted(p.name for p in out.iterdir()) == [done.name]
    assert _files(done) == {"a.csv": "whole"}


def test_ctrl_c_while_the_staging_folder_is_set_up_leaves_no_folder(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def ctrl_c(folder: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(staging_module, "_sweep", ctrl_c)
    folder = out / "new"
    with pytest.raises(KeyboardInterrupt), staged(folder):
        pytest.fail("the job must not start")

    assert list(out.iterdir()) == []


def test_ctrl_c_in_the_middle_of_publishing_completes_it(
    out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved: list[str] = []
    replace = os.replace

    def replace_then_ctrl_c(source: Path, target: Path) -> None:
        replace(source, target)
        moved.append(Path(target).name)
        if len(moved) == 1:
            raise KeyboardInterrupt  # between the first and the second rename

    names = ["a.csv", "b.csv", "c.csv"]
    monkeypatch.setattr(staging_module.os, "replace", replace_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        _job(out, names)

    assert _files(out) == {name: name for name in names}  # all of them, nothing else


def test_a_staging_folder_of_a_dead_process_is_swept_and_a_live_one_kept(out: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    left = out / f"{STAGING_PREFIX}{dead.stdout.strip()}-abc"
    left.mkdir()
    (left / "half.parquet").write_bytes(b"PAR1")
    running = out / f"{STAGING_PREFIX}{os.getpid()}-other"  # another job of this process
    running.mkdir()

    with staged(out) as staging:
        staging.publish([])

    assert not left.exists()
    assert running.exists()
    assert is_staging(running.name)
