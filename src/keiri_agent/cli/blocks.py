"""`keiri-agent blocks list|show|search|docs`: the block catalog (built-in specs and KEIRI_BLOCK_SPEC_DIRS).

``list`` shows one line per block (latest version); ``show`` one block's contract: its ports
with types, whether they are required, their defaults and descriptions. ``--json`` prints the
registry's catalog entries. ``search`` ranks the blocks for an instruction with the plan
generator's Top-K retrieval (BM25 / dense / hybrid), so retrieval can be judged on its own.
``docs`` writes the Markdown catalog (docs/blocks.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.markup import escape

from keiri_agent.cli.common import (
    JsonFlag,
    ShownCount,
    WrappingTable,
    check_category,
    check_choice,
    command_group,
    console,
    echo_json,
    user_errors,
)
from keiri_agent.cli.japanese_text import paragraph
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.errors import input_error

if TYPE_CHECKING:
    from keiri_agent.blocks.spec import BlockSpec
    from keiri_agent.design.topk import RetrievalMode, RetrievalResult

__all__ = ["blocks_app"]

blocks_app = command_group("blocks", "Plan で使えるブロックの一覧と入出力の定義を表示します。")


def _detail(spec: BlockSpec, versions: list[str]) -> dict[str, Any]:
    from keiri_agent.blocks.catalog import port_details
    from keiri_agent.blocks.spec import port_is_required

    entry = spec.catalog_entry()
    entry["ref"] = spec.ref
    entry["versions"] = versions
    entry["inputs"] = {
        name: port_details(port, required=port_is_required(port))
        for name, port in spec.inputs.items()
    }
    entry["outputs"] = {
        name: port_details(port, required=False) for name, port in spec.outputs.items()
    }
    return entry


def _ports_table(title: str, ports: dict[str, dict[str, Any]], *, inputs: bool) -> WrappingTable:
    from keiri_agent.blocks.catalog import port_kind

    table = WrappingTable(title=title, title_justify="left")
    table.add_column("名前")
    table.add_column("キー", no_wrap=True)
    table.add_column("型")
    if inputs:
        table.add_column("必須")
        table.add_column("既定値")
    table.add_column("説明")
    for name, port in ports.items():
        row = [escape(str(port.get("label") or name)), escape(name), escape(port_kind(port))]
        if inputs:
            default = json.dumps(port["default"], ensure_ascii=False) if "default" in port else ""
            row += ["必須" if port["required"] else "", escape(default)]
        row.append(escape(str(port.get("description", "")).strip()))
        table.add_row(*row)
    return table


@blocks_app.command("list")
def list_blocks(
    category: Annotated[
        str | None, typer.Option("--category", help="このカテゴリのブロックだけを表示します。")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """登録されているブロックの一覧（各ブロックの最新版）を表示します。"""
    from keiri_agent.blocks.catalog import summary
    from keiri_agent.blocks.registry import default_registry

    with user_errors():
        registry = default_registry()
        # Not registry.categories(): its `list[str]` annotation resolves to the method `list`.
        categories = sorted({spec.category for spec in registry.list()})
        check_category(category, categories, "ブロック")
        specs = registry.list(category=category)
    if as_json:
        entries = [spec.catalog_entry() for spec in specs]
        echo_json(entries)
        return
    table = WrappingTable(title="ブロック一覧")
    table.add_column("名前")
    table.add_column("ID", no_wrap=True)
    table.add_column("版", no_wrap=True)
    table.add_column("説明")
    for spec in specs:
        table.add_row(
            escape(spec.shown_name),
            escape(spec.id),
            spec.version,
            escape(summary(spec.description)),
        )
    console.print(table)
    console.print(
        f"{len(specs)} 件。詳細は `keiri-agent blocks show ID` で表示します。", markup=False
    )


@blocks_app.command("show")
def show(
    block: Annotated[
        str,
        typer.Argument(
            metavar="ID", help="ブロック ID（id、id@1.2.3、id@1 の形）。", show_default=False
        ),
    ],
    as_json: JsonFlag = False,
) -> None:
    """ブロックの説明と入出力（型・必須・既定値・説明）を表示します。"""
    from keiri_agent.blocks.block_names import category_word
    from keiri_agent.blocks.registry import default_registry

    with user_errors():
        registry = default_registry()
        spec = registry.get(block)
        versions = [s.version for s in registry.versions(spec.id)]
    detail = _detail(spec, versions)
    if as_json:
        echo_json(detail)
        return
    heading = f"[bold]{escape(spec.shown_name)}[/bold]（{escape(spec.ref)}、カテゴリ: {escape(category_word(spec.category))}）"
    console.print(paragraph(heading, markup=True))
    console.print(paragraph(spec.description.strip()))
    if spec.tags:
        console.print(paragraph("タグ: " + ", ".join(spec.tags)))
    if len(versions) > 1:
        console.print("利用可能な版: " + ", ".join(versions), markup=False)
    console.print(_ports_table("入力", detail["inputs"], inputs=True))
    console.print(_ports_table("出力", detail["outputs"], inputs=False))


DEFAULT_SEARCH_SHOWN = 10


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _search_json(result: RetrievalResult, k: int) -> dict[str, Any]:
    return {
        "query": result.query,
        "mode_requested": result.mode_requested,
        "mode_used": result.mode_used,
        "note": result.note,
        "duration_ms": result.duration_ms,
        "results": [block.model_dump() for block in result.ranking[:k]],
        "candidates": result.candidate_ids(),
    }


@blocks_app.command("search")
def search(
    text: Annotated[
        str,
        typer.Argument(
            metavar="TEXT", help="やりたいこと（Plan 生成に渡す指示文）。", show_default=False
        ),
    ],
    k: ShownCount = DEFAULT_SEARCH_SHOWN,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            help="検索方式: bm25 / dense / hybrid（埋め込みモデルが未設定なら hybrid は BM25 のみ）。",
        ),
    ] = "hybrid",
    as_json: JsonFlag = False,
) -> None:
    """指示文に合うブロックを、Plan 生成の Top-K 検索と同じ方法でスコア付きで順位表示します。"""
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.design.topk import RETRIEVAL_MODES, BlockRetriever

    with user_errors():
        check_choice("--mode", mode, RETRIEVAL_MODES)
        retriever = BlockRetriever(default_registry())
        result = retriever.retrieve(text, mode=cast("RetrievalMode", mode))
    if as_json:
        echo_json(_search_json(result, k))
        return
    table = WrappingTable(title=f"ブロック検索（{result.mode_used}）")
    table.add_column("順位", justify="right", no_wrap=True)
    table.add_column("ID", no_wrap=True)
    table.add_column("カテゴリ", no_wrap=True)
    table.add_column("スコア", justify="right", no_wrap=True)
    table.add_column("BM25", justify="right", no_wrap=True)
    table.add_column("dense", justify="right", no_wrap=True)
    for block in result.ranking[:k]:
        table.add_row(
            str(block.rank),
            escape(block.id),
            escape(block.category),
            _score(block.score),
            _score(block.bm25),
            _score(block.dense),
        )
    console.print(table)
    if result.note:
        console.print(f"注意: {result.note}", markup=False)
    console.print(
        f"{len(result.ranking)} ブロック中 {min(k, len(result.ranking))} 件を表示"
        f"（検索 {result.duration_ms:.1f} ms）。Plan 生成の候補は {len(result.candidates)} 件です。",
        markup=False,
    )


@blocks_app.command("docs")
def docs(
    out: Annotated[
        Path,
        path_option(
            "--out", "書き出すファイル", Wants.NEW_FILE, help="書き出す Markdown ファイル。"
        ),
    ] = Path("docs/blocks.md"),
    check: Annotated[
        bool,
        typer.Option("--check", help="書き出さずに、ファイルが最新かどうかだけを確かめます。"),
    ] = False,
) -> None:
    """ブロックカタログ（Markdown）を block_specs から生成します。"""
    from keiri_agent.blocks.catalog import render_markdown
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.workspace import atomic_path

    with user_errors():
        specs = default_registry().list()
        text = render_markdown(specs)
        current = out.read_text(encoding="utf-8") if out.is_file() else None
        if check:
            if current != text:
                raise input_error(
                    f"{out} はブロック定義と一致していません。",
                    "`keiri-agent blocks docs` で生成し直してください。",
                    file=str(out),
                )
            console.print(f"{out} は最新です。", markup=False)
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out) as tmp:
            tmp.write_text(text, encoding="utf-8")
    console.print(f"{out} に {len(specs)} ブロックを書き出しました。", markup=False)
