"""``probe_layers``: which properties of the sandbox this machine provides, found out by running
one real action in a throwaway workdir (its own jail, closed afterwards). Used by
``keiri-agent doctor`` and ``keiri-agent sandbox doctor``.

Every name of ``layers.PROPERTY_NAMES`` is listed: active with what was applied, or inactive
with the reason (bubblewrap missing, no usable cgroup, a kernel without Landlock...).
``layer_rows`` is how both doctors print them, naming the limit each limiting property enforces
(``layers.LIMIT_NAMES``), so a limit not in force here is named as such.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from keiri_agent.errors import BlockError
from keiri_agent.sandbox.jail import find_bwrap
from keiri_agent.sandbox.layers import LIMIT_NAMES, PROPERTY_NAMES, LayerStatus
from keiri_agent.sandbox.profiles import ANALYSIS

__all__ = ["PROBE_CODE", "layer_rows", "probe_layers", "unenforced_limits"]

PROBE_CODE = "result = sum(range(10))\n"
PROBE_PROFILE = ANALYSIS.with_overrides(cpu_seconds=30, wall_seconds=60.0)


def probe_layers(workdir: Path | None = None) -> list[LayerStatus]:
    """Every sandbox property and whether it is in force here (a real action decides).

    The throwaway workdir is created under ``workdir`` when given (else the system's temporary
    directory) and removed afterwards; the caller's process is unchanged.
    """
    try:
        find_bwrap()
    except BlockError as exc:
        return [LayerStatus(name, False, f"{exc.message} {exc.hint}") for name in PROPERTY_NAMES]
    from keiri_agent.sandbox.executor import SandboxExecutor

    base = Path(tempfile.mkdtemp(prefix="keiri-probe-", dir=workdir))
    executor = SandboxExecutor(max_jails=1)
    try:
        outcome = executor.run(PROBE_CODE, workdir=base, profile=PROBE_PROFILE)
    except BlockError as exc:
        reason = f"確認の実行に失敗しました: {exc.message}"
        return [LayerStatus(name, False, reason) for name in PROPERTY_NAMES]
    finally:
        executor.close()
        shutil.rmtree(base, ignore_errors=True)
    found = {layer.name: layer for layer in outcome.layers}
    failed = "" if outcome.success else f"（確認用の実行が失敗: {outcome.summary_ja()}）"
    statuses = []
    for name in PROPERTY_NAMES:
        layer = found.get(name)
        if layer is None:
            statuses.append(LayerStatus(name, False, f"確認できませんでした{failed}"))
        else:
            statuses.append(LayerStatus(name, layer.active and outcome.success, layer.detail))
    return statuses


def layer_rows(statuses: list[LayerStatus]) -> list[dict[str, Any]]:
    """Each status as the doctors' JSON shows it; ``limit`` names the limit the property
    enforces (None for a property that is no limit)."""
    return [
        {"name": s.name, "active": s.active, "detail": s.detail, "limit": LIMIT_NAMES.get(s.name)}
        for s in statuses
    ]


def unenforced_limits(statuses: list[LayerStatus]) -> list[LayerStatus]:
    """The limiting properties among ``statuses`` that are not in force."""
    return [s for s in statuses if s.name in LIMIT_NAMES and not s.active]
