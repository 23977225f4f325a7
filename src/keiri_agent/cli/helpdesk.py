"""`keiri-agent helpdesk ingest|search`: the help desk's knowledge base from the command line.

``ingest`` reads manuals (files or folders of PDF, Word, Excel, PowerPoint, HTML, Markdown and
text files) and a Q/A CSV into the index directory (``--index``, default
``KEIRI_HELPDESK_INDEX``) with a progress bar and a line per file (added, updated, unchanged,
failed...); re-running it only reads what changed. Files that fail are listed with their reason
and the command exits with status 1 after ingesting the rest. ``search`` runs one of the agent's
tools (``manual``, ``qa``) or the hybrid ranking and prints the hits above the relevance floor
with their source, score and relevance, or 該当なし. ``eval`` lives in :mod:`.helpdesk_eval`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from keiri_agent.cli.common import (
    EXIT_FAILED,
    JsonFlag,
    ShownCount,
    WrappingTable,
    check_choice,
    command_group,
    console,
    echo_json,
    err_console,
    user_errors,
)
from keiri_agent.cli.paths import Wants, path_argument, path_option
from keiri_agent.errors import ErrorCode

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.knowledge import IngestResult, SearchOutput
    from keiri_agent.config import Settings

__all__ = ["TOOLS", "IndexOption", "JsonFlag", "ToolOption", "helpdesk_app", "index_dir"]

helpdesk_app = command_group(
    "helpdesk",
    "ヘルプデスク: マニュアルと Q/A の取り込み（ingest）・検索（search）と、エージェントへの質問（ask）。",
)
INDEX_WHAT = "ナレッジベースのフォルダ"
INDEX_NOTE = "helpdesk ingest が作ります。既定: KEIRI_HELPDESK_INDEX、未設定なら ./helpdesk_index"
IndexOption = Annotated[
    Path | None,
    path_option(
        "--index",
        INDEX_WHAT,
        Wants.FOLDER,
        INDEX_NOTE,
        code=ErrorCode.DEPENDENCY_NOT_FOUND,  # as when the default one is not there
        about="ナレッジベースは `keiri-agent helpdesk ingest --manual マニュアルのフォルダ"
        " --index フォルダ` で作ります。",
    ),
]
TOOLS = ("manual", "qa", "hybrid")  # the same as KnowledgeBase.rank()
ToolOption = Annotated[
    str,
    typer.Option(
        "--tool",
        help="manual（マニュアルの検索）/ qa（Q/A 検索）/ hybrid（両方をまとめて順位付け）。",
    ),
]
CONTENT_PREVIEW_CHARS = 160


def index_dir(index: Path | None) -> Path:
    if index is not None:
        return index
    from keiri_agent.config import load_settings

    return load_settings().keiri_helpdesk_index


@helpdesk_app.command("ingest")
def ingest(
    paths: Annotated[
        list[Path] | None,
        path_argument(
            "マニュアル",
            Wants.FILE_OR_FOLDER,
            help="マニュアルのファイルまたはフォルダー（--manual の後に続けて複数書けます）。",
            metavar="PATH",
            show_default=False,
        ),
    ] = None,
    manual: Annotated[
        list[Path] | None,
        path_option(
            "--manual",
            "マニュアル",
            Wants.FILE_OR_FOLDER,
            help="マニュアルのファイルまたはフォルダー（.pdf .docx .xlsx .pptx .html .md .txt、"
            "フォルダーは中を再帰的に探します）。",
            show_default=False,
        ),
    ] = None,
    qa: Annotated[
        Path | None,
        path_option(
            "--qa", "Q/A の CSV", Wants.FILE, "列 Q と A、文字コードは自動判定", show_default=False
        ),
    ] = None,
    chunk_chars: Annotated[
        int | None,
        typer.Option(
            "--chunk-chars",
            help="1 チャンクの最大文字数（既定: KEIRI_HELPDESK_CHUNK_CHARS、600）。",
            show_default=False,
        ),
    ] = None,
    chunk_overlap: Annotated[
        int | None,
        typer.Option(
            "--chunk-overlap",
            help="前のチャンクの末尾を次に重ねる最大文字数（既定: KEIRI_HELPDESK_CHUNK_OVERLAP、120）。",
            show_default=False,
        ),
    ] = None,
    index: Annotated[
        Path | None,
        path_option("--index", INDEX_WHAT, Wants.NEW_FOLDER, INDEX_NOTE),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """マニュアルと Q/A をナレッジベースに取り込みます（変更のないファイルは読み直しません）。

    --manual に指定した場所がインデックスの内容になります（そこにないファイルは削除）。
    --manual を省くと登録済みのマニュアルを、--qa を省くと登録済みの Q/A をそのまま残します。
    """
    from keiri_agent.agents.helpdesk.knowledge import ingest as run_ingest
    from keiri_agent.config import load_settings

    manuals = [*(manual or []), *(paths or [])]
    with user_errors():
        settings = _chunk_settings(load_settings(), chunk_chars, chunk_overlap)
        directory = index_dir(index)
        with Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
            disable=as_json or not manuals,
        ) as progress:
            task = progress.add_task("マニュアルを取り込み中", total=None)

            def report(done: int, total: int, name: str) -> None:
                label = f"取り込み中: {name}" if name else "検索インデックスを作成中"
                progress.update(task, completed=done, total=total, description=escape(label))

            result = run_ingest(
                directory, manuals=manuals, qa=qa, progress=report, settings=settings
            )
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        _print_ingest(result)
    if result.failures:
        raise typer.Exit(code=EXIT_FAILED)


def _chunk_settings(settings: Settings, chars: int | None, overlap: int | None) -> Settings:
    """``settings`` with the chunk options of the command line, checked like the settings."""
    from keiri_agent.agents.helpdesk.knowledge.chunking import check_chunking

    update = {}
    if chars is not None:
        update["keiri_helpdesk_chunk_chars"] = chars
    if overlap is not None:
        update["keiri_helpdesk_chunk_overlap"] = overlap
    chosen = settings.model_copy(update=update)
    check_chunking(chosen.keiri_helpdesk_chunk_chars, chosen.keiri_helpdesk_chunk_overlap)
    return chosen


def _print_files(result: IngestResult) -> None:
    if not result.files:
        return
    table = WrappingTable(title="ファイルごとの結果", title_justify="left")
    table.add_column("ファイル", ratio=2)
    table.add_column("状態", no_wrap=True)
    table.add_column("チャンク", justify="right", no_wrap=True)
    table.add_column("メモ", ratio=2)
    for status in result.files:
        chunks = "" if status.status in ("failed", "removed", "duplicate") else f"{status.chunks:,}"
        table.add_row(escape(status.file_name), status.label, chunks, escape(status.message))
    console.print(table)


def _print_ingest(result: IngestResult) -> None:
    _print_files(result)
    table = WrappingTable(title=f"取り込み結果（{escape(result.index_dir)}）", title_justify="left")
    table.add_column("項目")
    table.add_column("件数", justify="right")
    rows = [
        ("対象のマニュアル", result.files_seen),
        ("追加", result.added),
        ("更新（再チャンク化）", result.updated),
        ("変更なし（スキップ）", result.unchanged),
        ("削除", result.removed),
        ("失敗", len(result.failures)),
        ("対象外の拡張子", result.ignored),
        ("今回書き込んだチャンク", result.chunks_written),
        ("チャンク総数", result.chunks_total),
        ("Q/A 総数", result.qa_rows_total),
    ]
    for label, count in rows:
        table.add_row(label, f"{count:,}")
    console.print(table)
    if result.qa is not None:
        qa = result.qa
        state = "更新" if qa.changed else "変更なし"
        console.print(
            f"Q/A: {qa.file_name}（文字コード {qa.encoding}、{qa.rows} 件、{state}）", markup=False
        )
        for line in qa.skipped_rows:
            console.print(f"  注意: {line}", markup=False)
    from keiri_agent.retrieval.local_embedding import LOCAL_MODEL_KEY, LOCAL_MODEL_NAME

    if result.embedding_model == LOCAL_MODEL_KEY:
        console.print(
            f"意味検索: 同梱の埋め込みモデル {LOCAL_MODEL_NAME} でマニュアルと Q/A を埋め込みました"
            f"（新たに {result.semantic_embedded:,} 件、ネットワーク不要）",
            markup=False,
        )
    elif result.qa_mode == "dense":
        console.print(
            f"search_qa: 埋め込みモデル {result.embedding_model} による意味検索", markup=False
        )
    else:
        console.print(
            "意味検索: オフ（KEIRI_HELPDESK_SEMANTIC=false）のため、キーワード検索だけで検索します",
            markup=False,
        )
    for note in result.notes:
        console.print(f"注意: {note.file_name}: {note.message}", markup=False)
    for failure in result.failures:
        err_console.print(
            f"[bold red]失敗[/bold red] {escape(failure.file_name)}: [{failure.code}] "
            f"{escape(failure.reason)}"
        )
        if failure.hint:
            err_console.print(f"  ヒント: {failure.hint}", markup=False)
    if result.failures:
        err_console.print(
            f"{len(result.failures)} 件のファイルを取り込めませんでした（ほかのファイルは取り込み済みです）。",
            markup=False,
        )
    console.print(f"所要時間 {result.duration_s:.1f} 秒", markup=False)


def _source(hit: SearchOutput) -> str:
    return hit.citation()


@helpdesk_app.command("search")
def search(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="検索語または質問文。", show_default=False)
    ],
    tool: ToolOption = "manual",
    k: ShownCount = 3,
    index: IndexOption = None,
    as_json: JsonFlag = False,
) -> None:
    """ナレッジベースを、エージェントのツールと同じ方法で検索します。"""
    from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase

    with user_errors():
        check_choice("--tool", tool, TOOLS)
        with KnowledgeBase.open(index_dir(index)) as kb:
            hits = kb.search(query, k, tool=tool)
            stats = kb.stats()
    if as_json:
        payload = {
            "query": query,
            "tool": tool,
            "qa_mode": stats.qa_mode,
            "qa_mode_reason": stats.qa_mode_reason,
            "min_relevance": stats.min_relevance,
            "semantic_model": stats.semantic_model,
            "min_margin": stats.min_margin,
            "status": "ok" if hits else "no_match",
            "results": [hit.model_dump(mode="json") for hit in hits],
        }
        echo_json(payload)
        return
    table = WrappingTable(title=f"検索結果（{tool}）: {escape(query)}", title_justify="left")
    table.add_column("順位", justify="right", no_wrap=True)
    table.add_column("出典", ratio=1)
    table.add_column("スコア", justify="right", no_wrap=True)
    table.add_column("関連度", justify="right", no_wrap=True)
    table.add_column("本文", ratio=3)
    for rank, hit in enumerate(hits, start=1):
        text = " ".join(hit.content.split())
        if len(text) > CONTENT_PREVIEW_CHARS:  # said in words: a "…" would read as a cut cell
            text = f"{text[:CONTENT_PREVIEW_CHARS]}（以下略、全 {len(text):,} 文字。--json で全文）"
        table.add_row(
            str(rank),
            escape(_source(hit)),
            f"{hit.score:.3f}",
            f"{hit.relevance:.2f}",
            escape(text),
        )
    if hits:
        console.print(table)
    if stats.semantic_model is not None:
        console.print(f"検索方式: {stats.qa_mode_reason}", markup=False)
    elif tool != "manual":
        console.print(f"Q/A の検索方式: {stats.qa_mode_reason}", markup=False)
    if tool != "qa" and stats.chunks == 0:
        console.print(
            "このナレッジベースにはマニュアルがありません（--manual で取り込めます）。",
            markup=False,
        )
    if tool != "manual" and stats.qa_rows == 0:
        console.print(
            "このナレッジベースには Q/A がありません（--qa で取り込めます）。", markup=False
        )
    if not hits and stats.min_margin is not None:
        console.print(
            "該当なし: 質問は資料の内容より資料と無関係な話題に近く（下限 "
            f"{stats.min_margin:g}、KEIRI_HELPDESK_MIN_MARGIN）、資料で扱っていないと判断しました。"
            "資料の用語（画面名・エラーコードなど）を含めて試してください。",
            markup=False,
        )
    elif not hits:
        console.print(
            f"該当なし: 関連度が下限（{stats.min_relevance:g}、KEIRI_HELPDESK_MIN_RELEVANCE）に"
            "届く結果はありませんでした。別の言い方やエラーコードで試してください。",
            markup=False,
        )
