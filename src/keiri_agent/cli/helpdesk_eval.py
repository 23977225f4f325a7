"""`keiri-agent helpdesk eval`: recall@k and MRR of the knowledge base on a team's own questions.

The question file (CSV or JSONL: question, and file / page / row / passage of the answer) is
searched question by question exactly as ``helpdesk search`` and the agent search (relevance
floor included); the command prints recall@k, MRR, the count of 該当なし, and every miss with
what came first instead. See :mod:`keiri_agent.agents.helpdesk.knowledge.evaluate`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from rich.markup import escape

from keiri_agent.cli.common import (
    WrappingTable,
    check_choice,
    console,
    count_option,
    echo_json,
    user_errors,
)
from keiri_agent.cli.helpdesk import (
    TOOLS,
    IndexOption,
    JsonFlag,
    ToolOption,
    helpdesk_app,
    index_dir,
)
from keiri_agent.cli.paths import Wants, path_option
from keiri_agent.errors import ErrorCode

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.knowledge.evaluate import EvalReport

__all__ = ["evaluate"]

MISSES_SHOWN = 30


@helpdesk_app.command("eval")
def evaluate(
    questions: Annotated[
        Path,
        path_option(
            "--questions",
            "質問ファイル",
            Wants.FILE,
            "CSV または JSONL。列 question と、答えの file・page・row・passage",
            show_default=False,
            code=ErrorCode.FILE_UNREADABLE,
        ),
    ],
    tool: ToolOption = "hybrid",
    k: Annotated[int, count_option("--k", "上位何件までに答えがあれば正解とするか。")] = 3,
    index: IndexOption = None,
    as_json: JsonFlag = False,
) -> None:
    """質問と答えの場所の一覧で検索の品質（recall@k・MRR）を測り、外れた質問を表示します。"""
    from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase
    from keiri_agent.agents.helpdesk.knowledge.evaluate import evaluate as run_eval
    from keiri_agent.agents.helpdesk.knowledge.evaluate import read_questions

    with user_errors():
        check_choice("--tool", tool, TOOLS)
        cases = read_questions(questions)
        with KnowledgeBase.open(index_dir(index)) as kb:
            report = run_eval(kb, cases, tool=tool, k=k)
    if as_json:
        echo_json(report.model_dump(mode="json"))
        return
    _print_report(report)


def _print_report(report: EvalReport) -> None:
    console.print(
        f"検索方法 {report.tool}、質問 {report.questions:,} 件、関連度の下限 {report.min_relevance:g}"
        + (
            f"、意味検索の下限 {report.min_margin:g}（KEIRI_HELPDESK_MIN_MARGIN）"
            if report.min_margin is not None
            else ""
        ),
        markup=False,
    )
    console.print(
        f"recall@{report.k}: {report.recall_at_k:.3f}（{report.answered:,}/{report.questions:,}）"
        f"  MRR: {report.mrr:.3f}  該当なし: {report.no_match:,} 件",
        markup=False,
    )
    if not report.misses:
        console.print(f"すべての質問で上位 {report.k} 件に答えがありました。", markup=False)
        return
    table = WrappingTable(
        title=f"上位 {report.k} 件に答えがなかった質問（{len(report.misses):,} 件）",
        title_justify="left",
    )
    table.add_column("質問", ratio=2)
    table.add_column("答えの場所", ratio=2)
    table.add_column("順位", justify="right", no_wrap=True)
    table.add_column(f"上位 {report.k} 件", ratio=2)
    for miss in report.misses[:MISSES_SHOWN]:
        table.add_row(
            escape(miss.question),
            escape(" / ".join(miss.expected)),
            "圏外" if miss.rank is None else str(miss.rank),
            escape("\n".join(miss.top) or "（該当なし）"),
        )
    console.print(table)
    if len(report.misses) > MISSES_SHOWN:
        console.print(
            f"ほか {len(report.misses) - MISSES_SHOWN:,} 件（--json ですべて表示）。", markup=False
        )
