"""`keiri-agent gc`: remove finished tasks, plan run logs and analysis workspaces past their
retention period (``KEIRI_RETENTION_DAYS``; the API server applies the same rule every hour).
What is kept and why is in ``keiri_agent.server.retention``. Each item is listed with the time
its age counts from, in ``KEIRI_TIMEZONE`` (``--json``: UTC)."""

from __future__ import annotations

from typing import Annotated

import typer

from keiri_agent.cli.common import (
    JsonFlag,
    app,
    console,
    echo_json,
    err_console,
    user_errors,
)
from keiri_agent.errors import input_error

__all__ = ["gc"]

_KINDS = {"task": "タスク", "run": "実行ログ", "workspace": "分析の作業フォルダ"}
_SINCE = {"task": "終了", "run": "最終更新", "workspace": "最終更新"}  # what ``since`` is


@app.command(
    help=(
        "保持期間（KEIRI_RETENTION_DAYS、既定 30 日）を過ぎた終了済みタスク・Plan の実行ログ・"
        "分析の作業フォルダを削除し、削除したものを表示します。入力待ちや中断中のタスクと、"
        "それが続きに使う実行ログは残します。"
    )
)
def gc(
    older_than: Annotated[
        float | None,
        typer.Option(
            "--older-than", help="この日数より古いものを削除（既定: KEIRI_RETENTION_DAYS）。"
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="削除せず、削除するものを表示するだけにする。")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    from keiri_agent.config import load_settings
    from keiri_agent.localtime import shown_time
    from keiri_agent.server.retention import collect, remove

    with user_errors():
        settings = load_settings()
        days = settings.keiri_retention_days if older_than is None else older_than
        if older_than is not None and older_than <= 0:
            raise input_error(
                f"--older-than は 0 より大きい日数で指定してください（指定値: {older_than:g}）。",
                "例: --older-than 30（30 日より古いものを削除します）。",
                older_than=days,
            )
        if days <= 0:
            raise input_error(
                "保持期間が 0 日（無期限）なので、何も削除しません。",
                "--older-than 30 のように日数を指定するか、KEIRI_RETENTION_DAYS を設定してください。",
                older_than=days,
            )
        found = collect(settings, days)
        removed = found if dry_run else remove(found)
    total = sum(item.size_bytes for item in removed)
    if as_json:
        echo_json(
            {
                "status": "ok",
                "dry_run": dry_run,
                "older_than_days": days,
                "removed": [item.to_dict() for item in removed],
                "total_bytes": total,
            }
        )
        return
    verb = "削除します（--dry-run: まだ削除していません）" if dry_run else "削除しました"
    for item in removed:
        since = f"{_SINCE[item.kind]} {shown_time(item.since, settings.keiri_timezone)}"
        console.print(
            f"{_KINDS[item.kind]}: {item.path}"
            f"（{since}、{item.age_days:.1f} 日前、{item.size_bytes:,} バイト）",
            markup=False,
            soft_wrap=True,  # a path broken over lines cannot be copied
        )
    err_console.print(
        f"{days:g} 日より古いもの {len(removed)} 件（{total:,} バイト）を{verb}。", markup=False
    )
