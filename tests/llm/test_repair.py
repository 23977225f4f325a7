"""Structured calls against reply shapes real models produce (tests/support's scripted server).

Each test scripts the shape a real model or OpenAI-compatible server sends and asserts what the
caller gets: the validated object after the model was told what was wrong, or a Japanese error
naming the cause (length limit, content filter, empty reply) instead of an English dump.
"""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from keiri_agent.errors import ErrorCode, LLMOutputError
from keiri_agent.events import EventStream
from keiri_agent.llm import get_llm
from keiri_agent.llm.extract import extract_code_blocks, extract_json_object, strip_code_fences
from tests.support import ScriptedLLMServer


class Job(BaseModel):
    action: Literal["convert", "viz"] = Field(title="依頼の種類")
    target: str = Field(description="変換先")
    columns: list[str] = Field(default_factory=list, title="列")


GOOD = {"action": "convert", "target": "xml", "columns": ["売上"]}


def _last_user(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    return str(messages[-1]["content"])


@pytest.mark.parametrize(
    "reply",
    [
        "以下が結果です。\n" + json.dumps(GOOD, ensure_ascii=False) + "\nよろしくお願いします。",
        "```json\n" + json.dumps(GOOD, ensure_ascii=False) + "\n```",
    ],
    ids=["prose", "json-fence"],
)
def test_json_in_prose_or_a_fence_is_used_without_a_second_call(
    llm_server: ScriptedLLMServer, reply: str
) -> None:
    llm_server.add_chat(reply)
    assert get_llm("interpret").structured(Job, "変換して") == Job(**GOOD)
    assert len(llm_server.chat_requests()) == 1


def test_near_miss_enum_is_sent_back_with_the_allowed_values_then_recovers(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={**GOOD, "action": "conversion"})
    llm_server.add_chat(json=GOOD)
    stream = EventStream("run_repair", "test")
    job = get_llm("interpret", events=stream).structured(Job, "変換して")
    assert job.action == "convert"
    repair = _last_user(llm_server.chat_requests()[1])
    assert "action" in repair
    assert "'convert'" in repair
    assert "'viz'" in repair
    assert "'convert' のことではありませんか" in repair
    notes = [e for e in stream.events() if e.event == "log"]
    assert notes
    assert "修正を依頼します（1/2 回目）" in notes[0].model_dump()["msg"]


def test_missing_field_and_wrong_type_are_named_in_the_observation(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"action": "convert", "columns": "売上"})
    llm_server.add_chat(json=GOOD)
    assert get_llm().structured(Job, "変換して") == Job(**GOOD)
    repair = _last_user(llm_server.chat_requests()[1])
    assert "変換先: 必須の項目がありません [target: missing: Field required]" in repair
    assert (
        "列: リスト（配列）ではありません（受け取った値: 「売上」） [columns: list_type" in repair
    )


class Section(BaseModel):
    heading: str = Field(title="見出し")
    content: str = Field(title="本文")


class Report(BaseModel):
    title: str = Field(title="表題")
    sections: list[Section] = Field(min_length=1, title="節")


BAD_REPORT = {"title": "売上分析", "sections": [{"heading": "概要", "content": 123}]}
GOOD_REPORT = {"title": "売上分析", "sections": [{"heading": "概要", "content": "増加"}]}


def test_a_repair_notice_says_field_problem_and_value_in_japanese(
    llm_server: ScriptedLLMServer,
) -> None:
    """What a person reads (the run's log event) names the field by its labels, what was wrong
    and what came, in Japanese; the field's path and the validator's English go to the model
    only."""
    llm_server.add_chat(json=BAD_REPORT)
    llm_server.add_chat(json=GOOD_REPORT)
    stream = EventStream("run_notice", "test")
    assert get_llm("report", events=stream).structured(Report, "まとめて") == Report(**GOOD_REPORT)
    (note,) = [e.model_dump()["msg"] for e in stream.events() if e.event == "log"]
    assert "節の 1 番目の本文: 文字列ではありません（受け取った値: 123）" in note
    assert "Input should" not in note
    assert "sections" not in note
    assert "Report" not in note  # the schema's class name stays for the model and the details
    # The model is told the same, plus the exact location and the validator's words.
    repair = _last_user(llm_server.chat_requests()[1])
    assert "節の 1 番目の本文: 文字列ではありません" in repair
    assert "[sections.0.content: string_type: Input should be a valid string]" in repair
    assert "Report" in repair


def test_the_final_error_is_japanese_and_keeps_the_validator_text_in_details(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "0")
    llm_server.add_chat(json={"title": 5, "sections": []})
    with pytest.raises(LLMOutputError) as info:
        get_llm("report").structured(Report, "まとめて")
    error = info.value
    assert error.code == ErrorCode.OUTPUT_SCHEMA_MISMATCH
    assert "表題: 文字列ではありません（受け取った値: 5）" in error.message
    assert "節: 数が足りません（1 個以上必要、0 個でした）" in error.message
    assert "Input should" not in error.message
    assert "should have at least" not in error.message
    by_field = {p["field"]: p for p in error.details["validation"]}
    assert by_field["表題"]["message"] == "Input should be a valid string"
    assert by_field["表題"]["loc"] == ["title"]
    assert by_field["節"]["type"] == "too_short"
    assert error.details["schema"] == "Report"
    assert not any("should" in line for line in error.details["problems"])


def test_repair_rounds_are_bounded_by_the_setting_and_the_error_lists_the_problems(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "1")
    llm_server.add_chat(json={"action": "conversion", "target": "xml"}, repeat=True)
    with pytest.raises(LLMOutputError) as info:
        get_llm().structured(Job, "変換して")
    assert len(llm_server.chat_requests()) == 2  # the first reply and one repair round
    error = info.value
    assert error.code == ErrorCode.OUTPUT_SCHEMA_MISMATCH
    assert "修正を 1 回依頼しても直りませんでした" in error.message
    assert "依頼の種類: 使えない値です" in error.message
    assert "conversion" in error.details["raw"]
    assert "KEIRI_LLM_REPAIR_ROUNDS" in error.hint


def test_transport_retries_and_repair_rounds_are_separate(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "2")
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "1")
    llm_server.add_error(503, times=2)
    llm_server.add_chat(json={"action": "x", "target": "xml"})
    llm_server.add_error(500)
    llm_server.add_chat(json=GOOD)
    assert get_llm().structured(Job, "変換して") == Job(**GOOD)
    assert len(llm_server.chat_requests()) == 5


def test_check_rejections_are_repaired_like_schema_errors(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat(json={"action": "convert", "target": ""})
    llm_server.add_chat(json=GOOD)

    def needs_target(job: Job) -> list[str]:
        return [] if job.target else ["target: 変換先の形式が空です"]

    assert get_llm().structured(Job, "変換して", check=needs_target).target == "xml"
    assert "変換先の形式が空です" in _last_user(llm_server.chat_requests()[1])


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_reply_cut_at_the_length_limit_is_its_own_error(
    llm_server: ScriptedLLMServer, method: str
) -> None:
    if method == "json_schema":
        llm_server.add_chat('{"action": "convert", "tar', finish_reason="length")
    else:
        llm_server.add_chat(
            tool_calls=[{"name": "Job", "arguments": '{"action": "conv'}], finish_reason="length"
        )
    with pytest.raises(LLMOutputError) as info:
        get_llm().structured(Job, "変換して", method=method)  # type: ignore[arg-type]
    error = info.value
    assert error.code == ErrorCode.OUTPUT_TRUNCATED
    assert "長さの上限で途中で切れました" in error.message
    assert "max_tokens" in error.hint
    assert "予期しない" not in error.message
    assert "不具合" not in error.hint
    assert len(llm_server.chat_requests()) == 1  # asking again cannot make it fit


def test_content_filter_is_its_own_error(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("", finish_reason="content_filter")
    with pytest.raises(LLMOutputError) as info:
        get_llm().structured(Job, "変換して")
    assert info.value.code == ErrorCode.OUTPUT_FILTERED
    assert "コンテンツフィルター" in info.value.message


def test_an_empty_reply_is_asked_again_then_reported_in_japanese(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_REPAIR_ROUNDS", "1")
    llm_server.add_chat("", repeat=True)
    with pytest.raises(LLMOutputError) as info:
        get_llm().structured(Job, "変換して")
    error = info.value
    assert error.code == ErrorCode.OUTPUT_EMPTY
    assert "空の応答" in error.message
    assert "parsed" not in error.message  # not LangChain's English dump
    assert len(llm_server.chat_requests()) == 2


def test_code_blocks_are_all_found_in_order_and_fences_are_stripped() -> None:
    reply = (
        "まず表を作ります。\n```python\ndf2 = df.copy()\n```\n出力例:\n```text\nA,B\n```\n"
        "次に保存します。\n```py\ndf2.to_xml('out.xml')\n```"
    )
    assert extract_code_blocks(reply) == ["df2 = df.copy()\n", "df2.to_xml('out.xml')\n"]
    assert strip_code_fences("```python\nprint(1)\n```") == "print(1)\n"
    assert strip_code_fences("print(1)") == "print(1)"
    assert extract_json_object('結果: {"a": {"b": 1}} 以上') == {"a": {"b": 1}}
    assert extract_json_object("JSON はありません") is None
