"""Signing in to the app when users are configured (``KEIRI_API_KEYS_FILE`` / ``KEIRI_API_KEY``):
no page works before a key is accepted, a wrong key is refused in Japanese, the key is never
shown or logged, the signed-in user's name is in the sidebar, and signing out (or a key taken
out of the users file) ends the session with nothing of it left in Session State.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.ui import APP_PATH
from keiri_agent.ui.signin import KEY_INPUT, KEY_STATE, SIGNOUT_KEY, SUBMIT_KEY
from keiri_agent.users import key_hash
from tests.ui.conftest import APP_TIMEOUT_S, open_page

USER_KEY = "sato-key-6f1c0e3a9b2d47"
ADMIN_KEY = "ops-key-0a9d8c7b6e5f41"
WRONG_KEY = "guess-key-123456789abc"


def _users_file(path: Path, *users: tuple[str, str, str]) -> Path:
    lines = ["users:"]
    for name, key, role in users:
        lines += [f"  - name: {name}", f"    key_sha256: {key_hash(key)}", f"    role: {role}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def users_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user and an admin, and the dirs the 実行 page reads."""
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(tmp_path / "workspace"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    path = _users_file(
        tmp_path / "users.yaml", ("sato", USER_KEY, "user"), ("ops", ADMIN_KEY, "admin")
    )
    monkeypatch.setenv("KEIRI_API_KEYS_FILE", str(path))
    return path


@pytest.fixture
def app() -> AppTest:
    """The whole app, asked for its 実行 page."""
    return open_page(AppTest.from_file(str(APP_PATH), default_timeout=APP_TIMEOUT_S), "run")


def _everything(app: AppTest) -> str:
    """Every element's protobuf text, main area and sidebar (labels, values, help texts)."""
    parts: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(app.main)
    walk(app.sidebar)
    return "\n".join(parts)


def _titles(app: AppTest) -> list[str]:
    return [title.value for title in app.title]


def _sign_in(app: AppTest, key: str) -> AppTest:
    app.text_input(key=KEY_INPUT).input(key)
    return app.button(key=SUBMIT_KEY).click().run()


def test_no_page_works_before_sign_in(app: AppTest, users_file: Path) -> None:
    app.run()

    assert not app.exception, app.exception
    assert "サインイン" in _titles(app)
    assert "実行" not in _titles(app)
    assert not app.selectbox  # no plan to choose
    assert not app.sidebar.header  # no settings sidebar (it names folders and models)
    assert not app.sidebar.button
    box = app.text_input(key=KEY_INPUT)
    assert box.label == "API キー"
    assert box.proto.type == box.proto.PASSWORD


def test_a_wrong_key_is_refused_and_never_shown_or_logged(
    app: AppTest, users_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app.run()
    _sign_in(app, WRONG_KEY)

    assert not app.exception, app.exception
    assert [error.value for error in app.error] == ["API キーが正しくありません。"]
    assert "実行" not in _titles(app)
    assert KEY_STATE not in app.session_state
    assert app.text_input(key=KEY_INPUT).value == ""  # the box is cleared when sent
    assert WRONG_KEY not in _everything(app)
    assert WRONG_KEY not in caplog.text

    _sign_in(app, "")
    assert [error.value for error in app.error] == ["API キーを入力してください。"]


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        (USER_KEY, "サインイン中: **sato**（利用者）"),
        (ADMIN_KEY, "サインイン中: **ops**（管理者）"),
    ],
)
def test_a_user_signs_in_sees_their_name_and_signs_out(
    app: AppTest, users_file: Path, caplog: pytest.LogCaptureFixture, key: str, shown: str
) -> None:
    caplog.set_level(logging.DEBUG)
    app.run()
    _sign_in(app, f"  {key}  ")  # pasted with spaces around it

    assert not app.exception, app.exception
    assert "実行" in _titles(app)
    assert app.selectbox(key="run_plan").value  # the page works
    assert shown in [caption.value for caption in app.sidebar.caption]
    assert app.sidebar.header[0].value == "設定"
    assert key not in _everything(app)
    assert key not in caplog.text

    app.selectbox(key="run_plan").set_value(app.selectbox(key="run_plan").options[1]).run()
    assert "実行" in _titles(app)  # still signed in at the next click
    app.button(key=SIGNOUT_KEY).click().run()

    assert not app.exception, app.exception
    assert "サインイン" in _titles(app)
    assert "実行" not in _titles(app)
    assert KEY_STATE not in app.session_state
    assert "run_plan" not in app.session_state  # nothing of the session is left


def test_the_single_api_key_signs_in_as_admin(
    app: AppTest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_API_KEY", ADMIN_KEY)
    app.run()
    assert "実行" not in _titles(app)
    _sign_in(app, ADMIN_KEY)

    assert not app.exception, app.exception
    assert "実行" in _titles(app)
    assert "サインイン中: **admin**（管理者）" in [c.value for c in app.sidebar.caption]


def test_a_key_taken_out_of_the_users_file_ends_the_session(app: AppTest, users_file: Path) -> None:
    app.run()
    _sign_in(app, USER_KEY)
    assert "実行" in _titles(app)

    _users_file(users_file, ("ops", ADMIN_KEY, "admin"))
    app.run()

    assert not app.exception, app.exception
    assert "サインイン" in _titles(app)
    assert "実行" not in _titles(app)
    assert KEY_STATE not in app.session_state


def test_a_malformed_users_file_opens_nothing(app: AppTest, users_file: Path) -> None:
    users_file.write_text("users: []\n", encoding="utf-8")
    app.run()

    assert not app.exception, app.exception
    assert "ユーザーファイル" in app.error[0].value
    assert "実行" not in _titles(app)
    assert not app.text_input  # no sign-in either: the file must be fixed first
