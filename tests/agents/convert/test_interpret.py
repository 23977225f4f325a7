"""The interpret step: Japanese and English requests become typed jobs (scripted LLM)."""

from __future__ import annotations

import json

import pytest

from keiri_agent.agents.convert.interpret import interpret_request
from keiri_agent.agents.convert.models import ChartSpec, ConvertJob
from keiri_agent.config import LLMRole
from keiri_agent.errors import BlockError, ErrorCode, LLMError, LLMOutputError
from keiri_agent.llm import get_llm
from tests.support import ScriptedLLMServer, prompt_contains

JA_REQUEST = (
    "s3://keiri-data/2024/ の売上.csv を Parquet に変換して、ファイル名は sales_2024 にしてください"
)
EN_REQUEST = "Plot monthly sales from ./data/sales.csv as a bar chart titled 'Monthly sales'"


@pytest.fixture(autouse=True)
def no_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")


def test_a_japanese_request_becomes_a_conversion_job(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(
        json={
            "action": "convert",
            "source": "s3://keiri-data/2024/",
            "files": ["売上.csv"],
            "target_format": "parquet",
            "chart": None,
            "output_name": "sales_2024",
            "summary_ja": "S3 の売上.csv を Parquet に変換します。",
        },
        when=prompt_contains(JA_REQUEST),
    )

    job = interpret_request(JA_REQUEST, source=None, llm=get_llm(LLMRole.INTERPRET))

    assert job == ConvertJob(
        action="convert",
        source="s3://keiri-data/2024/",
        files=["売上.csv"],
        target_format="parquet",
        output_name="sales_2024",
        summary_ja="S3 の売上.csv を Parquet に変換します。",
    )
    (body,) = llm_server.chat_requests()
    assert body["response_format"]["json_schema"]["name"] == "ConvertJob"
    system = body["messages"][0]["content"]
    assert "ユーザーが指定した形式をそのまま" in system  # unsupported formats reach convert


def test_an_english_request_becomes_a_chart_job(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(
        json={
            "action": "viz",
            "source": "./data/sales.csv",
            "files": [],
            "target_format": None,
            "chart": {"kind": "bar", "x": "month", "y": ["sales"], "title": "Monthly sales"},
            "output_name": None,
            "summary_ja": "sales.csv の月別売上を棒グラフにします。",
        }
    )

    job = interpret_request(EN_REQUEST, source=None, llm=get_llm(LLMRole.INTERPRET))

    assert job.action == "viz"
    assert job.chart == ChartSpec(kind="bar", x="month", y=["sales"], title="Monthly sales")
    assert job.chart.format == "png"
    assert job.source == "./data/sales.csv"


def test_the_given_source_wins_and_is_named_in_the_prompt(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(
        json={"action": "convert", "source": "elsewhere.csv", "target_format": "xlsx"}
    )

    job = interpret_request("Excel にして", source="/data/経費.csv", llm=get_llm(LLMRole.INTERPRET))

    assert job.source == "/data/経費.csv"
    assert "/data/経費.csv" in json.dumps(llm_server.chat_requests()[0], ensure_ascii=False)


def test_no_source_anywhere_is_an_input_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(json={"action": "convert", "source": None, "target_format": "csv"})

    with pytest.raises(BlockError) as caught:
        interpret_request("CSV にして", source=None, llm=get_llm(LLMRole.INTERPRET))

    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "--source" in caught.value.hint


@pytest.mark.parametrize(
    ("reply", "missing"),
    [
        ({"action": "convert", "source": "a.csv"}, "target_format"),
        ({"action": "viz", "source": "a.csv"}, "chart"),
    ],
)
def test_a_job_without_its_target_is_the_models_error(
    llm_server: ScriptedLLMServer, reply: dict[str, object], missing: str
) -> None:
    llm_server.add_chat(json=reply)

    with pytest.raises(LLMOutputError) as caught:
        interpret_request("変換して", source=None, llm=get_llm(LLMRole.INTERPRET))

    assert missing in caught.value.message
    assert "KEIRI_LLM_MODEL_INTERPRET" in caught.value.hint


def test_an_empty_request_calls_no_model(llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(BlockError) as caught:
        interpret_request("  ", source="a.csv", llm=get_llm(LLMRole.INTERPRET))
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert llm_server.chat_requests() == []


def test_an_api_error_is_raised(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_error(500, "upstream exploded")

    with pytest.raises(LLMError) as caught:
        interpret_request("変換して", source="a.csv", llm=get_llm(LLMRole.INTERPRET))

    assert caught.value.code == ErrorCode.API_ERROR
    assert "HTTP 500" in caught.value.message
