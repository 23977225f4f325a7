"""ai.helpdesk_answer: the help-desk agent as a plan node, against the scripted LLM server.

The block's search tools are injected through its constructor (fixed results), except in the
test of a missing knowledge base, which goes through the real ``KnowledgeBase.open``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.tools import MAX_TOOL_K
from keiri_agent.blocks.ai.helpdesk_answer import MAX_K, HelpDeskAnswerBlock
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import EventStream, LLMCall, Log, Stage
from tests.blocks.conftest import run_like_runner
from tests.support import ScriptedLLMServer
from tests.support.helpdesk import FakeSearch, HelpDeskScript, hit

TASK = "パスワード再設定の手順を調べる"
LOCK = "アカウントロックの解除方法を調べる"
CITE = "【出典: 操作マニュアル.pdf p.12】"
MANUAL_HIT = hit("操作マニュアル.pdf", "「パスワードを忘れた方」から再設定します。", page=12)


@pytest.fixture
def script(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> HelpDeskScript:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    return HelpDeskScript(llm_server)


@pytest.fixture
def stream() -> EventStream:
    return EventStream("run-1", "plan-1")


@pytest.fixture
def ctx(tmp_path: Path, stream: EventStream) -> BlockContext:
    return BlockContext(
        run_id="run-1",
        plan_id="plan-1",
        node_id="ask",
        block_version="0.1.0",
        workspace=tmp_path / "run",
        events=stream,
    )


def make_block(registry: BlockRegistry, search: FakeSearch | None = None) -> HelpDeskAnswerBlock:
    assert type(registry.load("ai.helpdesk_answer")) is HelpDeskAnswerBlock
    spec = registry.get("ai.helpdesk_answer")
    return HelpDeskAnswerBlock(spec, tools=search.tools() if search is not None else None)


def test_answers_with_sources_as_the_nodes_events(
    registry: BlockRegistry, script: HelpDeskScript, ctx: BlockContext, stream: EventStream
) -> None:
    search = FakeSearch(default=[MANUAL_HIT])
    script.plan(TASK)
    script.subtask(TASK, "パスワード 再設定", f"ログイン画面から再設定します{CITE}")
    script.final(f"ログイン画面の「パスワードを忘れた方」から再設定できます{CITE}。")

    outputs = run_like_runner(
        make_block(registry, search), {"question": "パスワードの再設定方法は？"}, ctx
    )

    assert CITE in outputs["answer"]
    assert outputs["status"] == "answered"  # a plan can branch on it (issue 38)
    assert outputs["sources"] == [
        {
            "file_name": "操作マニュアル.pdf",
            "page": 12,
            "row": None,
            "source": "manual",
            "chunk_id": MANUAL_HIT.chunk_id,
            "citation": CITE,
        }
    ]
    result = outputs["result"]
    assert result["plan"] == {"subtasks": [TASK]}
    assert result["unresolved"] == []
    assert result["usage"]["calls"] == 5
    assert result["usage"]["total_tokens"] > 0
    assert search.calls == [("search_manual", "パスワード 再設定", 3)]  # the port's default k
    events = stream.events()
    assert {e.node_id for e in events} == {"ask"}
    steps = [e.step for e in events if isinstance(e, Stage)]
    assert "create_plan" in steps
    assert "subtask[0]/select_tools" in steps
    assert len([e for e in events if isinstance(e, LLMCall)]) == 5


def test_k_is_used_by_searches_that_do_not_give_one(
    registry: BlockRegistry, script: HelpDeskScript, ctx: BlockContext
) -> None:
    search = FakeSearch(default=[MANUAL_HIT])
    script.plan(TASK)
    script.subtask(TASK, "パスワード 再設定", f"再設定します{CITE}")
    script.final(f"再設定できます{CITE}")
    run_like_runner(make_block(registry, search), {"question": "再設定は？", "k": 7}, ctx)
    assert search.calls == [("search_manual", "パスワード 再設定", 7)]


def test_unresolved_subtasks_are_answered_with_a_warning(
    registry: BlockRegistry, script: HelpDeskScript, ctx: BlockContext, stream: EventStream
) -> None:
    script.plan(LOCK)
    for _ in range(3):
        script.select(LOCK, {"name": "search_qa", "arguments": {"query": "ロック"}})
        script.answer(LOCK, "資料に記載がありません")
        script.reflect(LOCK, False, advice="別の語で探す")
    script.final("資料からは確認できませんでした。")

    outputs = run_like_runner(
        make_block(registry, FakeSearch()), {"question": "ロック解除は？"}, ctx
    )

    assert outputs["result"]["unresolved"] == [LOCK]
    assert outputs["status"] == "unresolved"  # what a plan routes to a person
    assert f"- {LOCK}" in outputs["answer"]
    assert outputs["sources"] == []
    warnings = [e.msg for e in stream.events() if isinstance(e, Log) and e.level == "warning"]
    assert any("資料で確認できなかったサブタスクがあります" in msg for msg in warnings)


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"question": "  "}, "question"),
        ({"question": "q", "k": 0}, "k"),
        ({"question": "q", "k": 11}, "k"),
    ],
)
def test_bad_inputs_are_refused_before_any_llm_call(
    registry: BlockRegistry,
    script: HelpDeskScript,
    ctx: BlockContext,
    inputs: dict[str, object],
    field: str,
) -> None:
    block = make_block(registry, FakeSearch())
    with pytest.raises(BlockError) as caught:
        block.check_inputs(inputs)
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert caught.value.details["field"] == field
    assert caught.value.hint
    assert script.server.chat_requests() == []


def test_k_is_bounded_like_the_search_tools() -> None:
    assert MAX_K == MAX_TOOL_K


def test_a_cancelled_node_stops_before_the_agent_starts(
    registry: BlockRegistry, script: HelpDeskScript, ctx: BlockContext
) -> None:
    ctx.cancel_event.set()
    with pytest.raises(BlockError) as caught:
        make_block(registry, FakeSearch()).run({"question": "再設定は？"}, ctx)
    assert caught.value.code == ErrorCode.CANCELLED
    assert script.server.chat_requests() == []


def test_a_missing_knowledge_base_is_a_clear_error(
    registry: BlockRegistry, script: HelpDeskScript, ctx: BlockContext, tmp_path: Path
) -> None:
    missing = tmp_path / "no_index"
    with pytest.raises(BlockError) as caught:
        make_block(registry).run({"question": "再設定は？", "index_dir": str(missing)}, ctx)
    assert str(missing) in caught.value.message + str(caught.value.details)
    assert caught.value.hint
    assert script.server.chat_requests() == []
