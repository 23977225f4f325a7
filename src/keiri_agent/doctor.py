"""``keiri-agent doctor``: what this installation will do, before anything is run.

Collects the effective configuration (secrets masked), which LLM providers are usable and what
is missing for the others, which model each role resolves to, whether personal data is masked
before the models (``KEIRI_LLM_MASK_PII``), and where files will be written.
Optionally pings each distinct chat model once. Kept apart from the CLI so the UI and the API
can show the same report.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import SecretStr

from keiri_agent import __version__
from keiri_agent.config import PROVIDERS, LLMRole, Settings, mask_secret
from keiri_agent.errors import BlockError
from keiri_agent.privacy import masking_status

__all__ = ["DoctorReport", "collect_report", "ping_models", "sandbox_layers"]

PING_PROMPT = "「OK」とだけ返してください。"


@dataclass
class DoctorReport:
    version: str
    python: str
    platform: str
    settings: dict[str, str]
    providers: dict[str, dict[str, Any]]
    roles: dict[str, dict[str, Any]]
    paths: dict[str, str]
    sandbox: list[dict[str, Any]] = field(default_factory=list)
    pings: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Personal data kept from the models (KEIRI_LLM_MASK_PII; privacy.masking_status).
    privacy: dict[str, Any] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        """Japanese one-liners for what will fail, for the summary at the end."""
        unusable: dict[tuple[str, str], list[str]] = {}
        for role, info in self.roles.items():
            if info["model"] and not info["usable"]:
                key = (info["model"], ", ".join(info["missing"]))
                unusable.setdefault(key, []).append(role)
        out = [
            f"{model}（役割: {', '.join(roles)}）: {missing} が未設定のため使えません"
            for (model, missing), roles in unusable.items()
        ]
        from keiri_agent.sandbox.layers import PROPERTY_LABELS

        inactive = [
            PROPERTY_LABELS.get(layer["name"], layer["name"])
            for layer in self.sandbox
            if not layer["active"]
        ]
        if inactive:
            out.append(
                f"サンドボックスの隔離レイヤーが無効: {', '.join(inactive)}（保護が弱くなります）"
            )
        for model, result in self.pings.items():
            if not result["ok"]:
                out.append(f"{model}: 接続確認に失敗 ({result['error']})")
        return out

    def as_dict(self) -> dict[str, Any]:
        """Every field, then ``problems`` (``keiri-agent doctor --json``)."""
        return {**asdict(self), "problems": self.problems}


def _display(value: Any) -> str:
    if isinstance(value, SecretStr):
        return mask_secret(value)
    if value is None:
        return "(未設定)"
    return str(value)


def collect_report(settings: Settings) -> DoctorReport:
    shown = {
        name.upper(): _display(getattr(settings, name))
        for name, field in type(settings).model_fields.items()
        if not field.exclude  # retired settings, kept only to reject them
    }
    providers = {}
    for provider in PROVIDERS:
        missing = settings.missing_credentials(provider)
        providers[provider] = {"usable": not missing, "missing": missing}
    if settings.openai_base_url_is_custom():
        providers["openai"]["endpoint"] = settings.openai_base_url
    roles = {}
    for role in LLMRole:
        ref = settings.model_for(role)
        missing = settings.missing_credentials(ref.provider) if ref else []
        if ref is not None and role is LLMRole.EMBEDDING and ref.provider == "anthropic":
            missing = ["(Anthropic は埋め込み非対応)"]
        roles[role.value] = {
            "model": str(ref) if ref else None,
            "usable": ref is not None and not missing,
            "missing": missing,
            "overridden": role is not LLMRole.DEFAULT
            and getattr(settings, f"keiri_llm_model_{role.value}", None) is not None,
        }
    paths = {
        "workspace_root": str(settings.keiri_workspace_root.resolve()),
        "runs_dir": str(settings.keiri_runs_dir.resolve()),
    }
    return DoctorReport(
        sandbox=sandbox_layers(),
        version=__version__,
        python=sys.version.split()[0],
        platform=platform.platform(),
        settings=shown,
        providers=providers,
        roles=roles,
        paths=paths,
        privacy=masking_status(settings.keiri_llm_mask_pii),
    )


def sandbox_layers() -> list[dict[str, Any]]:
    """Which isolation layers the sandbox gets on this machine (probed in a throwaway child)."""
    from keiri_agent.sandbox.probe import layer_rows, probe_layers

    return layer_rows(probe_layers())


def ping_models(report: DoctorReport, settings: Settings) -> None:
    """Send one tiny request to each distinct, usable chat model and record the outcome."""
    from keiri_agent.llm import LLMClient, RetryPolicy

    seen: set[str] = set()
    for role, info in report.roles.items():
        model = info["model"]
        if role == LLMRole.EMBEDDING.value or not info["usable"] or model in seen:
            continue
        seen.add(model)
        client = LLMClient(role, settings=settings, retry=RetryPolicy(max_retries=0))
        try:
            reply = client.invoke(PING_PROMPT)
        except BlockError as exc:
            report.pings[model] = {"ok": False, "error": exc.message, "hint": exc.hint}
        else:
            report.pings[model] = {"ok": True, "reply": reply.text[:80]}
