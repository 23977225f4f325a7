"""A cancelled analysis turn names the step it stopped at as its progress says it, on every path.

A turn is stopped before a step starts (the flag was set during the previous step), during
the step's own LLM call (the code is then never started, or the report never saved), or while
its generated code runs. Whichever path raised it, the CANCELLED error's ``details.step`` is the
step's label (「コード生成・実行」), never its id (``code_exec``). The nodes are called directly
with an LLM that sets the flag while it answers; no code runs (the flag is set before the
sandbox would start it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langgraph.runtime import Runtime
from pydantic import BaseModel

from keiri_agent.agents.analysis import AnalysisContext
from keiri_agent.agents.analysis.graph import code_exec, reason, report
from keiri_agent.agents.analysis.models import (
    AgentState,
    CodeGenOutput,
    ReasonOutput,
    ReportOutput,
    ReportSection,
)
from keiri_agent.agents.analysis.progress import STEP_LABELS
from keiri_agent.errors import BlockError, ErrorCode

ANSWERS: dict[type[BaseModel], BaseModel] = {
    ReasonOutput: ReasonOutput(next_action="finalize", rationale="試験"),
    CodeGenOutput: CodeGenOutput(code="print('ran')\n", expected_outputs=[]),
    ReportOutput: ReportOutput(
        title="売上の集計",
        conclusion="売上は前月より増えました。",
        evidence=["合計 1,200 円"],
        sections=[ReportSection(section_type="text", content="取引先ごとの合計です。")],
    ),
}
NODES: dict[str, Callable[[AgentState, Runtime[AnalysisContext]], dict[str, Any]]] = {
    "reason": reason,
    "code_exec": code_exec,
    "report": report,
}


class _CancellingLLM:
    """Answers every call, setting the turn's cancel flag while it does (a stop that came
    during the call, after the call's own cancel check)."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel

    def bind(self, **_: Any) -> _CancellingLLM:
        return self

    def structured(self, schema: type[BaseModel], *_: Any, **__: Any) -> BaseModel:
        self.cancel.set()
        return ANSWERS[schema]


class _NoSandbox:
    def run(self, *_: Any, **__: Any) -> Any:
        raise AssertionError("the code of a cancelled turn was started")


def _raised(step: str, workspace: Path, *, before: bool) -> BlockError:
    cancel = threading.Event()
    if before:
        cancel.set()
    llm = _CancellingLLM(cancel)
    context = AnalysisContext(
        reason_llm=llm,  # type: ignore[arg-type]  # the LLM's two methods a node calls
        codegen_llm=llm,  # type: ignore[arg-type]
        report_llm=llm,  # type: ignore[arg-type]
        executor=_NoSandbox(),  # type: ignore[arg-type]
        cancel=cancel,
    )
    state = AgentState(
        dfs={"sales": pd.DataFrame({"取引先": ["あおば商事"], "金額": [1200]})},
        instruction="取引先ごとに合計する",
        workspace_dir=str(workspace),
    )
    with pytest.raises(BlockError) as raised:
        NODES[step](state, Runtime(context=context))
    return raised.value


@pytest.mark.parametrize(
    ("step", "before"),
    [
        ("reason", True),
        ("code_exec", True),
        ("report", True),
        ("code_exec", False),  # stopped as its code was about to run
        ("report", False),  # stopped while the report was written
    ],
)
def test_a_cancelled_turn_names_its_step_by_its_label(
    step: str, before: bool, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    error = _raised(step, workspace, before=before)
    assert error.code == ErrorCode.CANCELLED
    assert error.details["step"] == STEP_LABELS[step]
    assert step not in f"{error.message}{error.hint}"
    code_stopped = step == "code_exec" and not before  # said only where the code was to run
    assert ("実行中のコードは止めました" in error.message) == code_stopped, error.message
    assert not list(workspace.iterdir())  # no report saved, nothing written
