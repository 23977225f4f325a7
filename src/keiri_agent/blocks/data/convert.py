"""``data.convert``: seed 003's conversion and visualisation pipeline as a plan node (issue 10).

The block is a thin driver of :func:`~keiri_agent.agents.convert.pipeline.run_convert`, the
same entry point the CLI, the Streamlit 変換 page and the SSE server use. The request is
interpreted by ``ctx.llm(interpret)`` and the CodeAct fallback writes code with
``ctx.llm(codeact)`` (the node's settings); the results go to ``out_dir`` (default: the node's
work directory); the pipeline's events become this node's events through ``ctx.agent_events()``
(``events.node_events``: ``stage.step`` keeps the pipeline's step, and a step starting after the
node was cancelled is stopped there). The node's cancel flag is the pipeline's too: a running
sandbox process is killed.
Local sources are read, and ``out_dir`` written, where the run may (``ctx.access``).

No silent success: a failed conversion raises its BlockError, an LLM API error is raised as
it is, and a result made by the CodeAct fallback is returned with a warning saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import path_text, text_value
from keiri_agent.config import LLMRole
from keiri_agent.errors import BlockError, input_error

if TYPE_CHECKING:
    from keiri_agent.blocks.spec import BlockSpec
    from keiri_agent.sandbox import SandboxExecutor

__all__ = ["ConvertBlock"]


class ConvertBlock(ProcessingBlock):
    """Converts or plots the files a request names; returns the files and the answer."""

    def __init__(self, spec: BlockSpec, *, executor: SandboxExecutor | None = None) -> None:
        super().__init__(spec)
        # None: a private sandbox per run, started only if the fallback runs (cancellation
        # closes the executor, so a shared one would stop other nodes' code too).
        self._executor = executor

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _request(inputs)
        _source(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        from keiri_agent.agents.convert.pipeline import run_convert

        request, source = _request(inputs), _source(inputs)
        ctx.check_cancelled()
        raw_out = given(inputs, "out_dir", None)
        out_dir = (
            ctx.work_dir()
            if raw_out is None
            else ctx.access.write(
                path_text(
                    raw_out,
                    "out_dir",
                    "出力フォルダ（out_dir）が空です。",
                    "out_dir に結果を保存するフォルダを指定するか、省略してノードの作業フォルダを使ってください。",
                ),
                "out_dir",
                base=ctx.work_dir(),
            )
        )
        result = run_convert(
            request,
            source=source,
            out_dir=out_dir,
            settings=ctx.settings,
            events=ctx.agent_events(),
            cancel=ctx.cancel_event,
            llm=ctx.llm(LLMRole.INTERPRET),
            codeact_llm=ctx.llm(LLMRole.CODEACT),
            executor=self._executor,
            access=ctx.access,  # local sources (also one named in the request) are confined
        )
        if result.status == "cancelled":
            ctx.check_cancelled()
        if result.status == "waiting_input":  # a plan node cannot answer CodeAct's question
            raise input_error(
                f"CodeAct が確認の質問をしました: {result.question}",
                "質問への答えを依頼文（request）に書き足して再実行してください。",
                question=result.question,
            )
        if result.status != "success":
            raise BlockError.from_dict(result.error or {"message": result.answer})
        if result.used_fallback:
            ctx.log(
                f"標準の処理で対応できなかったため CodeAct（生成コード）で作成しました: "
                f"{result.fallback_reason}",
                level="warning",
            )
        ctx.log(f"{len(result.files)} 件のファイルを作成しました（{out_dir}）")
        return {
            "files": [str(path) for path in result.files],
            "answer": result.answer,
            "result": result.model_dump(mode="json"),
        }


def _request(inputs: dict[str, Any]) -> str:
    return text_value(
        inputs.get("request"),
        "request",
        "依頼文（request）が空です。",
        "request に変換またはグラフ化の内容を書いてください"
        "（例: 売上.csv を Parquet に変換して／月別の売上を棒グラフにして）。",
    )


def _source(inputs: dict[str, Any]) -> str | None:
    value = given(inputs, "source", None)
    if value is None:
        return None
    return text_value(
        value,
        "source",
        "入力の場所（source）が空です。",
        "source にファイル・フォルダーのパスか s3://バケット/プレフィックス を指定するか、"
        "省略して依頼文に書いてください。",
    )
