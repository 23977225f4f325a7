"""`keiri-agent sandbox setup`: install what the sandbox's jail needs on this machine.

The jail is bubblewrap (Debian/Ubuntu package ``bubblewrap``). README's two commands run this
step, so a fresh Debian-like machine gets it as root; elsewhere it says what to run and that
sandboxed runs are refused until then (the executor never runs code without the jail).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Annotated

import typer

from keiri_agent.cli.common import EXIT_FAILED, console, err_console
from keiri_agent.cli.sandbox import sandbox_app

__all__ = ["APT_PACKAGES", "sandbox_setup"]

APT_PACKAGES = ("bubblewrap",)
APT_TIMEOUT_S = 900
APT_LOCK_WAIT_S = 600  # another apt-get or dpkg may hold the lock for a while
SUDO_COMMAND = "sudo apt-get install -y " + " ".join(APT_PACKAGES)
REFUSED_WITHOUT = (
    "bubblewrap を入れるまで、サンドボックスを使う機能（データ分析・変換の CodeAct・"
    "`sandbox run`）は実行を拒否します。その他の機能はそのまま使えます。"
)


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = ["apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S)


def _install() -> subprocess.CompletedProcess[str]:
    install = ("install", "-y", "--no-install-recommends", *APT_PACKAGES)
    result = _apt_get(*install)
    if result.returncode != 0:  # a fresh machine may have no package lists yet
        _apt_get("update")
        result = _apt_get(*install)
    return result


@sandbox_app.command("setup")
def sandbox_setup(
    strict: Annotated[
        bool,
        typer.Option("--strict", help="入れられなかったときに終了コード 1 で終わります。"),
    ] = False,
) -> None:
    """サンドボックスのジェイル（bubblewrap）をこのマシンに用意します（root なら apt-get で導入）。"""
    found = shutil.which("bwrap")
    if found is not None:
        console.print(f"bubblewrap は導入済みです（{found}）。")
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        err_console.print(
            "[yellow]bubblewrap（bwrap）がありません。[/yellow]"
            + ("root ではないため" if os.geteuid() != 0 else "apt-get がないため")
            + f"自動では入れません。次を実行してください: `{SUDO_COMMAND}`"
            + "（apt-get がない場合は、お使いのディストリビューションの bubblewrap パッケージ）。"
            + REFUSED_WITHOUT
        )
        raise typer.Exit(EXIT_FAILED if strict else 0)
    console.print("bubblewrap を apt-get でインストールしています…")
    result = _install()
    if result.returncode != 0 or shutil.which("bwrap") is None:
        err_console.print(
            "[red]bubblewrap をインストールできませんでした。[/red]"
            f"ヒント: `{SUDO_COMMAND}` を手で実行してください。{REFUSED_WITHOUT}\n"
            + (result.stderr or result.stdout)[-2000:]
        )
        raise typer.Exit(EXIT_FAILED if strict else 0)
    console.print(f"bubblewrap をインストールしました（{shutil.which('bwrap')}）。")
