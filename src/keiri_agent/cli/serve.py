"""`keiri-agent serve`: run the API server (tasks, SSE progress, downloads, the progress page).

The app is ``keiri_agent.server.create_app()`` under uvicorn. Without users
(``KEIRI_API_KEYS_FILE`` or ``KEIRI_API_KEY``) there is no authentication, which is fine on the
loopback address (the default) and warned about on any other. The first SIGTERM (or Ctrl+C)
starts draining the tasks (``keiri_agent.server.lifecycle``) while uvicorn stops accepting.
``serve --rotate-secret`` only replaces the secret that signs task tokens
(``keiri_agent.server.secret``) and exits. The server also fires the workspace's schedules and
triggers (``keiri-agent schedule``, ``keiri_agent.server.scheduler``) unless
``KEIRI_SCHEDULER=false``.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from keiri_agent.cli.common import app, check_choice, console, err_console, user_errors
from keiri_agent.errors import input_error

if TYPE_CHECKING:
    from types import FrameType

    from keiri_agent.config import Settings

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "PortOption", "is_loopback", "serve", "startup_lines"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# The port of `serve` and of `ui`: one option, one help text.
PortOption = Annotated[int, typer.Option("--port", help="待ち受けるポート番号。")]
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")


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
    from keiri_agent.server.store import TASKS_DIR
    from keiri_agent.users import load_users

    shown = f"[{host}]" if ":" in host else host
    lines = [
        (f"keiri-agent API サーバーを起動します: http://{shown}:{port}/ （Ctrl+C で終了）", False),
        (f"タスクの保存先: {settings.keiri_workspace_root.absolute() / TASKS_DIR}", False),
    ]
    if load_users(settings):
        lines.append(("API キーが必要です（KEIRI_API_KEYS_FILE / KEIRI_API_KEY）。", False))
    elif not is_loopback(host):
        lines.append(
            (
                f"警告: API キーが未設定のまま {host} で待ち受けます。同じネットワークの誰でも"
                "タスクの実行・結果のダウンロードができます。KEIRI_API_KEYS_FILE か KEIRI_API_KEY"
                " を設定してください。",
                True,
            )
        )
    return lines


class _Options(NamedTuple):
    log_level: str | None
    log_format: str | None
    root_path: str
    proxy_headers: bool
    forwarded_allow_ips: str
    shutdown_timeout: float | None


def _overrides(settings: Settings, options: _Options) -> Settings:
    """The settings with the command's options applied (an option beats the environment)."""

    changes: dict[str, object] = {}
    if options.log_level is not None:
        check_choice("--log-level", options.log_level, LOG_LEVELS)
        changes["keiri_log_level"] = options.log_level
    if options.log_format is not None:
        check_choice("--log-format", options.log_format, LOG_FORMATS)
        changes["keiri_log_format"] = options.log_format
    if options.shutdown_timeout is not None:
        if options.shutdown_timeout < 0:
            raise input_error(
                "--shutdown-timeout は 0 以上の秒数で指定してください。",
                "例: --shutdown-timeout 30",
            )
        changes["keiri_shutdown_timeout_s"] = options.shutdown_timeout
    return settings.model_copy(update=changes)


def _rotate_secret() -> None:
    from keiri_agent.config import load_settings
    from keiri_agent.server.secret import ServerSecret

    with user_errors():
        secret = ServerSecret.of(load_settings())
        secret.rotate()
    console.print(
        f"サーバーの秘密鍵を作り直しました: {secret.path}\n"
        "これまでに発行したタスクのトークン（?token=）は使えなくなりました。"
        "進捗画面やリンクは GET /agent/tasks/{id} が返す新しいトークンで開き直してください。",
        markup=False,
    )


@app.command(
    help=(
        "API サーバー（タスクの実行・SSE による進捗・結果のダウンロード・進捗画面）を起動します。"
        "表示された URL をブラウザで開くと進捗画面を使えます。"
        "KEIRI_API_KEYS_FILE（ユーザーファイル）か KEIRI_API_KEY を設定すると /agent 以下の"
        "すべての API にキーが必要になります。SIGTERM で止めると実行中のタスクは"
        " --shutdown-timeout 秒まで待って中断され、再起動後に続きから再開します。"
    ),
)
def serve(
    host: Annotated[
        str, typer.Option("--host", help="待ち受けるアドレス（既定: このマシンからのみ）。")
    ] = DEFAULT_HOST,
    port: PortOption = DEFAULT_PORT,
    log_level: Annotated[
        str | None,
        typer.Option("--log-level", help="ログの詳しさ: debug / info / warning / error。"),
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option("--log-format", help="ログの形式: text（1 行の文）/ json（1 行 1 JSON）。"),
    ] = None,
    root_path: Annotated[
        str,
        typer.Option(
            "--root-path",
            help="リバースプロキシの下のパス（例: /keiri）。プロキシがこのパスを付けて転送するとき。",
        ),
    ] = "",
    proxy_headers: Annotated[
        bool,
        typer.Option(
            "--proxy-headers/--no-proxy-headers",
            help="X-Forwarded-For / X-Forwarded-Proto を信じる（--forwarded-allow-ips の送り元だけ）。",
        ),
    ] = True,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            "--forwarded-allow-ips",
            help="転送ヘッダーを信じるプロキシのアドレス（カンマ区切り、* はすべて）。",
        ),
    ] = "127.0.0.1",
    shutdown_timeout: Annotated[
        float | None,
        typer.Option(
            "--shutdown-timeout",
            help="停止時に実行中のタスクを待つ秒数（既定: KEIRI_SHUTDOWN_TIMEOUT_S、30）。",
        ),
    ] = None,
    rotate_secret: Annotated[
        bool,
        typer.Option(
            "--rotate-secret",
            help="タスクのトークン（?token=）に署名するサーバーの秘密鍵を作り直して終了します"
            "（サーバーは起動しません）。それまでのトークンはすべて使えなくなり、動いている"
            "サーバーも次の要求から新しい鍵を使います。",
        ),
    ] = False,
) -> None:
    if rotate_secret:
        _rotate_secret()
        return
    import logging

    import uvicorn

    from keiri_agent.config import load_settings
    from keiri_agent.server import create_app
    from keiri_agent.server.lifecycle import STOP_GRACE_S, Lifecycle
    from keiri_agent.server.logconfig import capture_warnings, log_config
    from keiri_agent.server.tasks import TaskRegistry

    options = _Options(
        log_level, log_format, root_path, proxy_headers, forwarded_allow_ips, shutdown_timeout
    )
    with user_errors():
        settings = _overrides(load_settings(), options)
        registry = TaskRegistry(settings)
        lifecycle = Lifecycle(registry)
        application = create_app(settings, registry=registry, bind_host=host, lifecycle=lifecycle)

    class Server(uvicorn.Server):
        """uvicorn's server that starts draining the tasks at the first stop signal, before
        uvicorn waits for open connections (SSE streams end once their task has settled)."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            lifecycle.begin_shutdown()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        log_level=settings.keiri_log_level,
        log_config=log_config(settings.keiri_log_format, settings.keiri_log_level),
        root_path=root_path,
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
        timeout_graceful_shutdown=int(settings.keiri_shutdown_timeout_s + STOP_GRACE_S + 10),
    )
    # After uvicorn's Config has set the logging up: in JSON mode, every line is a JSON record.
    capture_warnings()
    startup_log = logging.getLogger("keiri_agent.server")
    for line, warning in startup_lines(settings, host, port):
        if settings.keiri_log_format == "json":
            startup_log.log(logging.WARNING if warning else logging.INFO, line)
        else:
            err_console.print(line, style="bold yellow" if warning else None, markup=False)
    Server(config).run()
