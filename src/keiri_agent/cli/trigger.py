"""`keiri-agent trigger add|list|remove`: plans started by a webhook call or a new file.

A webhook trigger is called at ``POST /agent/triggers/{id}`` of ``keiri-agent serve``, signed
with the secret ``add`` prints once (HMAC-SHA256 over the timestamp and the body); a folder
trigger watches a folder under ``KEIRI_WORKSPACE_ROOT`` and runs its plan once for each new
file, given to the plan as the var ``--file-var``. Exit codes: 0 done, 2 user errors.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from keiri_agent.cli.common import command_group, console, echo_json, user_errors
from keiri_agent.cli.plan import JsonFlag, PlanId, VarOptions, VarsFileOption, parse_vars
from keiri_agent.cli.schedule import PinOption, echo_views, last_run_lines, print_warning
from keiri_agent.errors import input_error

__all__ = ["add", "list_triggers", "remove", "trigger_app"]

trigger_app = command_group(
    "trigger",
    "トリガー: Webhook の呼び出しやフォルダに置かれたファイルで Plan を実行します"
    "（実行は keiri-agent serve）。",
)


@trigger_app.command("add")
def add(
    plan_id: PlanId,
    webhook: Annotated[bool, typer.Option("--webhook", help="Webhook で実行します。")] = False,
    folder: Annotated[
        str | None,
        typer.Option(
            "--folder", metavar="DIR", help="見張るフォルダ（KEIRI_WORKSPACE_ROOT から）。"
        ),
    ] = None,
    file_var: Annotated[
        str, typer.Option("--file-var", help="新しいファイルを渡す vars の名前。")
    ] = "file",
    var_specs: VarOptions = None,
    vars_file: VarsFileOption = None,
    version: PinOption = None,
    as_json: JsonFlag = False,
) -> None:
    """トリガーを登録します（Webhook なら署名用の秘密鍵をこの一度だけ表示します）。"""
    from keiri_agent.cli.identity import acting_name
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import TriggerRequest, add_trigger, trigger_view

    with user_errors():
        if webhook == (folder is not None):
            raise input_error(
                "--webhook か --folder のどちらか 1 つを指定してください。",
                "例: keiri-agent trigger add keiri/bank_match --folder inbox/bank",
            )
        settings = load_settings()
        request = TriggerRequest.of(
            {
                "kind": "webhook" if webhook else "folder",
                "plan_id": plan_id,
                "folder": folder,
                "file_var": file_var,
                "vars": parse_vars(var_specs or [], vars_file),
                "version": version,
            }
        )
        trigger = add_trigger(settings, request, created_by=acting_name(settings))
        view = trigger_view(settings, trigger)
    if as_json:
        echo_json({**view, "secret": trigger.secret})
        return
    console.print(f"トリガー {trigger.id} を登録しました。", markup=False)
    _print_view(view)
    if trigger.secret is not None:
        console.print(f"  秘密鍵（この一度だけ表示します）: {trigger.secret}", markup=False)


def _print_view(view: dict[str, Any]) -> None:
    where = view["url"] if view["kind"] == "webhook" else f"フォルダ {view['folder']}"
    console.print(
        f"{view['id']}  Plan {view['plan_id']}  {where}  版: {view['version_text']}",
        markup=False,
        highlight=False,
    )
    for row in view["recent_files"][:1]:  # the last file it took, and what its run ran
        when = f"{row['claimed_at_local']}  {row['path']}"
        for line in last_run_lines(when, row["outcome_text"], row["versions_text"], row["error"]):
            console.print(line, markup=False, highlight=False)
    print_warning(view)


@trigger_app.command("list")
def list_triggers(as_json: JsonFlag = False) -> None:
    """トリガーの一覧（秘密鍵は表示しません）。"""
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import trigger_views

    with user_errors():
        views = trigger_views(load_settings())
    empty = "トリガーはありません（keiri-agent trigger add で登録します）。"
    echo_views("triggers", views, as_json, empty, _print_view)


@trigger_app.command("remove")
def remove(
    trigger_id: Annotated[str, typer.Argument(metavar="ID", help="トリガーの ID。")],
) -> None:
    """トリガーを削除します。"""
    from keiri_agent.config import load_settings
    from keiri_agent.schedule import ScheduleStore

    with user_errors():
        trigger = ScheduleStore.of(load_settings()).triggers.remove(trigger_id)
    console.print(f"トリガー {trigger.id}（Plan {trigger.plan_id}）を削除しました。", markup=False)
