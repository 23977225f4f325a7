"""`keiri-agent plan generate`: headless plan generation (seed 004 「CLI/ヘッドレス連携」).

The instruction, reference documents and templates go to the design engine; a plan that
validates is written to ``--out`` or to ``designs/<plan_id>_<yyyymmddHHMM>.yaml``. When the
engine needs more information, the questions are printed with an answers file to fill in;
``--answers FILE`` (requirement id → value) answers them and the design chat continues.
Exit status: 0 for a plan (also the explicit fallback), 1 when input is needed or errors remain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.markup import escape

from keiri_agent.cli.common import EXIT_FAILED, check_choice, console, err_console, user_errors
from keiri_agent.cli.plan import plan_app
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan.loader import load_yaml

__all__ = ["generate"]

MAX_CHAT_ROUNDS = 5  # rounds of answers taken from one --answers file


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _read_answers(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BlockError(
            f"回答ファイル {path} を読めません: {exc.strerror or exc}",
            code=ErrorCode.FILE_UNREADABLE,
            hint="--answers には 項目ID: 値 を書いた YAML ファイルを指定してください。",
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BlockError(
            f"回答ファイル {path} は「項目ID: 値」のマッピングではありません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="例:\nbank_statement: data/入金明細.xlsx\namount_tolerance: 1000",
        )
    return {str(k): v for k, v in data.items()}


def _print_requirements(result: Any) -> None:
    err_console.print(
        "[bold]次の項目が必要です[/bold]（--answers の YAML に書いて再実行してください）:"
    )
    example: dict[str, Any] = {}
    for req in result.requirements:
        mark = "必須" if req.required else "任意"
        extra = f" 選択肢: {', '.join(map(str, req.options))}" if req.options else ""
        err_console.print(
            f"  - {escape(req.id)}（{req.type}・{mark}）: {escape(req.label or '')}{escape(extra)}",
            highlight=False,
        )
        example[req.id] = req.options[0] if req.options else None
    err_console.print(
        "回答ファイルの例:\n" + yaml.safe_dump(example, allow_unicode=True, sort_keys=False)
    )


@plan_app.command("generate")
def generate(
    instruction: Annotated[
        str, typer.Option("--instruction", "-i", help="作りたい業務フローの指示（日本語）。")
    ],
    docs: Annotated[
        str | None, typer.Option("--docs", help="参考資料のファイル（カンマ区切り）。")
    ] = None,
    templates: Annotated[
        str | None, typer.Option("--templates", help="使うテンプレート ID（カンマ区切り）。")
    ] = None,
    apply_mode: Annotated[
        str,
        typer.Option(
            "--apply-mode",
            help="hint: テンプレを手本に LLM で生成 / compose: テンプレを合成（LLM なし）/ llm-only。",
        ),
    ] = "hint",
    answers: Annotated[
        Path | None, typer.Option("--answers", help="不足項目への回答 YAML（項目ID: 値）。")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="保存先（既定: designs/<plan_id>_<日時>.yaml）。")
    ] = None,
    plan_id: Annotated[str | None, typer.Option("--plan-id", help="Plan の id。")] = None,
    mode: Annotated[
        str, typer.Option("--retrieval", help="候補ブロックの検索方式: hybrid / bm25 / dense。")
    ] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")] = False,
) -> None:
    """指示と参考資料から Plan を自動生成し、検証・ドライランして保存します。"""
    from keiri_agent.config import load_settings
    from keiri_agent.design.chat import DesignChat
    from keiri_agent.design.documents import read_documents
    from keiri_agent.design.models import DesignEngineOptions
    from keiri_agent.design.store import save_plan
    from keiri_agent.design.topk import RETRIEVAL_MODES

    with user_errors():
        check_choice("--retrieval", mode, RETRIEVAL_MODES)
        settings = load_settings()
        given = _read_answers(answers)
        chat = DesignChat(
            instruction,
            read_documents([Path(p) for p in _split(docs)]),
            selected_templates=_split(templates),
            apply_mode=apply_mode,  # type: ignore[arg-type]  # checked by the engine
            options=DesignEngineOptions(retrieval_mode=mode),
            settings=settings,
            plan_id=plan_id,
        )
        result = chat.start()
        for _ in range(MAX_CHAT_ROUNDS):
            pending = {r.id for r in result.requirements}
            if result.status != "needs_input" or not pending & given.keys():
                break
            result = chat.answer({k: v for k, v in given.items() if k in pending})
        saved: Path | None = None
        if result.plan is not None and result.status in ("ok", "fallback"):
            if out is not None:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(result.yaml or "", encoding="utf-8")
                saved = out
            else:
                saved = save_plan(result.plan, settings.keiri_designs_dir)
    if as_json:
        data = result.model_dump(mode="json")
        data["saved"] = str(saved) if saved else None
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        _print_human(result, saved)
    if result.status not in ("ok", "fallback"):
        raise typer.Exit(code=EXIT_FAILED)


def _print_human(result: Any, saved: Path | None) -> None:
    metrics = result.metrics
    console.print(
        f"候補ブロック: {', '.join(result.candidates) or '（なし）'}", highlight=False, markup=False
    )
    console.print(
        f"試行 {metrics.get('attempts', 0)} 回・修復 {metrics.get('repair_rounds', 0)} 回・{result.reasoning}",
        highlight=False,
        markup=False,
    )
    if result.status in ("ok", "fallback"):
        if result.status == "fallback":
            err_console.print("[yellow]注意: 代替 Plan です（KEIRI_AGENT_LLM_FALLBACK=1）[/yellow]")
        console.print(result.yaml or "", highlight=False, markup=False)
        if saved is not None:
            console.print(f"✓ 保存しました: {saved}", highlight=False, markup=False)
        return
    if result.status == "needs_input":
        _print_requirements(result)
        return
    err_console.print(
        f"[bold red]✗ Plan を完成できませんでした（エラー {len(result.errors)} 件）[/bold red]"
    )
    for issue in result.errors:
        where = f"[{issue.node_id}] " if issue.node_id else ""
        err_console.print(
            f"  - {where}{issue.code}: {issue.message}", highlight=False, markup=False
        )
        if issue.hint:
            err_console.print(f"    ヒント: {issue.hint}", highlight=False, markup=False)
    for suggestion in result.suggestions:
        err_console.print(f"提案: {suggestion}", highlight=False, markup=False)
    if result.requirements:
        _print_requirements(result)
