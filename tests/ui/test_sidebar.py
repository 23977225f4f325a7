"""The settings sidebar: which provider and model each role uses, never a key, and a clear
message naming the variable to set when no provider can be used."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.ui.sidebar import UNUSABLE_ICON, USABLE_ICON
from keiri_agent.ui.views import PAGES
from tests.support import ScriptedLLMServer
from tests.ui.conftest import APP_TIMEOUT_S

SECRET = "sk-proj-VERYSECRETVALUE-9876"
REPO_ROOT = Path(__file__).resolve().parents[2]


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


def test_no_provider_shows_a_warning_naming_the_variable(app: AppTest) -> None:
    app.run()
    assert not app.exception
    (warning,) = app.sidebar.warning
    assert "使える LLM プロバイダーがありません" in warning.value
    assert "OPENAI_API_KEY" in warning.value
    assert "openai:gpt-4.1-mini" in warning.value
    # The page itself still works: upload and chat input are there.
    assert app.file_uploader
    assert app.chat_input


def test_configured_provider_is_shown_masked_never_the_key(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("KEIRI_LLM_MODEL_REPORT", "anthropic:claude-sonnet-4-6")
    app.run()
    assert not app.exception
    sidebar = [m.value for m in app.sidebar.markdown]
    assert f"{USABLE_ICON} **openai**: OPENAI_API_KEY ****9876" in sidebar
    # The default model once, then only the roles that differ from it.
    assert f"**既定のモデル**: `openai:gpt-4.1-mini` {USABLE_ICON} 使用可" in sidebar
    (roles,) = [text for text in sidebar if text.startswith("**既定と異なる役割**")]
    assert roles.splitlines()[2:] == [
        f"- データ分析: レポート: `anthropic:claude-sonnet-4-6` {UNUSABLE_ICON} 使用不可",
        "- 埋め込み（検索）: 未設定（BM25 のみ）",
    ]
    assert "データ分析: 判断" not in "\n".join(sidebar)
    (warning,) = app.sidebar.warning
    assert "データ分析: レポート（anthropic:claude-sonnet-4-6）: ANTHROPIC_API_KEY が未設定" in (
        warning.value
    )
    shown = _everything(app)
    assert "****9876" in shown  # the walk sees the sidebar's text...
    assert "VERYSECRETVALUE" not in shown  # ...and the key is nowhere in it
    assert "VERYSECRETVALUE" not in repr(dict(app.session_state.items()))


def test_custom_openai_compatible_server_needs_no_key(
    app: AppTest, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    app.run()
    assert not app.exception
    assert not app.sidebar.warning
    assert f"{USABLE_ICON} **openai**: 設定済み、接続先 <{llm_server.url}>" in [
        m.value for m in app.sidebar.markdown
    ]
    assert any("サンドボックス（隔離レイヤー" in e.label for e in app.sidebar.expander)


def test_the_sidebar_needs_no_emoji_font(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Marks are Material Symbols (shipped with Streamlit), not emoji a machine may lack."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    app.run()
    assert not app.exception
    texts = [m.value for m in app.sidebar.markdown] + [e.label for e in app.sidebar.expander]
    assert any(USABLE_ICON in t for t in texts)  # the provider and the sandbox layers
    emoji = [t for t in texts if any(0x2600 <= ord(c) <= 0x27BF or ord(c) >= 0x1F000 for c in t)]
    assert emoji == []


def test_repository_root_app_py_runs_the_same_app() -> None:
    app = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=APP_TIMEOUT_S).run()
    assert not app.exception
    assert PAGES[0].module == "views.home"  # the first page (ホーム) opens, titled by the product
    assert "はじめに" in [h.value for h in app.subheader]
    assert "keiri-agent" in [t.value for t in app.sidebar.title]


def test_every_sandbox_layer_is_named_in_words() -> None:
    from keiri_agent.sandbox.layers import PROPERTY_LABELS, PROPERTY_NAMES

    assert set(PROPERTY_LABELS) == set(PROPERTY_NAMES)
