"""The 設計 page's versions with Streamlit's AppTest: 登録 keeps each save as a version with its
author and hash, 版と承認 lists them, shows what changed and approves or rejects as the
signed-in user by the four-eyes rules. (The same in a real browser: test_design_browser.)"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from keiri_agent.config import load_settings
from keiri_agent.ui.design.state import YAML_KEY
from keiri_agent.ui.design.versions import APPROVE_KEY, REJECT_KEY
from keiri_agent.ui.signin import KEY_STATE
from keiri_agent.users import key_hash, os_user
from keiri_agent.versions import VersionStore
from tests.design.test_generate import wiring

PAGE_TIMEOUT_S = 120
SAVE = "design_save_button"
MESSAGE = "design_save_message"
PLAN_ID = "expense/high_amount"


def design_page() -> None:
    from keiri_agent.ui.design.page import render

    render()


def _plan(threshold: int = 50000) -> str:
    plan = wiring()
    plan.pop("reasoning")
    plan["graph"][1]["in"]["conditions"][0]["value"] = threshold
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


@pytest.fixture
def page(tmp_path: Path, public_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(tmp_path / "designs"))
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KEIRI_WORKSPACE_ROOT", str(public_dir / "workspace"))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    return AppTest.from_function(design_page, default_timeout=PAGE_TIMEOUT_S)


def _save(page: AppTest, text: str, message: str) -> None:
    page.text_area(key=YAML_KEY).set_value(text)
    page.text_input(key=MESSAGE).set_value(message)
    page.button(key=SAVE).click().run()
    assert not page.exception, page.exception


def _texts(elements: Any) -> list[str]:
    return [str(e.value) for e in elements]


def test_each_registration_is_a_version_and_the_page_shows_the_diff(page: AppTest) -> None:
    page.run()
    assert any("登録された版はまだありません" in t for t in _texts(page.caption))
    _save(page, _plan(), "初版")
    _save(page, _plan(30000), "しきい値を 3 万円に")

    versions = VersionStore.of(load_settings()).versions(PLAN_ID)
    assert [(v.number, v.author, v.message, v.source) for v in versions] == [
        (1, os_user(), "初版", "app"),
        (2, os_user(), "しきい値を 3 万円に", "app"),
    ]
    saved = Path(str(versions[1].file))
    assert versions[1].id == hashlib.sha256(saved.read_bytes()).hexdigest()
    assert any(f"版 {versions[1].label}として登録しました" in t for t in _texts(page.success))

    table = next(f.value for f in page.dataframe if "ハッシュ" in f.value.columns)
    assert list(table["版"]) == ["v2", "v1"]
    assert list(table["ハッシュ"]) == [versions[1].short, versions[0].short]
    assert set(table["状態"]) == {"承認待ち"}
    shown = "\n".join(_texts(page.markdown))
    assert "ノード pick を変更（1 項目）" in shown
    assert "入力 conditions: " in shown
    assert "30000" in shown
    charts = [e for e in page.main if e.type == "graphviz_chart"]
    assert len(charts) == 2  # the editor's plan, then the newer version's changes
    dot = charts[-1].proto.spec
    pick = next(line for line in dot.splitlines() if line.strip().startswith('"pick" ['))
    assert "（変更）" in pick
    assert "#ff7f0e" in pick  # drawn as changed


def test_approval_follows_the_four_eyes_rules_for_the_signed_in_user(
    page: AppTest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = tmp_path / "users.yaml"
    users.write_text(
        "users:\n"
        + "".join(
            f"  - {{name: {name}, key_sha256: {key_hash(name + '-key')}, role: {role}}}\n"
            for name, role in {"sato": "user", "suzuki": "approver"}.items()
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("KEIRI_API_KEYS_FILE", str(users))
    page.session_state[KEY_STATE] = "sato-key"
    page.run()
    _save(page, _plan(), "初版")
    assert VersionStore.of(load_settings()).versions(PLAN_ID)[0].author == "sato"

    page.button(key=APPROVE_KEY).click().run()  # sato is not an approver
    assert any("sato さん（role: user）は版を承認できません" in t for t in _texts(page.error))

    page.session_state[KEY_STATE] = "suzuki-key"
    page.run()
    page.button(key=APPROVE_KEY).click().run()
    assert not page.exception, page.exception
    assert any("承認済みにしました" in t for t in _texts(page.success))
    (version,) = VersionStore.of(load_settings()).versions(PLAN_ID)
    assert version.approval is not None
    assert version.approval.by == "suzuki"

    page.button(key=REJECT_KEY).click().run()
    assert VersionStore.of(load_settings()).versions(PLAN_ID)[0].status == "rejected"
    table = next(f.value for f in page.dataframe if "ハッシュ" in f.value.columns)
    assert list(table["状態"]) == ["却下"]


def test_the_author_alone_may_approve_only_when_self_approval_is_on(
    page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    page.run()
    _save(page, _plan(), "初版")
    page.button(key=APPROVE_KEY).click().run()
    assert any("自身が登録した版なので承認できません" in t for t in _texts(page.error))

    monkeypatch.setenv("KEIRI_ALLOW_SELF_APPROVAL", "true")
    page.button(key=APPROVE_KEY).click().run()
    assert any("自己承認として記録しました" in t for t in _texts(page.success))
