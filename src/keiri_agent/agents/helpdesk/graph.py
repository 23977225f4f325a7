"""The graphs of seed 001: ``create_plan`` → one ``Send`` per subtask → ``execute_subtasks``
(run in parallel) → ``create_answer``; each subtask runs the subgraph ``select_tools`` →
``execute_tools`` → ``create_subtask_answer`` → ``reflect_subtask``, looping until the
subtask is completed or ``MAX_CHALLENGE_COUNT`` attempts were made.

Dependencies that are not state travel in the LangGraph runtime context (``context``).

Departures from the reference implementation, all deliberate:

- A retry really leaves the previous attempt's tool calls and outputs out: ``select_tools``
  rebuilds its messages from the subtask, the previous answer and the reflection's advice.
- The answer and reflection calls see the search results as text in a user message, not as
  tool-call/tool-result messages: some providers (Anthropic) reject tool results in a request
  that declares no tools, and declaring tools would let the model search instead of answering.
  ``messages`` in the state still holds the real tool exchange.
- Grounding (``grounding``): hits under the relevance floor are not shown to the model; the
  citations of a subtask answer that name no relevant hit of its attempt are removed; and a
  reflection's "done" counts only when the attempt found a relevant hit and the answer cites
  one. The plan is capped at ``max_subtasks``. The final answer is built in ``answer``.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from keiri_agent.agents.helpdesk.answer import collect_sources, create_answer, finish_answer
from keiri_agent.agents.helpdesk.context import (
    HelpDeskContext,
    log,
    stage,
    subtask_node_id,
)
from keiri_agent.agents.helpdesk.grounding import (
    UNRESOLVED_REASONS,
    attempt_issue,
    check_citations,
    retry_advice,
)
from keiri_agent.agents.helpdesk.models import (
    MAX_CHALLENGE_COUNT,
    AgentState,
    AgentSubGraphState,
    Plan,
    ReflectionResult,
    Subtask,
    citation,
)
from keiri_agent.agents.helpdesk.prompts import (
    planner_messages,
    reflection_message,
    subtask_answer_message,
    tool_selection_messages,
)
from keiri_agent.agents.helpdesk.toolcalls import run_tool_calls, without_tool_exchange
from keiri_agent.errors import LLMOutputError

__all__ = [
    "MAX_CHALLENGE_COUNT",
    "HelpDeskContext",
    "build_graph",
    "build_subgraph",
    "collect_sources",
    "finish_answer",
    "subtask_node_id",
]

# --- main graph ------------------------------------------------------------------------------


def create_plan(state: AgentState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    stage(ctx, "create_plan", "create_plan", "start")
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
    kept, omitted = subtasks[: ctx.max_subtasks], subtasks[ctx.max_subtasks :]
    log(ctx, "create_plan", "計画: " + " / ".join(kept))
    if omitted:
        log(
            ctx,
            "create_plan",
            f"計画のサブタスクが {len(subtasks)} 件あり、上限 {ctx.max_subtasks} 件"
            "（KEIRI_HELPDESK_MAX_SUBTASKS）を超えた分は調べません: " + " / ".join(omitted),
            "warning",
        )
    stage(ctx, "create_plan", "create_plan", "done")
    return {"plan": kept, "omitted_subtasks": omitted}


def _should_continue_exec_subtasks(state: AgentState) -> list[Send]:
    return [
        Send(
            "execute_subtasks",
            {"question": state["question"], "plan": state["plan"], "current_step": index},
        )
        for index, _ in enumerate(state["plan"])
    ]


# --- subgraph --------------------------------------------------------------------------------


def select_tools(state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    stage(ctx, node_id, "select_tools", "start")
    attempt = state.get("challenge_count", 0) + 1
    reflections = state.get("reflection_results") or []
    messages = tool_selection_messages(
        ctx.prompts,
        question=state["question"],
        plan=state["plan"],
        subtask=state["subtask"],
        previous_answer=state.get("subtask_answer") if reflections else None,
        advice=(state.get("retry_advice") or reflections[-1].advice) if reflections else None,
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
    log(ctx, node_id, f"試行 {attempt}/{MAX_CHALLENGE_COUNT}: ツール選択 {', '.join(names)}")
    stage(ctx, node_id, "select_tools", "done")
    return {"messages": [*messages, reply]}


def execute_tools(state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    stage(ctx, node_id, "execute_tools", "start")
    last = state["messages"][-1]
    if not isinstance(last, AIMessage):
        raise ValueError("execute_tools expects the tool calls of select_tools")
    results, replies = run_tool_calls(last, ctx.tools, default_k=ctx.default_k)
    for result in results:
        if result.error is not None:
            log(ctx, node_id, f"{result.tool_name}: エラー {result.error}", "warning")
        else:
            weak = len(result.weak_results)
            dropped = f"、関連度が基準未満の {weak} 件を除外" if weak else ""
            log(
                ctx,
                node_id,
                f"{result.tool_name}: {len(result.results)} 件{dropped}（{result.args}）",
            )
    stage(ctx, node_id, "execute_tools", "done")
    return {"messages": [*state["messages"], *replies], "tool_results": [results]}


def create_subtask_answer(
    state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]
) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    stage(ctx, node_id, "create_subtask_answer", "start")
    results = list(state["tool_results"][-1])
    prompt = subtask_answer_message(ctx.prompts, results)
    messages = [*without_tool_exchange(state["messages"]), prompt]
    reply = ctx.llm.bind(node_id=node_id).invoke(messages)
    if not reply.text.strip():
        raise LLMOutputError(
            f"サブタスク「{state['subtask']}」の回答が空でした。",
            hint="再実行するか、KEIRI_LLM_MODEL_HELPDESK で別のモデルを指定してください。",
            details={"subtask": state["subtask"]},
        )
    checked = check_citations(reply.text.strip(), [h for r in results for h in r.results])
    answer = checked.text.strip() or "（出典を確認できない記述だけだったため、回答を削除しました）"
    for label in checked.removed:
        log(ctx, node_id, f"検索結果に無い出典を回答から削除しました: {label}", "warning")
    stage(ctx, node_id, "create_subtask_answer", "done")
    return {
        "messages": [*state["messages"], prompt, AIMessage(answer)],
        "subtask_answer": answer,
        "verified_citations": checked.verified,
        "removed_citations": checked.removed,
    }


def reflect_subtask(state: AgentSubGraphState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    node_id = subtask_node_id(state["current_step"])
    stage(ctx, node_id, "reflect_subtask", "start")
    prompt = reflection_message(ctx.prompts)
    messages = [*without_tool_exchange(state["messages"]), prompt]
    reflection = ctx.llm.bind(node_id=node_id).structured(ReflectionResult, messages)
    count = state.get("challenge_count", 0) + 1
    results = state["tool_results"][-1]
    verified = set(state.get("verified_citations") or [])
    cited = [h for r in results for h in r.results if citation(h) in verified]
    issue = attempt_issue(results, cited)
    completed = reflection.is_completed and issue is None
    advice = None
    if reflection.is_completed and issue is not None:
        advice = retry_advice(issue, reflection.advice)
        log(
            ctx,
            node_id,
            f"内省 {count}/{MAX_CHALLENGE_COUNT}: 内省は完了としましたが、完了とはしません"
            f"（{UNRESOLVED_REASONS[issue]}）",
            "warning",
        )
    elif completed:
        log(ctx, node_id, f"内省 {count}/{MAX_CHALLENGE_COUNT}: 完了")
    elif count >= MAX_CHALLENGE_COUNT:
        log(
            ctx,
            node_id,
            f"内省 {count}/{MAX_CHALLENGE_COUNT}: 未完了のまま上限に達したため未解決とします"
            f"（助言: {reflection.advice}）",
            "warning",
        )
    else:
        log(
            ctx, node_id, f"内省 {count}/{MAX_CHALLENGE_COUNT}: 再試行（助言: {reflection.advice}）"
        )
    stage(ctx, node_id, "reflect_subtask", "done")
    return {
        "messages": [*state["messages"], prompt, AIMessage(reflection.model_dump_json())],
        "reflection_results": [reflection],
        "challenge_count": count,
        "is_completed": completed,
        "grounding_issue": issue,
        "retry_advice": advice,
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
    # Nodes named after their functions, each leading to the next.
    workflow.add_sequence([select_tools, execute_tools, create_subtask_answer, reflect_subtask])
    workflow.add_edge(START, "select_tools")
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
        stage(ctx, node_id, "execute_subtasks", "start")
        log(ctx, node_id, f"サブタスク {index + 1}: {task}")
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
                "verified_citations": [],
                "removed_citations": [],
                "grounding_issue": None,
                "retry_advice": None,
            },
            context=ctx,
        )
        completed = result["is_completed"]
        subtask = Subtask(
            index=index,
            task_name=task,
            tool_results=[list(results) for results in result["tool_results"]],
            reflection_results=list(result["reflection_results"]),
            is_completed=completed,
            subtask_answer=result["subtask_answer"],
            challenge_count=result["challenge_count"],
            verified_citations=list(result["verified_citations"]),
            removed_citations=list(result["removed_citations"]),
            unresolved_reason=None if completed else result["grounding_issue"] or "not_completed",
        )
        stage(ctx, node_id, "execute_subtasks", "done" if subtask.is_completed else "unresolved")
        return {"subtask_results": [subtask]}

    workflow = StateGraph(AgentState, context_schema=HelpDeskContext)
    for node in (create_plan, execute_subtasks, create_answer):
        workflow.add_node(node)  # named after the function
    workflow.add_edge(START, "create_plan")
    workflow.add_conditional_edges(
        "create_plan", _should_continue_exec_subtasks, ["execute_subtasks"]
    )
    workflow.add_edge("execute_subtasks", "create_answer")
    workflow.add_edge("create_answer", END)
    return workflow.compile()
