"""``ai.analyze_data``: seed 000's data analysis agent as a plan node (issue 7).

The block is a thin driver of :class:`~keiri_agent.agents.analysis.AnalysisSession`, the same
session the CLI and the Streamlit page use: files go through ``add_file`` (the file layer),
record tables through ``add_frame``, and the question is one ``ask``. The session's workspace is
the node's ``ctx.work_dir()``, so the report, the charts and the CSVs the generated code writes
stay with the run.

Everything the agent needs from outside comes from the node: its LLM clients are
``ctx.llm(reason|codegen|report)`` (the node's settings), its events go to ``ctx.events`` under
the node's id through ``ctx.agent_events()`` (``events.node_events``: the graph's own step names
stay in ``stage.step``), and the sandbox limits may be narrowed per node. Those events are its
cancellation points (a step starting, generated code about to run), which stop the agent between
steps with a CANCELLED BlockError; code already running when the node is cancelled is killed at
once (``AnalysisContext.cancel``: the node's ``cancel_event``; only this node's sandbox jail is
stopped, the process-wide executor goes on serving other runs).

No silent success (seed 002 §1): a turn that ends with the agent's question (nobody can answer
it inside a plan), or whose every code run failed, is a BlockError carrying the agent's own
explanation; a report forced by the loop limit after some successful runs is returned with a
warning and ``summary.forced_report``. A report that no code run with visible output backs (the
turn is *unverified*: its figures may be the model's own) fails the node with
``RESULT_UNVERIFIED``, unless the plan sets ``allow_unverified: true``: then the report is
returned with a warning and ``grounded: false``, an output a ``when`` can branch on (it is
``true`` for every other report the block returns).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.table.records import records_from, to_frame, to_records
from keiri_agent.config import LLMRole
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import BlockError, ErrorCode, input_error

if TYPE_CHECKING:
    import pandas as pd

    from keiri_agent.agents.analysis import ExecutionResult, TurnResult
    from keiri_agent.blocks.spec import BlockSpec
    from keiri_agent.sandbox import SandboxExecutor, SandboxProfile

__all__ = ["CHART_SUFFIXES", "MAX_OUTPUT_TABLE_ROWS", "AnalyzeDataBlock"]

CHART_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp"})
TABLE_SUFFIXES = frozenset({".csv", ".tsv"})
# Larger result tables stay as CSV files in the work dir instead of travelling as records.
MAX_OUTPUT_TABLE_ROWS = 10_000
MAX_ERROR_CHARS = 2_000  # of the last code error kept in a BlockError's details
_UNVERIFIED_PLAN_HINT = (
    "未検証のレポートも後続のノードで扱うときは、このノードに allow_unverified: true を指定し、"
    '出力 grounded で分岐してください（例: when: "${analyze.grounded}"）。'
)
_NO_DATA_HINT = (
    "files に CSV / Excel ファイルのパスを、または tables に {名前: レコードのリスト} を指定してください"
    "（例: tables: {売上: ${extract.records}}）。"
)


class AnalyzeDataBlock(ProcessingBlock):
    """Runs one analysis request over the given files and tables; returns the report."""

    def __init__(self, spec: BlockSpec, *, executor: SandboxExecutor | None = None) -> None:
        super().__init__(spec)
        self._executor = executor  # None: the process-wide sandbox executor

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _parse(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        from keiri_agent.agents.analysis import AnalysisContext, AnalysisSession
        from keiri_agent.sandbox import default_executor

        question, named, tables, profile = _parse(inputs)
        # Read where the run may read (ctx.access), before anything starts; the i-th entry is
        # named in a refusal.
        files = [
            ctx.access.read(text, "files" if len(named) == 1 else f"files[{index}]")
            for index, text in enumerate(named)
        ]
        ctx.check_cancelled()
        started = time.perf_counter()
        workspace = ctx.work_dir()
        session = AnalysisSession(
            workspace=workspace,
            context=AnalysisContext(
                reason_llm=ctx.llm(LLMRole.REASON),
                codegen_llm=ctx.llm(LLMRole.CODEGEN),
                report_llm=ctx.llm(LLMRole.REPORT),
                executor=self._executor or default_executor(),
                profile=profile,
                cancel=ctx.cancel_event,  # kills the node's running code, not other runs'
            ),
        )
        # All or none; the file layer's BlockError passes through.
        for path, info in zip(files, session.add_files(files), strict=True):
            ctx.log(
                f"読み込みました: {path.name}（{info.shape[0]:,} 行 × {info.shape[1]} 列、{info.name}）"
            )
            for note in info.notes:  # units made yen, total rows left out...
                ctx.log(f"{path.name}: {note}")
        for name, rows in tables.items():
            frame, notes = _frame(rows)
            info = session.add_frame(name, frame, notes=notes)
            ctx.log(
                f"表 {name} を登録しました（{info.shape[0]:,} 行 × {info.shape[1]} 列、{info.name}）"
            )
            for note in info.notes:
                ctx.log(f"{name}: {note}")

        events = ctx.agent_events()
        turn = session.ask(question, events=events)
        _raise_if_failed(turn, question, llm_calls=events.llm_calls, tokens=events.tokens)
        assert turn.final_report is not None
        assert turn.report_path is not None
        grounded = turn.status != "unverified"
        if not grounded:
            _unverified(turn, ctx, allowed=bool(given(inputs, "allow_unverified", False)))
        if turn.forced_report:
            ctx.log(
                "ループの上限に達したため、途中までの結果をまとめたレポートです。", level="warning"
            )
        results, omitted = _result_tables(turn, ctx)
        failed = sum(1 for r in turn.execution_results if not r.success)
        summary = {
            "steps": turn.loop_count,
            "code_runs": len(turn.execution_results),
            "errors": failed,
            "llm_calls": events.llm_calls,
            "tokens": events.tokens,
            "elapsed": round(time.perf_counter() - started, 3),
            "forced_report": turn.forced_report,
            "grounded": grounded,
            "workspace": str(turn.workspace),
            "report_path": str(turn.report_path),
            "omitted_tables": omitted,
        }
        ctx.log(
            f"分析が完了しました（判断 {turn.loop_count} 回、コード実行 {len(turn.execution_results)} 回"
            f"（失敗 {failed} 回）、LLM {events.llm_calls} 回・{events.tokens:,} トークン）"
        )
        return {
            "report": turn.report_path.read_text(encoding="utf-8"),
            "answer": turn.final_report.conclusion,
            "charts": _charts(turn),
            "tables": results,
            "grounded": grounded,
            "summary": summary,
        }


def _parse(
    inputs: Mapping[str, Any],
) -> tuple[str, list[str], dict[str, Table | list[dict[str, Any]]], SandboxProfile]:
    """The question, files, tables and sandbox profile, or an INPUT_VALIDATION_FAILED."""
    question = _question(inputs)
    files, tables = _files(inputs.get("files")), _tables(inputs.get("tables"))
    if not files and not tables:
        raise input_error(
            "分析するデータ（files または tables）が指定されていません。", _NO_DATA_HINT
        )
    return question, files, tables, _profile(inputs)


def _question(inputs: Mapping[str, Any]) -> str:
    value = inputs.get("question")
    if not isinstance(value, str) or not value.strip():
        raise input_error(
            "分析の依頼文（question）が空です。",
            "question に分析したい内容を日本語で書いてください（例: 月別の売上推移をグラフにして）。",
            field="question",
        )
    return value.strip()


def _files(value: Any) -> list[str]:
    """The files' paths as given (looked up in ``run``, through ``ctx.access``)."""
    if value is None or value == "" or value == []:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
        raise input_error(
            "files にはファイルのパス（文字列）か、パスのリストを指定してください。",
            '例: files: "/path/to/売上.csv"  または  files: ["売上.csv", "経費.xlsx"]',
            field="files",
            value=repr(value)[:200],
        )
    return [v.strip() for v in items]


def _frame(rows: Table | list[dict[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    """A table for the agent, with what was done to it: a table read from a file keeps its
    types and has its amounts put in yen (``agents.ledger.in_yen``); records are taken as
    they are."""
    if not isinstance(rows, Table):
        return to_frame(rows), []
    from keiri_agent.agents.ledger import in_yen

    frame, notes, _ = in_yen(rows.frame, rows.units)
    return frame, notes


def _tables(value: Any) -> dict[str, Table | list[dict[str, Any]]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise input_error(
            f"tables がオブジェクトではありません（{type(value).__name__}）。",
            "tables には {名前: レコードのリスト} を指定してください（例: {売上: ${extract.records}}）。",
            field="tables",
        )
    tables: dict[str, Table | list[dict[str, Any]]] = {}
    for name, data in value.items():
        rows = data if isinstance(data, Table) else records_from(data, field=f"tables.{name}")
        if not len(rows):
            raise input_error(
                f"表 tables.{name} にレコードがありません（0 行）。",
                "上流のノードが 1 行以上の表を出力しているか確認するか、この表を tables から外してください。",
                field=f"tables.{name}",
            )
        tables[str(name)] = rows
    return tables


def _profile(inputs: Mapping[str, Any]) -> SandboxProfile:
    from keiri_agent.sandbox import ANALYSIS

    limits = {name: inputs.get(name) for name in ("cpu_seconds", "wall_seconds", "memory_mb")}
    for name, number in limits.items():
        if number is not None and (isinstance(number, bool) or not isinstance(number, int | float)):
            raise input_error(
                f"{name} '{number}' は数値ではありません。",
                f"{name} には 1 以上の数値を指定してください（省略時はサンドボックスの既定値）。",
                field=name,
            )
    return ANALYSIS.with_overrides(
        cpu_seconds=int(limits["cpu_seconds"]) if limits["cpu_seconds"] is not None else None,
        wall_seconds=float(limits["wall_seconds"]) if limits["wall_seconds"] is not None else None,
        memory_mb=int(limits["memory_mb"]) if limits["memory_mb"] is not None else None,
    )


def _raise_if_failed(turn: TurnResult, question: str, **usage: int) -> None:
    """A question back to the user, or a report over nothing but failed code, is a failure."""
    details: dict[str, Any] = {"question": question, "workspace": str(turn.workspace), **usage}
    if turn.next_action == "ask":
        raise input_error(
            f"分析エージェントが確認を求めて止まりました: {turn.question}",
            "この確認への答え（指標・期間・集計方法など）を question に書き足して再実行してください。",
            **details,
            agent_question=turn.question,
        )
    if turn.final_report is None or turn.report_path is None or not turn.report_path.is_file():
        raise BlockError(
            "分析エージェントがレポートを作成せずに終了しました。",
            code=ErrorCode.INTERNAL_ERROR,
            hint="実行ログ（このノードのイベント）を確認し、再実行してください。",
            details={**details, "next_action": turn.next_action},
        )
    runs = turn.execution_results
    if runs and not any(r.success for r in runs):
        last = _last_error(runs)
        reason = (
            f"ループの上限に達するまでコード実行が {len(runs)} 回とも失敗しました"
            if turn.forced_report
            else f"コード実行が {len(runs)} 回とも失敗し、エージェントが分析を打ち切りました"
        )
        first_line = (last.strip().splitlines() or [""])[0][:200]
        raise BlockError(
            f"データ分析を完了できませんでした（{reason}）。"
            f"エージェントの説明: {turn.final_report.conclusion}",
            code=ErrorCode.LOOP_LIMIT_REACHED
            if turn.forced_report
            else ErrorCode.INPUT_VALIDATION_FAILED,
            hint=(
                f"最後のエラー: {first_line}。質問に列名・期間・集計方法を具体的に書くか、"
                "データの列名や値の形式を確認してから再実行してください。"
            ),
            details={
                **details,
                "code_runs": len(runs),
                "forced_report": turn.forced_report,
                "last_error": last[-MAX_ERROR_CHARS:],
                "report_path": str(turn.report_path),
            },
        )


def _unverified(turn: TurnResult, ctx: BlockContext, *, allowed: bool) -> None:
    """An unverified report: a RESULT_UNVERIFIED BlockError, or (``allow_unverified``) a
    warning in the node's log."""
    from keiri_agent.agents.analysis.honesty import UNVERIFIED_HINT, unverified_error

    if allowed:
        ctx.log(
            "出力のあるコード実行が 1 度も成功していないレポートです（未検証）。"
            "allow_unverified: true のため grounded: false として返します。",
            level="warning",
        )
        return
    assert turn.final_report is not None
    raise unverified_error(
        hint=f"{UNVERIFIED_HINT}{_UNVERIFIED_PLAN_HINT}",
        conclusion=turn.final_report.conclusion,
        code_runs=len(turn.execution_results),
        report_path=str(turn.report_path),
        workspace=str(turn.workspace),
    )


def _last_error(runs: list[ExecutionResult]) -> str:
    return next((r.error for r in reversed(runs) if r.error), "")


def _produced(turn: TurnResult, kind: str, suffixes: frozenset[str]) -> list[Path]:
    """Files of this turn's code runs: declared outputs of ``kind`` and files created with one
    of ``suffixes``, existing inside the workspace, in the order they were made."""
    root = turn.workspace.resolve()
    found: dict[Path, None] = {}
    for result in turn.execution_results:
        names = [o.file_name for o in result.outputs if o.output_type == kind]
        names += [n for n in result.files_created if Path(n).suffix.lower() in suffixes]
        for name in names:
            path = (root / name).resolve()
            if path.is_relative_to(root) and path.is_file() and path.suffix.lower() in suffixes:
                found.setdefault(path, None)
    return list(found)


def _charts(turn: TurnResult) -> list[str]:
    return [str(path) for path in _produced(turn, "figure", CHART_SUFFIXES)]


def _result_tables(
    turn: TurnResult, ctx: BlockContext
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """The CSV tables the code wrote, as records by file stem; too large or unreadable ones
    are listed (and logged) instead."""
    from keiri_agent.documents import read_table

    tables: dict[str, list[dict[str, Any]]] = {}
    omitted: list[dict[str, Any]] = []
    for path in _produced(turn, "table", TABLE_SUFFIXES):
        try:
            frame = read_table(path).df
        except BlockError as exc:
            omitted.append({"file": str(path), "reason": exc.message})
            ctx.log(f"結果の表 {path.name} を読み込めませんでした: {exc.message}", level="warning")
            continue
        if len(frame) > MAX_OUTPUT_TABLE_ROWS:
            reason = f"{len(frame):,} 行（上限 {MAX_OUTPUT_TABLE_ROWS:,} 行）"
            omitted.append({"file": str(path), "reason": reason})
            ctx.log(
                f"結果の表 {path.name} は {reason} のため tables に入れません。CSV を直接使ってください。",
                level="warning",
            )
            continue
        tables[path.stem] = to_records(frame)
    return tables, omitted
