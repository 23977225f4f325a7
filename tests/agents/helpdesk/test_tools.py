"""The agent's tools as the model sees and calls them: names, Japanese descriptions, argument
bounds, results that carry their sources, and Japanese errors for bad calls and failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.tools import ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from keiri_agent.agents.helpdesk.knowledge import KnowledgeBase, SearchOutput
from keiri_agent.agents.helpdesk.tools import MAX_TOOL_K, make_tools
from keiri_agent.errors import LLMError
from tests.agents.helpdesk.conftest import bm25_settings
from tests.support.llm_server import ScriptedLLMServer


@pytest.fixture
def kb(helpdesk_index: Path) -> KnowledgeBase:
    return KnowledgeBase.open(helpdesk_index, settings=bm25_settings())


def test_tool_names_descriptions_and_schema(kb: KnowledgeBase) -> None:
    manual, qa = make_tools(kb)
    assert (manual.name, qa.name) == ("search_manual", "search_qa")
    assert "エラーコード" in manual.description
    assert "固有名詞" in manual.description
    assert "よくある質問" in qa.description
    assert "BM25" in qa.description  # no embedding model: the model is told how Q/A is searched
    schema = convert_to_openai_tool(manual)["function"]["parameters"]
    assert schema["required"] == ["query"]
    assert schema["properties"]["k"] == {
        "default": 3,
        "description": f"取得する件数（1〜{MAX_TOOL_K}）",
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_TOOL_K,
    }


def test_tools_return_search_outputs_as_dicts(kb: KnowledgeBase) -> None:
    manual, qa = make_tools(kb)
    found = manual.invoke({"query": "E-1004"})
    assert len(found) == 3
    hits = [SearchOutput.model_validate(item) for item in found]
    assert any(h.page == 12 and "E-1004" in h.content for h in hits)
    assert set(found[0]) == {
        "file_name",
        "content",
        "page",
        "row",
        "chunk_id",
        "score",
        "source",
        "relevance",
        "similarity",
        "above_floor",
    }
    assert all(item["above_floor"] for item in found)
    rows = qa.invoke({"query": "同じアカウントで何台までログインできますか", "k": 1})
    assert [(r["row"], r["source"], r["file_name"]) for r in rows] == [(35, "qa", "qa.csv")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"query": "   "}, "検索語（query）が空です"),
        ({"query": "パスワード", "k": 0}, "件数 k は 1〜10"),
        ({"query": "パスワード", "k": 11}, "指定値: 11"),
    ],
)
def test_bad_arguments_raise_a_japanese_tool_exception(
    kb: KnowledgeBase, args: dict[str, object], message: str
) -> None:
    for tool in make_tools(kb):
        with pytest.raises(ToolException, match=message):
            tool.invoke(args)


def test_a_failing_search_is_a_tool_exception_with_its_cause(
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    helpdesk_index_copy: Path,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("KEIRI_LLM_MODEL_EMBEDDING", "openai:scripted-embed")
    monkeypatch.setenv("KEIRI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KEIRI_LLM_MAX_RETRIES", "0")
    kb = KnowledgeBase.open(helpdesk_index_copy)
    manual, qa = make_tools(kb)
    assert "意味検索" in qa.description
    llm_server.add_error(500, "embedding backend down", endpoint="embeddings")
    with pytest.raises(ToolException, match="検索に失敗しました") as failed:
        qa.invoke({"query": "パスワードを忘れた"})
    assert isinstance(failed.value.__cause__, LLMError)
    assert manual.invoke({"query": "E-1004"})  # BM25 needs no model
