"""Debian's chromium for the browser tests (Playwright drives it headless).

``ensure_chromium`` finds ``/usr/bin/chromium``; when it is missing and the tests run as root it
is installed with ``apt-get install -y --no-install-recommends chromium`` (CI machines start
without it); otherwise the calling test is skipped with the reason. apt-get waits for the dpkg
lock (another install may be running on the machine) instead of failing at once.

Importing this module also raises Playwright's ``expect`` default wait from 5 s to
``EXPECT_TIMEOUT_MS``: on a loaded 2-core CI machine a Streamlit rerun or a page load can take
longer than 5 s, and a browser assertion must wait for what happens, not race it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import expect

__all__ = ["CHROMIUM", "EXPECT_TIMEOUT_MS", "chromium_args", "ensure_chromium"]

CHROMIUM = Path("/usr/bin/chromium")
APT_TIMEOUT_S = 900
APT_LOCK_WAIT_S = 600  # another apt-get/dpkg (unattended upgrades, a parallel install) may hold it
EXPECT_TIMEOUT_MS = 60_000  # every browser assertion waits up to this long for its condition

expect.set_options(timeout=EXPECT_TIMEOUT_MS)


def chromium_args() -> list[str]:
    """Launch arguments: Chromium's own sandbox cannot run as root (the CI container)."""
    return ["--no-sandbox"] if os.geteuid() == 0 else []


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S)


def ensure_chromium() -> Path:
    """Debian's chromium, installed with apt-get when missing and running as root."""
    if CHROMIUM.exists():
        return CHROMIUM
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(
            f"{CHROMIUM} がありません。root で `apt-get install -y --no-install-recommends "
            "chromium` を実行してください（root ではないため自動ではインストールしません）。"
        )
    install = ("install", "-y", "--no-install-recommends", "chromium")
    result = _apt_get(*install)
    if result.returncode != 0:  # package lists may be missing on a fresh machine
        update = _apt_get("update")
        result = _apt_get(*install)
        if result.returncode != 0:
            pytest.fail(
                "chromium をインストールできませんでした:\n"
                + (update.stderr + result.stdout + result.stderr)[-3000:]
            )
    assert CHROMIUM.exists(), f"apt-get installed chromium but {CHROMIUM} is missing"
    return CHROMIUM
