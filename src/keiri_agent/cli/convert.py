"""`keiri-agent convert "依頼文"`: convert files among table formats or plot them (seed 003).

The request is interpreted (role ``interpret``), the inputs fetched from ``--source`` (a local
file or folder, or ``s3://bucket/prefix``; else the place the request names), converted or
plotted, and saved in ``--out`` (default: a new folder under ``KEIRI_WORKSPACE_ROOT``). When the
standard path cannot do it, CodeAct (role ``codeact``) writes Python that runs in the sandbox.
Progress (the five steps' events) goes to stderr while it works; stdout holds the answer and the
files, or with ``--json`` the whole ``ConvertResult``. Ctrl+C cancels the run and stops a running
sandbox process.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USER_ERROR,
    app,
    err_console,
    fail,
    interrupted_error,
    progress_printer,
    show_error,
    user_errors,
)
from keiri_agent.errors import BlockError, ErrorCode

if TYPE_CHECKING:
    from keiri_agent.agents.convert.pipeline import ConvertResult

__all__ = ["EXIT_INTERRUPTED", "convert", "exit_code_for", "format_result"]

CANCEL_GRACE_S = 10.0  # after Ctrl+C, how long the run may take to stop its sandbox process
# Failures the user can fix (input, settings, an impossible request) exit 2; the rest exit 1.
_SYSTEM_FAILURES = frozenset(
    {ErrorCode.API_ERROR, ErrorCode.TIMEOUT_ERROR, ErrorCode.INTERNAL_ERROR}
)


def exit_code_for(result: ConvertResult) -> int:
    """0 success, 130 cancelled, 1 a system failure, 2 a failure the user can fix."""
    if result.status == "success":
        return 0
    if result.status == "cancelled":
        return EXIT_INTERRUPTED
    code = str((result.error or {}).get("code") or ErrorCode.INTERNAL_ERROR)
    return EXIT_FAILED if code in _SYSTEM_FAILURES else EXIT_USER_ERROR


def format_result(result: ConvertResult) -> str:
    """The human-readable form: the answer and the absolute paths of the files."""
    lines = [result.answer]
    if result.files:
        lines += ["", "作成したファイル:", *(f"  {path}" for path in result.files)]
    return "\n".join(lines)


@app.command(
    help=(
        "依頼文に従って、ファイルを別の形式に変換するか、グラフ画像を作ります。\n\n"
        "対応形式は CSV / TSV / Excel（.xlsx）/ JSON / JSONL / Parquet、グラフは折れ線・棒・散布図・"
        "ヒストグラム・箱ひげ図（PNG / SVG）です。入力は --source（ローカルのファイル・フォルダー、"
        "または s3://バケット/プレフィックス）か、依頼文に書いた場所から取得します。"
        "標準の処理で対応できない形式や指定のとき、S3 の取得に 3 回リトライしても失敗したときは、"
        "CodeAct が Python コードを書いてサンドボックスで実行し、そのファイルを結果にします。\n\n"
        '例: keiri-agent convert "売上.csv を Parquet に変換して" --source ./data/売上.csv\n\n'
        "進捗は標準エラー出力に表示します。終了コード: 0 成功、1 LLM の呼び出しなどの失敗、"
        "2 入力や設定の誤り（ファイルが無い・対応できない依頼等）、130 中断。"
    )
)
def convert(
    request: Annotated[
        str,
        typer.Argument(
            metavar="依頼文",
            help="変換・グラフ化の依頼（日本語または英語。空白を含むときは引用符で囲みます）。",
            show_default=False,
        ),
    ],
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            metavar="PATH_OR_S3_URL",
            help="入力: ローカルのファイル・フォルダー、または s3://バケット/プレフィックス"
            "（省略時は依頼文に書かれた場所）。",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="結果の保存先フォルダ（既定: KEIRI_WORKSPACE_ROOT の下に新しいフォルダを作ります）。",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="結果（ConvertResult）を JSON で出力します。")
    ] = False,
) -> None:
    from keiri_agent.agents.convert.pipeline import AGENT_ID, run_convert
    from keiri_agent.agents.convert.progress import describe_event
    from keiri_agent.config import load_settings
    from keiri_agent.events import open_run
    from keiri_agent.events.follow import run_following

    cancel = threading.Event()
    finished = threading.Event()

    try:
        with user_errors(llm_exit_code=EXIT_FAILED):
            settings = load_settings()
            stream = open_run(AGENT_ID, runs_dir=settings.keiri_runs_dir)

            def work() -> ConvertResult:
                try:
                    return run_convert(
                        request,
                        source=source,
                        out_dir=out,
                        settings=settings,
                        events=stream,
                        cancel=cancel,
                    )
                finally:
                    finished.set()

            show = progress_printer(describe_event)
            result = run_following(stream, work, show, name="keiri-convert")
    except KeyboardInterrupt:
        cancel.set()  # the run stops its sandbox process and closes its log
        finished.wait(CANCEL_GRACE_S)
        fail(interrupted_error(), EXIT_INTERRUPTED)
    if result.status == "failed" and result.error is not None:
        show_error(BlockError.from_dict(result.error))  # once: the progress may have shown it
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    elif result.status == "success":
        typer.echo(format_result(result))
    if result.run_log:
        err_console.print(
            f"実行ログ: {result.run_log}", markup=False, highlight=False, soft_wrap=True
        )
    code = exit_code_for(result)
    if code:
        raise typer.Exit(code=code)
