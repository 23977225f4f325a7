"""CodeAct: an agent that acts by writing Python and running it (seed 003's fallback engine).

This module re-implements the ``create_codeact`` contract of the ``langgraph-codeact`` package
(https://github.com/langchain-ai/langgraph-codeact, MIT licence, version 0.1.3), which pins
``langgraph<0.4`` and cannot be installed beside LangGraph 1.x. It keeps the package's shape:
``create_codeact(model, tools, eval_fn, *, prompt=None, state_schema=CodeActState)`` returns an
uncompiled ``StateGraph`` with the nodes ``call_model`` and ``sandbox``; ``call_model`` asks the
model and takes the code of its reply, ``sandbox`` runs it with
``eval_fn(code, context) -> (output, new_vars)``, adds the output to the conversation as a user
message and merges the new variables into the context; a reply without code ends the run.

What differs, on purpose:

- ``model`` is an :class:`~keiri_agent.llm.LLMClient` (role ``codeact``), so every call is retried,
  timed, accounted and reported as an ``llm_call`` event; a failed call raises ``LLMError``.
- At most ``max_turns`` code executions (``MAX_CODE_TURNS``); after the last one the graph ends.
- ``done(state)``: checked after each execution; when it is true the task is complete and the
  graph ends instead of asking the model again (the seed's model returns code only).
- Every Python block of a reply runs, in the order written (the package takes the first one
  only, so a reply that builds a table in one block and saves it in the next saved nothing);
  a reply that is bare code without a fence (models told "code only" often send that) runs too.
- ``code_gen`` (the extracted code) and ``code_exec`` (its output) events, seed 003 §3. An eval
  function that returns an :class:`ExecOutput` reports stdout, stderr and success separately;
  a failed run's ``stderr`` ends with the error the model is shown (type and message), so the
  user sees why it failed, not only the model.
"""

from __future__ import annotations

import ast
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools import tool as create_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command

from keiri_agent.agents.execlog import error_summary
from keiri_agent.events import EventEmitter, NullEmitter
from keiri_agent.llm import LLMClient
from keiri_agent.llm.extract import extract_code_blocks

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

logger = logging.getLogger(__name__)

MAX_CODE_TURNS = 3  # code executions per CodeAct run; a failed one is fed back to the model
FENCE = "```"
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
    error: str | None

    def __new__(
        cls,
        text: str,
        *,
        stdout: str = "",
        stderr: str = "",
        success: bool | None = None,
        files: Sequence[str] = (),
        error: str | None = None,
    ) -> ExecOutput:
        obj = super().__new__(cls, text)
        obj.stdout = stdout
        obj.stderr = stderr
        obj.success = success
        obj.files = tuple(files)
        obj.error = error
        return obj

    def shown_stderr(self) -> str:
        """stderr with the error the model was shown appended (when stderr lacks it)."""
        if not self.error or self.error in self.stderr:
            return self.stderr
        return "\n".join(part for part in (self.stderr.rstrip("\n"), self.error) if part)


def _is_bare_code(text: str) -> bool:
    """True for a reply that is Python without a fence: it parses and does something (an
    import, an assignment, a call), so a one-word answer or a sentence is not taken for code."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    acting = (
        ast.Import,
        ast.ImportFrom,
        ast.Assign,
        ast.AugAssign,
        ast.AnnAssign,
        ast.Call,
        ast.With,
        ast.For,
        ast.FunctionDef,
    )
    return any(isinstance(node, acting) for node in ast.walk(tree))


def extract_code(text: str) -> str | None:
    """The code of a reply: every Python block, joined in order; a reply that is bare code
    without fences as it is; None for a reply without code (the answer to the user)."""
    if FENCE in text:
        blocks = extract_code_blocks(text)
        if blocks:
            return "\n".join(block.rstrip("\n") for block in blocks) + "\n"
        inline = text.strip().strip("`")  # ```print(2)```: one line between the fences
        return inline if FENCE not in inline and _is_bare_code(inline) else None
    return text if text.strip() and _is_bare_code(text) else None


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
                stderr=output.shown_stderr(),
                success=output.success,
            )
            if output.success is False:
                logger.warning(
                    "CodeAct のコード実行が失敗しました: %s", error_summary(output.shown_stderr())
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
