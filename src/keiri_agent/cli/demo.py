"""`keiri-agent demo`: run the invoice reconciliation example on the bundled data, no API key.

It is the shortest way to see the plan engine work end to end: the ZIP of invoices is read,
fields are extracted, deposits are reconciled, and a workbook of results is written. It prints
where the workbook and the run log are, so a newcomer can open both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from keiri_agent.cli.common import (
    JsonFlag,
    app,
    echo_json,
    err_console,
    progress_printer,
    user_errors,
)
from keiri_agent.cli.plan import plan_names_at
from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["demo"]

DEMO_PLAN = "invoice_reconciliation"


@app.command("demo")
def demo(
    runs_dir: Annotated[
        Path | None,
        typer.Option("--runs-dir", help="実行ログと出力の保存先（既定: 設定の KEIRI_RUNS_DIR）。"),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """サンプルの請求書と入金明細を照合する Plan を実行します（API キー不要）。"""
    from keiri_agent.examples import example_answers, example_plan
    from keiri_agent.plan import PlanEnv, PlanRunner, describe_event

    with user_errors():
        plan = example_plan(DEMO_PLAN)
        answers = example_answers(DEMO_PLAN)
        env = PlanEnv.of()
        names = None if as_json else plan_names_at(plan, env.registry)  # steps as people read
        with PlanRunner(env, runs_dir=runs_dir) as runner:
            show = (
                None
                if as_json
                else progress_printer(
                    lambda e: describe_event(e, names), names.node if names else None
                )
            )
            result = runner.run(plan, answers=answers, on_event=show)
        if result.status != "success":
            error = result.error or BlockError(
                f"デモの実行が完了しませんでした（状態: {result.status}）。",
                code=ErrorCode.INTERNAL_ERROR,
                hint="実行ログを確認してください。",
            )
            error.details.setdefault("log_path", str(result.log_path))
            raise error
    report = result.outputs["write_result"]["report"]
    summary: dict[str, Any] = result.outputs["reconcile"]["summary"]
    if as_json:
        data = {
            "status": result.status,
            "run_id": result.run_id,
            "plan": str(plan),
            "workbook": report["output_path"],
            "log_path": str(result.log_path),
            "summary": summary,
        }
        echo_json(data)
        return
    err_console.print("", markup=False)
    typer.echo(f"サンプル Plan: {plan}")
    typer.echo(
        f"照合結果: 一致 {summary['matched']} 件、差異 {summary['differences']} 件、"
        f"未入金 {summary['unmatched_left']} 件、不明入金 {summary['unmatched_right']} 件"
    )
    typer.echo(f"出力ブック: {report['output_path']}")
    typer.echo(f"実行ログ: {result.log_path}")
    typer.echo("アプリで開くには: keiri-agent ui")
