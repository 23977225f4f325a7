"""Session directories never collide, and no supplied path leads outside its workspace."""

from __future__ import annotations

import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from keiri_agent.errors import ErrorCode, PathEscapeError
from keiri_agent.workspace import Workspace, confine, new_session_dir, session_started

FIXED_NOW = datetime(2025, 1, 1, 10, 0, 0, tzinfo=UTC)
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    (place / "secret.txt").write_text("機密", encoding="utf-8")
    return place


def _assert_rejected(base: Path, path: str | Path) -> PathEscapeError:
    with pytest.raises(PathEscapeError) as exc:
        confine(base, path)
    err = exc.value
    assert err.code == ErrorCode.PERMISSION_DENIED
    assert JAPANESE.search(err.message)
    assert "ワークスペース内の相対パス" in err.hint
    assert err.details["path"] == str(path)
    assert err.details["base"] == str(base)
    return err


def test_same_second_sessions_get_distinct_directories(tmp_path: Path) -> None:
    first = new_session_dir(tmp_path, now=FIXED_NOW)
    second = new_session_dir(tmp_path, now=FIXED_NOW)
    third = new_session_dir(tmp_path, now=FIXED_NOW)
    assert [first.name, second.name, third.name] == [
        "20250101100000",
        "20250101100000-2",
        "20250101100000-3",
    ]
    assert all(p.is_dir() and p.parent == tmp_path for p in (first, second, third))


def test_concurrent_sessions_in_the_same_second_never_share(tmp_path: Path) -> None:
    results: list[Path] = []
    lock = threading.Lock()
    barrier = threading.Barrier(10)

    def start() -> None:
        barrier.wait()
        path = new_session_dir(tmp_path, now=FIXED_NOW)
        with lock:
            results.append(path)

    threads = [threading.Thread(target=start) for _ in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results) == 10
    assert len(set(results)) == 10
    assert {p.name for p in results} == {"20250101100000"} | {
        f"20250101100000-{n}" for n in range(2, 11)
    }


def test_default_root_follows_keiri_workspace_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KEIRI_WORKSPACE_ROOT", raising=False)
    default = new_session_dir(now=FIXED_NOW)
    assert default == tmp_path / "workspace" / "20250101100000"

    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", "sessions/here")
    configured = Workspace.new(now=FIXED_NOW)
    assert configured.path == tmp_path / "sessions" / "here" / "20250101100000"
    assert configured.path.is_dir()
    assert re.fullmatch(r"\d{14}", new_session_dir().name.split("-")[0])


@pytest.mark.parametrize("bad", ["../secret.txt", "a/../../x", "a/..", ".."])
def test_parent_references_are_rejected(base: Path, bad: str) -> None:
    err = _assert_rejected(base, bad)
    assert err.details["reason"] == "parent_reference"


def test_absolute_paths_are_rejected(base: Path, outside: Path) -> None:
    _assert_rejected(base, str(outside / "secret.txt"))
    _assert_rejected(base, "/etc/passwd")
    _assert_rejected(base, base / "inside.txt")  # absolute, even inside, unless allowed
    assert confine(base, base / "inside.txt", allow_absolute_inside=True) == (
        Path(os.path.realpath(base)) / "inside.txt"
    )
    with pytest.raises(PathEscapeError):
        confine(base, outside / "secret.txt", allow_absolute_inside=True)


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b"])
def test_empty_and_nul_paths_are_rejected(base: Path, bad: str) -> None:
    _assert_rejected(base, bad)


def test_symlink_to_outside_file_is_rejected(base: Path, outside: Path) -> None:
    (base / "link.txt").symlink_to(outside / "secret.txt")
    err = _assert_rejected(base, "link.txt")
    assert err.details["reason"] == "symlink_escape"


def test_symlinked_parent_directory_is_rejected(base: Path, outside: Path) -> None:
    (base / "data").symlink_to(outside, target_is_directory=True)
    _assert_rejected(base, "data/secret.txt")
    _assert_rejected(base, "data/new_file.csv")  # does not exist yet: still outside


def test_dangling_symlink_to_outside_is_rejected(base: Path, outside: Path) -> None:
    (base / "out.csv").symlink_to(outside / "not_yet_written.csv")
    assert not (base / "out.csv").exists()
    _assert_rejected(base, "out.csv")


def test_normal_paths_and_inner_symlinks_are_accepted(base: Path) -> None:
    real_base = Path(os.path.realpath(base))
    assert confine(base, "reports/2025/01/summary.md") == real_base / "reports/2025/01/summary.md"
    assert confine(base, Path("a") / "b.txt") == real_base / "a" / "b.txt"
    assert confine(base, "./x.csv") == real_base / "x.csv"
    (base / "inner").mkdir()
    (base / "alias").symlink_to(base / "inner", target_is_directory=True)
    assert confine(base, "alias/file.txt") == real_base / "inner" / "file.txt"


def test_base_reached_through_a_symlink_still_confines(tmp_path: Path, base: Path) -> None:
    link = tmp_path / "ws_link"
    link.symlink_to(base, target_is_directory=True)
    assert confine(link, "ok.txt") == Path(os.path.realpath(base)) / "ok.txt"
    with pytest.raises(PathEscapeError):
        confine(link, "../ws/ok.txt")


def test_workspace_object_resolves_relativizes_and_makes_run_dirs(
    tmp_path: Path, outside: Path
) -> None:
    ws = Workspace.new(tmp_path / "root", now=FIXED_NOW)
    target = ws.resolve("charts/売上.png")
    assert target.parent.name == "charts"
    assert ws.relative(target) == "charts/売上.png"
    assert ws.relative("a/b.txt") == "a/b.txt"
    run = ws.run_dir("runs/step1")
    assert run.is_dir()
    assert ws.relative(run) == "runs/step1"
    with pytest.raises(PathEscapeError):
        ws.run_dir("../escape")
    with pytest.raises(PathEscapeError):
        ws.relative(outside / "secret.txt")
    assert not (tmp_path / "root" / "escape").exists()
    with pytest.raises(AttributeError):
        ws.path = tmp_path  # type: ignore[misc]


def test_the_session_stamp_is_utc_and_is_read_back_as_the_start(tmp_path: Path) -> None:
    """Like run logs and task records, the folder name is UTC whatever the machine's zone: a
    session started at 12:15 in Tokyo is 03:15 UTC."""
    started = datetime(2026, 12, 6, 12, 15, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    path = new_session_dir(tmp_path, now=started)
    assert path.name == "20261206031500"
    assert session_started(path) == started
    assert session_started(new_session_dir(tmp_path, now=started)) == started  # the "-2" one
    assert session_started(tmp_path / "tasks") is None
