"""Debian's chromium for the browser tests (Playwright drives it headless).

``ensure_chromium`` finds ``/usr/bin/chromium``; when it is missing and the tests run as root it
is installed with ``apt-get install -y --no-install-recommends chromium`` (CI machines start
without it); otherwise the calling test is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["CHROMIUM", "chromium_args", "ensure_chromium"]

CHROMIUM = Path("/usr/bin/chromium")
APT_TIMEOUT_S = 900


def chromium_args() -> list[str]:
    """Launch arguments: Chromium's own sandbox cannot run as root (the CI container)."""
    return ["--no-sandbox"] if os.geteuid() == 0 else []


def ensure_chromium() -> Path:
    """Debian's chromium, installed with apt-get when missing and running as root."""
    if CHROMIUM.exists():
        return CHROMIUM
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(
            f"{CHROMIUM} がありません。root で `apt-get install -y --no-install-recommends "
            "chromium` を実行してください（root ではないため自動ではインストールしません）。"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    result = subprocess.run(install, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S)
    if result.returncode != 0:  # package lists may be missing on a fresh machine
        update = subprocess.run(
            ["apt-get", "update"], env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S
        )
        result = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S
        )
        if result.returncode != 0:
            pytest.fail(
                "chromium をインストールできませんでした:\n"
                + (update.stderr + result.stdout + result.stderr)[-3000:]
            )
    assert CHROMIUM.exists(), f"apt-get installed chromium but {CHROMIUM} is missing"
    return CHROMIUM
