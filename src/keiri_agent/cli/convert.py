"""`keiri-agent convert "依頼文"`: convert files among table formats or plot them (seed 003).

The request is interpreted (role ``interpret``), the inputs fetched from ``--source`` (a local
file or folder, or ``s3://bucket/prefix``; else the place the request names), converted or
plotted, and saved in ``--out`` (default: a new folder under ``KEIRI_WORKSPACE_ROOT``). When the
standard path cannot do it, CodeAct (role ``codeact``) writes Python that runs in the sandbox.
Progress (the five steps' events) goes to stderr while it works; stdout holds the answer and the
files, or with ``--json`` the whole ``ConvertResult``. Ctrl+C cancels the run and stops a running
sandbox process; the output folder is as before (the files reach it only when the run succeeds,
``agents.staging``; a folder this command made is removed again) and the message says so, or
names the files of a run that had ended before the stop reached it. A run that fails leaves no
folder made for it either.

When CodeAct asks something instead of finishing, the question is printed with the command that
answers it: ``keiri-agent convert --continue <出力先> --answer "回答"`` (the task's continuation
is kept in that folder); the exit code is 3. With ``--json`` every outcome is one JSON object,
an LLM failure included (``status``, ``error`` and what the run had produced).
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
    JsonFlag,
    app,
    err_console,
    progress_printer,
    require_llm,
    show_error,
    user_errors,
)
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.shell_words import typed

if TYPE_CHECKING:
    from keiri_agent.agents.convert.models import Continuation
    from keiri_agent.agents.convert.pipeline import ConvertResult

__all__ = ["EXIT_INTERRUPTED", "EXIT_WAITING", "convert", "exit_code_for", "format_result"]

EXIT_WAITING = 3  # CodeAct asked a question: the task waits for the answer
CANCEL_GRACE_S = 10.0  # after Ctrl+C, how long the run may take to stop its sandbox process
# Failures the user can fix (input, settings, an impossible request) exit 2; the rest exit 1.
_SYSTEM_FAILURES = frozenset(
    {
        ErrorCode.API_ERROR,
        ErrorCode.TIMEOUT_ERROR,
        ErrorCode.INTERNAL_ERROR,
        ErrorCode.CODE_EXECUTION_FAILED,
    }
)


def exit_code_for(result: ConvertResult) -> int:
    """0 success, 3 waiting for an answer, 130 cancelled, 1 a system failure, 2 a failure the
    user can fix."""
    if result.status == "success":
        return 0
    if result.status == "waiting_input":
        return EXIT_WAITING
    if result.status == "cancelled":
        return EXIT_INTERRUPTED
    code = str((result.error or {}).get("code") or ErrorCode.INTERNAL_ERROR)
    return EXIT_FAILED if code in _SYSTEM_FAILURES else EXIT_USER_ERROR


def answer_command(out_dir: Path) -> str:
    """The command that answers a paused conversion kept in ``out_dir``."""
    return f'keiri-agent convert --continue {typed(str(out_dir))} --answer "回答"'


def format_result(result: ConvertResult, out_dir: Path | None = None) -> str:
    """The human-readable form: the answer and the absolute paths of the files; for a question,
    the question and how to answer it."""
    if result.status == "waiting_input" and out_dir is not None:
        return "\n".join(
            [
                f"CodeAct からの質問: {result.question}",
                "",
                "回答して続けるには:",
                f"  {answer_command(out_dir)}",
            ]
        )
    lines = [result.answer]
    if result.files:
        lines += ["", "作成したファイル:", *(f"  {path}" for path in result.files)]
    return "\n".join(lines)


def stopped_error(
    out_dir: Path | None, ended: list[ConvertResult], *, done: bool, removed: bool = False
) -> BlockError:
    """What Ctrl+C tells: the output folder as the run left it (``ended``: its result, when it
    had one; ``done``: whether it ended within the grace time; ``removed``: the folder the
    command had made for it was removed again, being empty) and how to go on."""
    result = ended[0] if ended else None
    if result is not None and result.files:  # it had finished before it learnt of the stop
        kept = "変換は中止の前に終わっていたため、作成したファイルは残しています: " + ", ".join(
            str(path) for path in result.files
        )
    elif removed:
        kept = "出力先のフォルダーは作成していません（書きかけのファイルはありません）"
    elif out_dir is None:
        kept = "まだ何も書いていません"
    elif done:
        kept = f"出力先 {out_dir} は変換前のままです（書きかけのファイルはありません）"
    else:
        kept = (
            f"出力先 {out_dir} に変換途中のファイルは置いていません"
            "（作業用の隠しフォルダーは、同じ出力先への次の実行が片付けます）"
        )
    log = f"実行ログ: {result.run_log}。" if result is not None and result.run_log else ""
    return BlockError(
        f"変換を中止しました（Ctrl-C）。{kept}。",
        code=ErrorCode.CANCELLED,
        hint=f"続けるには、同じコマンドをもう一度実行してください。{log}",
        recoverable=True,
    )


def _remove_if_empty(folder: Path | None) -> bool:
    """Remove ``folder`` if it is an empty folder; whether it was."""
    if folder is None or not folder.is_dir() or any(folder.iterdir()):
        return False
    folder.rmdir()
    return True


def _continuation(
    request: str | None, continue_dir: Path | None, answer: str | None, out: Path | None
) -> tuple[Continuation | None, Path | None]:
    """The answered continuation and its folder for ``--continue``; else (None, ``--out``)."""
    if continue_dir is None:
        if answer is not None:
            raise input_error(
                "--answer は --continue と一緒に指定します。",
                'keiri-agent convert --continue <出力先> --answer "回答" の形で実行してください。',
            )
        if not (request or "").strip():
            raise input_error(
                "依頼文が指定されていません。",
                '例: keiri-agent convert "売上.csv を Parquet に変換して" --source ./売上.csv',
            )
        return None, out
    if out is not None and out != continue_dir:
        raise input_error(
            "--continue のときの出力先は --continue のフォルダーです（--out は指定できません）。",
            "--out を外して実行してください。",
        )
    from keiri_agent.agents.convert.pipeline import load_continuation

    saved = load_continuation(continue_dir)
    if answer is None:
        raise input_error(
            f"回答が指定されていません。CodeAct の質問: {saved.question}",
            f"--answer で回答を指定してください: {answer_command(continue_dir)}",
        )
    return saved.answered(answer), continue_dir


@app.command(
    help=(
        "依頼文に従って、ファイルを別の形式に変換するか、グラフ画像を作ります。\n\n"
        "対応形式は CSV / TSV / Excel（.xlsx）/ JSON / JSONL / Parquet、グラフは折れ線・棒・散布図・"
        "ヒストグラム・箱ひげ図（PNG / SVG）です。入力は --source（ローカルのファイル・フォルダー、"
        "または s3://バケット/プレフィックス）か、依頼文に書いた場所から取得します。"
        "標準の処理で対応できない形式や指定のとき、S3 の取得に 3 回リトライしても失敗したときは、"
        "CodeAct が Python コードを書いてサンドボックスで実行し、依頼の形式（内容で確認）のファイルを"
        "結果にします。ファイルの取得に失敗したとき（S3 の 503 が再試行後も続くなど）は CodeAct に"
        "渡さずエラーにします。CodeAct が質問したときは、質問と回答のしかた（--continue と --answer）を"
        "表示して止まります。\n\n"
        '例: keiri-agent convert "売上.csv を Parquet に変換して" --source ./data/売上.csv\n\n'
        "進捗は標準エラー出力に表示します。終了コード: 0 成功、1 LLM の呼び出し・生成コードの失敗・"
        "制限時間切れ、2 入力や設定の誤り（ファイルが無い・対応できない依頼等）、3 質問への回答待ち、"
        "130 中断。"
    )
)
def convert(
    request: Annotated[
        str | None,
        typer.Argument(
            metavar="依頼文",
            help="変換・グラフ化の依頼（日本語または英語。空白を含むときは引用符で囲みます）。"
            "--continue のときは不要です。",
            show_default=False,
        ),
    ] = None,
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
        path_option(
            "--out",
            "結果の保存先フォルダ",
            Wants.NEW_FOLDER,
            "既定: KEIRI_WORKSPACE_ROOT の下に新しいフォルダを作ります",
            metavar="DIR",
        ),
    ] = None,
    continue_dir: Annotated[
        Path | None,
        path_option(
            "--continue",
            "続ける変換の出力先フォルダー",
            Wants.FOLDER,
            help="CodeAct の質問で止まった変換を続けます（質問のときに表示された出力先フォルダー）。"
            "--answer と一緒に指定します。",
            metavar="DIR",
        ),
    ] = None,
    answer: Annotated[
        str | None,
        typer.Option(
            "--answer", metavar="回答", help="CodeAct の質問への回答（--continue と一緒に）。"
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    from keiri_agent.config import LLMRole, load_settings

    cancel = threading.Event()
    started = threading.Event()
    finished = threading.Event()
    ended: list[ConvertResult] = []  # the run's result, once it has one
    out_dir: Path | None = None
    made = out is None and continue_dir is None  # out_dir: a new folder of this command

    def stop() -> BlockError:
        cancel.set()  # the run stops its sandbox process and closes its log
        done = finished.wait(CANCEL_GRACE_S) if started.is_set() else True
        removed = done and made and _remove_if_empty(out_dir)  # left as before: no folder
        shown = out_dir if started.is_set() else None
        return stopped_error(shown, ended, done=done, removed=removed)

    with user_errors(llm_exit_code=EXIT_FAILED, on_ctrl_c=stop):
        continuation, out_dir = _continuation(request, continue_dir, answer, out)
        # A new request's first step is the interpret call: its key is checked before the
        # pipeline is loaded. A continuation goes on with CodeAct after fetching its inputs.
        settings = require_llm(LLMRole.INTERPRET) if continuation is None else load_settings()

    from keiri_agent.agents.convert.pipeline import AGENT_ID, run_convert
    from keiri_agent.agents.convert.progress import describe_event
    from keiri_agent.events import open_run
    from keiri_agent.events.follow import run_following
    from keiri_agent.workspace import new_session_dir

    with user_errors(llm_exit_code=EXIT_FAILED, on_ctrl_c=stop):
        out_dir = out_dir if out_dir is not None else new_session_dir(settings.keiri_workspace_root)
        stream = open_run(AGENT_ID, runs_dir=settings.keiri_runs_dir)

        def work() -> ConvertResult:
            started.set()
            try:
                result = run_convert(
                    request or "",
                    source=source,
                    out_dir=out_dir,
                    settings=settings,
                    events=stream,
                    cancel=cancel,
                    continuation=continuation,
                )
                ended.append(result)
                return result
            finally:
                finished.set()

        show = progress_printer(describe_event)
        try:
            result = run_following(stream, work, show, name="keiri-convert")
        finally:
            if made and finished.is_set():  # a run that ended with nothing leaves no folder
                _remove_if_empty(out_dir)  # (a stop still running is Ctrl+C's: stop())
    if result.status == "failed" and result.error is not None:
        show_error(BlockError.from_dict(result.error))  # once: the progress may have shown it
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    elif result.status in ("success", "waiting_input"):
        typer.echo(format_result(result, out_dir))
    if result.run_log:
        err_console.print(
            f"実行ログ: {result.run_log}", markup=False, highlight=False, soft_wrap=True
        )
    code = exit_code_for(result)
    if code:
        raise typer.Exit(code=code)
