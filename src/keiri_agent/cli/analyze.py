"""`keiri-agent analyze`: ask the data analysis agent (seed 000) about CSV/TSV/Excel files.

Arguments that name existing files are the data; the last other argument is the question.
With a question, one request runs to completion and the report (Markdown) and the workspace
are printed; without one, the terminal becomes a multi-turn chat in which answering the
agent's question continues the same session. Progress (the graph's events) goes to stderr
while the agent works, so stdout holds only the result.

A report that no code run with visible output backs (``TurnResult.status == "unverified"``) is
printed with what was not backed on stderr and ends the command with exit code 1 (``--json``:
``"status": "unverified"``); in the interactive mode the warning is shown and the session goes
on.

Ctrl+C while the agent works stops the turn at once (``AnalysisSession.stop``: generated code
that runs is killed, nothing of the turn is saved) and ends the command with exit code 130,
naming the workspace and what it keeps (or the report, when the turn had ended before the stop
reached it). Ctrl+C while the files load keeps nothing of them: the load is all or nothing
(``AnalysisSession.add_files``), so no workspace is made, and the message says so. Ctrl+C at
the interactive prompt ends the session with exit code 130 too (an empty line, exit or Ctrl+D
end it with 0), naming the workspace that keeps the finished turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from keiri_agent.cli.common import (
    EXIT_FAILED,
    app,
    err_console,
    error_document,
    forget_shown_errors,
    progress_printer,
    require_llm,
    show_error,
    user_errors,
    wants_json,
)
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError, input_error

if TYPE_CHECKING:
    from keiri_agent.agents.analysis import AnalysisSession, TurnResult

__all__ = ["analyze", "split_arguments"]

# A non-existing argument with one of these suffixes (and no spaces) is a missing data file,
# not the question.
DATA_SUFFIXES = frozenset({".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".xls"})
QUIT_WORDS = frozenset({"exit", "quit", "終了"})

_USAGE_HINT = (
    '例: keiri-agent analyze 売上.csv 経費.xlsx "取引先別の売上を比べて"。'
    "質問は最後の引数に 1 つだけ、空白を含むときは引用符で囲んで指定します。"
)


def _looks_like_data_file(arg: str) -> bool:
    return not any(ch.isspace() for ch in arg) and Path(arg).suffix.lower() in DATA_SUFFIXES


def split_arguments(args: list[str]) -> tuple[list[Path], str | None]:
    """Data files and the question: existing files are data, the last other argument asks.

    Raises FileProcessingError for an argument that should be a data file but is not one
    (missing, a folder, or a non-file argument before the question).
    """
    files: list[Path] = []
    others: list[str] = []
    for arg in args:
        path = Path(arg).expanduser()
        if path.is_file():
            files.append(path)
        else:
            others.append(arg)
    question = None
    last = others[-1] if others else None
    if (
        last is not None
        and not _looks_like_data_file(last)
        and not Path(last).expanduser().is_dir()
    ):
        question = others.pop()
    if others:
        bad = others[0]
        what = "フォルダです" if Path(bad).expanduser().is_dir() else "見つかりません"
        raise FileProcessingError(
            bad,
            f"データファイル '{bad}' が{what}。",
            code=ErrorCode.FILE_UNREADABLE,
            hint="ファイルのパスを確認してください。" + _USAGE_HINT,
            details={"cwd": str(Path.cwd())},
        )
    if not files:
        raise input_error("分析するデータファイルが指定されていません。", _USAGE_HINT)
    return files, question


def run_turn(session: AnalysisSession, text: str) -> TurnResult:
    """``session.ask(text)``, printing the graph's progress to stderr as it happens."""
    from keiri_agent.agents.analysis.progress import describe_event

    return session.ask(text, on_event=progress_printer(describe_event))


def _workspace_text(path: Path) -> str:
    """The session's folder and, from its (UTC) name, when the session started, in
    ``KEIRI_TIMEZONE``."""
    from keiri_agent.config import load_settings
    from keiri_agent.localtime import shown_time
    from keiri_agent.workspace import session_started

    started = session_started(path)
    if started is None:
        return str(path)
    return f"{path}（開始 {shown_time(started, load_settings().keiri_timezone)}）"


def _print_turn(turn: TurnResult, *, as_json: bool, interactive: bool) -> None:
    if as_json:
        indent = None if interactive else 2  # interactive: one JSON object per line
        typer.echo(json.dumps(turn.to_dict(), ensure_ascii=False, indent=indent))
        return
    if turn.next_action == "ask":
        typer.echo(f"エージェントからの質問: {turn.question}")
        if not interactive:
            err_console.print(
                "回答して分析を続けるには、質問を付けずに（データファイルだけを指定して）"
                "実行する対話モードを使ってください。",
                markup=False,
            )
    elif turn.report_path is not None and turn.report_path.is_file():
        typer.echo(turn.report_path.read_text(encoding="utf-8"))
        if turn.forced_report:
            err_console.print(
                "注意: ループの上限に達したため、途中までの結果をまとめたレポートです。",
                markup=False,
            )
    typer.echo(f"作業ディレクトリ: {_workspace_text(turn.workspace)}")


def _warn_unverified(turn: TurnResult) -> None:
    """On stderr: the report is not backed by computed output, and what the runs did."""
    from keiri_agent.agents.analysis.honesty import (
        UNVERIFIED_HINT,
        UNVERIFIED_MESSAGE,
        has_visible_output,
    )

    runs = turn.execution_results
    failed = sum(1 for run in runs if not run.success)
    silent = sum(1 for run in runs if run.success and not has_visible_output(run))
    what = (
        f"このターンのコード実行: {len(runs)} 回（失敗 {failed} 回、出力のない成功 {silent} 回）"
        if runs
        else "このターンではコードを 1 度も実行していません。"
    )
    err_console.print(Text(UNVERIFIED_MESSAGE, style="bold yellow"), soft_wrap=True)
    for line in (what, f"ヒント: {UNVERIFIED_HINT}"):
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)


def _show_kept(error: BlockError) -> None:
    """On stderr, the files a failed turn had already made (``--json`` prints them itself)."""
    turn = error.details.get("turn")
    files = turn.get("files") if isinstance(turn, dict) else None
    if not files or wants_json():
        return
    err_console.print(
        "このターンで作成済みのファイル: " + ", ".join(str(f) for f in files),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _stopped(session: AnalysisSession | None, *, loaded: bool) -> BlockError | None:
    """Ctrl+C: the running turn is stopped (its code killed) and what the session keeps named;
    while the data was ``loaded`` not yet, that nothing of the load was kept; None (the plain
    "interrupted" error) when neither was under way."""
    from keiri_agent.agents.analysis.session import (
        STOP_WAIT_S,
        loading_stopped_error,
        stopped_error,
    )

    if not loaded:
        return loading_stopped_error(how="（Ctrl-C）")
    if session is None:
        return None
    if not session.running:  # at the prompt, or between turns: every finished turn is kept
        return _left_error(session)
    try:
        ended = session.stop(STOP_WAIT_S)
    except KeyboardInterrupt:  # a second Ctrl+C: no more waiting
        ended = False  # the process exit stops the sandbox all the same
    kept = (
        f"作業ディレクトリ {_workspace_text(session.workspace)} には、読み込んだデータと"
        "完了した結果だけが残っています。"
        if session.workspace is not None
        else ""
    )
    return stopped_error(how="（Ctrl-C）", ended=ended, kept=kept, saved=session.saved_report)


def _left_error(session: AnalysisSession) -> BlockError:
    """Ctrl+C while no turn runs (at the interactive prompt): the session ends, and what its
    finished turns saved stays in the workspace."""
    where = (
        f"作業ディレクトリ {_workspace_text(session.workspace)} に、読み込んだデータと"
        "これまでのレポート・結果を残しています。"
        if session.workspace is not None
        else ""
    )
    return BlockError(
        "分析を中断しました（Ctrl-C）。実行中の処理はありませんでした。",
        code=ErrorCode.CANCELLED,
        hint=where + "続けるには、もう一度 keiri-agent analyze を実行してください。",
        recoverable=True,
    )


def _ask(label: str) -> str | None:
    """One line typed at the prompt ``label``; None at the end of the input (Ctrl+D). Ctrl+C
    is left to the caller (click's prompt would turn it into the same Abort as Ctrl+D, and
    the command would end as if the user had finished)."""
    err_console.print(f"{label}: ", end="", markup=False, highlight=False)
    try:
        return input()
    except EOFError:
        return None


def _load(session: AnalysisSession, files: list[Path]) -> None:
    """Load ``files`` all or none (``AnalysisSession.add_files``) and say what was read."""
    for path, info in zip(files, session.add_files(files), strict=True):
        rows, cols = info.shape
        err_console.print(
            f"読み込みました: {path.name}（{rows:,} 行 × {cols} 列、{info.name}）",
            markup=False,
            highlight=False,
        )
        for note in info.notes:  # units made yen, total rows left out...
            err_console.print(f"  {note}", markup=False, highlight=False)


def _interactive(session: AnalysisSession, *, as_json: bool) -> None:
    err_console.print(
        "対話モードです。分析したい内容を入力してください（空行・exit・終了 で終わります）。",
        markup=False,
    )
    label = "質問"
    while True:
        typed = _ask(label)
        text = typed.strip() if typed is not None else ""
        if not text or text.lower() in QUIT_WORDS:
            break
        forget_shown_errors()  # each turn reports its own errors, even one seen before
        try:
            turn = run_turn(session, text)
        except BlockError as exc:  # shown; the session stays usable for another try
            if as_json:  # JSON Lines: the failed turn is a line too
                typer.echo(json.dumps(error_document(exc), ensure_ascii=False))
            else:
                show_error(exc)
            continue
        _print_turn(turn, as_json=as_json, interactive=True)
        if turn.status == "unverified":  # shown; the session goes on
            _warn_unverified(turn)
        label = "回答" if turn.next_action == "ask" else "追加の質問"
    if session.workspace is not None:
        err_console.print(
            f"終了します。作業ディレクトリ: {_workspace_text(session.workspace)}",
            markup=False,
            soft_wrap=True,
        )


@app.command(
    help=(
        "データ分析エージェントに CSV/TSV/Excel ファイルについて質問します。\n\n"
        "引数のうち、存在するファイルをデータとして読み込み（文字コードは自動判定）、"
        "ファイルでない最後の引数を質問とみなします（空白を含む質問は引用符で囲みます）。"
        "最初のファイルは df、すべてのファイルは dfs['ファイル名'] として分析に使われます。\n\n"
        "質問を付けると分析を最後まで実行し、レポート（Markdown）と作業ディレクトリを表示します。"
        "エージェントが確認の質問を返したときは、その質問を表示して終了します（終了コード 0）。"
        "質問を付けずに実行すると対話モードになり、エージェントの質問に答えながら同じセッションで"
        "分析を続けられます（空行・exit・終了 で終わります）。\n\n"
        "出力（標準出力・表・ファイル）のあるコード実行が 1 度も成功しないままレポートになったときは、"
        "レポートを表示したうえで、数値がデータで裏付けられていない（未検証）ことを標準エラー出力に"
        '表示します（--json では "status": "unverified"）。対話モードでは警告を表示して続けます。\n\n'
        "Ctrl+C で分析を中止します（実行中のコードもすぐに止め、そのターンのレポートと実行記録は保存しません）。\n\n"
        "進捗は標準エラー出力に表示します。終了コード: 0 成功（または確認の質問）、"
        "1 レポートが未検証か LLM の呼び出しに失敗、"
        "2 入力や設定の誤り（ファイルが無い・読めない等）、130 Ctrl+C で中止。"
    )
)
def analyze(
    args: Annotated[
        list[str],
        typer.Argument(
            metavar="DATA [質問]",
            help="データファイル（CSV/TSV/XLSX、複数可）と、最後に質問（省略すると対話モード）。",
            show_default=False,
        ),
    ],
    workspace_root: Annotated[
        Path | None,
        path_option(
            "--workspace-root",
            "作業ディレクトリを作る場所",
            Wants.NEW_FOLDER,
            "既定: KEIRI_WORKSPACE_ROOT、未設定なら ./workspace",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="結果を JSON で出力します（対話モードでは 1 ターン 1 行の JSON Lines）。",
        ),
    ] = False,
) -> None:
    made: list[AnalysisSession] = []  # the session, once there is one to stop on Ctrl+C
    loaded: list[bool] = []  # once its data is loaded

    def stop() -> BlockError | None:
        return _stopped(made[0] if made else None, loaded=bool(loaded))

    with user_errors(llm_exit_code=EXIT_FAILED, on_ctrl_c=stop):
        files, question = split_arguments(args)
        if question is not None:  # its first call is the reason step's: key checked before loading
            require_llm("reason")
        from keiri_agent.agents.analysis import AnalysisSession

        session = AnalysisSession(workspace_root=workspace_root)
        made.append(session)
        _load(session, files)
        loaded.append(True)
        if question is None:
            _interactive(session, as_json=as_json)
            return
        try:
            turn = run_turn(session, question)
        except BlockError as exc:
            _show_kept(exc)
            raise
        _print_turn(turn, as_json=as_json, interactive=False)
        if turn.status == "unverified":
            _warn_unverified(turn)
            raise typer.Exit(code=EXIT_FAILED)
