"""`keiri-agent ui`: the ``streamlit run`` command line it runs listens on this machine only
unless ``--address`` opens it, and what it prints before says so: a warning on any other
address, a stronger one when no users are configured (anyone there could use the app).

The real command on its default address is started in ``tests/ui/test_launch.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import keiri_agent.cli.ui as ui_cli  # registers the command on the shared app
from keiri_agent.cli import app
from keiri_agent.users import key_hash
from tests.server.conftest import make_settings

KEY = "ui-test-key-2b7e9f03c1"


def _address(command: list[str]) -> str:
    (at,) = [i for i, arg in enumerate(command) if arg == "--server.address"]
    return command[at + 1]


def test_the_command_line_listens_on_loopback_unless_told_otherwise() -> None:
    assert ui_cli.DEFAULT_ADDRESS == "127.0.0.1"
    assert _address(ui_cli.streamlit_command(8501, ui_cli.DEFAULT_ADDRESS, [])) == "127.0.0.1"
    opened = ui_cli.streamlit_command(9000, "0.0.0.0", ["--server.maxUploadSize", "500"])
    assert _address(opened) == "0.0.0.0"
    assert opened[-2:] == ["--server.maxUploadSize", "500"]  # other arguments pass through


def test_help_names_the_default_address() -> None:
    result = CliRunner().invoke(app, ["ui", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "このマシンからのみ" in result.output
    assert "127.0.0.1" in result.output


def test_streamlits_own_address_option_is_refused(tmp_path: Path) -> None:
    """It would open the app without the warning: --address is the one way."""
    for extra in (["--server.address", "0.0.0.0"], ["--server.address=0.0.0.0"]):
        result = CliRunner().invoke(app, ["ui", *extra])
        assert result.exit_code == 2
        assert "--address で指定してください" in result.output


def test_loopback_prints_no_warning(tmp_path: Path) -> None:
    for address in ("127.0.0.1", "::1", "localhost"):
        lines = ui_cli.startup_lines(make_settings(tmp_path), address, 8501)
        assert not any(warning for _, warning in lines)
    (first, _), *_ = ui_cli.startup_lines(make_settings(tmp_path), "::1", 8501)
    assert "http://[::1]:8501/" in first


def test_another_address_without_users_is_warned_about_strongly(tmp_path: Path) -> None:
    lines = ui_cli.startup_lines(make_settings(tmp_path), "0.0.0.0", 8501)
    (warning,) = [line for line, warning in lines if warning]
    assert warning.startswith("警告: API キーが未設定のまま 0.0.0.0 で待ち受けます。")
    assert "同じネットワークの誰でもサインインなしで画面を使い" in warning
    assert "KEIRI_API_KEYS_FILE か KEIRI_API_KEY を設定してください" in warning


@pytest.mark.parametrize("users", ["file", "single"])
def test_another_address_with_users_warns_that_it_is_open_and_needs_a_key(
    tmp_path: Path, users: str
) -> None:
    if users == "file":
        path = tmp_path / "users.yaml"
        path.write_text(
            f"users:\n  - name: sato\n    key_sha256: {key_hash(KEY)}\n", encoding="utf-8"
        )
        settings = make_settings(tmp_path, keiri_api_keys_file=path)
    else:
        settings = make_settings(tmp_path, keiri_api_key=KEY)
    lines = ui_cli.startup_lines(settings, "192.168.1.10", 8501)

    (warning,) = [line for line, warning in lines if warning]
    assert warning.startswith("警告: 192.168.1.10 で待ち受けます。")
    assert "サインインなし" not in warning
    assert any("API キーでのサインインが必要です" in line for line, _ in lines)
    assert KEY not in "".join(line for line, _ in lines)
    loopback = ui_cli.startup_lines(settings, "127.0.0.1", 8501)
    assert not any(warning for _, warning in loopback)
    assert any("サインインが必要です" in line for line, _ in loopback)


def test_the_address_to_open_is_one_a_browser_on_this_machine_reaches() -> None:
    assert ui_cli.app_url("127.0.0.1", 8501) == "http://127.0.0.1:8501/"
    assert ui_cli.app_url("0.0.0.0", 9000) == "http://127.0.0.1:9000/"
    assert ui_cli.app_url("::", 9000) == "http://[::1]:9000/"
    assert ui_cli.app_url("192.168.1.10", 80) == "http://192.168.1.10:80/"
    assert "--logger.hideWelcomeMessage" in ui_cli.streamlit_command(8501, "127.0.0.1", [])
