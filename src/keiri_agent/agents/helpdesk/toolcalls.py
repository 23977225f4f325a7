"""Running the tool calls of one ``select_tools`` reply.

Every call becomes a ``ToolResult`` and a ``ToolMessage``. A call the model got wrong (bad
arguments, an unknown tool, arguments that are not JSON, a tool that fails) becomes a Japanese
error text the model reads in the next step, never a crash; only failures the model cannot fix
stop the run: a ``BlockError`` other than INPUT_VALIDATION_FAILED (a broken index, an embedding
API that is down), raised by the tool or carried as the cause of its ``ToolException``.

The hits of a call are split by the relevance floor (``grounding.split_relevant``) before the
model sees them: the weak ones are kept in ``ToolResult.weak_results`` for the record only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from pydantic import ValidationError

from keiri_agent.agents.helpdesk.grounding import split_relevant
from keiri_agent.agents.helpdesk.models import SearchOutput, ToolResult
from keiri_agent.agents.helpdesk.prompts import render_tool_result
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.llm.field_problems import field_problems, lines_of

__all__ = ["run_tool_calls", "without_tool_exchange"]

MAX_RAW_ARGS_CHARS = 200  # of unparseable arguments quoted back to the model


def _hits(output: Any) -> list[SearchOutput]:
    """A search tool's output as SearchOutputs (tools may return models or their dicts)."""
    items = output if isinstance(output, list) else [output]
    return [
        item if isinstance(item, SearchOutput) else SearchOutput.model_validate(item)
        for item in items
    ]


def _validation_text(exc: ValidationError, args: Mapping[str, Any]) -> str:
    return "; ".join(lines_of(field_problems(exc, data=args)))


def _run_tool(tools: Mapping[str, BaseTool], name: str, args: dict[str, Any]) -> ToolResult:
    encoded = json.dumps(args, ensure_ascii=False, default=str)
    tool = tools.get(name)
    if tool is None:
        return ToolResult(
            tool_name=name,
            args=encoded,
            error=f"ツール '{name}' はありません。使えるツールは {', '.join(tools)} です。",
        )
    usage = f"引数は {', '.join(tool.args)} です。"
    try:
        hits = _hits(tool.invoke(args))
    except ValidationError as exc:
        error = f"ツール '{name}' の引数が不正です（{_validation_text(exc, args)}）。{usage}"
    except BlockError as exc:
        if _fatal(exc):
            raise
        error = f"ツール '{name}' の引数が不正です（{exc.message}）。{exc.hint or usage}"
    except ToolException as exc:  # the tool's own report of a bad call, in Japanese
        cause = exc.__cause__
        if isinstance(cause, BlockError) and _fatal(cause):
            raise cause from exc
        error = f"ツール '{name}' がエラーを返しました: {exc}"
    except Exception as exc:  # any other failure of the tool is reported to the model
        error = f"ツール '{name}' の実行に失敗しました（{type(exc).__name__}: {exc}）。{usage}"
    else:
        relevant, weak = split_relevant(hits)
        return ToolResult(tool_name=name, args=encoded, results=relevant, weak_results=weak)
    return ToolResult(tool_name=name, args=encoded, error=error)


def _fatal(error: BlockError) -> bool:
    """Whether a tool's BlockError must stop the run: anything but an input problem (a broken
    index, an embedding API that is down) would fail every retry the same way."""
    return error.code != ErrorCode.INPUT_VALIDATION_FAILED


def _tool_message(result: ToolResult, call_id: str | None) -> ToolMessage:
    return ToolMessage(
        render_tool_result(result),
        tool_call_id=call_id or "",
        name=result.tool_name,
        status="error" if result.error is not None else "success",
    )


def run_tool_calls(
    message: AIMessage,
    tools: Sequence[BaseTool],
    *,
    default_k: int | None = None,
) -> tuple[list[ToolResult], list[ToolMessage]]:
    """Run the calls of ``message`` in order (parsed calls first, then unparseable ones);
    ``default_k`` fills ``k`` where a call leaves it out; the hits' ``above_floor`` flags decide
    which are relevant."""
    by_name = {tool.name: tool for tool in tools}
    results: list[ToolResult] = []
    replies: list[ToolMessage] = []
    for call in message.tool_calls:
        args = dict(call["args"])
        if default_k is not None and "k" not in args:
            args["k"] = default_k
        result = _run_tool(by_name, call["name"], args)
        results.append(result)
        replies.append(_tool_message(result, call.get("id")))
    for bad in message.invalid_tool_calls:
        name = str(bad.get("name") or "?")
        raw = str(bad.get("args") or "")
        result = ToolResult(
            tool_name=name,
            args=raw,
            error=f"ツール '{name}' の引数 {raw[:MAX_RAW_ARGS_CHARS]!r} を JSON として"
            "読み取れませんでした。引数は JSON オブジェクトで指定してください。",
        )
        results.append(result)
        replies.append(_tool_message(result, bad.get("id")))
    return results, replies


def without_tool_exchange(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` without tool calls and tool results (their content reaches the answer and
    reflection calls as text; see ``graph``)."""
    return [
        message
        for message in messages
        if not isinstance(message, ToolMessage)
        and not (
            isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls)
        )
    ]
