"""The data analysis agent of seed 000: a ReAct graph that writes pandas code, runs it in the
sandbox and reports in Japanese with charts.

``build_graph()`` gives the LangGraph graph; ``AnalysisSession`` keeps one conversation
(``ask(text) -> TurnResult``). The CLI (``keiri-agent analyze``) and the Streamlit page use both.
"""

from __future__ import annotations

from keiri_agent.agents.analysis.dfinfo import DataFrameInfo
from keiri_agent.agents.analysis.graph import NO_DATA_QUESTION, AnalysisContext, build_graph
from keiri_agent.agents.analysis.models import (
    MAX_LOOPS,
    AgentState,
    CodeGenOutput,
    ExecutionResult,
    ExpectedOutput,
    ReasonOutput,
    ReportOutput,
    ReportSection,
)
from keiri_agent.agents.analysis.report import REPORT_FILE, render_markdown
from keiri_agent.agents.analysis.session import AnalysisSession, TurnResult, TurnStatus

__all__ = [
    "MAX_LOOPS",
    "NO_DATA_QUESTION",
    "REPORT_FILE",
    "AgentState",
    "AnalysisContext",
    "AnalysisSession",
    "CodeGenOutput",
    "DataFrameInfo",
    "ExecutionResult",
    "ExpectedOutput",
    "ReasonOutput",
    "ReportOutput",
    "ReportSection",
    "TurnResult",
    "TurnStatus",
    "build_graph",
    "render_markdown",
]
