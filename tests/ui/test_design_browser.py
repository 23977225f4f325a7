"""The 設計 page's versions in real headless Chromium: ``streamlit run app.py`` with a users file.

sato (role: user) signs in, pastes a plan into the editor and registers it twice with a message
each time; the page lists both versions, says what changed (the threshold input) and draws the
newer version's graph. sato's 承認 is refused (not an approver). suzuki (role: approver) signs
in, approves v2 and then rejects v1; the table shows both reviews.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import Page, expect

from keiri_agent.users import key_hash
from tests.design.test_generate import wiring
from tests.ui.test_app_browser import TIMEOUT_MS, rerun, running_app, settled
from tests.ui.test_app_browser import page as page  # the fixture, used by name

pytestmark = pytest.mark.timeout(900)
FIRST_RUN_TIMEOUT_MS = 240_000  # the 設計 page's first run loads the block catalog
USERS = {"sato": "user", "suzuki": "approver"}


def _plan(threshold: int) -> str:
    plan = wiring()
    plan.pop("reasoning")
    plan["graph"][1]["in"]["conditions"][0]["value"] = threshold
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


@pytest.fixture
def team_app(tmp_path: Path, public_dir: Path) -> Iterator[str]:
    """``streamlit run app.py`` with a users file (keys ``<name>-key``), on a free port."""
    users = tmp_path / "users.yaml"
    users.write_text(
        "users:\n"
        + "".join(
            f"  - {{name: {name}, key_sha256: {key_hash(name + '-key')}, role: {role}}}\n"
            for name, role in USERS.items()
        ),
        encoding="utf-8",
    )
    settings = {
        "KEIRI_WORKSPACE_ROOT": str(public_dir / "workspace"),
        "KEIRI_CACHE_DIR": str(tmp_path / "cache"),
        "KEIRI_API_KEYS_FILE": str(users),
        "KEIRI_RUN_LOG_FSYNC": "false",
    }
    with running_app(tmp_path, settings) as url:
        yield url


def _sign_in(page: Page, url: str, name: str) -> None:
    """Sign in on the app's first page (the form stands in for every page), then open 設計."""
    page.goto(url + "/")
    expect(page.get_by_role("heading", name="サインイン")).to_be_visible(timeout=TIMEOUT_MS)
    page.get_by_label("API キー").fill(f"{name}-key")
    page.get_by_role("button", name="サインイン").click()
    expect(page.get_by_text(f"サインイン中: {name}")).to_be_visible(timeout=FIRST_RUN_TIMEOUT_MS)
    settled(page)
    page.get_by_test_id("stSidebarNav").get_by_text("設計", exact=True).click()
    heading = page.get_by_role("heading", name="設計", exact=True)
    expect(heading).to_be_visible(timeout=FIRST_RUN_TIMEOUT_MS)
    settled(page)  # a field filled during the page's first run may be redrawn empty


def _register(page: Page, text: str, message: str) -> None:
    """Each step reruns the app: the next one waits until that rerun is over."""
    editor = page.get_by_label("生成された Plan（編集できます）")
    editor.fill(text)
    rerun(page, lambda: editor.press("Control+Enter"))  # commit it before the button is pressed
    words = page.get_by_label("変更の説明（登録する版に残すメッセージ、任意）")
    words.fill(message)
    rerun(page, lambda: words.press("Enter"))
    rerun(page, page.get_by_role("button", name="登録").click)


def _versions_table(page: Page):  # type: ignore[no-untyped-def]
    return page.get_by_test_id("stDataFrame").filter(has=page.get_by_text("ハッシュ"))


def test_versions_diff_and_reviews_on_the_design_page(team_app: str, page: Page) -> None:
    _sign_in(page, team_app, "sato")
    _register(page, _plan(50000), "初版")
    expect(page.get_by_text("として登録しました（承認待ち）")).to_be_visible(timeout=TIMEOUT_MS)
    _register(page, _plan(30000), "しきい値を 3 万円に")
    expect(page.get_by_text("版 v2（").first).to_be_visible(timeout=TIMEOUT_MS)

    expect(page.get_by_role("heading", name="版と承認")).to_be_visible(timeout=TIMEOUT_MS)
    cells = page.get_by_role("gridcell", include_hidden=True)
    expect(cells.filter(has_text="しきい値を 3 万円に").first).to_be_attached(timeout=TIMEOUT_MS)
    expect(cells.filter(has_text="初版").first).to_be_attached()
    expect(page.get_by_text("ノード pick を変更（1 項目）")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("50000").last).to_be_visible()
    expect(page.get_by_text("（緑: 追加、橙: 変更・移動）")).to_be_visible()

    rerun(page, page.get_by_role("button", name="承認", exact=True).click)  # sato may not
    expect(page.get_by_text("sato さん（role: user）は版を承認できません")).to_be_visible(
        timeout=TIMEOUT_MS
    )

    rerun(page, page.get_by_role("button", name="サインアウト").click)
    _sign_in(page, team_app, "suzuki")
    expect(page.get_by_role("heading", name="版と承認")).to_be_visible(timeout=TIMEOUT_MS)
    comment = page.get_by_label("コメント（任意、記録に残ります）")
    comment.fill("確認しました")
    rerun(page, lambda: comment.press("Enter"))  # settled() alone can pass before it starts
    rerun(page, page.get_by_role("button", name="承認", exact=True).click)
    expect(page.get_by_text("を承認済みにしました")).to_be_visible(timeout=TIMEOUT_MS)
    expect(cells.filter(has_text="確認しました").first).to_be_attached(timeout=TIMEOUT_MS)

    review = page.get_by_test_id("stSelectbox").filter(has_text="版")
    review.last.click()  # the approval's rerun is over: the dropdown stays open
    rerun(page, page.get_by_role("option").filter(has_text="v1（").click)
    rerun(page, page.get_by_role("button", name="却下", exact=True).click)
    expect(page.get_by_text("を却下にしました")).to_be_visible(timeout=TIMEOUT_MS)
    expect(cells.filter(has_text="却下").first).to_be_attached(timeout=TIMEOUT_MS)
    expect(cells.filter(has_text="承認済み").first).to_be_attached()
