"""``ai.helpdesk_answer``: seed 001's help-desk agent as a plan node (issue 9).

The block is a thin driver of :class:`~keiri_agent.agents.helpdesk.agent.HelpDeskAgent`, the
same agent the CLI and the Streamlit page use. The knowledge base is ``index_dir`` (default
``KEIRI_HELPDESK_INDEX``); its LLM client is ``ctx.llm(helpdesk)`` (the node's settings); its
events go to ``ctx.events`` under the node's id, with the subtask kept in ``stage.step``
(``subtask[0]/select_tools``), and cancellation is checked whenever a step starts: both by
``ctx.agent_events()`` (``events.node_events``).

An answer with unresolved subtasks is returned (it says so itself) with a warning in the log:
"could not be confirmed from the documents" is a legitimate help-desk answer, not a failure.
Its ``status`` output (answered / partial / unresolved, the agent's ``AgentResult.status``)
lets a plan route what the materials do not cover to a person.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import path_value, positive_int, text_value
from keiri_agent.config import LLMRole, load_settings
from keiri_agent.errors import input_error

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from keiri_agent.blocks.spec import BlockSpec

__all__ = ["DEFAULT_K", "MAX_K", "HelpDeskAnswerBlock"]

DEFAULT_K = 3
MAX_K = 10  # = tools.MAX_TOOL_K (not imported here: that module loads the index code)


class HelpDeskAnswerBlock(ProcessingBlock):
    """Answers one question from the knowledge base; returns the answer and its sources."""

    def __init__(self, spec: BlockSpec, *, tools: Sequence[BaseTool] | None = None) -> None:
        super().__init__(spec)
        self._tools = tools  # None: the search tools of the knowledge base at index_dir

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _question(inputs)
        _k(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        from keiri_agent.agents.helpdesk.agent import HelpDeskAgent
        from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase

        question, k = _question(inputs), _k(inputs)
        ctx.check_cancelled()
        settings = ctx.settings if ctx.settings is not None else load_settings()
        kb = None
        if self._tools is None:
            raw = given(inputs, "index_dir", None)
            # Left out: the operator's knowledge base; given: a folder the run may read.
            index_dir = (
                Path(settings.keiri_helpdesk_index).expanduser()
                if raw is None
                else path_value(
                    raw,
                    "index_dir",
                    "ナレッジベースのフォルダ（index_dir）が空です。",
                    "index_dir に keiri-agent helpdesk ingest で作成したフォルダを指定するか、"
                    "省略して KEIRI_HELPDESK_INDEX の値を使ってください。",
                    ctx=ctx,
                )
            )
            kb = KnowledgeBase.open(index_dir, settings=settings)
        try:
            agent = HelpDeskAgent(
                kb,
                tools=self._tools,
                settings=settings,
                llm=ctx.llm(LLMRole.HELPDESK),
                events=ctx.agent_events(),
                default_k=k,
            )
            result = agent.run_agent(question)
        finally:
            if kb is not None:
                kb.close()
        if result.unresolved:
            ctx.log(
                "資料で確認できなかったサブタスクがあります（回答に未解決と明記しています）: "
                + "、".join(result.unresolved),
                level="warning",
            )
        ctx.log(
            f"回答しました（サブタスク {len(result.subtasks)} 件、出典 {len(result.sources)} 件、"
            f"LLM {result.usage.calls} 回・{result.usage.total_tokens:,} トークン）"
        )
        return {
            "answer": result.answer,
            "status": result.status,
            "sources": [source.model_dump(mode="json") for source in result.sources],
            "result": result.model_dump(mode="json"),
        }


def _question(inputs: dict[str, Any]) -> str:
    return text_value(
        inputs.get("question"),
        "question",
        "質問（question）が空です。",
        "question にヘルプデスクへの質問を日本語で書いてください"
        "（例: パスワードを忘れたときの再設定方法は？）。",
    )


def _k(inputs: dict[str, Any]) -> int:
    k = positive_int(given(inputs, "k", DEFAULT_K), "k", "1 回の検索で取り出す件数")
    if k > MAX_K:
        raise input_error(
            f"k '{k}' が大きすぎます（上限 {MAX_K}）。",
            f"k には 1〜{MAX_K} の整数を指定してください（既定: {DEFAULT_K}）。",
            field="k",
        )
    return k
