"""data.convert: the conversion pipeline as a block (scripted LLM, real files, real sandbox)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.data.convert import ConvertBlock
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode, LLMError
from keiri_agent.events import EventStream
from keiri_agent.sandbox import SandboxExecutor
from tests.blocks.conftest import run_like_runner
from tests.support import ScriptedLLMServer, prompt_contains

SALES_CSV = "月,売上\n2024-04,120000\n2024-05,80000\n"


@pytest.fixture
def block(registry: BlockRegistry, sandbox_executor: SandboxExecutor) -> ConvertBlock:
    cls = type(registry.load("data.convert"))
    assert cls is ConvertBlock
    return ConvertBlock(registry.get("data.convert"), executor=sandbox_executor)


@pytest.fixture
def source(llm_server: ScriptedLLMServer, convert_env: Path) -> Path:
    path = convert_env / "売上.csv"
    path.write_text(SALES_CSV, encoding="utf-8")
    return path


def context(tmp_path: Path) -> BlockContext:
    return BlockContext(
        run_id="run-1",
        plan_id="plan-1",
        node_id="convert",
        block_version="0.1.0",
        workspace=tmp_path / "run",
        events=EventStream("run-1", "plan-1"),
    )


def test_converts_into_the_node_work_dir_with_node_events(
    block: ConvertBlock, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(
        json={"action": "convert", "target_format": "xlsx", "summary_ja": "Excel に"}
    )
    ctx = context(tmp_path)

    outputs = run_like_runner(block, {"request": "Excel に変換して", "source": str(source)}, ctx)

    (written,) = outputs["files"]
    assert Path(written) == tmp_path / "run" / "convert" / "売上.xlsx"
    assert pd.read_excel(written)["売上"].tolist() == [120000, 80000]
    assert "売上.xlsx" in outputs["answer"]
    assert outputs["result"]["status"] == "success"
    assert outputs["result"]["job"]["target_format"] == "xlsx"
    assert isinstance(ctx.events, EventStream)
    events = ctx.events.events()
    assert {e.node_id for e in events} == {"convert"}
    assert ("convert", "done") in [(e.step, e.status) for e in events if e.event == "stage"]  # type: ignore[attr-defined]
    assert [e.role for e in events if e.event == "llm_call"] == ["interpret"]  # type: ignore[attr-defined]


def test_a_fallback_result_is_returned_with_a_warning(
    block: ConvertBlock, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "xml"})
    code = 'open("売上.xml", "w", encoding="utf-8").write("<rows/>")\n'
    llm_server.add_chat(f"```python\n{code}```", when=prompt_contains("You are CodeAct"))
    ctx = context(tmp_path)

    outputs = run_like_runner(
        block,
        {"request": "XML にして", "source": str(source), "out_dir": str(tmp_path / "out")},
        ctx,
    )

    assert outputs["files"] == [str(tmp_path / "out" / "売上.xml")]
    assert outputs["result"]["used_fallback"] is True
    assert isinstance(ctx.events, EventStream)
    warnings = [e.msg for e in ctx.events.events() if e.event == "log" and e.level == "warning"]  # type: ignore[attr-defined]
    assert any("CodeAct" in w and "xml" in w for w in warnings)


def test_a_codeact_question_stops_the_node_with_the_question_and_what_to_do(
    block: ConvertBlock, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "xml"})
    llm_server.add_chat("ルート要素名は何にしますか？", when=prompt_contains("You are CodeAct"))

    with pytest.raises(BlockError) as caught:
        run_like_runner(block, {"request": "XML にして", "source": str(source)}, context(tmp_path))

    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "ルート要素名は何にしますか？" in caught.value.message
    assert "依頼文" in caught.value.hint


def test_a_failure_is_raised_as_its_block_error(
    block: ConvertBlock, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_chat(json={"action": "convert", "target_format": "csv"})

    with pytest.raises(BlockError) as caught:
        run_like_runner(
            block, {"request": "CSV に", "source": str(tmp_path / "ない.csv")}, context(tmp_path)
        )

    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert caught.value.hint


def test_an_llm_api_error_is_raised(
    block: ConvertBlock, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.add_error(500, "down")
    with pytest.raises(LLMError):
        run_like_runner(block, {"request": "CSV に", "source": str(source)}, context(tmp_path))


def test_a_cancelled_node_stops_before_calling_a_model(
    block: ConvertBlock, source: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    ctx = context(tmp_path)
    ctx.cancel_event.set()

    with pytest.raises(BlockError) as caught:
        run_like_runner(block, {"request": "CSV に", "source": str(source)}, ctx)

    assert caught.value.code == ErrorCode.CANCELLED
    assert llm_server.chat_requests() == []


@pytest.mark.parametrize(
    ("inputs", "field"),
    [({"request": "  "}, "request"), ({"request": "CSV に", "source": " "}, "source")],
)
def test_bad_inputs_are_refused_before_anything_runs(
    block: ConvertBlock, inputs: dict[str, str], field: str
) -> None:
    with pytest.raises(BlockError) as caught:
        block.check_inputs(inputs)
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert caught.value.details["field"] == field
