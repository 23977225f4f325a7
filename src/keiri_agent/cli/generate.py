"""`keiri-agent plan generate`: headless plan generation (seed 004 「CLI/ヘッドレス連携」).

The instruction, reference documents and templates go to the design engine; a plan that
validates is written to ``--out`` or to ``designs/<plan_id>_<yyyymmddHHMM>.yaml`` and kept as a
version of the plan (``keiri_agent.versions``, author: ``cli.identity``). When the
engine needs more information, the questions are printed with an answers file to fill in;
``--answers FILE`` (requirement id → value) answers them and the design chat continues.
``--out`` never replaces an existing file unless ``--force`` is given (checked before any LLM
call). ``--max-attempts`` and ``--k`` are the engine's attempt budget and candidate count;
``--bind IMPORT=TEMPLATE.EXPORT`` (repeatable, compose mode) decides a binding compose found
ambiguous; ``--fallback`` is ``KEIRI_AGENT_LLM_FALLBACK=1`` for this run. The blocks Top-K
left out are printed with the reason (category pre-filter, relevance, caps, token budget).
Exit status: 0 for a plan (also the explicit fallback), 1 when input is needed or errors remain.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import yaml
from rich.markup import escape

from keiri_agent.cli.common import (
    EXIT_FAILED,
    JsonFlag,
    check_choice,
    console,
    echo_json,
    err_console,
    option_form_error,
    require_llm,
    user_errors,
)
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.cli.plan import plan_app
from keiri_agent.errors import UserFile, input_error

if TYPE_CHECKING:
    from keiri_agent.blocks.registry import BlockRegistry
    from keiri_agent.versions import Version

__all__ = ["generate"]

MAX_CHAT_ROUNDS = 5  # rounds of answers taken from one --answers file
MAX_CUT_SHOWN = 8  # blocks left out by Top-K listed with their reason
VERSION_MESSAGE_CHARS = 200  # of the instruction, in the message of the version it generated
BIND_FORM = "<テンプレートID>.<入力名>=<テンプレートID>.<出力名>"  # how --bind is written
_ANSWERS_HINT = "--answers には 項目ID: 値 を書いた YAML ファイルを指定してください。"
ANSWERS_FILE = UserFile(
    "回答ファイル {file} が見つかりません。",
    hint=_ANSWERS_HINT,
    unreadable="回答ファイル {file} を読めません",
    unreadable_hint=_ANSWERS_HINT,
)


def _split(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _bindings(values: list[str] | None, apply_mode: str) -> dict[str, str]:
    """``--bind TEMPLATE.IMPORT=TEMPLATE.EXPORT`` options as compose's explicit bindings."""
    example = "--bind excel_report.table=duplicate_invoices.duplicates"
    bindings: dict[str, str] = {}
    for value in values or []:
        key, sep, target = (part.strip() for part in value.partition("="))
        if not sep or "." not in key or not target:
            raise option_form_error(
                "--bind",
                value,
                BIND_FORM,
                f"例: {example}。入力名・出力名は keiri-agent templates show ID で確かめられます。",
            )
        if key in bindings and bindings[key] != target:
            raise input_error(
                f"--bind で {key} が二度（{bindings[key]} と {target}）指定されています。",
                "1 つの入力には --bind を 1 回だけ指定してください。",
                bind=key,
            )
        bindings[key] = target
    if bindings and apply_mode != "compose":
        raise input_error(
            "--bind はテンプレートを合成するとき（--apply-mode compose）だけ使えます。",
            f"--apply-mode compose --templates a,b,c {example} のように指定してください。",
        )
    return bindings


def _check_out(out: Path | None, force: bool) -> None:
    if out is not None and out.exists() and not force:
        raise input_error(
            f"保存先 {out} はすでにあります。上書きしません。",
            "別のファイル名を --out に指定するか、置き換えてよければ --force を付けてください。",
            out=str(out),
        )
    if out is not None and out.is_dir():  # with --force (cli.paths refuses it before)
        raise input_error(
            f"保存先 {out} はフォルダです。",
            "--out には保存するファイル名（.yaml）まで指定してください。",
            out=str(out),
        )


def _check_range(option: str, value: int | None, field: str) -> None:
    """Refuse in Japanese what DesignEngineOptions would refuse for ``field`` (its ge/le)."""
    from keiri_agent.design.models import DesignEngineOptions

    info = DesignEngineOptions.model_fields[field]
    low = next(int(m.ge) for m in info.metadata if getattr(m, "ge", None) is not None)
    high = next(int(m.le) for m in info.metadata if getattr(m, "le", None) is not None)
    default = info.default
    if value is not None and not low <= value <= high:
        raise input_error(
            f"{option} {value} は指定できません。",
            f"{option} には {low}〜{high} の整数を指定してください（省略時は {default}）。",
            **{option: value},
        )


def _read_answers(path: Path | None) -> dict[str, Any]:
    from keiri_agent.plan import load_yaml

    if path is None:
        return {}
    data = load_yaml(ANSWERS_FILE.read_text(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise input_error(
            f"回答ファイル {path} は「項目ID: 値」のマッピングではありません。",
            "例:\nbank_statement: data/入金明細.xlsx\namount_tolerance: 1000",
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
        Path | None,
        path_option(
            "--answers", "回答ファイル", Wants.FILE, help="不足項目への回答 YAML（項目ID: 値）。"
        ),
    ] = None,
    out: Annotated[
        Path | None,
        path_option("--out", "保存先", Wants.NEW_FILE, "既定: designs/<plan_id>_<日時>.yaml"),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="--out のファイルがあれば置き換えます。")
    ] = False,
    plan_id: Annotated[str | None, typer.Option("--plan-id", help="Plan の id。")] = None,
    max_attempts: Annotated[
        int | None,
        typer.Option(
            "--max-attempts",
            help="配線の試行回数の上限（最初の 1 回を含む。省略時はエンジンの既定）。",
        ),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            help="LLM に見せる候補ブロックの数の上限（省略時はエンジンの既定）。",
        ),
    ] = None,
    bind: Annotated[
        list[str] | None,
        typer.Option(
            "--bind",
            help=f"合成（compose）で使う出力の指定 {BIND_FORM}。複数回指定できます。",
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option("--retrieval", help="候補ブロックの検索方式: hybrid / bm25 / dense。")
    ] = "hybrid",
    fallback: Annotated[
        bool,
        typer.Option(
            "--fallback",
            help="LLM が失敗したとき、代替 Plan（利用者に必要な情報を尋ねるだけの Plan）を返します"
            "（KEIRI_AGENT_LLM_FALLBACK=1 と同じ。結果にはそう明記されます）。",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """指示と参考資料から Plan を自動生成し、検証・ドライランして保存します。"""
    from dataclasses import replace

    from keiri_agent.cli.identity import acting_name
    from keiri_agent.config import LLMRole, load_settings
    from keiri_agent.design.models import DesignEngineOptions
    from keiri_agent.design.store import save_plan, saved_at
    from keiri_agent.design.topk import RETRIEVAL_MODES
    from keiri_agent.localtime import shown_time
    from keiri_agent.versions import SaveNote, VersionStore

    with user_errors():
        check_choice("--retrieval", mode, RETRIEVAL_MODES)
        _check_range("--max-attempts", max_attempts, "max_attempts")
        _check_range("--k", k, "topk_total")
        _check_out(out, force)
        knobs: dict[str, Any] = {"retrieval_mode": mode, "bindings": _bindings(bind, apply_mode)}
        if max_attempts is not None:
            knobs["max_attempts"] = max_attempts
        if k is not None:
            knobs["topk_total"] = k
        settings = load_settings()
        if fallback:
            settings = settings.model_copy(update={"keiri_agent_llm_fallback": True})
        if apply_mode != "compose" and not settings.keiri_agent_llm_fallback:
            # The plan model is called (compose calls none) and a failure is not turned into
            # the fallback plan: its key is checked before the design engine is loaded.
            require_llm(LLMRole.PLAN, settings)
        from keiri_agent.design.chat import DesignChat
        from keiri_agent.design.documents import read_documents

        given = _read_answers(answers)
        chat = DesignChat(
            instruction,
            read_documents([Path(p) for p in _split(docs)]),
            selected_templates=_split(templates),
            apply_mode=apply_mode,  # type: ignore[arg-type]  # checked by the engine
            options=DesignEngineOptions(**knobs),
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
        version: Version | None = None
        if result.plan is not None and result.status in ("ok", "fallback"):
            versions = VersionStore.of(settings)
            note = SaveNote(
                author=acting_name(settings),
                source="generate",
                message=_version_message(instruction),
            )
            if out is not None:
                out.parent.mkdir(parents=True, exist_ok=True)
                try:  # "x": a file that appeared while generating is not replaced either
                    with out.open("w" if force else "x", encoding="utf-8") as handle:
                        handle.write(result.yaml or "")
                except FileExistsError:
                    _check_out(out, force)
                saved = out
                version = versions.save(
                    str(result.plan["id"]),
                    result.yaml or "",
                    replace(note, file=str(out.resolve())),
                )[0]
            else:
                saved, version = save_plan(
                    result.plan, settings.keiri_designs_dir, versions=versions, note=note
                )
    if as_json:
        data = result.model_dump(mode="json")
        data["saved"] = str(saved) if saved else None
        data["version"] = version.to_dict() if version else None
        echo_json(data)
    else:
        # A plan saved under designs/ is named by the UTC minute: say it in the person's zone.
        when = saved_at(saved) if saved is not None and out is None else None
        _print_human(
            result,
            chat.registry,
            saved,
            version,
            shown_time(when, settings.keiri_timezone, seconds=False) if when else None,
        )
    if result.status not in ("ok", "fallback"):
        raise typer.Exit(code=EXIT_FAILED)


def _version_message(instruction: str) -> str:
    """The message a generated version is saved with: what it was generated from."""
    return f"自動生成: {' '.join(instruction.split())[:VERSION_MESSAGE_CHARS]}"


def _print_human(
    result: Any,
    registry: BlockRegistry,
    saved: Path | None,
    version: Version | None,
    saved_when: str | None,
) -> None:
    from keiri_agent.design.candidates import summarize_cut
    from keiri_agent.plan import block_said
    from keiri_agent.versions import STATUS_LABELS

    metrics = result.metrics
    said = ", ".join(block_said(b, registry) for b in result.candidates) or "（なし）"
    console.print(
        f"候補ブロック（{len(result.candidates)} 件）: {said}", highlight=False, markup=False
    )
    if result.cut:
        console.print(summarize_cut(result.cut), highlight=False, markup=False)
        for block in result.cut[:MAX_CUT_SHOWN]:
            line = f"  - {block_said(block.id, registry)}: {block.detail}"
            console.print(line, highlight=False, markup=False)
        if len(result.cut) > MAX_CUT_SHOWN:
            console.print(
                f"  ほか {len(result.cut) - MAX_CUT_SHOWN} 件（--json で全件）",
                highlight=False,
                markup=False,
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
            shown = f"（{saved_when} 保存）" if saved_when else ""
            console.print(
                f"✓ 保存しました: {saved}{shown}", highlight=False, markup=False, soft_wrap=True
            )
        if version is not None:
            console.print(
                f"版: {version.label}（{STATUS_LABELS[version.status]}）",
                highlight=False,
                markup=False,
            )
        return
    if result.status == "needs_input":
        _print_requirements(result)
        return
    err_console.print(
        f"[bold red]✗ Plan を完成できませんでした（エラー {len(result.errors)} 件）[/bold red]"
    )
    for issue in result.errors:  # the message names its step; the node's id is not said
        err_console.print(f"  - {issue.describe()}", highlight=False, markup=False)
        if issue.hint:
            err_console.print(f"    ヒント: {issue.hint}", highlight=False, markup=False)
    for suggestion in result.suggestions:
        err_console.print(f"提案: {suggestion}", highlight=False, markup=False)
    if result.requirements:
        _print_requirements(result)
