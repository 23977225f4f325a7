"""Which server paths the app's pages accept: inside the workspace, the example data (and, for
plan files, the designs folder) only; absolute paths elsewhere, ``..``, ``~``, NUL and symbolic
links leading out are refused with one Japanese message that says nothing about the refused
file -- the same whether it exists or not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import ErrorCode, PathEscapeError
from keiri_agent.examples import example_data_dir
from keiri_agent.ui.server_paths import check_server_path, data_areas, plan_areas

LABEL = "入金明細"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "workspace" / "s1").mkdir(parents=True)
    (tmp_path / "workspace" / "s1" / "入金.csv").write_text("a\n1\n", encoding="utf-8")
    (tmp_path / "designs").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.csv").write_text("secret\n", encoding="utf-8")
    return Settings(
        keiri_workspace_root=tmp_path / "workspace", keiri_designs_dir=tmp_path / "designs"
    )


def _refusal(text: str, settings: Settings) -> PathEscapeError:
    with pytest.raises(PathEscapeError) as caught:
        check_server_path(text, data_areas(settings), label=LABEL)
    return caught.value


def test_paths_inside_the_workspace_and_the_example_data_are_accepted(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = tmp_path / "workspace" / "s1" / "入金.csv"
    areas = data_areas(settings)
    assert check_server_path(str(inside), areas, label=LABEL) == inside
    assert check_server_path(f"{tmp_path}/workspace/./s1//入金.csv", areas, label=LABEL) == inside
    data = next(p for p in sorted(example_data_dir().rglob("*")) if p.is_file())
    assert check_server_path(str(data), areas, label=LABEL) == data.resolve()
    # Relative paths are taken from the app's working directory, as the blocks take them.
    monkeypatch.chdir(tmp_path)
    assert check_server_path("workspace/s1/入金.csv", areas, label=LABEL) == inside
    # A file not there yet is the block's to report, not a refusal.
    new = tmp_path / "workspace" / "s1" / "まだない.csv"
    assert check_server_path(str(new), areas, label=LABEL) == new


def test_a_symbolic_link_inside_to_a_file_inside_is_accepted_resolved(
    settings: Settings, tmp_path: Path
) -> None:
    link = tmp_path / "workspace" / "最新.csv"
    link.symlink_to(tmp_path / "workspace" / "s1" / "入金.csv")
    resolved = check_server_path(str(link), data_areas(settings), label=LABEL)
    assert resolved == tmp_path / "workspace" / "s1" / "入金.csv"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("/etc/passwd", "outside"),
        ("{tmp}/outside/secret.csv", "outside"),
        ("{tmp}/outside/ない.csv", "outside"),
        ("{tmp}/workspace/../outside/secret.csv", "parent_reference"),
        ("../outside/secret.csv", "parent_reference"),
        ("{tmp}/workspace/s1/..", "parent_reference"),
        ("~/secret.csv", "home"),
        ("~root/.ssh/id_rsa", "home"),
        ("{tmp}/workspace/s1/入金.csv\x00.txt", "nul"),
        ("{tmp}/workspacex/secret.csv", "outside"),  # a sibling whose name starts the same
        ("relative/elsewhere.csv", "outside"),  # from the working directory, outside both
    ],
)
def test_paths_outside_are_refused_in_japanese(
    settings: Settings, tmp_path: Path, text: str, reason: str
) -> None:
    error = _refusal(text.format(tmp=tmp_path), settings)

    assert error.code == ErrorCode.PERMISSION_DENIED
    assert error.details["reason"] == reason
    assert error.message.startswith(f"「{LABEL}」のパス「")
    assert (
        "作業ディレクトリ（KEIRI_WORKSPACE_ROOT）・サンプルデータの中のファイルだけ"
        in error.message
    )
    assert error.hint is not None
    assert "アップロード" in error.hint


def test_a_symbolic_link_out_of_the_workspace_is_refused(
    settings: Settings, tmp_path: Path
) -> None:
    link = tmp_path / "workspace" / "s1" / "link.csv"
    link.symlink_to(tmp_path / "outside" / "secret.csv")
    folder_link = tmp_path / "workspace" / "out"
    folder_link.symlink_to(tmp_path / "outside", target_is_directory=True)

    for text in (str(link), str(folder_link / "secret.csv"), str(folder_link)):
        error = _refusal(text, settings)
        assert error.details["reason"] == "outside"
        assert "outside" not in error.message  # the link's target is not told
        assert str(tmp_path / "outside") not in str(error.details)


def test_the_refusal_is_the_same_whether_the_outside_file_exists_or_not(
    settings: Settings, tmp_path: Path
) -> None:
    there = _refusal(str(tmp_path / "outside" / "secret.csv"), settings)
    missing = _refusal(str(tmp_path / "outside" / "secreX.csv"), settings)

    def told(error: PathEscapeError, text: str) -> tuple[str, str | None, dict[str, object]]:
        details = {k: v for k, v in error.details.items() if k != "path"}
        return error.message.replace(text, "<path>"), error.hint, details

    assert told(there, "secret.csv") == told(missing, "secreX.csv")
    locked = tmp_path / "outside" / "locked"
    locked.mkdir(mode=0)  # the check does not look outside: no permission error either
    try:
        assert _refusal(str(locked / "x.csv"), settings).details["reason"] == "outside"
    finally:
        os.chmod(locked, 0o700)


def test_a_plan_file_may_also_be_in_the_designs_folder(settings: Settings, tmp_path: Path) -> None:
    plan = tmp_path / "designs" / "月次" / "照合.yaml"
    assert check_server_path(str(plan), plan_areas(settings), label="Plan") == plan
    with pytest.raises(PathEscapeError) as caught:
        check_server_path(str(plan), data_areas(settings), label="Plan")
    assert "Plan の保存先" not in caught.value.message
    with pytest.raises(PathEscapeError) as caught:
        check_server_path("/etc/hosts", plan_areas(settings), label="Plan")
    assert "Plan の保存先（KEIRI_DESIGNS_DIR）" in caught.value.message
