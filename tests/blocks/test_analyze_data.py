"""ai.analyze_data: the analysis agent as a block, against the scripted LLM and the real sandbox."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.agents.analysis import MAX_LOOPS
from keiri_agent.agents.analysis.honesty import UNVERIFIED_MESSAGE
from keiri_agent.blocks.ai.analyze_data import AnalyzeDataBlock
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.documents import read_table
from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from keiri_agent.events import EventStream, RunEvent
from keiri_agent.plan import PlanRunner
from keiri_agent.sandbox import SandboxExecutor
from tests.agents.kept_ledgers import kept_ledger, script_sums, wrong_figures
from tests.blocks.conftest import run_like_runner
from tests.support import ScriptedLLMServer

SALES_CSV = "取引先,金額,月\nあおば商事,120000,2024-04\nミドリ物産,80000,2024-04\nあおば商事,50000,2024-05\nさくら電機,30000,2024-05\n"
SALES_RECORDS = [
    {"取引先": "あおば商事", "金額": 120000, "月": "2024-04"},
    {"取引先": "ミドリ物産", "金額": 80000, "月": "2024-04"},
    {"取引先": "あおば商事", "金額": 50000, "月": "2024-05"},
    {"取引先": "さくら電機", "金額": 30000, "月": "2024-05"},
]

CHART_CODE = """import matplotlib.pyplot as plt
totals = {frame}.groupby("取引先")["金額"].sum().sort_values(ascending=False)
fig, ax = plt.subplots()
ax.bar(totals.index, totals.values)
ax.set_title("取引先別の売上合計")
fig.savefig("sales_by_vendor.png", dpi=60, bbox_inches="tight")
plt.close(fig)
totals.to_csv("sales_by_vendor.csv")
print(totals.to_dict())
"""
ACT = {
    "next_action": "act",
    "instruction": "取引先別の売上合計を棒グラフにする",
    "rationale": "集計が必要",
}
FINALIZE = {"next_action": "finalize", "rationale": "要求を満たした"}
REPORT = {
    "title": "取引先別の売上",
    "conclusion": "あおば商事の売上が最も大きく、170,000円でした。",
    "evidence": ["あおば商事 170,000円、ミドリ物産 80,000円、さくら電機 30,000円"],
    "sections": [
        {"section_type": "image", "content": "sales_by_vendor.png", "description": "取引先別売上"}
    ],
}


CODE_START_S = 300.0  # until generated code runs (a jail may start slowly on a loaded machine)
CANCELLED_WITHIN_S = 60.0  # well before the code's own 120 s sleep; generous for a loaded machine


def codegen(code: str, *files: tuple[str, str]) -> dict[str, Any]:
    outputs = [{"file_name": n, "description": "出力", "output_type": k} for n, k in files]
    return {"code": code, "expected_outputs": outputs}


def script_chart_analysis(llm_server: ScriptedLLMServer, frame: str) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(
        json=codegen(
            CHART_CODE.format(frame=frame),
            ("sales_by_vendor.png", "figure"),
            ("sales_by_vendor.csv", "table"),
        )
    )
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json=REPORT)


@pytest.fixture
def block(registry: BlockRegistry, sandbox_executor: SandboxExecutor) -> AnalyzeDataBlock:
    # The registry's own class, given the shared warm sandbox through its constructor.
    cls = type(registry.load("ai.analyze_data"))
    assert cls is AnalyzeDataBlock
    return AnalyzeDataBlock(registry.get("ai.analyze_data"), executor=sandbox_executor)


@pytest.fixture
def stream() -> EventStream:
    return EventStream("run-1", "plan-1")


@pytest.fixture
def ctx(public_dir: Path, stream: EventStream) -> BlockContext:
    # Under public_dir: the sandbox's unprivileged uid must be able to reach the work dir.
    return BlockContext(
        run_id="run-1",
        plan_id="plan-1",
        node_id="analyze",
        block_version="0.1.0",
        workspace=public_dir / "run",
        events=stream,
    )


def test_a_csv_question_gives_report_chart_tables_and_node_events(
    block: AnalyzeDataBlock,
    ctx: BlockContext,
    stream: EventStream,
    llm_server: ScriptedLLMServer,
    public_dir: Path,
) -> None:
    csv = public_dir / "売上.csv"
    csv.write_bytes(SALES_CSV.encode("cp932"))
    script_chart_analysis(llm_server, "df")
    out = run_like_runner(block, {"question": "取引先別の売上を比べて", "files": str(csv)}, ctx)
    assert llm_server.pending() == 0
    assert "## 結論" in out["report"]
    assert "あおば商事の売上が最も大きく" in out["report"]
    assert "![取引先別売上](sales_by_vendor.png)" in out["report"]
    assert out["answer"] == REPORT["conclusion"]
    (chart,) = out["charts"]
    work = ctx.work_dir().resolve()
    assert Path(chart).is_absolute()
    assert Path(chart).parent == work
    assert Path(chart).stat().st_size > 1000
    assert out["tables"] == {
        "sales_by_vendor": [
            {"取引先": "あおば商事", "金額": 170000},
            {"取引先": "ミドリ物産", "金額": 80000},
            {"取引先": "さくら電機", "金額": 30000},
        ]
    }
    summary = out["summary"]
    assert summary["steps"] == 2
    assert (summary["code_runs"], summary["errors"], summary["llm_calls"]) == (1, 0, 4)
    assert summary["tokens"] > 0
    assert summary["forced_report"] is False
    assert out["grounded"] is True
    assert summary["grounded"] is True
    assert Path(summary["report_path"]) == work / "report.md"
    # The agent's progress is this node's: every event carries the plan's node id.
    events = stream.events()
    assert {e.node_id for e in events} == {"analyze"}
    kinds = {e.event for e in events}
    assert {"stage", "code_gen", "code_exec", "llm_call", "log"} <= kinds
    steps = [getattr(e, "step", None) for e in events if e.event == "stage"]
    assert {"reason", "code_exec", "report"} <= set(steps)


def test_tables_from_upstream_records_are_analysed_by_name(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    script_chart_analysis(llm_server, 'dfs["売上"]')
    inputs = {"question": "取引先別の売上を比べて", "tables": {"売上": {"items": SALES_RECORDS}}}
    out = run_like_runner(block, inputs, ctx)
    assert out["answer"] == REPORT["conclusion"]
    assert [Path(c).name for c in out["charts"]] == ["sales_by_vendor.png"]
    assert Path(out["charts"][0]).is_file()
    assert out["tables"]["sales_by_vendor"][0] == {"取引先": "あおば商事", "金額": 170000}
    # The reason prompt described the table under its plan-given name.
    prompt = json.dumps(llm_server.chat_requests()[0]["messages"], ensure_ascii=False)
    assert 'dfs[\\"売上\\"]' in prompt
    assert "取引先" in prompt


def test_missing_files_and_tables_is_an_input_error(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    for inputs in ({"question": "売上を分析して"}, {"question": "売上を分析して", "files": []}):
        with pytest.raises(BlockError) as info:
            run_like_runner(block, inputs, ctx)
        assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
        hint = info.value.hint or ""
        assert "files" in hint
        assert "tables" in hint
    assert llm_server.chat_requests() == []


def test_bad_tables_are_input_errors(block: AnalyzeDataBlock, ctx: BlockContext) -> None:
    for tables, field in (({"売上": []}, "tables.売上"), ({"売上": {"x": 1}}, "tables.売上")):
        with pytest.raises(BlockError) as info:
            run_like_runner(block, {"question": "分析して", "tables": tables}, ctx)
        assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
        assert info.value.details["field"] == field


def test_a_missing_file_is_the_file_layers_error(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    missing = public_dir / "ない.csv"
    with pytest.raises(FileProcessingError) as info:
        run_like_runner(block, {"question": "分析して", "files": [str(missing)]}, ctx)
    assert info.value.code == ErrorCode.FILE_UNREADABLE
    assert "ない.csv" in info.value.message
    assert llm_server.chat_requests() == []


def test_files_load_all_or_none_an_unreadable_second_file_leaves_no_copy_of_the_first(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer, public_dir: Path
) -> None:
    good = public_dir / "売上.csv"
    good.write_text("取引先,金額\nあおば商事,120000\n", encoding="utf-8")
    broken = public_dir / "経費.xlsx"
    broken.write_bytes(b"this is not a workbook")
    with pytest.raises(FileProcessingError) as info:
        run_like_runner(block, {"question": "分析して", "files": [str(good), str(broken)]}, ctx)
    assert "経費.xlsx" in info.value.message
    assert list(ctx.work_dir().iterdir()) == []  # no copy of 売上.csv, nothing staged
    assert llm_server.chat_requests() == []


def test_code_failing_until_the_loop_limit_is_a_block_error(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    for n in range(MAX_LOOPS):
        llm_server.add_chat(json={**ACT, "instruction": f"売上列を合計する（{n + 1} 回目）"})
        llm_server.add_chat(json=codegen("print(df['売上'].sum())"))  # no such column
    llm_server.add_chat(
        json={
            **REPORT,
            "conclusion": "列『売上』が見つからず、集計できませんでした。",
            "sections": [],
        }
    )
    inputs = {"question": "売上合計は？", "tables": {"sales": SALES_RECORDS}}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, ctx)
    error = info.value
    assert llm_server.pending() == 0
    assert error.code == ErrorCode.LOOP_LIMIT_REACHED
    assert "列『売上』が見つからず" in error.message
    assert "KeyError" in (error.hint or "")
    assert error.details["code_runs"] == MAX_LOOPS
    assert "KeyError" in error.details["last_error"]


def test_an_agent_question_stops_the_node_with_that_question(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    question = "「伸び」は前月比と前年同月比のどちらですか？"
    llm_server.add_chat(json={"next_action": "ask", "question": question, "rationale": "曖昧"})
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"question": "伸びを見せて", "tables": {"s": SALES_RECORDS}}, ctx)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert question in info.value.message
    assert "question" in (info.value.hint or "")


def test_cancelling_stops_the_agent_before_its_next_step(
    block: AnalyzeDataBlock, ctx: BlockContext, stream: EventStream, llm_server: ScriptedLLMServer
) -> None:
    script_chart_analysis(llm_server, "df")

    def cancel_after_code(event: RunEvent) -> None:
        if event.event == "code_exec":
            ctx.cancel_event.set()

    stream.add_listener(cancel_after_code)
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"question": "比べて", "tables": {"s": SALES_RECORDS}}, ctx)
    assert info.value.code == ErrorCode.CANCELLED
    assert llm_server.pending() == 2  # neither the second reason nor the report was asked


def test_cancelling_while_the_code_runs_kills_it_and_stops_the_node(
    block: AnalyzeDataBlock,
    ctx: BlockContext,
    stream: EventStream,
    llm_server: ScriptedLLMServer,
    sandbox_executor: SandboxExecutor,
) -> None:
    """The node's running code is killed at the cancel, not left to its wall limit; the shared
    executor goes on serving (only the node's own jail was stopped)."""
    llm_server.add_chat(json=ACT)
    sleeping = "import time\nprint('start', flush=True)\ntime.sleep(120)\n"
    llm_server.add_chat(json=codegen(sleeping))
    llm_server.add_chat(json=FINALIZE)
    cancelled_at: list[float] = []

    def cancel_once_running() -> None:
        deadline = time.monotonic() + CODE_START_S
        while not sandbox_executor.action_pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        cancelled_at.append(time.monotonic())
        ctx.cancel_event.set()

    stream.add_listener(
        lambda event: (
            threading.Thread(target=cancel_once_running, daemon=True).start()
            if event.event == "code_gen"
            else None
        )
    )
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"question": "比べて", "tables": {"s": SALES_RECORDS}}, ctx)

    assert info.value.code == ErrorCode.CANCELLED
    assert time.monotonic() - cancelled_at[0] < CANCELLED_WITHIN_S
    assert "code_exec" not in [e.event for e in stream.events()]  # recorded nowhere
    assert llm_server.pending() == 1  # the next step was never asked for
    again = sandbox_executor.run("print(1)\n", workdir=ctx.work_dir(), profile="analysis")
    assert again.success, again.error


def test_an_already_cancelled_node_does_not_start(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    ctx.cancel_event.set()
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"question": "比べて", "tables": {"s": SALES_RECORDS}}, ctx)
    assert info.value.code == ErrorCode.CANCELLED
    assert llm_server.chat_requests() == []


def test_giving_up_after_failed_code_is_a_block_error(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=codegen("print(df['売上'].sum())"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "conclusion": "売上の列がないため分析できません。"})
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"question": "売上合計は？", "tables": {"s": SALES_RECORDS}}, ctx)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "売上の列がないため分析できません" in info.value.message
    assert info.value.details["llm_calls"] == 4


def test_a_report_forced_by_the_loop_limit_after_a_success_is_returned_with_a_warning(
    block: AnalyzeDataBlock, ctx: BlockContext, stream: EventStream, llm_server: ScriptedLLMServer
) -> None:
    for n in range(MAX_LOOPS):
        llm_server.add_chat(json={**ACT, "instruction": f"集計 {n}"})
        llm_server.add_chat(json=codegen(f"print(len(df) + {n})"))
    llm_server.add_chat(json={**REPORT, "sections": []})
    out = run_like_runner(block, {"question": "色々見て", "tables": {"s": SALES_RECORDS}}, ctx)
    assert out["summary"]["forced_report"] is True
    assert out["summary"]["code_runs"] == MAX_LOOPS
    assert out["charts"] == []
    assert out["tables"] == {}
    warnings = [
        e for e in stream.events() if e.event == "log" and getattr(e, "level", "") == "warning"
    ]
    assert any("ループの上限" in getattr(e, "msg", "") for e in warnings)


def test_the_nodes_sandbox_limits_bound_each_code_run(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=codegen("import time\ntime.sleep(30)"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "conclusion": "時間内に集計できませんでした。"})
    inputs = {"question": "集計して", "tables": {"s": SALES_RECORDS}, "wall_seconds": 1}
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, ctx)
    assert "実行時間の上限" in (info.value.hint or "")


def _script_silent_run(llm_server: ScriptedLLMServer) -> None:
    """A run that computes but shows nothing, then a report with figures nobody saw."""
    llm_server.add_chat(json=ACT)
    llm_server.add_chat(json=codegen("total = df['金額'].sum()\n"))
    llm_server.add_chat(json=FINALIZE)
    llm_server.add_chat(json={**REPORT, "conclusion": "売上合計は 999,999 円でした。"})


def test_a_report_no_run_with_output_backs_fails_the_node_unverified(
    block: AnalyzeDataBlock, ctx: BlockContext, llm_server: ScriptedLLMServer
) -> None:
    _script_silent_run(llm_server)
    with pytest.raises(BlockError) as info:
        run_like_runner(block, {"question": "売上合計は？", "tables": {"s": SALES_RECORDS}}, ctx)
    error = info.value
    assert llm_server.pending() == 0
    assert error.code == ErrorCode.RESULT_UNVERIFIED
    assert error.message == UNVERIFIED_MESSAGE
    assert "allow_unverified: true" in (error.hint or "")
    assert error.details["conclusion"] == "売上合計は 999,999 円でした。"
    assert error.details["code_runs"] == 1
    assert Path(error.details["report_path"]).is_file()  # the report is kept to look at


def test_allow_unverified_returns_the_report_with_grounded_false_and_a_warning(
    block: AnalyzeDataBlock, ctx: BlockContext, stream: EventStream, llm_server: ScriptedLLMServer
) -> None:
    _script_silent_run(llm_server)
    inputs = {"question": "売上合計は？", "tables": {"s": SALES_RECORDS}, "allow_unverified": True}
    out = run_like_runner(block, inputs, ctx)
    assert out["grounded"] is False
    assert out["summary"]["grounded"] is False
    assert out["answer"] == "売上合計は 999,999 円でした。"
    assert "裏付けられていない" in out["report"]  # the report's own note
    warnings = [
        getattr(e, "msg", "")
        for e in stream.events()
        if e.event == "log" and getattr(e, "level", "") == "warning"
    ]
    assert any("未検証" in msg and "grounded: false" in msg for msg in warnings)


BRANCH_PLAN = """
id: analysis_branch
graph:
  - id: analyze
    block: ai.analyze_data
    in:
      question: 売上合計は？
      tables: {売上: [{取引先: あおば商事, 金額: 120000}]}
      allow_unverified: true
  - id: use_figures
    block: report.markdown
    when: "${analyze.grounded}"
    in: {template: "{{ answer }}", data: {answer: "${analyze.answer}"}}
  - id: ask_a_person
    block: report.markdown
    when: "not ${analyze.grounded}"
    in: {template: "要確認: {{ answer }}", data: {answer: "${analyze.answer}"}}
"""


def test_a_plan_branches_on_grounded_with_when(
    llm_server: ScriptedLLMServer, public_dir: Path, registry: BlockRegistry
) -> None:
    llm_server.add_chat(json=FINALIZE)  # a report without running any code
    llm_server.add_chat(json={**REPORT, "conclusion": "売上合計は 999,999 円でした。"})
    plan = public_dir / "analysis_branch.yaml"
    plan.write_text(BRANCH_PLAN, encoding="utf-8")
    with PlanRunner(registry, runs_dir=public_dir / "runs", config={}, env={}) as runner:
        result = runner.run(plan)
    assert result.status == "success", result.error
    assert "use_figures" not in result.outputs  # skipped: its when was false
    assert (
        result.outputs["ask_a_person"]["markdown"].strip()
        == "要確認: 売上合計は 999,999 円でした。"
    )


@pytest.mark.parametrize("given", ["files", "tables"])
def test_kept_ledgers_reach_the_agent_in_yen_without_their_total_rows(
    given: str,
    block: AnalyzeDataBlock,
    ctx: BlockContext,
    public_dir: Path,
    llm_server: ScriptedLLMServer,
) -> None:
    """Ledgers kept in 千円 / 百万円 with 合計 and 小計 rows, given as files or as the tables
    file.read_table made of them: the agent's code sums them to the clean figures in yen."""
    # Ledgers the reader takes (the ones whose 合計 disagrees are refused: tests/agents).
    ledgers = [ledger for ledger in map(kept_ledger, range(300, 330)) if not ledger.doubtful][:8]
    paths = []
    for ledger in ledgers:
        path = public_dir / ledger.name
        path.write_bytes(ledger.data)
        paths.append(path)
    if given == "files":
        inputs: dict[str, Any] = {"files": [str(p) for p in paths]}
    else:
        inputs = {"tables": {p.stem: read_table(p).table() for p in paths}}
    script_sums(llm_server)
    run_like_runner(block, {"question": "部門別の経費の合計を出して", **inputs}, ctx)
    found = json.loads((ctx.work_dir() / "sums.json").read_text(encoding="utf-8"))
    wrong = [
        f"{ledger.describe()}: {problem}"
        for ledger, path in zip(ledgers, paths, strict=True)
        if (problem := wrong_figures(ledger, found[path.stem]["total"], found[path.stem]["by"]))
    ]
    assert not wrong, "\n".join(wrong)
    assert any(ledger.unit != "円" for ledger in ledgers)  # the draw holds 千円 ledgers
    prompt = json.dumps(llm_server.chat_requests()[1]["messages"], ensure_ascii=False)
    assert "円にしてあります" in prompt
