"""create_codeact: the langgraph-codeact contract (nodes, eval_fn, fenced code) with our bounds,
and SandboxEval, the eval function on the sandbox's codeact profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.messages import HumanMessage

from keiri_agent.agents.convert.codeact import (
    MAX_CODE_TURNS,
    CodeActState,
    ExecOutput,
    create_codeact,
    extract_code,
    last_answer,
)
from keiri_agent.agents.convert.fallback import SandboxEval
from keiri_agent.config import LLMRole
from keiri_agent.errors import BlockError, LLMError
from keiri_agent.events import CodeExec, CodeGen, EventStream
from keiri_agent.llm import get_llm
from keiri_agent.sandbox import SandboxExecutor
from tests.support import ScriptedLLMServer


def fenced(code: str) -> str:
    return f"了解です。\n```python\n{code}\n```\n以上です。"


class RecordingEval:
    """An in-process eval_fn that records what it was given and declares a variable."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, code: str, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.calls.append((code, dict(context)))
        return f"ran {len(self.calls)}", {f"v{len(self.calls)}": len(code)}


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture(autouse=True)
def no_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("```python\nprint(1)\n```", "print(1)\n"),
        ("説明\n```\nx = 1\n```", "x = 1\n"),
        # Every Python block, in order (the package took the first one only).
        ("```py\na = 1\n```\n説明\n```python\nprint(a)\n```", "a = 1\nprint(a)\n"),
        ("```python\nx = 1\n```\n```text\n出力例\n```", "x = 1\n"),  # not Python: skipped
        (
            "import pandas as pd\nprint(pd.__version__)",
            "import pandas as pd\nprint(pd.__version__)",
        ),
        ("完了", None),  # a word that parses as Python is still not code
        ("ルート要素名は何にしますか？", None),
        ("```print(2)```", "print(2)"),  # one line: the code is not taken for a language tag
        ("コードはありません。", None),
        ("```python\n\n```", None),
    ],
)
def test_extract_code_takes_every_python_block_in_order(text: str, code: str | None) -> None:
    assert extract_code(text) == code


def test_the_graph_has_the_package_nodes_and_loops_until_the_model_answers(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(fenced("x = add(1, 2)"))
    llm_server.add_chat(fenced("print(x)"))
    llm_server.add_chat("x は 3 です。")
    evaluate = RecordingEval()
    stream = EventStream("run-1", "codeact")

    graph = create_codeact(
        get_llm(LLMRole.CODEACT), [add], evaluate, prompt="SYSTEM", events=stream
    )
    final = graph.compile().invoke({"messages": [HumanMessage("1+2 は？")], "context": {}})

    assert set(graph.nodes) == {"call_model", "sandbox"}
    assert [code for code, _ in evaluate.calls] == ["x = add(1, 2)\n", "print(x)\n"]
    first_context, second_context = (context for _, context in evaluate.calls)
    assert first_context["add"] is add  # the tools are in the eval context
    assert second_context["v1"] == len("x = add(1, 2)\n")  # new_vars carried forward
    assert final["turns"] == 2
    assert last_answer(final) == "x は 3 です。"
    bodies = llm_server.chat_requests()
    assert bodies[0]["messages"][0] == {"role": "system", "content": "SYSTEM"}
    assert bodies[1]["messages"][-1] == {"role": "user", "content": "ran 1"}
    kinds = [e.event for e in stream.events() if e.event != "llm_call"]
    assert kinds == ["code_gen", "code_exec", "code_gen", "code_exec"]
    assert [e.role for e in stream.events() if e.event == "llm_call"] == ["codeact"] * 3  # type: ignore[attr-defined]


def test_the_default_prompt_lists_the_tools_like_the_package(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat("答えです。")

    create_codeact(get_llm(LLMRole.CODEACT), [add], RecordingEval()).compile().invoke(
        {"messages": [HumanMessage("やって")]}
    )

    system = llm_server.chat_requests()[0]["messages"][0]["content"]
    assert "def add(a: int, b: int) -> int:" in system
    assert "Add two numbers." in system
    assert "fenced code block" in system


def test_code_turns_are_bounded(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(fenced("loop()"), repeat=True)
    evaluate = RecordingEval()

    final = (
        create_codeact(get_llm(LLMRole.CODEACT), [], evaluate)
        .compile()
        .invoke({"messages": [HumanMessage("終わらない")]})
    )

    assert len(evaluate.calls) == MAX_CODE_TURNS
    assert len(llm_server.chat_requests()) == MAX_CODE_TURNS
    assert final["turns"] == MAX_CODE_TURNS
    assert last_answer(final) is None


def test_done_ends_the_run_after_a_successful_execution(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(fenced("save()"))
    evaluate = RecordingEval()

    def finished(state: CodeActState) -> bool:
        return state.get("turns", 0) >= 1

    create_codeact(get_llm(LLMRole.CODEACT), [], evaluate, done=finished).compile().invoke(
        {"messages": [HumanMessage("保存して")]}
    )

    assert len(evaluate.calls) == 1
    assert len(llm_server.chat_requests()) == 1  # the model is not asked again


def test_an_api_error_propagates_out_of_the_graph(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(500, "claude is down")
    evaluate = RecordingEval()

    with pytest.raises(LLMError):
        create_codeact(get_llm(LLMRole.CODEACT), [], evaluate).compile().invoke(
            {"messages": [HumanMessage("やって")]}
        )
    assert evaluate.calls == []


def test_sandbox_eval_runs_in_the_workdir_and_reports_files(
    sandbox_executor: SandboxExecutor, public_dir: Path
) -> None:
    evaluate = SandboxEval(sandbox_executor, public_dir)
    frame = pd.DataFrame({"金額": [100, 250]})

    output, new_vars = evaluate(
        'df.to_csv("total.csv", index=False)\nprint(int(df["金額"].sum()))', {"df": frame}
    )

    assert isinstance(output, ExecOutput)
    assert output.success is True
    assert output.files == ("total.csv",)
    assert output.stdout.strip() == "350"
    assert "実行結果: 成功" in output
    assert "total.csv" in output
    assert new_vars == {}
    assert evaluate.last_success
    assert list(evaluate.produced) == ["total.csv"]
    assert (public_dir / "total.csv").read_text(encoding="utf-8") == "金額\n100\n250\n"


def test_sandbox_eval_feeds_errors_and_refusals_back(
    sandbox_executor: SandboxExecutor, public_dir: Path
) -> None:
    evaluate = SandboxEval(sandbox_executor, public_dir)

    failed, _ = evaluate('print(df["AIRTMP"])', {"df": pd.DataFrame({"a": [1]})})
    refused, _ = evaluate('import subprocess\nsubprocess.run(["ls"])', {})
    nothing, _ = evaluate("print('no file')", {})

    assert "実行結果: 失敗" in failed
    assert "KeyError" in failed
    assert isinstance(refused, ExecOutput)
    assert refused.success is False
    assert "subprocess" in refused
    assert "ファイルが保存されていません" in nothing
    assert not evaluate.last_success
    assert evaluate.produced == {}


def test_sandbox_eval_refuses_values_a_process_cannot_receive(
    sandbox_executor: SandboxExecutor, public_dir: Path
) -> None:
    with pytest.raises(BlockError) as caught:
        SandboxEval(sandbox_executor, public_dir)("print(1)", {"add": add})
    assert "DataFrame" in caught.value.hint


def test_codeact_stream_events_carry_the_sandbox_outcome(
    llm_server: ScriptedLLMServer, sandbox_executor: SandboxExecutor, public_dir: Path
) -> None:
    llm_server.add_chat(fenced('print("rows=12000")\nopen("out.txt", "w").write("x")'))
    evaluate = SandboxEval(sandbox_executor, public_dir)
    stream = EventStream("run-2", "codeact")

    create_codeact(
        get_llm(LLMRole.CODEACT),
        [],
        evaluate,
        done=lambda _state: evaluate.last_success,
        events=stream,
        node_id="fallback",
    ).compile().invoke({"messages": [HumanMessage("保存して")], "context": {}})

    (gen,) = [e for e in stream.events() if isinstance(e, CodeGen)]
    (exec_,) = [e for e in stream.events() if isinstance(e, CodeExec)]
    assert gen.node_id == "fallback"
    assert exec_.stdout == "rows=12000\n"
    assert exec_.success is True
