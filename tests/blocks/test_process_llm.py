"""ai.process_llm against the scripted LLM server: prompts, excerpts, groups, schemas, errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.ai.process_llm import DEFAULT_SYSTEM_PROMPT, schema_to_model
from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError, ErrorCode, LLMOutputError
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.support import ScriptedLLMServer, prompt_contains

# The seed 002 §5 plan's schema: object results/summary become the block's outputs.
SEED_SCHEMA: dict[str, Any] = {
    "results": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"file": "string", "count": "integer"}},
            }
        },
    },
    "summary": {"type": "object", "properties": {"total_files": "integer"}},
}


def record(group: str, name: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"group": group, "path": f"{group}/{name}", "name": name, "text": text, **extra}


EVIDENCE = {
    "files": [
        record("A社", "請求書.txt", "A社請求書 合計110000円" + "あ" * 100 + "末尾の文字列"),
        record("B社", "入金.txt", "B社入金明細 55000円"),
    ]
}


@pytest.fixture
def block(registry: BlockRegistry) -> Block:
    return registry.load("ai.process_llm")


def user_text(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def test_structured_reply_becomes_results_and_summary(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    reply = {
        "results": {"items": [{"file": "A社/請求書.txt", "count": 1}]},
        "summary": {"total_files": 2},
    }
    llm_server.add_chat(json=reply)
    inputs = {
        "evidence_data": EVIDENCE,
        "prompt": "請求書と入金明細を照合してください",
        "output_schema": SEED_SCHEMA,
        "per_file_chars": 30,
    }
    out = run_like_runner(block, inputs, make_ctx("process_llm"))
    assert out == {"results": reply["results"], "summary": {"total_files": 2}}
    (request,) = llm_server.chat_requests()
    system, user = request["messages"][0]["content"], user_text(request)
    assert system == DEFAULT_SYSTEM_PROMPT
    assert "null" in system
    assert user.startswith("請求書と入金明細を照合してください")
    assert "A社/請求書.txt" in user
    assert "B社/入金.txt" in user
    # per_file_chars: the first 30 characters of the long file, and a note that it was cut.
    assert EVIDENCE["files"][0]["text"][:30] in user
    assert EVIDENCE["files"][0]["text"][:31] not in user
    assert "末尾の文字列" not in user
    assert f"先頭 30 文字のみ・全 {len(EVIDENCE['files'][0]['text'])} 文字" in user
    # The reply schema is the plan's, with its property names.
    schema = request["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"results", "summary"}


def test_without_results_key_the_whole_reply_is_the_result(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"summary": "2件の証跡を確認", "取引先数": 2})
    inputs = {
        "evidence_data": EVIDENCE,
        "instruction": "証跡を要約してください",
        "output_schema": {"summary": {"type": "string"}, "取引先数": "integer"},
    }
    out = run_like_runner(block, inputs, make_ctx())
    assert out["results"] == {"summary": "2件の証跡を確認", "取引先数": 2}
    assert out["summary"] == {"files": 2, "groups": 2}
    assert user_text(llm_server.chat_requests()[0]).startswith("証跡を要約してください")


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_group_key_calls_the_llm_once_per_group(
    block: Block,
    make_ctx: ContextFactory,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    method: str,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_STRUCTURED_METHOD", method)
    llm_server.add_chat(json={"vendor": "A社", "amount": 110000}, when=prompt_contains("A社請求書"))
    llm_server.add_chat(json={"vendor": "B社", "amount": 55000}, when=prompt_contains("B社入金"))
    inputs = {
        "evidence_data": EVIDENCE,
        "prompt": "取引先と金額を抽出",
        "output_schema": {"vendor": "string", "amount": "integer"},
        "group_key": "group",
    }
    out = run_like_runner(block, inputs, make_ctx())
    assert out["results"] == {
        "A社": {"vendor": "A社", "amount": 110000},
        "B社": {"vendor": "B社", "amount": 55000},
    }
    assert out["summary"] == {"files": 2, "groups": 2}
    first, second = (user_text(r) for r in llm_server.chat_requests())
    assert "グループ: A社" in first
    assert "B社入金" not in first
    assert "グループ: B社" in second
    assert "A社請求書" not in second
    assert llm_server.pending() == 0


def test_grouped_results_and_summary_are_keyed_by_group(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"results": {"items": []}, "summary": {"total_files": 1}}, repeat=True)
    inputs = {
        "evidence_data": EVIDENCE,
        "prompt": "照合",
        "output_schema": SEED_SCHEMA,
        "group_key": "group",
    }
    out = run_like_runner(block, inputs, make_ctx())
    assert out["results"] == {"A社": {"items": []}, "B社": {"items": []}}
    assert out["summary"] == {"A社": {"total_files": 1}, "B社": {"total_files": 1}}


def test_a_schema_with_results_only_leaves_summary_empty(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"results": {"matched": True}})
    inputs = {
        "evidence_data": EVIDENCE,
        "prompt": "照合",
        "output_schema": {"results": {"type": "object", "properties": {"matched": "boolean"}}},
    }
    out = run_like_runner(block, inputs, make_ctx())
    assert out == {"results": {"matched": True}, "summary": {}}


def test_tables_contribute_only_their_first_rows(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    table = "\n".join(f"2025-01-{day:02d}\t{day * 100}" for day in range(1, 31))
    evidence = {"files": [record("C社", "明細.xlsx", table, format="xlsx")]}
    llm_server.add_chat(json={"total": 1500})
    inputs = {
        "evidence_data": evidence,
        "prompt": "合計",
        "output_schema": {"total": "number"},
        "max_table_rows": 5,
    }
    run_like_runner(block, inputs, make_ctx())
    user = user_text(llm_server.chat_requests()[0])
    assert "2025-01-05\t500" in user
    assert "2025-01-06" not in user
    assert "表の先頭 5 行のみ・全 30 行" in user


def test_images_are_attached_up_to_the_limit(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    images = []
    for name in ("receipt1.png", "receipt2.png"):
        path = tmp_path / name
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode())
        images.append({"path": name, "name": name, "local_path": str(path), "text": None})
    llm_server.add_chat(json={"amount": 300})
    inputs = {
        "evidence_data": {"files": images},
        "prompt": "領収書の金額",
        "output_schema": {"amount": "integer"},
        "max_images": 1,
    }
    run_like_runner(block, inputs, make_ctx())
    content = llm_server.chat_requests()[0]["messages"][-1]["content"]
    attached = [part for part in content if part["type"] == "image_url"]
    assert len(attached) == 1
    assert attached[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "添付していない画像 1 件: receipt2.png" in user_text(llm_server.chat_requests()[0])


def test_missing_schema_or_prompt_fails_before_any_llm_call(
    block: Block, llm_server: ScriptedLLMServer
) -> None:
    with pytest.raises(BlockError) as no_schema:
        block.check_inputs({"prompt": "抽出", "output_schema": {}})
    assert no_schema.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "output_schema" in no_schema.value.hint
    with pytest.raises(BlockError) as no_prompt:
        block.check_inputs({"instruction": " ", "output_schema": {"amount": "integer"}})
    assert no_prompt.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "prompt" in no_prompt.value.hint
    assert llm_server.chat_requests() == []


def test_unknown_type_in_schema_names_the_property(block: Block) -> None:
    schema = {"results": {"type": "object", "properties": {"amount": "money"}}}
    with pytest.raises(BlockError) as info:
        block.check_inputs({"prompt": "抽出", "output_schema": schema})
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert "results.amount" in info.value.message
    assert "money" in info.value.message


def test_group_key_missing_from_files_is_an_input_error(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    inputs = {
        "evidence_data": EVIDENCE,
        "prompt": "抽出",
        "output_schema": {"amount": "integer"},
        "group_key": "vendor",
    }
    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert "vendor" in info.value.message
    assert "group" in info.value.hint
    assert llm_server.chat_requests() == []


def test_reply_that_does_not_fit_is_an_output_error(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    llm_server.add_chat(json={"amount": "たくさん"}, repeat=True)
    inputs = {"evidence_data": EVIDENCE, "prompt": "金額", "output_schema": {"amount": "integer"}}
    with pytest.raises(LLMOutputError) as info:
        run_like_runner(block, inputs, make_ctx())
    assert info.value.code == ErrorCode.OUTPUT_SCHEMA_MISMATCH
    assert "amount" in info.value.message
    assert "たくさん" in info.value.details["raw"]
    # The repair rounds (KEIRI_LLM_REPAIR_ROUNDS, default 2) ask again with the same schema:
    # never a looser attempt behind the user's back.
    requests = llm_server.chat_requests()
    assert len(requests) == 3
    assert all(r["response_format"] == requests[0]["response_format"] for r in requests)


def test_schema_to_model_understands_the_simple_form() -> None:
    model = schema_to_model(
        {
            "取引先": "string",
            "json": {"type": "array", "items": "integer"},
            "status": {"enum": ["一致", "不一致"], "description": "照合結果"},
            "detail": {"type": "object"},
            "memo": {"type": ["string", "null"]},
        }
    )
    value = model.model_validate(
        {"取引先": "A社", "json": [1, 2], "status": "一致", "detail": {"x": 1}}
    )
    assert value.model_dump(by_alias=True) == {
        "取引先": "A社",
        "json": [1, 2],
        "status": "一致",
        "detail": {"x": 1},
        "memo": None,
    }
    schema = model.model_json_schema()
    assert list(schema["properties"]) == ["取引先", "json", "status", "detail", "memo"]
    with pytest.raises(ValueError, match="status"):
        model.model_validate({"status": "たぶん"})


def test_cancelling_the_node_aborts_its_llm_call_in_flight(
    block: Block, make_ctx: ContextFactory, llm_server: ScriptedLLMServer
) -> None:
    # A run's cancel or a node timeout sets the context's cancel event: the block must stop
    # at once with CANCELLED, not wait for a model that answers in a minute.
    llm_server.add_chat(json={"results": {"items": []}}, delay=60.0)
    inputs = {"evidence_data": EVIDENCE, "prompt": "照合して", "output_schema": SEED_SCHEMA}
    ctx = make_ctx("process_llm")
    outcome: dict[str, BaseException] = {}

    def call() -> None:
        try:
            run_like_runner(block, inputs, ctx)
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while not llm_server.chat_requests():  # the request reached the model
        assert time.monotonic() < deadline, "the model was never asked"
        time.sleep(0.05)
    ctx.cancel_event.set()
    worker.join(timeout=30)  # far less than the 60 s reply delay
    assert not worker.is_alive(), "the block kept waiting for the model after the cancel"
    error = outcome["error"]
    assert isinstance(error, BlockError)
    assert error.code == ErrorCode.CANCELLED
    assert len(llm_server.chat_requests()) == 1  # no retry after the cancel


def _grammar_names(schema: Any) -> list[str]:
    """The $defs keys and $ref targets of a JSON Schema: sent as they are (never masked)."""
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$defs" and isinstance(value, dict):
                found += list(value)
            elif key == "$ref" and isinstance(value, str):
                found.append(value)
            found += _grammar_names(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _grammar_names(value)
    return found


def test_nested_model_names_never_carry_the_users_property_names() -> None:
    """A plan's output_schema names its properties in the user's words (a customer, a person in
    romaji); nested objects become $defs/$ref names, which the wire does not mask, so those names
    say only where a property is."""
    import random

    rng = random.Random(14)
    words = ["Misaki_Hasegawa", "sato_taro", "TanakaShoji", "kaiin_0012", "yamada-hanako", "ito"]
    leaked = []
    for case in range(200):
        chosen = rng.sample(words, 3)
        inner = {"type": "object", "properties": {chosen[1]: "string", "金額": "number"}}
        listed = {"type": "array", "items": {"type": "object", "properties": {chosen[2]: "int"}}}
        schema = {chosen[0]: inner, f"{chosen[2]}_list": listed, "備考": "string"}
        sent = schema_to_model(schema).model_json_schema()
        names = _grammar_names(sent)
        assert len(names) >= 4, names  # two nested models, defined and referred to
        leaked += [(case, n) for n in names if any(w.lower() in n.lower() for w in chosen)]
    assert leaked == []
