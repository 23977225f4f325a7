"""`keiri-agent audit verify|export`: the run history as an auditor checks it.

``audit verify [RUN_ID | --all]`` checks run logs against their hash chain and run record and
names every changed, removed or added line with its line number (exit code 1 when a log was
tampered with); ``audit export --from DATE --to DATE`` lists the runs of a period with their
plan version, approver, starter, times, input and output files with SHA-256 and outcome, as
CSV (Excel-ready) or JSON Lines. Both read ``KEIRI_RUNS_DIR`` (``--runs-dir`` to point at
another folder, such as the API server's ``<workspace>/tasks``: logs are found at any depth).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from keiri_agent.cli.common import EXIT_FAILED, JsonFlag, command_group, echo_json, user_errors
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.errors import input_error

__all__ = ["audit_app", "export", "verify"]

audit_app = command_group(
    "audit",
    "監査: 実行ログの改ざんの検出と、期間中の実行の一覧（版・承認者・ファイルのハッシュ）。",
)

RunsDirOption = Annotated[
    Path | None,
    # a folder that is there: an audit of a mistyped one would list no runs and pass for a
    # quiet period
    path_option(
        "--runs-dir",
        "実行ログのフォルダ",
        Wants.FOLDER,
        "既定: KEIRI_RUNS_DIR。サブフォルダも探します",
        metavar="DIR",
        empty_ok=True,
        about="既定の場所（KEIRI_RUNS_DIR）を使うなら --runs-dir を省いてください。",
    ),
]


def _runs_dir(given: Path | None) -> Path:
    """The folder of run logs: ``given`` (checked as the command line is read), else
    ``KEIRI_RUNS_DIR``."""
    from keiri_agent.config import load_settings

    return given if given is not None else load_settings().keiri_runs_dir


@audit_app.command("verify")
def verify(
    run: Annotated[
        str | None,
        typer.Argument(metavar="RUN_ID", help="確かめる実行の ID（またはログ .jsonl のパス）。"),
    ] = None,
    all_runs: Annotated[
        bool, typer.Option("--all", help="フォルダ内のすべての Plan の実行ログを確かめます。")
    ] = False,
    runs_dir: RunsDirOption = None,
    as_json: JsonFlag = False,
) -> None:
    """実行ログのハッシュチェーンを確かめ、書き換え・削除・追記された行を行番号つきで表示します（改ざんがあれば終了コード 1）。"""
    from keiri_agent.control.verify import CHECK_LABELS, verify_runs

    with user_errors():
        if (run is None) == (not all_runs):
            raise input_error(
                "確かめる実行の ID か --all のどちらか一方を指定してください。",
                "例: keiri-agent audit verify run_20260101090000_ab12cd34 / "
                "keiri-agent audit verify --all",
            )
        folder = _runs_dir(runs_dir)
        checks = verify_runs(folder, run)
    tampered = [c for c in checks if c.status == "tampered"]
    if as_json:
        echo_json(
            {
                "runs_dir": str(folder),
                "checked": len(checks),
                "tampered": len(tampered),
                "runs": [c.to_dict() for c in checks],
            }
        )
    else:
        for check in checks:
            mark = "✗" if check.status == "tampered" else "✓" if check.status == "intact" else "・"
            who = f"{check.run_id or '（run id 不明）'}  {check.plan_id or ''}".rstrip()
            typer.echo(f"{mark} {who}  {CHECK_LABELS[check.status]}（{check.lines} 行）")
            typer.echo(f"    ログ: {check.log_path}")
            for line in check.describe():
                typer.echo(f"    - {line}")
        if not checks:
            typer.echo(f"Plan の実行ログがありません（{folder}）。")
        else:
            typer.echo(f"{len(checks)} 件を確かめました: 改ざんあり {len(tampered)} 件。")
    if tampered:
        raise typer.Exit(code=EXIT_FAILED)


def _date(text: str, option: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise input_error(
            f"{option} の日付 '{text}' を読めません。",
            f"{option} 2026-04-01 のように YYYY-MM-DD で指定してください"
            "（KEIRI_TIMEZONE の日付です）。",
            option=option,
            value=text,
        ) from None


@audit_app.command("export")
def export(
    start: Annotated[
        str, typer.Option("--from", metavar="DATE", help="期間の初日（YYYY-MM-DD、この日を含む）。")
    ],
    end: Annotated[
        str, typer.Option("--to", metavar="DATE", help="期間の最終日（YYYY-MM-DD、この日を含む）。")
    ],
    fmt: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="csv（既定、Excel 向け）か jsonl。")
    ] = "csv",
    out: Annotated[
        Path | None,
        path_option(("--out", "-o"), "書き出すファイル", Wants.NEW_FILE, "省略時は標準出力"),
    ] = None,
    runs_dir: RunsDirOption = None,
) -> None:
    """期間中に開始した Plan の実行を一覧にします: Plan・版・承認者・実行者・日時・入力と出力のファイルと SHA-256・結果・ログの検証。"""
    from keiri_agent.cli.common import check_choice
    from keiri_agent.config import load_settings
    from keiri_agent.control.export import EXPORT_FORMATS, audit_rows, render_rows
    from keiri_agent.versions import VersionStore

    with user_errors():
        check_choice("--format", fmt, EXPORT_FORMATS)
        first, last = _date(start, "--from"), _date(end, "--to")
        if last < first:
            raise input_error(
                f"--to（{last}）が --from（{first}）より前です。",
                "期間の初日を --from、最終日を --to に指定してください。",
            )
        settings = load_settings()
        zone = settings.keiri_timezone
        folder = _runs_dir(runs_dir)
        rows = audit_rows(folder, first, last, zone, VersionStore.of(settings))
        text = render_rows(rows, fmt, zone)
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8-sig" if fmt == "csv" else "utf-8")
    if out is None:
        typer.echo(text, nl=False)
    if not rows:  # said on stderr: standard output is the export itself
        typer.echo(_nothing_to_export(folder, first, last, out, fmt), err=True)
    elif out is not None:
        typer.echo(f"{len(rows)} 件の実行を {out} に書き出しました。", err=True)


def _nothing_to_export(folder: Path, first: date, last: date, out: Path | None, fmt: str) -> str:
    """What a person is told when the period has no run to export (not an error: a quiet
    month is an answer too, and the file is written, empty but for its header)."""
    from keiri_agent.control.verify import plan_run_logs

    if not plan_run_logs(folder):
        why = (
            f"実行ログのフォルダ {folder} に Plan の実行ログが 1 件もありません"
            "（別のフォルダなら --runs-dir で指定してください。API サーバーの実行は "
            "<作業フォルダ>/tasks の下にあります）"
        )
    else:
        why = f"{first}〜{last} に開始した Plan の実行は {folder} にありません"
    wrote = "見出しの行だけを" if fmt == "csv" else "空のファイルを"
    where = f"{out} に{wrote}書き出しました" if out is not None else f"{wrote}出力しました"
    return f"書き出す実行はありません: {why}。{where}。"
