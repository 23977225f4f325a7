"""CodeAct: an agent that acts by writing Python and running it (seed 003's fallback engine).

This module re-implements the ``create_codeact`` contract of the ``langgraph-codeact`` package
(https://github.com/langchain-ai/langgraph-codeact, MIT licence, version 0.1.3), which pins
``langgraph<0.4`` and cannot be installed beside LangGraph 1.x. It keeps the package's shape:
``create_codeact(model, tools, eval_fn, *, prompt=None, state_schema=CodeActState)`` returns an
uncompiled ``StateGraph`` with the nodes ``call_model`` and ``sandbox``; ``call_model`` asks the
model and takes the first fenced code block of its reply, ``sandbox`` runs it with
``eval_fn(code, context) -> (output, new_vars)``, adds the output to the conversation as a user
message and merges the new variables into the context; a reply without code ends the run.

What differs, on purpose:

- ``model`` is an :class:`~keiri_agent.llm.LLMClient` (role ``codeact``), so every call is retried,
  timed, accounted and reported as an ``llm_call`` event; a failed call raises ``LLMError``.
- At most ``max_turns`` code executions (``MAX_CODE_TURNS``); after the last one the graph ends.
- ``done(state)``: checked after each execution; when it is true the task is complete and the
  graph ends instead of asking the model again (the seed's model returns code only).
- ``code_gen`` (the extracted code) and ``code_exec`` (its output) events, seed 003 §3. An eval
  function that returns an :class:`ExecOutput` reports stdout, stderr and success separately.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools import tool as create_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from keiri_agent.events import EventEmitter, NullEmitter
from keiri_agent.llm import LLMClient

__all__ = [
    "MAX_CODE_TURNS",
    "CodeActState",
    "EvalFn",
    "ExecOutput",
    "create_codeact",
    "create_default_prompt",
    "extract_code",
    "last_answer",
]

MAX_CODE_TURNS = 3  # code executions per CodeAct run; a failed one is fed back to the model
FENCE = "```"
_LANGUAGE_TAG = re.compile(r"^[A-Za-z0-9_+.-]*$")
_END: Literal["__end__"] = "__end__"  # langgraph's END, typed as the literal it is
assert _END == END

EvalFn = Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]]


class CodeActState(MessagesState, total=False):
    """The package's state (messages, script, context) plus the number of executions."""

    script: str | None
    context: dict[str, Any]
    turns: int


class ExecOutput(str):
    """An eval function's output: the text the model reads, plus how the execution went."""

    stdout: str
    stderr: str
    success: bool | None
    files: tuple[str, ...]

    def __new__(
        cls,
        text: str,
        *,
        stdout: str = "",
        stderr: str = "",
        success: bool | None = None,
        files: Sequence[str] = (),
    ) -> ExecOutput:
        obj = super().__new__(cls, text)
        obj.stdout = stdout
        obj.stderr = stderr
        obj.success = success
        obj.files = tuple(files)
        return obj


def extract_code(text: str) -> str | None:
    """The first fenced code block of a reply, without its language tag; None without one."""
    if FENCE not in text:
        return None
    block = text.split(FENCE)[1]
    first, _, rest = block.partition("\n")
    # The package always drops the first line (the language tag); a one-line block whose
    # first line is code keeps it.
    code = rest if _LANGUAGE_TAG.match(first.strip()) else block
    return code if code.strip() else None


def _as_tool(item: BaseTool | Callable[..., Any]) -> BaseTool:
    return item if isinstance(item, BaseTool) else create_tool(item)


def _signature(func: Callable[..., Any]) -> str:
    # Modules with ``from __future__ import annotations`` keep annotations as strings.
    try:
        return str(inspect.signature(func, eval_str=True))
    except (NameError, SyntaxError, TypeError):
        return str(inspect.signature(func))


def create_default_prompt(tools: Sequence[BaseTool], base_prompt: str | None = None) -> str:
    """The package's default system prompt, listing the tools as Python signatures."""
    prompt = f"{base_prompt}\n\n" if base_prompt else ""
    prompt += """You will be given a task to perform. You should output either
- a Python code snippet that provides the solution to the task, or a step towards the solution.
Any output you want to extract from the code should be printed to the console.
Code should be output in a fenced code block.
- text to be shown directly to the user, if you want to ask for more information or provide the final answer.

In addition to the Python Standard Library, you can use the following functions:
"""
    for tool in tools:
        func = tool.func if isinstance(tool, StructuredTool) else None
        signature = _signature(func) if func is not None else "(*args, **kwargs)"
        prompt += f'''
def {tool.name}{signature}:
    """{tool.description}"""
    ...
'''
    prompt += """

Variables defined at the top level of previous code snippets can be referenced in your code.

Reminder: use Python code snippets to call tools"""
    return prompt


def create_codeact(
    model: LLMClient,
    tools: Sequence[BaseTool | Callable[..., Any]],
    eval_fn: EvalFn,
    *,
    prompt: str | None = None,
    state_schema: type[CodeActState] = CodeActState,
    max_turns: int = MAX_CODE_TURNS,
    done: Callable[[CodeActState], bool] | None = None,
    events: EventEmitter | None = None,
    node_id: str = "codeact",
) -> StateGraph[CodeActState, None, CodeActState, CodeActState]:
    """A CodeAct graph (uncompiled, as in the package): call_model ⇄ sandbox.

    ``eval_fn(code, context)`` runs one code block with the tools and the variables of earlier
    blocks in ``context`` and returns ``(output, new_vars)``. ``max_turns`` bounds the number
    of executions; ``done(state)`` ends the run after an execution that completed the task.
    """
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    bound = [_as_tool(t) for t in tools]
    system = prompt if prompt is not None else create_default_prompt(bound)
    tools_context: dict[str, Any] = {
        t.name: t.func for t in bound if isinstance(t, StructuredTool) and t.func is not None
    }
    emitter: EventEmitter = events if events is not None else NullEmitter()
    llm = model.bind(events=events, node_id=node_id) if events is not None else model

    def call_model(state: CodeActState) -> Command[Literal["sandbox", "__end__"]]:
        messages = [SystemMessage(system), *state["messages"]]
        response = llm.invoke(messages)
        code = extract_code(response.text)
        if code is None:  # no code: the reply is the answer to the user
            return Command(goto=_END, update={"messages": [response], "script": None})
        emitter.emit("code_gen", node_id=node_id, code=code)
        return Command(goto="sandbox", update={"messages": [response], "script": code})

    def sandbox(state: CodeActState) -> dict[str, Any]:
        script = state.get("script") or ""
        existing = dict(state.get("context") or {})
        output, new_vars = eval_fn(script, {**existing, **tools_context})
        if isinstance(output, ExecOutput):
            emitter.emit(
                "code_exec",
                node_id=node_id,
                stdout=output.stdout,
                stderr=output.stderr,
                success=output.success,
            )
        else:
            emitter.emit("code_exec", node_id=node_id, stdout=str(output))
        return {
            "messages": [HumanMessage(str(output))],
            "context": {**existing, **new_vars},
            "turns": int(state.get("turns") or 0) + 1,
        }

    def after_sandbox(state: CodeActState) -> Literal["call_model", "__end__"]:
        if done is not None and done(state):
            return _END
        if int(state.get("turns") or 0) >= max_turns:
            return _END
        return "call_model"

    graph: StateGraph[CodeActState, None, CodeActState, CodeActState] = StateGraph(state_schema)
    graph.add_node("call_model", call_model, destinations=(END, "sandbox"))
    graph.add_node("sandbox", sandbox)
    graph.add_edge(START, "call_model")
    graph.add_conditional_edges("sandbox", after_sandbox, ["call_model", END])
    return graph


def last_answer(state: CodeActState) -> str | None:
    """The model's last reply when it contained no code (its explanation), else None."""
    messages = state.get("messages") or []
    if messages and isinstance(messages[-1], AIMessage):
        text = messages[-1].text
        return None if extract_code(text) is not None else text.strip() or None
    return None
