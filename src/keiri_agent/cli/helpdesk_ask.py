"""`keiri-agent helpdesk ask "質問"`: ask the help-desk agent (seed 001) a question.

The agent plans, researches each subtask in parallel in the knowledge base built with
``keiri-agent helpdesk ingest`` and answers with its sources. Progress (the graph's events)
goes to stderr while it works; stdout holds the status, the plan, each subtask's status, the
answer, the sources and the tokens used, or with ``--json`` the whole ``AgentResult`` (per
subtask: what each search found, which citations were verified and which were removed).

Exit codes: 0 answered from the materials; 1 partly or not at all answered (some or every
subtask unresolved: the answer says so) or an LLM call failed; 2 input or settings errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import EXIT_FAILED, progress_printer, require_llm, user_errors
from keiri_agent.cli.helpdesk import IndexOption, JsonFlag, helpdesk_app

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.models import AgentResult

__all__ = ["STATUS_LABELS", "ask", "exit_code_for", "format_result"]

STATUS_LABELS = {
    "answered": "解決（資料にもとづく回答）",
    "partial": "一部未解決（資料で確認できなかった項目があります）",
    "unresolved": "未解決（資料に該当する記述がありません）",
}


def exit_code_for(result: AgentResult) -> int:
    """0 when every subtask was answered from the materials, 1 otherwise."""
    return 0 if result.status == "answered" else EXIT_FAILED


def format_result(result: AgentResult) -> str:
    """The human-readable form: status, plan, per-subtask status, answer, sources, usage."""
    from keiri_agent.agents.helpdesk.grounding import UNRESOLVED_REASONS

    lines = [f"結果: {STATUS_LABELS[result.status]}", "", "計画:"]
    for subtask in result.subtasks:
        status = "解決" if subtask.is_completed else "未解決"
        reason = UNRESOLVED_REASONS.get(subtask.unresolved_reason or "")
        lines.append(
            f"  {subtask.index + 1}. {subtask.task_name}"
            f"（{status}、試行 {subtask.challenge_count} 回）" + (f": {reason}" if reason else "")
        )
    if result.omitted_subtasks:
        lines.append("  上限を超えたため調べなかったサブタスク:")
        lines += [f"    - {task}" for task in result.omitted_subtasks]
    lines += ["", "回答:", result.answer, ""]
    if result.sources:
        lines.append("出典:")
        lines += [f"  - {source.citation}" for source in result.sources]
    elif result.status == "unresolved":
        lines.append("出典: なし（資料から該当する記述は見つかりませんでした）")
    removed = [*result.removed_citations]
    removed += [label for s in result.subtasks for label in s.removed_citations]
    if removed:
        lines += ["", "削除した出典（検索結果に無いもの）:"]
        lines += [f"  - {label}" for label in dict.fromkeys(removed)]
    usage = result.usage
    lines += [
        "",
        f"LLM: {usage.calls} 回、{usage.total_tokens:,} トークン"
        f"（入力 {usage.input_tokens:,} / 出力 {usage.output_tokens:,}）",
    ]
    if result.run_log:
        lines.append(f"実行ログ: {result.run_log}")
    return "\n".join(lines)


@helpdesk_app.command(
    "ask",
    help=(
        "ヘルプデスクエージェントに質問します。\n\n"
        "質問をサブタスクに分け、マニュアルと過去の Q&A を並行して検索し、出典（ファイル名と"
        "ページ・行）つきで回答します。各サブタスクは最大 3 回まで調べ直し、それでも確認できない"
        "内容は回答に「未解決」と明記します。検索で見つからなかった出典は回答から削除します。\n\n"
        "進捗は標準エラー出力に表示します。終了コード: 0 資料にもとづいて回答、"
        "1 一部または全部が未解決（資料に記述が無い）か LLM の呼び出しに失敗、"
        "2 入力や設定の誤り（ナレッジベースが無い等）。"
    ),
)
def ask(
    question: Annotated[str, typer.Argument(metavar="質問", help="質問文（日本語）。")],
    index: IndexOption = None,
    as_json: JsonFlag = False,
) -> None:
    from keiri_agent.config import LLMRole

    with user_errors(llm_exit_code=EXIT_FAILED):
        # The planner's call comes first: its key is checked before the knowledge base and the
        # agent are loaded.
        settings = require_llm(LLMRole.HELPDESK)
        from keiri_agent.agents.helpdesk.agent import run_agent
        from keiri_agent.agents.helpdesk.progress import describe_event

        result = run_agent(
            question, index_dir=index, settings=settings, on_event=progress_printer(describe_event)
        )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        typer.echo(format_result(result))
    code = exit_code_for(result)
    if code:
        raise typer.Exit(code=code)
