"""The settings sidebar on every page: which LLM each role uses, whether its provider is
usable, and the sandbox's isolation layers.

It shows what ``keiri-agent doctor`` shows and never a key: credentials appear only in their
masked form (``****1234``). The default model is shown once, followed by only the roles whose
model differs from it. When a model cannot be used, a warning names the variables to set.
The doctor report is cached per settings fingerprint because it probes the sandbox in a fork.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import streamlit as st
from pydantic import SecretStr

from keiri_agent.config import ROLE_LABELS, Settings
from keiri_agent.doctor import DoctorReport, collect_report
from keiri_agent.sandbox.layers import PROPERTY_LABELS
from keiri_agent.ui.error_view import settings_or_error

__all__ = ["ROLE_LABELS", "render_sidebar", "role_problems"]

REPORT_TTL_S = 300
# Material Symbols ship with Streamlit: no emoji font is needed on the viewer's machine.
USABLE_ICON = ":green[:material/check_circle:]"
UNUSABLE_ICON = ":red[:material/cancel:]"
_KEY_VARIABLES = {
    "openai": ["OPENAI_API_KEY"],
    "azure": ["AZURE_OPENAI_API_KEY"],
    "anthropic": ["ANTHROPIC_API_KEY"],
}


def _fingerprint(settings: Settings) -> str:
    """A cache key that changes with any setting; the digest never leaves this process."""

    def plain(value: Any) -> Any:
        return value.get_secret_value() if isinstance(value, SecretStr) else str(value)

    data = {name: plain(getattr(settings, name)) for name in type(settings).model_fields}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@st.cache_data(ttl=REPORT_TTL_S, show_spinner=False)
def _doctor_report(fingerprint: str, _settings: Settings) -> DoctorReport:
    return collect_report(_settings)


def role_problems(report: DoctorReport) -> list[str]:
    """Japanese lines for chat roles whose model cannot be used, naming what to set."""
    lines = []
    for role, info in report.roles.items():
        if info["model"] is None or info["usable"]:
            continue
        label = ROLE_LABELS.get(role, role)
        lines.append(f"{label}（{info['model']}）: {', '.join(info['missing'])} が未設定")
    return lines


def _render_llm(report: DoctorReport) -> None:
    st.subheader("LLM")
    usable = [name for name, info in report.providers.items() if info["usable"]]
    if not usable:
        default = report.roles["default"]
        needed = ", ".join(default["missing"]) or "OPENAI_API_KEY"
        st.warning(
            "使える LLM プロバイダーがありません。分析やヘルプデスクは動きません。"
            f" 既定のモデル {default['model']} を使うには、環境変数または .env に"
            f" {needed} を設定してからアプリを再起動してください"
            "（OpenAI 互換サーバーなら OPENAI_BASE_URL を設定します）。"
        )
    else:
        problems = role_problems(report)
        if problems:
            st.warning(
                "使えないモデルがあります。環境変数または .env を設定してからアプリを"
                "再起動してください:\n\n" + "\n".join(f"- {line}" for line in problems)
            )
    for name in usable:
        info = report.providers[name]
        keys = [
            f"{var} {report.settings[var]}"
            for var in _KEY_VARIABLES.get(name, [])
            if report.settings.get(var, "(未設定)") != "(未設定)"
        ]
        where = f"、接続先 <{info['endpoint']}>" if info.get("endpoint") else ""
        st.markdown(f"{USABLE_ICON} **{name}**: " + ("、".join(keys) or "設定済み") + where)
    _render_models(report)


def _model_text(info: dict[str, Any]) -> str:
    if info["model"] is None:
        return "未設定（BM25 のみ）"
    state = "使用可" if info["usable"] else "使用不可"
    return f"`{info['model']}` {USABLE_ICON if info['usable'] else UNUSABLE_ICON} {state}"


def _render_models(report: DoctorReport) -> None:
    """The default model once, then only the roles whose model (or its state) differs."""
    default = report.roles["default"]
    st.markdown(f"**既定のモデル**: {_model_text(default)}")
    others = [
        f"- {ROLE_LABELS.get(role, role)}: {_model_text(info)}"
        for role, info in report.roles.items()
        if role != "default"
        and (info["model"], info["usable"]) != (default["model"], default["usable"])
    ]
    if others:
        st.markdown("**既定と異なる役割**\n\n" + "\n".join(others))
    else:
        st.caption("すべての役割で既定のモデルを使います。")


def _render_sandbox(report: DoctorReport) -> None:
    active = sum(1 for layer in report.sandbox if layer["active"])
    with st.expander(f"サンドボックス（隔離レイヤー {active}/{len(report.sandbox)}）"):
        for layer in report.sandbox:
            mark = USABLE_ICON if layer["active"] else UNUSABLE_ICON
            label = PROPERTY_LABELS.get(layer["name"], layer["name"])
            st.markdown(f"{mark} **{label}**: {layer['detail']}")


def _render_privacy(report: DoctorReport) -> None:
    privacy = report.privacy
    mark = USABLE_ICON if privacy["mask_pii"] else UNUSABLE_ICON
    st.markdown(f"{mark} **個人情報のマスク**: {'オン' if privacy['mask_pii'] else 'オフ'}")
    st.caption(privacy["summary"])


def render_sidebar() -> None:
    """The settings sidebar (call once per script run, before the page)."""
    with st.sidebar:
        st.header("設定")
        settings = settings_or_error()
        if settings is None:
            return
        report = _doctor_report(_fingerprint(settings), settings)
        _render_llm(report)
        _render_privacy(report)
        _render_sandbox(report)
        st.caption(
            f"作業ディレクトリ: {report.paths['workspace_root']}  \n"
            f"実行ログ: {report.paths['runs_dir']}  \n"
            "設定の詳細は `keiri-agent doctor` で確認できます。"
        )
