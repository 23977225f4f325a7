"""`keiri-agent doctor`: the effective configuration, providers, models and sandbox layers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import JsonFlag, WrappingTable, app, console, echo_json, user_errors
from keiri_agent.cli.sandbox import layers_table

if TYPE_CHECKING:
    from keiri_agent.doctor import DoctorReport


def _mark(ok: bool) -> str:
    return "[green]✓[/green]" if ok else "[red]✗[/red]"


def _render(report: DoctorReport) -> None:
    console.print(
        f"[bold]keiri-agent {report.version}[/bold]  Python {report.python}  {report.platform}"
    )

    providers = WrappingTable(title="LLM プロバイダー")
    providers.add_column("プロバイダー")
    providers.add_column("利用可")
    providers.add_column("不足している設定")
    for name, info in report.providers.items():
        note = ", ".join(info["missing"]) or info.get("endpoint", "")
        providers.add_row(name, _mark(info["usable"]), note)
    console.print(providers)

    roles = WrappingTable(title="役割ごとのモデル")
    roles.add_column("役割")
    roles.add_column("モデル")
    roles.add_column("利用可")
    roles.add_column("備考")
    for role, info in report.roles.items():
        note = "個別設定" if info["overridden"] else ""
        if info["model"] is None:
            note = "未設定（埋め込みを使わず BM25 のみで検索）"
        elif info["missing"]:
            note = "不足: " + ", ".join(info["missing"])
        roles.add_row(role, info["model"] or "-", _mark(info["usable"]), note)
    console.print(roles)

    privacy = report.privacy
    console.print(
        f"個人情報のマスク: {_mark(privacy['mask_pii'])} {privacy['summary']}", markup=True
    )
    if privacy["mask_pii"]:
        console.print(
            f"  対象: {'、'.join(privacy['masked'])}（対象外: {'、'.join(privacy['not_masked'])}）",
            markup=False,
        )

    settings = WrappingTable(title="有効な設定（秘密情報はマスク）")
    settings.add_column("変数")
    settings.add_column("値")
    for key, value in report.settings.items():
        settings.add_row(key, value)
    for key, value in report.paths.items():
        settings.add_row(f"({key})", value)
    console.print(settings)

    rows = [
        (layer["name"], bool(layer["active"]), str(layer["detail"])) for layer in report.sandbox
    ]
    console.print(
        layers_table("サンドボックスの隔離レイヤー（詳細: keiri-agent sandbox doctor）", rows)
    )

    for model, result in report.pings.items():
        status = "OK" if result["ok"] else f"失敗: {result['error']}"
        console.print(f"接続確認 {model}: {status}")
    if report.problems:
        console.print("[yellow]注意:[/yellow]")
        for line in report.problems:
            console.print(f"  - {line}")
    else:
        console.print("[green]設定に問題は見つかりませんでした。[/green]")


@app.command()
def doctor(
    as_json: JsonFlag = False,
    ping: Annotated[
        bool, typer.Option("--ping", help="各モデルに短いリクエストを送り接続を確認します。")
    ] = False,
) -> None:
    """有効な設定（秘密情報はマスク）、使える LLM プロバイダー、役割ごとのモデルを表示します。"""
    from keiri_agent.config import load_settings
    from keiri_agent.doctor import collect_report, ping_models

    with user_errors():
        settings = load_settings()
        report = collect_report(settings)
        if ping:
            ping_models(report, settings)
    if as_json:
        echo_json(report.as_dict())
    else:
        _render(report)
    if ping and any(not result["ok"] for result in report.pings.values()):
        raise typer.Exit(code=1)
