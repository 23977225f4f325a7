"""``AnalysisSession``: one conversation with the analysis agent, kept by its caller.

The session owns what the seed keeps in ``st.session_state``: the messages, the DataFrames
(``df`` is the first, ``dfs`` all by name), their prompt views, the accumulated execution
results and assumptions, and the workspace ``<root>/<yyyymmddhhmmss>/`` created at the first
upload or question. ``ask(text)`` runs the graph once (one user message = one invoke) and
returns a ``TurnResult``; answering the agent's question is just the next ``ask``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.messages import BaseMessage, HumanMessage

from keiri_agent.agents.analysis.graph import AnalysisContext, build_graph
from keiri_agent.agents.analysis.models import (
    AgentState,
    DataFrameInfo,
    ExecutionResult,
    NextAction,
    ReportOutput,
)
from keiri_agent.documents import read_table
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventEmitter, open_run
from keiri_agent.workspace import new_session_dir

__all__ = ["AGENT_ID", "AnalysisSession", "TurnResult"]

AGENT_ID = "analysis"
GRAPH_RECURSION_LIMIT = 40  # 5 loops of reason+code_exec plus report, with room to spare


@dataclass
class TurnResult:
    """What one ``ask`` produced."""

    workspace: Path
    next_action: NextAction | None
    question: str | None
    loop_count: int
    final_report: ReportOutput | None
    report_path: Path | None
    execution_results: list[ExecutionResult]  # this turn's only
    forced_report: bool = False
    run_log: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": str(self.workspace),
            "report_path": str(self.report_path) if self.report_path else None,
            "next_action": self.next_action,
            "question": self.question,
            "loop_count": self.loop_count,
            "final_report": self.final_report.model_dump() if self.final_report else None,
            "execution_results": [r.model_dump() for r in self.execution_results],
            "forced_report": self.forced_report,
            "run_log": str(self.run_log) if self.run_log else None,
        }


@dataclass
class AnalysisSession:
    """A multi-turn analysis conversation (the CLI's session object, the UI's session state)."""

    workspace_root: Path | None = None
    context: AnalysisContext | None = None
    runs_dir: Path | None = None
    messages: list[BaseMessage] = field(default_factory=list)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    infos: dict[str, DataFrameInfo] = field(default_factory=dict)
    execution_results: list[ExecutionResult] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    workspace: Path | None = None

    def _workspace(self) -> Path:
        if self.workspace is None:
            self.workspace = new_session_dir(self.workspace_root)
        return self.workspace

    def add_file(self, source: Path | str | bytes, *, name: str | None = None) -> DataFrameInfo:
        """Load a CSV/TSV/Excel file (any Japanese encoding) and keep a copy in the workspace."""
        label = name or (Path(source).name if not isinstance(source, bytes) else "data.csv")
        table = read_table(source, name=label)
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        (self._workspace() / Path(label).name).write_bytes(data)
        return self.add_frame(Path(label).stem, table.df)

    def add_frame(self, name: str, frame: pd.DataFrame) -> DataFrameInfo:
        """Register a DataFrame; the name becomes its key in ``dfs`` (made a valid identifier)."""
        key = _identifier(name, taken=set(self.frames))
        self.frames[key] = frame
        self.infos[key] = DataFrameInfo.from_frame(frame, name=f'dfs["{key}"]')
        self._workspace()
        return self.infos[key]

    def _state(self) -> AgentState:
        names = list(self.frames)
        first = names[0] if names else None
        return AgentState(
            messages=list(self.messages),
            df=self.frames[first] if first else None,
            dfs=dict(self.frames),
            df_info=self.infos[first] if first else None,
            dfs_info=[self._first_as_df(n) for n in names],
            execution_results=list(self.execution_results),
            assumptions=list(self.assumptions),
            workspace_dir=str(self._workspace()),
        )

    def _first_as_df(self, name: str) -> DataFrameInfo:
        info = self.infos[name]
        if name == next(iter(self.frames)):
            return info.model_copy(update={"name": f'df（= dfs["{name}"]）'})
        return info

    def ask(self, text: str, *, events: EventEmitter | None = None) -> TurnResult:
        """Run one turn for the user's ``text`` and return what it produced."""
        if not text.strip():
            raise BlockError(
                "質問が空です。",
                code=ErrorCode.INPUT_VALIDATION_FAILED,
                hint="分析したい内容を日本語で入力してください（例: 月別の売上推移をグラフにして）。",
            )
        self.messages.append(HumanMessage(text))
        state = self._state()
        stream = None
        if events is None:
            stream = open_run(AGENT_ID, runs_dir=self.runs_dir)
            events = stream
        base = self.context or AnalysisContext()
        context = AnalysisContext(
            reason_llm=base.reason_llm,
            codegen_llm=base.codegen_llm,
            report_llm=base.report_llm,
            executor=base.executor,
            events=events,
            profile=base.profile,
        )
        before = len(self.execution_results)
        try:
            raw = build_graph().invoke(
                state, context=context, config={"recursion_limit": GRAPH_RECURSION_LIMIT}
            )
        finally:
            if stream is not None:
                stream.close()
        final = AgentState.model_validate(raw) if isinstance(raw, dict) else raw
        self.messages = list(final.messages)
        self.execution_results = list(final.execution_results)
        self.assumptions = list(final.assumptions)
        return TurnResult(
            workspace=self._workspace(),
            next_action=final.next_action,
            question=final.question,
            loop_count=final.loop_count,
            final_report=final.final_report,
            report_path=Path(final.report_path) if final.report_path else None,
            execution_results=self.execution_results[before:],
            forced_report=final.forced_report,
            run_log=stream.log_path if stream is not None else None,
        )


def _identifier(name: str, *, taken: set[str]) -> str:
    base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_") or "data"
    if base[0].isdigit():
        base = f"data_{base}"
    key, n = base, 2
    while key in taken:
        key, n = f"{base}_{n}", n + 1
    return key
