"""The LLM layer masks personal data in every request and restores it in every reply (issue 37):
plain and tool calls, structured output with repairs, streams, embeddings; one job, one set of
placeholders; ``KEIRI_LLM_MASK_PII=off`` sends the data as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from keiri_agent.errors import LLMError
from keiri_agent.events import EventStream, JsonlSink, LLMCall, LLMUsage, RunEvent, read_events
from keiri_agent.llm import UsageLedger, get_embedder, get_llm
from keiri_agent.llm.masking import mask_input
from keiri_agent.privacy import Vault, job_scope
from tests.support import ScriptedLLMServer
from tests.support.personal import leaked

NAME = "長谷川 美咲"
PHONE = "090-4412-7788"
MY_NUMBER = "123456789018"
QUESTION = f"{NAME}です。マイナンバー {MY_NUMBER}、連絡先は {PHONE} です。"


class Contact(BaseModel):
    name: str
    phone: str


def sent(server: ScriptedLLMServer) -> list[str]:
    return [json.dumps(body, ensure_ascii=False) for body in server.chat_requests()]


def test_a_plain_call_is_masked_and_its_reply_restored(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("〔人名1〕様、〔電話番号1〕 にお電話します。")
    stream = EventStream("run_mask", "test")
    ledger = UsageLedger()
    reply = get_llm("reason", events=stream, ledger=ledger).invoke(QUESTION)
    assert reply.text == f"{NAME}様、{PHONE} にお電話します。"
    (body,) = sent(llm_server)
    assert leaked([body], [NAME, PHONE, MY_NUMBER]) == []
    assert "〔人名1〕です。マイナンバー 〔マイナンバー1〕、連絡先は 〔電話番号1〕 です。" in body
    (call,) = [e for e in stream.events() if isinstance(e, LLMCall)]
    assert call.masked == {"person": 1, "my_number": 1, "phone": 1}
    assert ledger.totals().masked == {"person": 1, "my_number": 1, "phone": 1}


def test_tool_calls_are_restored_and_a_conversation_is_masked_whole(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(tool_calls=[{"name": "lookup", "arguments": {"who": "〔人名1〕"}}])
    llm_server.add_chat("〔人名1〕様の登録を確認しました。")

    def lookup(who: str) -> str:
        """Look a customer up."""
        return who

    llm = get_llm("helpdesk")
    with job_scope():
        first = llm.invoke(QUESTION, tools=[lookup])
        assert first.tool_calls[0]["args"] == {"who": NAME}  # the tool gets the real value
        history = [
            HumanMessage(QUESTION),
            first,
            ToolMessage(f"{NAME}: 登録済み（{PHONE}）", tool_call_id=first.tool_calls[0]["id"]),
        ]
        second = llm.invoke(history)
    assert second.text == f"{NAME}様の登録を確認しました。"
    bodies = sent(llm_server)
    assert leaked(bodies, [NAME, PHONE, MY_NUMBER]) == []
    messages = llm_server.chat_requests()[1]["messages"]
    assert json.loads(messages[1]["tool_calls"][0]["function"]["arguments"]) == {"who": "〔人名1〕"}
    assert messages[2]["content"] == "〔人名1〕: 登録済み（〔電話番号1〕）"


def test_structured_output_and_its_repair_round_carry_placeholders_only(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"name": "〔人名1〕"})  # phone missing: one repair round
    llm_server.add_chat(json={"name": "〔人名1〕", "phone": "〔電話番号1〕"})
    contact = get_llm("reason").structured(Contact, QUESTION)
    assert contact == Contact(name=NAME, phone=PHONE)
    bodies = sent(llm_server)
    assert len(bodies) == 2
    assert leaked(bodies, [NAME, PHONE, MY_NUMBER]) == []
    assert "〔人名1〕" in bodies[1]


def test_a_stream_shows_the_real_values(llm_server: ScriptedLLMServer) -> None:
    # Pieces are 8 characters: the placeholders are cut between two of them.
    llm_server.add_chat("ご連絡ありがとうございます、〔人名1〕様（〔電話番号1〕）。")
    pieces = list(get_llm("report").stream(QUESTION))
    assert "".join(pieces) == f"ご連絡ありがとうございます、{NAME}様（{PHONE}）。"
    assert leaked(sent(llm_server), [NAME, PHONE, MY_NUMBER]) == []


def test_embeddings_get_the_kind_in_place_of_the_value(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embedding")
    llm_server.add_embedding()
    llm_server.add_embedding()
    embedder = get_embedder()
    embedder.embed_documents([QUESTION, "振込先の変更方法"])
    embedder.embed_query(f"{PHONE} の持ち主")
    bodies = [json.dumps(body, ensure_ascii=False) for body in llm_server.embedding_requests()]
    assert leaked(bodies, [NAME, PHONE, MY_NUMBER]) == []
    assert "〔人名〕です。マイナンバー 〔マイナンバー〕" in bodies[0]
    assert "振込先の変更方法" in bodies[0]


def test_one_job_is_one_set_of_placeholders_across_clients(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("a", repeat=True)
    with job_scope():
        get_llm("reason").invoke(f"担当は 佐藤 翔太 さん、顧客は {NAME} さん")
        get_llm("report").invoke(f"{NAME} さんに連絡")
    get_llm("report").invoke(f"{NAME} さんに連絡")  # another job: numbering starts again
    bodies = sent(llm_server)
    assert "〔人名2〕 さんに連絡" in bodies[1]
    assert "〔人名1〕 さんに連絡" in bodies[2]


def test_with_masking_off_the_data_is_sent_as_it_is(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MASK_PII", "off")
    llm_server.add_chat("〔人名1〕様")
    reply = get_llm("reason").invoke(QUESTION)
    assert reply.text == "〔人名1〕様"
    assert QUESTION in sent(llm_server)[0]


def test_an_earlier_reply_in_the_history_is_sent_masked(llm_server: ScriptedLLMServer) -> None:
    llm_server.add_chat("ok")
    get_llm("reason").invoke(
        [HumanMessage("質問"), AIMessage(f"{NAME}様ですね"), HumanMessage("はい")]
    )
    assert leaked(sent(llm_server), [NAME]) == []


REGISTER = {
    "type": "function",
    "function": {
        "name": "register",
        "description": "振込口座を登録する",
        "parameters": {
            "type": "object",
            "properties": {
                "氏名": {"type": "string"},
                "口座番号": {"type": "string"},
                "メモ": {"type": "string"},
                "金額": {"type": "integer"},
                "振込日": {"type": "string"},
            },
            "required": ["氏名", "口座番号", "メモ", "金額", "振込日"],
            "additionalProperties": False,
        },
    },
}


def test_tool_call_arguments_stay_valid_json_for_their_schema_once_masked(
    llm_server: ScriptedLLMServer,
) -> None:
    # What a provider checks: each earlier tool call's arguments are JSON for the tool's schema.
    jsonschema = pytest.importorskip("jsonschema")
    account, other_phone = "4410297", "080-2233-4455"
    args = {
        "氏名": NAME,
        "口座番号": account,  # seven digits: personal only because of the key
        "メモ": f"連絡先\n{other_phone}",  # JSON text escapes the line break: \n080-...
        "金額": 120_000,
        "振込日": "2025-04-01",
    }
    raw = json.dumps(args, ensure_ascii=False)
    history = [
        HumanMessage(QUESTION),
        AIMessage(
            "",
            tool_calls=[{"name": "register", "args": args, "id": "call_1"}],
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "register", "arguments": raw},
                    }
                ]
            },
        ),
        ToolMessage(raw, tool_call_id="call_1"),  # a tool result in JSON, as tools return it
        AIMessage(
            "",
            invalid_tool_calls=[
                {"name": "register", "args": raw[:-20], "id": "call_2", "error": "truncated"}
            ],
        ),
        ToolMessage("やり直してください", tool_call_id="call_2"),
    ]
    llm_server.add_chat("登録しました。")

    get_llm("reason").invoke(history, tools=[REGISTER])

    body = llm_server.chat_requests()[0]
    assert leaked(sent(llm_server), [NAME, PHONE, MY_NUMBER, account, other_phone]) == []
    messages = body["messages"]
    schema = body["tools"][0]["function"]["parameters"]
    arguments = json.loads(messages[1]["tool_calls"][0]["function"]["arguments"])
    jsonschema.validate(arguments, schema)
    assert arguments == {
        "氏名": "〔人名1〕",
        "口座番号": "〔口座番号1〕",
        "メモ": "連絡先\n〔電話番号2〕",
        "金額": 120_000,  # amounts and dates are not personal data
        "振込日": "2025-04-01",
    }
    assert json.loads(messages[2]["content"]) == arguments
    truncated = messages[3]["tool_calls"][0]["function"]["arguments"]
    assert "〔口座番号1〕" in truncated
    assert "連絡先\\n〔電話番号2〕" in truncated


def test_a_structured_reply_sent_back_for_repair_is_still_json(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.add_chat(json={"name": "〔人名1〕", "phone": "不明"})
    llm_server.add_chat(json={"name": "〔人名1〕", "phone": "〔電話番号1〕"})

    def check(contact: Contact) -> list[str]:
        return [] if contact.phone == PHONE else ["電話番号が質問と違います"]

    assert get_llm("reason").structured(Contact, QUESTION, check=check) == Contact(
        name=NAME, phone=PHONE
    )
    repair = llm_server.chat_requests()[1]["messages"]
    replies = [m for m in repair if m["role"] == "assistant"]
    (reply,) = replies
    text = (
        reply["tool_calls"][0]["function"]["arguments"]
        if reply.get("tool_calls")
        else reply["content"]
    )
    assert json.loads(text) == {"name": "〔人名1〕", "phone": "不明"}
    assert leaked(sent(llm_server), [NAME, PHONE, MY_NUMBER]) == []


def test_anthropic_tool_use_blocks_are_masked_and_stay_objects_for_their_schema() -> None:
    # Anthropic keeps tool calls as content blocks; a block without a matching tool call (or
    # with a caller) is sent with its own input, and a tool result may be a list of blocks.
    from langchain_anthropic.chat_models import _format_messages  # the provider's wire form

    jsonschema = pytest.importorskip("jsonschema")
    args = {"氏名": NAME, "口座番号": "4410297", "メモ": f"連絡先 {PHONE}", "金額": 120_000, "振込日": "2025-04-01"}  # fmt: skip
    history = [
        HumanMessage(QUESTION),
        AIMessage(
            [
                {"type": "text", "text": f"{NAME}様を登録します"},
                {"type": "tool_use", "id": "t1", "name": "register", "input": args, "caller": "x"},
            ]
        ),
        ToolMessage(
            [{"type": "text", "text": json.dumps(args, ensure_ascii=False)}], tool_call_id="t1"
        ),
    ]
    sent_messages, _ = mask_input(history, Vault())
    _, wire = _format_messages(sent_messages, model="claude-sonnet-4-5")
    text = json.dumps(wire, ensure_ascii=False)
    assert leaked([text], [NAME, PHONE, MY_NUMBER, "4410297"]) == []
    (tool_use,) = [b for b in wire[1]["content"] if b["type"] == "tool_use"]
    jsonschema.validate(tool_use["input"], REGISTER["function"]["parameters"])
    assert tool_use["input"]["金額"] == 120_000
    assert tool_use["input"]["口座番号"] == "〔口座番号1〕"


def test_a_json_prompt_is_sent_as_written_unless_it_holds_personal_data() -> None:
    plain = '{\n  "取引先": "株式会社サンプル",\n  "金額": 5000,\n  "日付": "2025-04-01"\n}'
    personal = '{\n  "担当者": "長谷川 美咲",\n  "金額": 5000\n}'
    (first, second), counts = mask_input([HumanMessage(plain), HumanMessage(personal)], Vault())
    assert first.content == plain
    assert json.loads(str(second.content)) == {"担当者": "〔人名1〕", "金額": 5000}
    assert str(second.content).startswith('{\n  "担当者"')  # still laid out for a reader
    assert counts == {"person": 1}


def test_a_calls_usage_reads_back_from_the_run_log_as_the_ledger_holds_it(
    llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger's record and the logged ``llm_call`` event are one model: what the run log
    says of a call (read back by the run-log reader) is exactly what the ledger summed."""
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    llm_server.add_chat("〔人名1〕様、承知しました。", usage=(30, 7))
    llm_server.add_error(500)
    log = tmp_path / "run.jsonl"
    stream = EventStream("run_usage", "test", sink=JsonlSink(log))
    ledger = UsageLedger()
    llm = get_llm("reason", events=stream, ledger=ledger)
    llm.invoke(QUESTION)
    with pytest.raises(LLMError):
        llm.invoke("もう一度")
    stream.close()

    calls = [e for e in read_events(log) if isinstance(e, LLMCall)]
    fields = set(LLMUsage.model_fields)
    assert [LLMUsage.model_validate(c.model_dump(include=fields)) for c in calls] == ledger.records
    assert [(r.ok, r.masked, r.total_tokens) for r in ledger.records] == [
        (True, {"person": 1, "my_number": 1, "phone": 1}, 37),
        (False, None, 0),
    ]
    assert set(LLMCall.model_fields) == fields | set(RunEvent.model_fields)
