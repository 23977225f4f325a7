"""``AnalysisSession``: one conversation with the analysis agent, kept by its caller.

The session owns what the seed keeps in ``st.session_state``: the messages, the DataFrames
(``df`` is the first, ``dfs`` all by name), their prompt views, the accumulated execution
results and assumptions, and the workspace ``<root>/<yyyymmddhhmmss>/`` created at the first
upload or question. ``ask(text)`` runs the graph once (one user message = one invoke) and
returns a ``TurnResult``; answering the agent's question is just the next ``ask``.

A turn that fails (an LLM error, the turn's deadline) raises its ``BlockError`` with what the
turn had produced so far in ``details["turn"]`` (runs, files; the same keys as
``TurnResult.to_dict``), so nothing the user already paid for is lost.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

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
from keiri_agent.agents.ledger import read_ledger
from keiri_agent.agents.staging import staged
from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.events import EventEmitter, EventStream, RunEvent, open_run
from keiri_agent.events.follow import run_following
from keiri_agent.privacy import job_scope
from keiri_agent.workspace import new_session_dir

__all__ = [
    "AGENT_ID",
    "STOP_WAIT_S",
    "AnalysisSession",
    "TurnResult",
    "TurnStatus",
    "loading_stopped_error",
    "stopped_error",
]

AGENT_ID = "analysis"
# How long a caller that stops a turn waits for it to end: running code is killed at once, an
# LLM call in flight is waited for (the turn then ends before its next step).
STOP_WAIT_S: Final = 10.0
GRAPH_RECURSION_LIMIT = 40  # 5 loops of reason+code_exec plus report, with room to spare

# How a turn ended: a report backed by a run that showed output, the agent's question, or a
# report that no such run backs (``honesty``). A failed turn raises instead (``"error"`` in
# the ``turn`` its BlockError carries).
TurnStatus = Literal["success", "question", "unverified"]


def stopped_error(
    *, how: str = "", ended: bool = True, kept: str = "", saved: Path | None = None
) -> BlockError:
    """What the person who stopped a turn (:meth:`AnalysisSession.stop`) is told: the turn's
    report and runs were not saved. ``how`` they stopped it (``（Ctrl-C）``), whether the turn had ``ended``
    within the wait, and what they ``kept``; ``saved``: the report of a turn that had ended
    well before the stop reached it (then it is said that it was kept)."""
    if saved is not None:
        return BlockError(
            f"分析を中止しました{how}が、このターンは中止の前に終わっていたため、"
            f"レポート {saved} と実行記録は保存しています。",
            code=ErrorCode.CANCELLED,
            hint=kept + "レポートを開いて確認してください。",
            recoverable=True,
        )
    what = "実行中の処理とコードは止め、" if ended else ""
    return BlockError(
        f"分析を中止しました{how}。{what}このターンのレポートと実行記録は"
        "保存していません（書きかけのファイルはありません）。",
        code=ErrorCode.CANCELLED,
        hint=kept + "続けるには、同じ質問をもう一度実行してください。",
        recoverable=True,
    )


def loading_stopped_error(*, how: str = "") -> BlockError:
    """What the person who stopped the first :meth:`AnalysisSession.add_files` of a session
    (``how``: ``（Ctrl-C）``) is told: nothing of the load was kept, no workspace was made."""
    return BlockError(
        f"データの読み込みを中止しました{how}。作業ディレクトリは作成していません"
        "（書きかけのファイルはありません）。",
        code=ErrorCode.CANCELLED,
        hint="続けるには、同じコマンドをもう一度実行してください。",
        recoverable=True,
    )


def _idle_event() -> threading.Event:
    idle = threading.Event()
    idle.set()
    return idle


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
    grounded: bool | None = None  # None: no report this turn
    japanese: bool | None = None
    # Personal data masked before this turn's LLM calls: kind → distinct values (never values).
    masked: dict[str, int] = field(default_factory=dict)

    @property
    def status(self) -> TurnStatus:
        if self.next_action == "ask":
            return "question"
        return "unverified" if self.grounded is False else "success"

    @property
    def files(self) -> list[Path]:
        """The files this turn's runs saved (charts, tables), in the order they were made."""
        seen: dict[Path, None] = {}
        for result in self.execution_results:
            for name in result.files_created:
                seen.setdefault(self.workspace / name, None)
        return list(seen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "grounded": self.grounded,
            "japanese": self.japanese,
            "workspace": str(self.workspace),
            "report_path": str(self.report_path) if self.report_path else None,
            "next_action": self.next_action,
            "question": self.question,
            "loop_count": self.loop_count,
            "final_report": self.final_report.model_dump() if self.final_report else None,
            "execution_results": [r.model_dump() for r in self.execution_results],
            "files": [str(path) for path in self.files],
            "forced_report": self.forced_report,
            "run_log": str(self.run_log) if self.run_log else None,
            "masked": dict(self.masked),
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
    copies: list[Path] = field(default_factory=list)  # of the loaded files, in loading order
    _masked: dict[str, int] = field(default_factory=dict, repr=False)  # of the last turn
    _cancel: threading.Event | None = field(default=None, repr=False)  # the running turn's
    _idle: threading.Event = field(default_factory=_idle_event, repr=False)  # set: no turn runs
    _saved: Path | None = field(default=None, repr=False)  # the report the last turn saved

    def _workspace(self) -> Path:
        if self.workspace is None:
            self.workspace = new_session_dir(self.workspace_root)
        return self.workspace

    def add_file(self, source: Path | str | bytes, *, name: str | None = None) -> DataFrameInfo:
        """Load one file (:meth:`add_files`)."""
        return self.add_files([source], names=[name])[0]

    def add_files(
        self, sources: Sequence[Path | str | bytes], *, names: Sequence[str | None] = ()
    ) -> list[DataFrameInfo]:
        """Load CSV/TSV/Excel files (any Japanese encoding) as the plan blocks read them --
        title rows skipped, total rows left out, amounts and dates typed -- with amounts in yen
        (``agents.ledger``), and keep a copy of each in the workspace (:attr:`copies`) under a
        name of its own: a name taken there by other bytes -- an earlier file (each month's
        ``download.csv``) or a table a turn wrote -- gets ``_2``, ``_3``... before its
        suffix, so no copy replaces another file. What the reading did is in each returned
        info's ``notes`` (and so in every prompt). ``names[i]`` names ``sources[i]`` (needed
        for bytes).

        All or nothing: the copies are staged (``agents.staging``) and reach the workspace only
        once every file was read, so an unreadable file, a cancel or Ctrl+C while loading leaves
        the workspace as it was -- and no workspace at all when this call made it."""
        labels = [
            (names[i] if i < len(names) else None)
            or (Path(source).name if not isinstance(source, bytes) else "data.csv")
            for i, source in enumerate(sources)
        ]
        if not sources:
            return []
        new = self.workspace is None  # then made by this call, for these files alone
        workspace = self.workspace or new_session_dir(self.workspace_root)
        with staged(workspace, made=new) as staging:  # a new workspace left empty is removed
            taken = {entry.name: entry for entry in workspace.iterdir()}
            tables = []
            copies = []
            for source, label in zip(sources, labels, strict=True):
                tables.append(read_ledger(source, name=label))
                data = source if isinstance(source, bytes) else Path(source).read_bytes()
                copy = staging.path / _copy_name(Path(label).name, data, taken)
                copy.write_bytes(data)
                taken[copy.name] = copy
                copies.append(copy)
            published = staging.publish(copies)
        self.workspace = workspace
        self.copies += published
        return [
            self.add_frame(Path(label).stem, table.frame, notes=table.notes)
            for label, table in zip(labels, tables, strict=True)
        ]

    def add_frame(
        self, name: str, frame: pd.DataFrame, *, notes: list[str] | None = None
    ) -> DataFrameInfo:
        """Register a DataFrame; the name becomes its key in ``dfs`` (made a valid identifier).
        ``notes``: what was done to the table on reading, told to the model with it."""
        key = _identifier(name, taken=set(self.frames))
        self.frames[key] = frame
        self.infos[key] = DataFrameInfo.from_frame(frame, name=f'dfs["{key}"]', notes=notes)
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
            turn_start=len(self.execution_results),
        )

    def _first_as_df(self, name: str) -> DataFrameInfo:
        info = self.infos[name]
        if name == next(iter(self.frames)):
            return info.model_copy(update={"name": f'df（= dfs["{name}"]）'})
        return info

    def ask(
        self,
        text: str,
        *,
        events: EventEmitter | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
        on_idle: Callable[[], None] | None = None,
    ) -> TurnResult:
        """Run one turn for the user's ``text`` and return what it produced.

        Events go to ``events`` when given, else to a new run log under ``runs/analysis/``.
        With ``on_event`` (and no ``events``) the graph runs in a worker thread while every
        event is handed to ``on_event`` in the calling thread as it happens (the CLI prints
        them; Streamlit may only draw from its script thread), and ``on_idle`` there whenever
        no event came for a while (``run_following``). The conversation changes only when the
        turn succeeds: a failed turn can simply be asked again. :meth:`stop` cancels the turn.
        """
        if not text.strip():
            raise input_error(
                "質問が空です。",
                "分析したい内容を日本語で入力してください（例: 月別の売上推移をグラフにして）。",
            )
        if events is not None and on_event is not None:
            raise ValueError("on_event reads the session's own run log; do not pass events too")
        stream = open_run(AGENT_ID, runs_dir=self.runs_dir) if events is None else None
        emitter: EventEmitter = events if events is not None else stream  # type: ignore[assignment]
        # The caller's own flag (a server task's cancel), else one for this turn alone.
        self._cancel = (self.context.cancel if self.context else None) or threading.Event()
        self._saved = None
        self._idle.clear()  # set again by the turn's own thread when it ends
        if on_event is None:
            try:
                final = self._invoke(text, emitter)
            finally:
                if stream is not None:
                    stream.close()
        else:
            assert stream is not None
            final = self._invoke_streaming(text, stream, on_event, on_idle)
        self.messages = list(final.messages)
        self.execution_results = list(final.execution_results)
        self.assumptions = list(final.assumptions)
        turn = self._turn(final, stream.log_path if stream is not None else None)
        turn.masked = self._masked
        return turn

    @property
    def running(self) -> bool:
        """Whether a turn runs now (in any thread)."""
        return not self._idle.is_set()

    def stop(self, wait_s: float) -> bool:
        """Cancel the running turn: its generated code is killed at once and it ends with
        CANCELLED, its report and runs recorded nowhere (a step waiting for its LLM call ends
        when the call returns). Waits up to ``wait_s`` seconds for the turn to end; True once
        no turn runs."""
        if self._cancel is not None:
            self._cancel.set()
        return self._idle.wait(wait_s)

    def _turn(self, state: AgentState, run_log: Path | None) -> TurnResult:
        return TurnResult(
            workspace=self._workspace(),
            next_action=state.next_action,
            question=state.question,
            loop_count=state.loop_count,
            final_report=state.final_report,
            report_path=Path(state.report_path) if state.report_path else None,
            execution_results=list(state.execution_results[state.turn_start :]),
            forced_report=state.forced_report,
            run_log=run_log,
            grounded=state.grounded,
            japanese=state.japanese,
        )

    @property
    def saved_report(self) -> Path | None:
        """The report the last turn saved: a :meth:`stop` that came after it learns that the
        turn had ended well all the same."""
        return self._saved

    def _invoke(self, text: str, events: EventEmitter) -> AgentState:
        try:
            final = self._run_graph(text, events)
            self._saved = Path(final.report_path) if final.report_path else None
            return final
        finally:
            self._idle.set()  # in the turn's own thread: the turn has ended

    def _run_graph(self, text: str, events: EventEmitter) -> AgentState:
        state = self._state()
        state.messages = [*state.messages, HumanMessage(text)]
        base = self.context or AnalysisContext()
        settings = load_settings()
        timeout_s = settings.keiri_analysis_turn_timeout_s
        context = dataclasses.replace(
            base,
            events=events,
            deadline=time.monotonic() + timeout_s,
            timeout_s=timeout_s,
            cancel=self._cancel,
        )
        last: Any = state
        # One turn, one set of placeholders; the tables' personal columns are known by header
        # before any preview or printed output is sent.
        redactor = getattr(events, "redactor", None)
        learnt = redactor.learn_personal if redactor is not None else None
        try:
            with job_scope(learnt=learnt) as vault:
                if settings.keiri_llm_mask_pii:
                    for frame in self.frames.values():
                        vault.learn_table(frame)
                try:
                    for values in build_graph().stream(
                        state,
                        context=context,
                        config={"recursion_limit": GRAPH_RECURSION_LIMIT},
                        stream_mode="values",
                    ):
                        last = values
                finally:
                    self._masked = vault.counts()
        except BlockError as exc:
            partial = AgentState.model_validate(last) if isinstance(last, dict) else last
            turn = self._turn(partial, getattr(events, "log_path", None)).to_dict()
            turn["status"] = "error"
            turn["masked"] = self._masked
            exc.details["turn"] = turn
            raise
        return AgentState.model_validate(last) if isinstance(last, dict) else last

    def _invoke_streaming(
        self,
        text: str,
        stream: EventStream,
        on_event: Callable[[RunEvent], None],
        on_idle: Callable[[], None] | None,
    ) -> AgentState:
        return run_following(
            stream,
            lambda: self._invoke(text, stream),
            on_event,
            name="keiri-analysis-turn",
            on_idle=on_idle,
        )


def _copy_name(name: str, data: bytes, taken: dict[str, Path]) -> str:
    """``name``, or ``<stem>_<n><suffix>`` with the first n from 2, unless ``taken`` (name →
    the file holding it now) has other bytes under it: the same file loaded again (a node
    run again in its folder) is its own copy, not a new one."""
    path, candidate, n = Path(name), name, 2
    while candidate in taken and not _holds(taken[candidate], data):
        candidate, n = f"{path.stem}_{n}{path.suffix}", n + 1
    return candidate


def _holds(path: Path, data: bytes) -> bool:
    """Whether the file ``path`` holds exactly ``data``."""
    try:
        return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _identifier(name: str, *, taken: set[str]) -> str:
    base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name).strip("_") or "data"
    if base[0].isdigit():
        base = f"data_{base}"
    key, n = base, 2
    while key in taken:
        key, n = f"{base}_{n}", n + 1
    return key
