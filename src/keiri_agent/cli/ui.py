"""`keiri-agent ui`: start the Streamlit app (the same app as ``streamlit run app.py``)."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from keiri_agent.cli.common import app, err_console, user_errors
from keiri_agent.errors import ConfigurationError

__all__ = ["streamlit_command", "ui"]

DEFAULT_PORT = 8501
# The app's entry script, found by path: the CLI starts the UI as a process and never imports it
# (cli and ui sit side by side on top of the layers; see ARCHITECTURE.md).
APP_PATH = Path(__file__).resolve().parents[1] / "ui" / "app.py"


def streamlit_command(port: int, address: str | None, extra: list[str]) -> list[str]:
    """The ``streamlit run`` command line for the packaged app."""
    command = [sys.executable, "-m", "streamlit", "run", str(APP_PATH)]
    command += ["--server.headless", "true", "--server.port", str(port)]
    # Seed 000: no traffic but the LLM API; Streamlit's usage statistics are off.
    command += ["--browser.gatherUsageStats", "false"]
    if address:
        command += ["--server.address", address]
    return command + extra


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    help=(
        "ブラウザで使う画面（Streamlit アプリ）を起動します。表示された URL を開いてください。"
        "Ctrl+C で終了します。これ以外の引数はそのまま streamlit run に渡します"
        "（例: --server.maxUploadSize 500）。"
    ),
)
def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", help="待ち受けるポート番号。")] = DEFAULT_PORT,
    address: Annotated[
        str | None,
        typer.Option("--address", help="待ち受けるアドレス（既定: Streamlit の既定）。"),
    ] = None,
) -> None:
    with user_errors():
        if importlib.util.find_spec("streamlit") is None:
            raise ConfigurationError(
                "画面の表示に必要な Streamlit がインストールされていません。",
                hint="pip install streamlit を実行してから、もう一度 keiri-agent ui を実行してください。",
            )
    command = streamlit_command(port, address, list(ctx.args))
    err_console.print(f"keiri-agent の画面を起動します（ポート {port}）。", markup=False)
    raise typer.Exit(code=_run_forwarding_signals(command))


def _run_forwarding_signals(command: list[str]) -> int:
    """Run ``command``; SIGTERM is passed on to it, Ctrl+C reaches it through the terminal."""
    proc = subprocess.Popen(command)

    def forward(signum: int, frame: FrameType | None) -> None:
        proc.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:  # Streamlit got the same Ctrl+C and is stopping
                continue
    finally:
        signal.signal(signal.SIGTERM, previous)
