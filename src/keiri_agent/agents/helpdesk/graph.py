"""The graphs of seed 001: ``create_plan`` → one ``Send`` per subtask → ``execute_subtasks``
(run in parallel) → ``create_answer``; each subtask runs the subgraph ``select_tools`` →
``execute_tools`` → ``create_subtask_answer`` → ``reflect_subtask``, looping until the
reflection says it is completed or ``MAX_CHALLENGE_COUNT`` attempts were made.

Dependencies that are not state (the LLM client, the tools, the prompts, the event sink) travel
in the LangGraph runtime context, so tests and the UI pass their own without patching anything.

Two departures from the reference implementation, both deliberate:

- A retry really leaves the previous attempt's tool calls and outputs out: ``select_tools``
  rebuilds its messages from the subtask, the previous answer and the reflection's advice.
- The answer and reflection calls see the search results as text in a user message, not as
  tool-call/tool-result messages: some providers (Anthropic) reject tool results in a request
  that declares no tools, and declaring tools would let the model search instead of answering.
  ``messages`` in the state still holds the real tool exchange.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from keiri_agent.agents.helpdesk.models import (
    MAX_CHALLENGE_COUNT,
    AgentState,
    AgentSubGraphState,
    CitedSource,
    Plan,
    ReflectionResult,
    Subtask,
)
from keiri_agent.agents.helpdesk.prompts import (
    HelpDeskAgentPrompts,
    citations,
    final_answer_messages,
    planner_messages,
    reflection_message,
    subtask_answer_message,
    tool_selection_messages,
)
from keiri_agent.agents.helpdesk.toolcalls import run_tool_calls, without_tool_exchange
from keiri_agent.errors import LLMOutputError
from keiri_agent.events import EventEmitter, NullEmitter
from keiri_agent.llm import LLMClient

__all__ = [
    "MAX_CHALLENGE_COUNT",
    "HelpDeskContext",
    "build_graph",
    "build_subgraph",
    "collect_sources",
    "finish_answer",
    "subtask_node_id",
]

logger = logging.getLogger(__name__)


@dataclass
class HelpDeskContext:
    """What the nodes use besides the state. ``llm`` should already report to the run's
    events and ledger; nodes only add their node id."""

    llm: LLMClient
    tools: Sequence[BaseTool]
    prompts: HelpDeskAgentPrompts = field(default_factory=HelpDeskAgentPrompts)
    events: EventEmitter = field(default_factory=NullEmitter)
    default_k: int | None = None  # the ``k`` of a search call that does not give one


def subtask_node_id(index: int) -> str:
    """The node id of a subtask's events: ``subtask[0]`` for the first."""
    return f"subtask[{index}]"


def _stage(ctx: HelpDeskContext, node_id: str, step: str, status: str) -> None:
    ctx.events.emit("stage", node_id=node_id, step=step, status=status)


def _log(ctx: HelpDeskContext, node_id: str, msg: str, level: str = "info") -> None:
    ctx.events.emit("log", node_id=node_id, msg=msg, level=level)
    logger.log(logging.WARNING if level == "warning" else logging.INFO, "%s: %s", node_id, msg)


# --- main graph ------------------------------------------------------------------------------


def create_plan(state: AgentState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    _stage(ctx, "create_plan", "create_plan", "start")
    plan = ctx.llm.bind(node_id="create_plan").structured(
        Plan, planner_messages(ctx.prompts, state["question"])
    )
    subtasks = [task.strip() for task in plan.subtasks if task.strip()]
    if not subtasks:
        raise LLMOutputError(
            "計画にサブタスクがありません（0 件）。質問から調べる内容を決められませんでした。",
            hint="質問を具体的にして（例: どの画面・どの操作で何が起きたか）再実行してください。"
            " 繰り返す場合は KEIRI_LLM_MODEL_HELPDESK で別のモデルを指定してください。",
            details={"question": state["question"], "plan": plan.model_dump()},
        )
    _log(ctx, "create_plan", "計画: " + " / ".join(subtasks))
    _stage(ctx, "create_plan", "create_plan", "done")
    return {"plan": subtasks}


def _should_continue_exec_subtasks(state: AgentState) -> list[Send]:
    return [
        Send(
            "execute_subtasks",
            {"question": state["question"], "plan": state["plan"], "current_step": index},
        )
        for index, _ in enumerate(state["plan"])
    ]


def create_answer(state: AgentState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    _stage(ctx, "create_answer", "create_answer", "start")
    subtasks = sorted(state["subtask_results"], key=lambda subtask: subtask.index)
    reply = ctx.llm.bind(node_id="create_answer").invoke(
        final_answer_messages(ctx.prompts, state["question"], subtasks)
    )
    answer = finish_answer(reply.text, subtasks, ctx.prompts)
    _stage(ctx, "create_answer", "create_answer", "done")
    return {"last_answer": answer}


def finish_answer(text: str, subtasks: Sequence[Subtask], prompts: HelpDeskAgentPrompts) -> str:
    """The model's answer, plus a note on unresolved subtasks it does not report as such and
    the sources of the resolved subtasks when it cites none of them."""
    if not text.strip():
        raise LLMOutputError(
            "最終回答が空でした。",
            hint="再実行するか、KEIRI_LLM_MODEL_HELPDESK で別のモデルを指定してください。",
        )
    answer = text.strip()
    unmentioned = [
        s.task_name
        for s in subtasks
        if s.unresolved and not ("未解決" in answer and s.task_name in answer)
    ]
    if unmentioned:
        items = "\n".join(f"- {task}" for task in unmentioned)
        note = prompts.unresolved_note.format(max_challenges=MAX_CHALLENGE_COUNT, items=items)
        answer = f"{answer}\n\n{note}"
    # Only resolved subtasks' results: an unresolved one's did not answer anything.
    labels = citations([hit for s in subtasks if not s.unresolved for hit in s.used_results()])
    if labels and not any(label in answer for label in labels):
        answer = f"{answer}\n\n{prompts.sources_note.format(citations='、'.join(labels))}"
    return answer


def collect_sources(subtasks: Sequence[Subtask], answer: str) -> list[CitedSource]:
    """The search results the answer cites (by their labels), once each, in plan order. Only
    results the subtask answers were written from count; ``finish_answer`` makes sure the
    answer cites at least those when the model cited none."""
    sources: dict[str, CitedSource] = {}
    for subtask in sorted(subtasks, key=lambda s: s.index):
        for hit in subtask.used_results():
            source = CitedSource.from_hit(hit)
            if source.citation in answer:
                sources.setdefault(source.citation, source)
    return list(sources.values())


# --- subgraph --------------------------------------------------------------------------------


def select_tools(state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    _stage(ctx, node_id, "select_tools", "start")
    attempt = state.get("challenge_count", 0) + 1
    reflections = state.get("reflection_results") or []
    messages = tool_selection_messages(
        ctx.prompts,
        question=state["question"],
        plan=state["plan"],
        subtask=state["subtask"],
        previous_answer=state.get("subtask_answer") if reflections else None,
        advice=reflections[-1].advice if reflections else None,
    )
    reply = ctx.llm.bind(node_id=node_id).invoke(messages, tools=ctx.tools, tool_choice="any")
    if not reply.tool_calls and not reply.invalid_tool_calls:
        raise LLMOutputError(
            f"サブタスク「{state['subtask']}」でツールが選ばれませんでした。",
            hint="ツール呼び出し（function calling）に対応したモデルを KEIRI_LLM_MODEL_HELPDESK に"
            "指定して再実行してください。",
            details={"subtask": state["subtask"], "reply": reply.text[:500]},
        )
    names = [call["name"] for call in reply.tool_calls] + [
        str(call.get("name")) for call in reply.invalid_tool_calls
    ]
    _log(ctx, node_id, f"試行 {attempt}/{MAX_CHALLENGE_COUNT}: ツール選択 {', '.join(names)}")
    _stage(ctx, node_id, "select_tools", "done")
    return {"messages": [*messages, reply]}


def execute_tools(state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    _stage(ctx, node_id, "execute_tools", "start")
    last = state["messages"][-1]
    if not isinstance(last, AIMessage):
        raise ValueError("execute_tools expects the tool calls of select_tools")
    results, replies = run_tool_calls(last, ctx.tools, default_k=ctx.default_k)
    for result in results:
        if result.error is not None:
            _log(ctx, node_id, f"{result.tool_name}: エラー {result.error}", "warning")
        else:
            _log(ctx, node_id, f"{result.tool_name}: {len(result.results)} 件（{result.args}）")
    _stage(ctx, node_id, "execute_tools", "done")
    return {"messages": [*state["messages"], *replies], "tool_results": [results]}


def create_subtask_answer(
    state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]
) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    _stage(ctx, node_id, "create_subtask_answer", "start")
    results = list(state["tool_results"][-1])
    prompt = subtask_answer_message(ctx.prompts, results)
    messages = [*without_tool_exchange(state["messages"]), prompt]
    reply = ctx.llm.bind(node_id=node_id).invoke(messages)
    answer = reply.text.strip()
    if not answer:
        raise LLMOutputError(
            f"サブタスク「{state['subtask']}」の回答が空でした。",
            hint="再実行するか、KEIRI_LLM_MODEL_HELPDESK で別のモデルを指定してください。",
            details={"subtask": state["subtask"]},
        )
    _stage(ctx, node_id, "create_subtask_answer", "done")
    return {"messages": [*state["messages"], prompt, AIMessage(answer)], "subtask_answer": answer}


def reflect_subtask(state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    _stage(ctx, node_id, "reflect_subtask", "start")
    prompt = reflection_message(ctx.prompts)
    messages = [*without_tool_exchange(state["messages"]), prompt]
    reflection = ctx.llm.bind(node_id=node_id).structured(ReflectionResult, messages)
    count = state.get("challenge_count", 0) + 1
    if reflection.is_completed:
        _log(ctx, node_id, f"内省 {count}/{MAX_CHALLENGE_COUNT}: 完了")
    elif count >= MAX_CHALLENGE_COUNT:
        _log(
            ctx,
            node_id,
            f"内省 {count}/{MAX_CHALLENGE_COUNT}: 未完了のまま上限に達したため未解決とします"
            f"（助言: {reflection.advice}）",
            "warning",
        )
    else:
        _log(
            ctx, node_id, f"内省 {count}/{MAX_CHALLENGE_COUNT}: 再試行（助言: {reflection.advice}）"
        )
    _stage(ctx, node_id, "reflect_subtask", "done")
    return {
        "messages": [*state["messages"], prompt, AIMessage(reflection.model_dump_json())],
        "reflection_results": [reflection],
        "challenge_count": count,
        "is_completed": reflection.is_completed,
    }


def _should_continue_exec_subtask_flow(state: AgentSubGraphState) -> Literal["continue", "end"]:
    if state["is_completed"] or state["challenge_count"] >= MAX_CHALLENGE_COUNT:
        return "end"
    return "continue"


SubGraph = CompiledStateGraph[
    AgentSubGraphState, HelpDeskContext, AgentSubGraphState, AgentSubGraphState
]
MainGraph = CompiledStateGraph[AgentState, HelpDeskContext, AgentState, AgentState]


def build_subgraph() -> SubGraph:
    """One subtask's loop (seed 001 §5.2); invoke with ``context=HelpDeskContext(...)``."""
    workflow = StateGraph(AgentSubGraphState, context_schema=HelpDeskContext)
    workflow.add_node("select_tools", select_tools)
    workflow.add_node("execute_tools", execute_tools)
    workflow.add_node("create_subtask_answer", create_subtask_answer)
    workflow.add_node("reflect_subtask", reflect_subtask)
    workflow.add_edge(START, "select_tools")
    workflow.add_edge("select_tools", "execute_tools")
    workflow.add_edge("execute_tools", "create_subtask_answer")
    workflow.add_edge("create_subtask_answer", "reflect_subtask")
    workflow.add_conditional_edges(
        "reflect_subtask",
        _should_continue_exec_subtask_flow,
        {"continue": "select_tools", "end": END},
    )
    return workflow.compile()


def build_graph() -> MainGraph:
    """The main graph (seed 001 §5.1); the subtasks' subgraphs run in parallel threads."""
    subgraph = build_subgraph()

    def execute_subtasks(state: AgentState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
        ctx = runtime.context
        index = state["current_step"]
        node_id = subtask_node_id(index)
        task = state["plan"][index]
        _stage(ctx, node_id, "execute_subtasks", "start")
        _log(ctx, node_id, f"サブタスク {index + 1}: {task}")
        result = subgraph.invoke(
            {
                "question": state["question"],
                "plan": state["plan"],
                "current_step": index,
                "subtask": task,
                "is_completed": False,
                "messages": [],
                "challenge_count": 0,
                "tool_results": [],
                "reflection_results": [],
                "subtask_answer": "",
            },
            context=ctx,
        )
        subtask = Subtask(
            index=index,
            task_name=task,
            tool_results=[list(results) for results in result["tool_results"]],
            reflection_results=list(result["reflection_results"]),
            is_completed=result["is_completed"],
            subtask_answer=result["subtask_answer"],
            challenge_count=result["challenge_count"],
        )
        _stage(ctx, node_id, "execute_subtasks", "done" if subtask.is_completed else "unresolved")
        return {"subtask_results": [subtask]}

    workflow = StateGraph(AgentState, context_schema=HelpDeskContext)
    workflow.add_node("create_plan", create_plan)
    workflow.add_node("execute_subtasks", execute_subtasks)
    workflow.add_node("create_answer", create_answer)
    workflow.add_edge(START, "create_plan")
    workflow.add_conditional_edges(
        "create_plan", _should_continue_exec_subtasks, ["execute_subtasks"]
    )
    workflow.add_edge("execute_subtasks", "create_answer")
    workflow.add_edge("create_answer", END)
    return workflow.compile()
