"""`keiri-agent sandbox setup`: README's commands prepare the jail with it.

With bubblewrap on PATH it says so; without it and without a way to install it (no apt-get on
PATH) it names the command to run and that sandboxed runs are refused, and exits 1 only with
--strict (the demo and the app work without the sandbox).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

KEIRI = str(Path(sys.executable).with_name("keiri-agent"))


def _setup(path: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "COLUMNS": "200"}
    return subprocess.run(
        [KEIRI, "sandbox", "setup", *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed here")
def test_with_bubblewrap_installed_setup_says_so() -> None:
    result = _setup(os.environ["PATH"])
    assert result.returncode == 0
    assert "bubblewrap は導入済みです" in result.stdout
    assert shutil.which("bwrap") in result.stdout  # type: ignore[operator]


def test_without_bubblewrap_or_apt_get_setup_names_the_command(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()  # a PATH with neither bwrap nor apt-get
    result = _setup(str(empty))
    assert result.returncode == 0
    assert "bubblewrap（bwrap）がありません" in result.stderr
    assert "sudo apt-get install -y bubblewrap" in result.stderr
    assert "実行を拒否します" in result.stderr
    assert "Traceback" not in result.stderr

    strict = _setup(str(empty), "--strict")
    assert strict.returncode == 1
    assert "sudo apt-get install -y bubblewrap" in strict.stderr
