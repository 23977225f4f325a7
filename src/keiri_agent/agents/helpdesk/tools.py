"""The help-desk agent's tools: ``search_manual`` and ``search_qa`` over a :class:`KnowledgeBase`.

Both are LangChain ``StructuredTool``s taking ``query: str`` and ``k: int = 3`` (1..``MAX_TOOL_K``).
Their Japanese descriptions tell the model when to use each: ``search_manual`` for exact terms
(error codes, screen and feature names, procedures; with the bundled model also the user's own
wording), ``search_qa`` for a question phrased like a user's (semantic search over the FAQ, or
lexical search when semantic search is off — the descriptions say which).

Each tool returns ``list[dict]``: ``SearchOutput.model_dump()`` per hit (file_name, content,
page, row, chunk_id, score, source, relevance, similarity, above_floor), JSON-serializable for a
ToolMessage and turned back into models with ``SearchOutput.model_validate``. Up to ``k`` hits
above the relevance floor (``KEIRI_HELPDESK_MIN_RELEVANCE``) are returned, with the hits below it
that rank among them flagged ``above_floor: false``; none above it is 該当なし. Bad arguments (an empty query, ``k`` out of range)
and search failures raise ``ToolException`` with a Japanese message (the original
``BlockError`` is its ``__cause__``), so the agent can report them.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field, WithJsonSchema

from keiri_agent.agents.helpdesk.knowledge.store import KnowledgeBase
from keiri_agent.errors import BlockError

__all__ = [
    "DEFAULT_TOOL_K",
    "MANUAL_DESCRIPTION",
    "MANUAL_DESCRIPTION_SEMANTIC",
    "MAX_TOOL_K",
    "SEARCH_MANUAL",
    "SEARCH_QA",
    "SearchArgs",
    "make_tools",
]

SEARCH_MANUAL = "search_manual"
SEARCH_QA = "search_qa"
DEFAULT_TOOL_K = 3
MAX_TOOL_K = 10

MANUAL_DESCRIPTION = (
    "XYZシステムのマニュアルとリリースノートをキーワード検索します（送り仮名・かな書き・全角半角の"
    "違いは吸収します）。"
    "エラーコード（例: E-1004）、画面名・メニュー名・機能名などの固有名詞、操作手順や設定方法を"
    "調べるときに使ってください。語句が文書中の表記と一致するほどよく見つかるので、"
    "質問文の中の具体的な語（コード、画面名、機能名）をそのまま query に入れてください。"
    "結果はファイル名・ページ番号・本文・スコア・関連度です。関連する記述がなければ空の結果"
    "（該当なし）を返します。"
)
MANUAL_DESCRIPTION_SEMANTIC = (
    "XYZシステムのマニュアルとリリースノートを検索します。語句の一致（送り仮名・かな書き・全角半角の"
    "違いは吸収）と意味の近さの両方で順位を付けるので、利用者の言い回しの質問文のままでも見つかります。"
    "エラーコード（例: E-1004）、画面名・メニュー名・機能名などの固有名詞は、質問文の中の語をそのまま"
    "query に入れてください（完全に一致する記述が先に来ます）。"
    "結果はファイル名・ページ番号・本文・スコア・関連度です。資料が扱っていない質問には空の結果"
    "（該当なし）を返します。"
)
QA_DESCRIPTION_DENSE = (
    "過去の問い合わせをまとめた「よくある質問（Q/A）」を意味検索します。"
    "ユーザーの質問に近い自然な質問文（例: 「パスワードを忘れたときはどうすればいい？」）を"
    "query に入れてください。言い回しが違っても意味の近い Q/A が見つかります。"
    "結果は Q/A の行番号・質問と回答・スコア・類似度です。関連する Q/A がなければ空の結果"
    "（該当なし）を返します。"
)
QA_DESCRIPTION_BM25 = (
    "過去の問い合わせをまとめた「よくある質問（Q/A）」を検索します。"
    "ユーザーの質問に近い質問文を query に入れてください。"
    "（埋め込みモデルが未設定のため、現在はキーワード一致（BM25）で検索します。"
    "質問文の中の具体的な語を含めると見つかりやすくなります。）"
    "結果は Q/A の行番号・質問と回答・スコアです。関連する Q/A がなければ空の結果（該当なし）を"
    "返します。"
)


class SearchArgs(BaseModel):
    """Arguments of both tools (bounds are advertised in the schema and checked by the tool)."""

    query: str = Field(description="検索する語句または質問文（日本語）")
    # The bounds go into the schema the model sees; the tool checks them itself so that a
    # violation is a ToolException with a Japanese message rather than pydantic's English one.
    k: Annotated[int, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_TOOL_K})] = (
        Field(default=DEFAULT_TOOL_K, description=f"取得する件数（1〜{MAX_TOOL_K}）")
    )


def _check(query: str, k: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise ToolException("検索語（query）が空です。調べたい語句か質問文を指定してください。")
    if not 1 <= k <= MAX_TOOL_K:
        raise ToolException(f"件数 k は 1〜{MAX_TOOL_K} の整数で指定してください（指定値: {k}）。")


def _run(search: Any, query: str, k: int) -> list[dict[str, Any]]:
    _check(query, k)
    try:
        hits = search(query.strip(), k)
    except BlockError as exc:
        text = exc.message + (f"（ヒント: {exc.hint}）" if exc.hint else "")
        raise ToolException(f"検索に失敗しました: {text}") from exc
    return [hit.model_dump(mode="json") for hit in hits]


def make_tools(kb: KnowledgeBase) -> list[BaseTool]:
    """``[search_manual, search_qa]`` bound to ``kb`` (see the module docstring)."""

    # Hits below the relevance floor come back flagged (above_floor=False): the agent keeps
    # them out of the model's sight and says why nothing counted (grounding.split_relevant).
    def search_manual(query: str, k: int = DEFAULT_TOOL_K) -> list[dict[str, Any]]:
        return _run(lambda q, n: kb.rank(q, n, tool="manual"), query, k)

    def search_qa(query: str, k: int = DEFAULT_TOOL_K) -> list[dict[str, Any]]:
        return _run(lambda q, n: kb.rank(q, n, tool="qa"), query, k)

    qa_description = QA_DESCRIPTION_DENSE if kb.qa_mode == "dense" else QA_DESCRIPTION_BM25
    semantic = kb.stats().semantic_model is not None
    return [
        StructuredTool.from_function(
            func=search_manual,
            name=SEARCH_MANUAL,
            description=MANUAL_DESCRIPTION_SEMANTIC if semantic else MANUAL_DESCRIPTION,
            args_schema=SearchArgs,
        ),
        StructuredTool.from_function(
            func=search_qa,
            name=SEARCH_QA,
            description=qa_description,
            args_schema=SearchArgs,
        ),
    ]
