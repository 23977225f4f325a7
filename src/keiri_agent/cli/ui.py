"""`keiri-agent ui`: start the Streamlit app (the same app as ``streamlit run app.py``).

The app listens on the loopback address unless ``--address`` says otherwise (Streamlit alone
would listen on every interface). On any other address it warns, more strongly when no users
are configured (``KEIRI_API_KEYS_FILE`` / ``KEIRI_API_KEY``): then anyone who reaches the port
uses the app without signing in. With users the app asks for a key (``keiri_agent.ui.signin``).

Streamlit's English start banner is switched off; once the app answers its health check the
command says so itself, in Japanese, with the address to open. Streamlit's standard output carries
only its own English notes to the terminal (the banner, "Stopping..." on Ctrl+C, file-watcher
tips), so it is not shown; its standard error (its logger's warnings and errors, a mistaken
``streamlit run`` option, a traceback) is read and said in Japanese (``ui_words``), and an app
that stops on its own with a failure it did not explain is reported with its exit code. When
Ctrl+C (or SIGTERM) has stopped the app, the command says that in Japanese too.
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import app, err_console, save_record, user_errors
from keiri_agent.cli.serve import PortOption, is_loopback
from keiri_agent.cli.ui_words import Said, StreamlitWords
from keiri_agent.errors import ConfigurationError, input_error

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = [
    "DEFAULT_ADDRESS",
    "DEFAULT_PORT",
    "app_url",
    "failed_line",
    "ready_line",
    "startup_lines",
    "stopped_line",
    "streamlit_command",
    "ui",
]

DEFAULT_ADDRESS = "127.0.0.1"  # this machine only, as `serve` does
DEFAULT_PORT = 8501
ADDRESS_OPTION = "--server.address"  # Streamlit's own option, which --address sets
# The app's entry script, found by path: the CLI starts the UI as a process and never imports it
# (cli and ui sit side by side on top of the layers; see ARCHITECTURE.md).
APP_PATH = Path(__file__).resolve().parents[1] / "ui" / "app.py"
HEALTH_PATH = "/_stcore/health"  # Streamlit's own readiness endpoint: "ok" once it serves
HEALTH_POLL_S = 0.25  # between readiness checks while the app starts (a few seconds in all)
HEALTH_TIMEOUT_S = 2.0  # one readiness check; a loaded machine answers well within it
WORDS_DRAIN_S = 10.0  # for the last messages of an ended app to be said (a pipe already closed)


def streamlit_command(port: int, address: str, extra: list[str]) -> list[str]:
    """The ``streamlit run`` command line for the packaged app."""
    command = [sys.executable, "-m", "streamlit", "run", str(APP_PATH)]
    command += ["--server.headless", "true", "--server.port", str(port)]
    command += [ADDRESS_OPTION, address]
    # No traffic but the LLM API; Streamlit's usage statistics are off.
    command += ["--browser.gatherUsageStats", "false"]
    # No Deploy button or developer menu (as .streamlit/config.toml, which a wheel lacks).
    command += ["--client.toolbarMode", "minimal"]
    # Its English banner ("You can now view your Streamlit app...") is replaced by ready_line,
    # and its start-up notes (``Uvicorn server started on ...``) are left out: warnings and
    # errors still reach the terminal.
    command += ["--logger.hideWelcomeMessage", "true", "--logger.level", "warning"]
    return command + extra


def app_url(address: str, port: int) -> str:
    """The address a person opens (and the readiness check asks) for a listening address."""
    local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(address, address)
    host = f"[{local}]" if ":" in local else local
    return f"http://{host}:{port}/"


def ready_line(url: str) -> str:
    """What ``ui`` prints once the app at ``url`` answers."""
    return f"画面の準備ができました。ブラウザで {url} を開いてください。"


def stopped_line() -> str:
    """What ``ui`` prints once Ctrl+C or SIGTERM has stopped the app."""
    return "画面を終了しました。"


def startup_lines(settings: Settings, address: str, port: int) -> list[tuple[str, bool]]:
    """What ``ui`` prints before it starts: (line, is_warning)."""
    from keiri_agent.users import load_users

    shown = f"[{address}]" if ":" in address else address
    lines = [(f"keiri-agent の画面を起動します: http://{shown}:{port}/ （Ctrl+C で終了）", False)]
    signed = bool(load_users(settings))
    if signed:
        lines.append(
            (
                "画面を使うには API キーでのサインインが必要です（KEIRI_API_KEYS_FILE / KEIRI_API_KEY）。",
                False,
            )
        )
    if is_loopback(address):
        return lines
    if signed:
        warning = (
            f"警告: {address} で待ち受けます。同じネットワークの他のマシンからも画面を開けます"
            "（使うには API キーでのサインインが必要です）。"
        )
    else:
        warning = (
            f"警告: API キーが未設定のまま {address} で待ち受けます。同じネットワークの誰でも"
            "サインインなしで画面を使い、Plan の実行や作業ディレクトリのファイルの読み書きが"
            "できます。KEIRI_API_KEYS_FILE か KEIRI_API_KEY を設定してください。"
        )
    lines.append((warning, True))
    return lines


def _check_extra(extra: list[str]) -> None:
    """Streamlit's address option would bypass --address and its warning."""
    if any(arg == ADDRESS_OPTION or arg.startswith(f"{ADDRESS_OPTION}=") for arg in extra):
        raise input_error(
            f"待ち受けるアドレスは --address で指定してください（{ADDRESS_OPTION} は使えません）。",
            "例: keiri-agent ui --address 0.0.0.0",
        )


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    help=(
        "ブラウザで使う画面（Streamlit アプリ）を起動します。表示された URL を開いてください。"
        "Ctrl+C で終了します。KEIRI_API_KEYS_FILE か KEIRI_API_KEY を設定すると、画面を使う前に"
        " API キーでのサインインが必要になります。これ以外の引数はそのまま streamlit run に"
        "渡します（例: --server.maxUploadSize 500）。"
    ),
)
def ui(
    ctx: typer.Context,
    port: PortOption = DEFAULT_PORT,
    address: Annotated[
        str,
        typer.Option(
            "--address",
            help="待ち受けるアドレス（既定: このマシンからのみ。0.0.0.0 ですべてのネットワーク）。",
        ),
    ] = DEFAULT_ADDRESS,
) -> None:
    from keiri_agent.config import load_settings

    with user_errors():
        if importlib.util.find_spec("streamlit") is None:
            raise ConfigurationError(
                "画面の表示に必要な Streamlit がインストールされていません。",
                hint="`pip install streamlit` を実行してから、もう一度 `keiri-agent ui` を実行してください。",
            )
        _check_extra(list(ctx.args))
        lines = startup_lines(load_settings(), address, port)
    command = streamlit_command(port, address, list(ctx.args))
    for line, warning in lines:
        err_console.print(line, style="bold yellow" if warning else None, markup=False)
    raise typer.Exit(code=_run_forwarding_signals(command, app_url(address, port)))


def _answers(url: str) -> bool:
    """Whether the app at ``url`` answers its health check (loopback: no proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url.rstrip("/") + HEALTH_PATH, timeout=HEALTH_TIMEOUT_S) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _run_forwarding_signals(command: list[str], url: str) -> int:
    """Run ``command``; SIGTERM is passed on to it, and so is SIGINT (Ctrl+C in a terminal
    reaches Streamlit too; ``kill -INT`` or a tool's stop button reaches only this command).
    Once the app at ``url`` answers, say so; once a signal has stopped it, say that."""
    # Its standard output holds only its English notes (see above); its standard error is said
    # in Japanese.
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    words = StreamlitWords(proc.stderr, _show)
    stopped = False

    def forward(signum: int, frame: FrameType | None) -> None:
        nonlocal stopped
        stopped = True
        proc.send_signal(signum)

    def interrupted() -> None:
        """Ctrl+C here: passed on, whether or not the terminal gave it to Streamlit as well
        (a second SIGINT while it stops changes nothing)."""
        nonlocal stopped
        stopped = True
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        try:
            while proc.poll() is None:
                if _answers(url):
                    err_console.print(ready_line(url), markup=False)
                    break
                time.sleep(HEALTH_POLL_S)
        except KeyboardInterrupt:  # stopped while starting
            interrupted()
        while True:
            try:
                code = proc.wait()
                break
            except KeyboardInterrupt:
                interrupted()
    finally:
        signal.signal(signal.SIGTERM, previous)
        words.close(WORDS_DRAIN_S)
    if stopped:
        err_console.print(stopped_line(), markup=False)
    elif code != 0 and not words.errors:
        _show(Said(failed_line(code), True))
    return code


def failed_line(code: int) -> str:
    """What ``ui`` prints when the app ended with a failure that none of its messages said."""
    return (
        f"画面（Streamlit）が終了コード {code} で止まりました。表示された内容を確認してください。"
    )


_record: list[Path] = []  # the file holding Streamlit's own words for this command (one)


def _show(said: Said) -> None:
    """``said`` on standard error; Streamlit's own words behind it go to this command's record
    file (``common.save_record``), whose path the line names."""
    text = said.text
    if said.original:
        _record[:] = [save_record(said.original + "\n", _record[0] if _record else None)]
        text += f"（原文は {_record[0]} に記録しました）"
    err_console.print(text, style="bold red" if said.error else None, markup=False, soft_wrap=True)
