"""`keiri-agent serve`: run the API server (tasks, SSE progress, downloads, the progress page).

The app is ``keiri_agent.server.create_app()`` under uvicorn. Without ``KEIRI_API_KEY`` there is
no authentication, which is fine on the loopback address (the default) and warned about on
any other.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import app, err_console, user_errors

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "is_loopback", "serve", "startup_lines"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def startup_lines(settings: Settings, host: str, port: int) -> list[tuple[str, bool]]:
    """What ``serve`` prints before it starts: (line, is_warning)."""
    from keiri_agent.server.auth import configured_key
    from keiri_agent.server.tasks import TASKS_DIR

    shown = f"[{host}]" if ":" in host else host
    lines = [
        (f"keiri-agent API サーバーを起動します: http://{shown}:{port}/ （Ctrl+C で終了）", False),
        (f"タスクの保存先: {settings.keiri_workspace_root.absolute() / TASKS_DIR}", False),
    ]
    if configured_key(settings) is not None:
        lines.append(("API キー（KEIRI_API_KEY）が必要です。", False))
    elif not is_loopback(host):
        lines.append(
            (
                f"警告: KEIRI_API_KEY が未設定のまま {host} で待ち受けます。同じネットワークの誰でも"
                "タスクの実行・結果のダウンロードができます。KEIRI_API_KEY を設定してください。",
                True,
            )
        )
    return lines


@app.command(
    help=(
        "API サーバー（タスクの実行・SSE による進捗・結果のダウンロード・進捗画面）を起動します。"
        "表示された URL をブラウザで開くと進捗画面を使えます。"
        "KEIRI_API_KEY を設定すると /agent 以下のすべての API にキーが必要になります。"
    ),
)
def serve(
    host: Annotated[
        str, typer.Option("--host", help="待ち受けるアドレス（既定: このマシンからのみ）。")
    ] = DEFAULT_HOST,
    port: Annotated[int, typer.Option("--port", help="待ち受けるポート番号。")] = DEFAULT_PORT,
) -> None:
    import uvicorn

    from keiri_agent.config import load_settings
    from keiri_agent.server import create_app
    from keiri_agent.server.logconfig import log_config

    with user_errors():
        settings = load_settings()
        application = create_app(settings, bind_host=host)
    for line, warning in startup_lines(settings, host, port):
        err_console.print(line, style="bold yellow" if warning else None, markup=False)
    uvicorn.run(application, host=host, port=port, log_level="info", log_config=log_config())
