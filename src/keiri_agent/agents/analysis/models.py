"""Seed 000's models, under the seed's names: artifacts, LLM outputs, results, the report and
the LangGraph state. ``DataFrameInfo`` (the prompt's view of a table) lives in ``dfinfo``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal

import pandas as pd
from langchain_core.messages import BaseMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.agents.analysis.dfinfo import DataFrameInfo

__all__ = [
    "ACTION_WORDS",
    "MAX_LOOPS",
    "AgentState",
    "CodeGenOutput",
    "DataFrameInfo",
    "ExecutionResult",
    "ExpectedOutput",
    "NextAction",
    "ReasonOutput",
    "ReportOutput",
    "ReportSection",
]

# Seed 000: at most 5 ReAct loops per request; beyond that the intermediate results are reported.
MAX_LOOPS = 5

NextAction = Literal["ask", "act", "finalize"]
# What each next action is to a person (the 判断 line of the progress, a reply's problems)
ACTION_WORDS: Final[dict[str, str]] = {
    "ask": "ユーザーに質問する",
    "act": "分析を進める",
    "finalize": "レポートにまとめる",
}


class ExpectedOutput(BaseModel):
    """コード生成時に定義される出力のメタデータ"""

    file_name: str = Field(description="作業ディレクトリ内のファイル名（例: region_sales.png）")
    description: str = Field(description="出力の説明（例: 地域別売上の棒グラフ）")
    output_type: Literal["figure", "table"] = Field(title="出力の種類")


class CodeGenOutput(BaseModel):
    """LLMのコード生成出力（構造化出力）"""

    code: str = Field(title="コード", description="実行する Python コード")
    expected_outputs: list[ExpectedOutput] = Field(
        title="出力ファイル",
        description="コードが作業ディレクトリに保存するファイル（図は PNG、表は CSV）",
    )


class ReasonOutput(BaseModel):
    """reasonノードのLLM出力（構造化出力）"""

    next_action: NextAction = Field(title="次の行動")
    instruction: str | None = Field(
        default=None, title="分析指示", description="act のときの具体的な分析指示"
    )
    question: str | None = Field(
        default=None, title="質問", description="ask のときのユーザーへの質問"
    )
    assumption: str | None = Field(default=None, description="置いた仮定があれば")
    rationale: str = Field(description="判断理由")


class ExecutionResult(BaseModel):
    """コード実行結果"""

    success: bool
    code: str
    stdout: str | None = None
    error: str | None = None
    outputs: list[ExpectedOutput] = Field(default_factory=list)
    instruction: str | None = None  # the instruction this code was written for
    files_created: list[str] = Field(default_factory=list)  # what the sandbox saw written
    duration_s: float | None = None


class ReportSection(BaseModel):
    """レポートの1セクション"""

    section_type: Literal["text", "image", "table"] = Field(title="セクションの種類")
    content: str = Field(
        title="内容",
        description="text: Markdown / image: ファイル名 / table: JSON（レコードの配列）",
    )
    description: str | None = Field(default=None, description="画像や表の説明")


class ReportOutput(BaseModel):
    """LLMのレポート生成出力（構造化出力）

    Extends the seed with ``conclusion`` and ``evidence``: the seed requires both in every
    report, and making them fields lets structured output enforce it.
    """

    title: str = Field(title="表題")
    conclusion: str = Field(description="結論（ユーザーの問いへの答え）")
    evidence: list[str] = Field(min_length=1, description="結論の根拠（数値・図表にもとづく）")
    sections: list[ReportSection] = Field(title="セクション")
    suggestions: list[str] | None = Field(default=None, description="追加の深掘り分析の提案")


class AgentState(BaseModel):
    """LangGraph State（会話は呼び出し側が保持し、チェックポインタは使わない）"""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    messages: Annotated[Sequence[BaseMessage], add_messages] = Field(default_factory=list)
    # DataFrames are kept here but never put into a prompt; df_info is their prompt view.
    df: pd.DataFrame | None = None
    dfs: dict[str, pd.DataFrame] = Field(default_factory=dict)
    df_info: DataFrameInfo | None = None
    dfs_info: list[DataFrameInfo] = Field(default_factory=list)
    next_action: NextAction | None = None
    loop_count: int = 0
    instruction: str | None = None
    question: str | None = None
    execution_results: list[ExecutionResult] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    workspace_dir: str | None = None
    final_report: ReportOutput | None = None
    report_path: str | None = None
    forced_report: bool = False  # the loop limit, not the model, ended the analysis
    turn_start: int = 0  # index in execution_results of this turn's first run
    grounded: bool | None = None  # the report rests on a run of this turn that showed output
    japanese: bool | None = None  # the report body is in Japanese

    def frames(self) -> dict[str, Any]:
        """Every DataFrame by name (``df`` is the first)."""
        if self.dfs:
            return dict(self.dfs)
        return {"df": self.df} if self.df is not None else {}
