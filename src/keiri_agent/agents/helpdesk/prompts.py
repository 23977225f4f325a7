"""Japanese prompts of the help-desk agent (seed 001 §7.2), every one overridable.

``HelpDeskAgentPrompts`` is a frozen dataclass: override a prompt by passing it
(``HelpDeskAgentPrompts(planner_system_prompt="...")``), with ``dataclasses.replace``, or by
subclassing with a different default. Placeholders are ``str.format`` fields; the comment above
each default lists the ones it receives. The builders at the end turn prompts and results into
the messages of each call, the prompts' text marked the product's own (``privacy.ours``: the
wire masks only what the user, the documents and the model wrote).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from keiri_agent.agents.helpdesk.models import (
    MAX_CHALLENGE_COUNT,
    SearchOutput,
    Subtask,
    ToolResult,
    citation,
)
from keiri_agent.privacy import Ours, compose, fill, join

__all__ = [
    "MAX_HIT_CHARS",
    "HelpDeskAgentPrompts",
    "citations",
    "final_answer_messages",
    "fix_requests",
    "numbered",
    "planner_messages",
    "reflection_message",
    "render_tool_result",
    "revision_message",
    "subtask_answer_message",
    "tool_selection_messages",
]

PLANNER_SYSTEM_PROMPT = """あなたは XYZ システムのヘルプデスク担当者です。
ユーザーの質問に答えるために、調べるべきことを独立したサブタスクに分解します。

## ルール
- 各サブタスクは、マニュアル検索または過去の Q&A 検索で単独で調べられる、具体的な 1 つの問いにします。
- サブタスクは互いに独立させます（並行して調べます）。同じ内容を重複させないこと。
- サブタスクは必要最小限（1〜5 個）にします。質問が単純なら 1 個で構いません。
- サブタスクは日本語で、「〜を調べる」「〜を確認する」の形で書きます。"""

PLANNER_USER_PROMPT = """## 質問
{question}

## タスク
この質問に答えるためのサブタスクのリストを作成してください。"""

SUBTASK_SYSTEM_PROMPT = """あなたは XYZ システムのヘルプデスク担当者です。
ユーザーの質問に答えるための計画のうち、割り当てられた 1 つのサブタスクを、ツールで資料を検索して解決します。

## 使えるツール
- search_manual: XYZ システムのマニュアル（PDF など）を検索します。操作方法・仕様・設定の確認に使います。
- search_qa: 過去の問い合わせと回答（Q&A）を検索します。よくある質問・トラブル事例の確認に使います。

## ルール
- 回答は検索結果に書かれている内容だけを根拠にします。推測や一般知識で補わないこと。
- 根拠にした検索結果は、検索結果に付いている出典ラベル（【出典: ファイル名 p.ページ】や【出典: Q&A ファイル名 N 行目】）を
  そのまま書き写して示します。ファイル名を省略しないこと。
- 検索結果に答えが無いときは、無いとはっきり書きます。"""

# {question} {plan} {subtask}
SUBTASK_TOOL_SELECTION_USER_PROMPT = """## ユーザーの質問
{question}

## 計画（全サブタスク）
{plan}

## あなたのサブタスク
{subtask}

## タスク
このサブタスクを解決するために、適切なツールを選んで呼び出してください。
検索クエリは、資料に書かれていそうな具体的な語句にします。"""

# {previous_answer} {advice}
SUBTASK_RETRY_USER_PROMPT = """前回の回答は不十分と評価されました。

## 前回の回答
{previous_answer}

## 改善のための助言
{advice}

## タスク
助言をふまえて、検索クエリや使うツールを変えて、もう一度ツールを呼び出してください。"""

# {results}
SUBTASK_ANSWER_USER_PROMPT = """## 検索結果
{results}

## タスク
上の検索結果だけにもとづいて、あなたのサブタスクに日本語で簡潔に回答してください。
根拠にした検索結果の出典ラベルを、ファイル名を含めてそのまま書き写してください。
答えが見つからないときは、見つからなかったとはっきり書いてください。"""

SUBTASK_REFLECTION_USER_PROMPT = """## タスク
あなたのサブタスクへの上の回答を評価してください。
- 回答が検索結果にもとづいてサブタスクに十分に答えていれば is_completed を true にします。
- 不十分なら is_completed を false にし、advice に、次の試行でどのツールをどんな検索語で調べ直すべきかを具体的に書きます。
- 検索結果に無い内容を含む回答、出典が示されていない回答は不十分です。
- ツールの呼び出しがエラーになっていたら、advice に正しい呼び出し方を書きます。"""

FINAL_ANSWER_SYSTEM_PROMPT = """あなたは XYZ システムのヘルプデスク担当者です。
サブタスクごとの調査結果をまとめて、ユーザーの質問に日本語で最終回答します。

## ルール
- 調査結果に書かれている内容だけを使います。推測で補わないこと。
- 根拠を述べるたびに、調査結果に付いている出典ラベル（【出典: ファイル名 p.ページ】や【出典: Q&A ファイル名 N 行目】）を
  そのまま書き写します。ファイル名・ページ・行を省略しないこと。調査結果に無い出典を書かないこと。
- 状態が「未解決」のサブタスクの内容には答えないこと（推測で埋めない）。未解決の項目とお問い合わせ先の案内は、
  システムが回答の末尾に追記するので、あなたは書かなくて構いません。
- 丁寧な言葉で、ユーザーがそのまま読める日本語の回答にします（手順は箇条書き）。"""

# {question} {subtask_results}
FINAL_ANSWER_USER_PROMPT = """## ユーザーの質問
{question}

## サブタスクごとの調査結果
{subtask_results}

## タスク
上の調査結果をもとに、ユーザーの質問への最終回答を作成してください。"""

# {index} {task_name} {status} {answer} {citations}
SUBTASK_RESULT_TEMPLATE = """### サブタスク {index}: {task_name}
状態: {status}
回答:
{answer}
参照した資料: {citations}"""

RESOLVED_LABEL = "解決"
# {max_challenges}
UNRESOLVED_LABEL = "未解決（{max_challenges} 回試行しても資料から十分な回答を得られませんでした）"
# The answer of an unresolved subtask is not passed on: it rests on nothing retrieved.
UNRESOLVED_ANSWER = "（資料から確認できなかったため、この項目には回答しないでください）"

# {items}: one "- task（理由）" line per unresolved subtask
UNRESOLVED_NOTE = """【未解決の項目】
次の内容は、資料からは確認できませんでした。推測ではお答えできないため、ヘルプデスク担当者にお問い合わせください。
{items}"""

# The answer when no subtask was resolved; {items} as above.
NO_ANSWER = """ご質問の内容は、検索した資料（マニュアルと過去の問い合わせ）には見つかりませんでした。
資料に書かれていないことを推測でお答えすることはできません。お手数ですが、ヘルプデスク担当者（社内のお問い合わせ窓口）に直接お問い合わせください。

確認できなかった項目:
{items}"""

# Put before the answer when some subtasks are unresolved.
PARTIAL_LEAD = (
    "ご質問のうち一部は、資料から確認できませんでした（末尾の【未解決の項目】をご覧ください）。"
    "資料で確認できた内容は次のとおりです。"
)

# {citations}
SOURCES_NOTE = "参照した資料: {citations}"
# {citations}: labels removed from the final answer
REMOVED_CITATIONS_NOTE = (
    "注意: 回答に、今回の検索結果に無い出典（{citations}）が書かれていたため削除しました。"
    "その出典にもとづく記述は資料で確認されていません。"
)
NOT_JAPANESE_NOTE = (
    "注意: 回答が日本語で書かれていません（書き直しを 1 度依頼しましたが直りませんでした）。"
)
# The final answer is sent back once with these problems. {citations}
CITATION_FIX_REQUEST = (
    "次の出典ラベルは、調査結果に無い資料を指しています: {citations}。"
    "調査結果に付いている出典ラベルだけを使い、それ以外の出典と、その出典にしかもとづかない記述を削除してください。"
)
JAPANESE_FIX_REQUEST = (
    "回答が日本語ではありません。内容と出典ラベルは変えずに、日本語で書いてください。"
)
REVISION_REQUEST_TAIL = "直した回答の全文だけを出力してください。"
# A sentence that states a fact with no citation covering it. {sentences}
UNCITED_FIX_REQUEST = (
    "次の文には出典ラベルがありません: 「{sentences}」。調査結果にもとづく文には、その直後（または段落の"
    "終わり）に調査結果の出典ラベルを付けてください。調査結果にもとづかない文は削除してください。"
)
# {count}: sentences removed from the final answer after the one revision
UNCITED_REMOVED_NOTE = "注意: 出典の示されていない記述が {count} 文あったため、資料で確認できない内容として削除しました。"


@dataclass(frozen=True)
class HelpDeskAgentPrompts:
    """Every prompt the agent sends, and the texts it adds to answers."""

    planner_system_prompt: str = PLANNER_SYSTEM_PROMPT
    planner_user_prompt: str = PLANNER_USER_PROMPT
    subtask_system_prompt: str = SUBTASK_SYSTEM_PROMPT
    subtask_tool_selection_user_prompt: str = SUBTASK_TOOL_SELECTION_USER_PROMPT
    subtask_retry_user_prompt: str = SUBTASK_RETRY_USER_PROMPT
    subtask_answer_user_prompt: str = SUBTASK_ANSWER_USER_PROMPT
    subtask_reflection_user_prompt: str = SUBTASK_REFLECTION_USER_PROMPT
    final_answer_system_prompt: str = FINAL_ANSWER_SYSTEM_PROMPT
    final_answer_user_prompt: str = FINAL_ANSWER_USER_PROMPT
    subtask_result_template: str = SUBTASK_RESULT_TEMPLATE
    resolved_label: str = RESOLVED_LABEL
    unresolved_label: str = UNRESOLVED_LABEL
    unresolved_answer: str = UNRESOLVED_ANSWER
    unresolved_note: str = UNRESOLVED_NOTE
    no_answer: str = NO_ANSWER
    partial_lead: str = PARTIAL_LEAD
    sources_note: str = SOURCES_NOTE
    removed_citations_note: str = REMOVED_CITATIONS_NOTE
    not_japanese_note: str = NOT_JAPANESE_NOTE
    citation_fix_request: str = CITATION_FIX_REQUEST
    japanese_fix_request: str = JAPANESE_FIX_REQUEST
    revision_request_tail: str = REVISION_REQUEST_TAIL
    uncited_fix_request: str = UNCITED_FIX_REQUEST
    uncited_removed_note: str = UNCITED_REMOVED_NOTE


# --- message builders ------------------------------------------------------------------------

MAX_HIT_CHARS = 1_500  # of one search result's text put into a prompt


def numbered(items: Sequence[str]) -> str:
    return join("\n", (compose(Ours(f"{n}. "), item) for n, item in enumerate(items, start=1)))


def _own(text: str) -> str:
    return compose(Ours(text))


def planner_messages(prompts: HelpDeskAgentPrompts, question: str) -> list[BaseMessage]:
    return [
        SystemMessage(_own(prompts.planner_system_prompt)),
        HumanMessage(fill(prompts.planner_user_prompt, theirs={"question": question})),
    ]


def tool_selection_messages(
    prompts: HelpDeskAgentPrompts,
    *,
    question: str,
    plan: Sequence[str],
    subtask: str,
    previous_answer: str | None = None,
    advice: str | None = None,
) -> list[BaseMessage]:
    """The first messages of an attempt. A retry adds the previous answer and the reflection's
    advice, and nothing else of the previous attempt: its tool calls and outputs are stale."""
    messages: list[BaseMessage] = [
        SystemMessage(_own(prompts.subtask_system_prompt)),
        HumanMessage(
            fill(
                prompts.subtask_tool_selection_user_prompt,
                theirs={"question": question, "plan": numbered(plan), "subtask": subtask},
            )
        ),
    ]
    if advice is not None:
        messages.append(AIMessage(previous_answer or ""))
        retry = {"previous_answer": previous_answer or "", "advice": advice}
        messages.append(HumanMessage(fill(prompts.subtask_retry_user_prompt, theirs=retry)))
    return messages


def _arguments(args: str) -> str:
    try:
        data = json.loads(args)
    except json.JSONDecodeError:
        return args
    if not isinstance(data, dict):
        return args
    return ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in data.items()
    )


def render_tool_result(result: ToolResult) -> str:
    """One tool call and what it returned, each hit headed by its citation label (the
    product's words marked its own; the query, the error, the file names and the hits not)."""
    head = compose(Ours(f"#### {result.tool_name}（"), _arguments(result.args), Ours("）"))
    if result.error is not None:
        return compose(head, Ours("\nエラー: "), result.error)
    if not result.results:
        weak = len(result.weak_results)
        dropped = f"（関連度が基準未満の {weak} 件は除外しました）" if weak else ""
        return compose(head, Ours(f"\n該当する資料は見つかりませんでした。{dropped}"))
    blocks = [head]
    for number, hit in enumerate(result.results, start=1):
        text = hit.content.strip()
        if len(text) > MAX_HIT_CHARS:
            text = text[:MAX_HIT_CHARS] + "…"
        score = Ours(f"（スコア {hit.score:.3f}）\n")
        blocks.append(compose(Ours(f"[{number}] "), citation(hit), score, text))
    return join("\n", blocks)


def subtask_answer_message(
    prompts: HelpDeskAgentPrompts, results: Sequence[ToolResult]
) -> HumanMessage:
    rendered = join("\n\n", (render_tool_result(result) for result in results))
    return HumanMessage(fill(prompts.subtask_answer_user_prompt, theirs={"results": rendered}))


def reflection_message(prompts: HelpDeskAgentPrompts) -> HumanMessage:
    return HumanMessage(_own(prompts.subtask_reflection_user_prompt))


def citations(hits: Sequence[SearchOutput]) -> list[str]:
    """Distinct citation labels, in order of first appearance."""
    return list(dict.fromkeys(citation(hit) for hit in hits))


def final_answer_messages(
    prompts: HelpDeskAgentPrompts, question: str, subtasks: Sequence[Subtask]
) -> list[BaseMessage]:
    """The final prompt: each resolved subtask's answer with the citation labels it verified
    (file names included); an unresolved subtask only by name and status, so its unsupported
    answer cannot reach the user."""
    unresolved = prompts.unresolved_label.format(max_challenges=MAX_CHALLENGE_COUNT)
    blocks = [_subtask_result(prompts, subtask, unresolved) for subtask in subtasks]
    results = {"question": question, "subtask_results": join("\n\n", blocks)}
    return [
        SystemMessage(_own(prompts.final_answer_system_prompt)),
        HumanMessage(fill(prompts.final_answer_user_prompt, theirs=results)),
    ]


def _subtask_result(prompts: HelpDeskAgentPrompts, subtask: Subtask, unresolved: str) -> str:
    """One subtask in the final prompt: the product's words (its number, its status, what an
    unresolved one says) marked its own; the task, the answer and the citations not."""
    ours = {
        "index": str(subtask.index + 1),
        "status": unresolved if subtask.unresolved else prompts.resolved_label,
    }
    answer = subtask.subtask_answer.strip()
    cited = "、".join(subtask.verified_citations)
    if subtask.unresolved or not answer:
        ours["answer"] = prompts.unresolved_answer if subtask.unresolved else "（回答なし）"
    if subtask.unresolved or not cited:
        ours["citations"] = "（なし）"
    theirs = {"task_name": subtask.task_name, "answer": answer, "citations": cited}
    theirs = {key: value for key, value in theirs.items() if key not in ours}
    return fill(prompts.subtask_result_template, ours=ours, theirs=theirs)


def fix_requests(
    prompts: HelpDeskAgentPrompts,
    *,
    removed: Sequence[str],
    uncited: Sequence[str],
    japanese: bool,
) -> list[str]:
    """What a final answer must mend, one request a line: the requests are the product's words,
    the citation labels and the sentences they quote are the model's (masked like the user's)."""
    found: list[str] = []
    if removed:
        theirs = {"citations": "、".join(removed)}
        found.append(fill(prompts.citation_fix_request, theirs=theirs))
    if uncited:
        found.append(fill(prompts.uncited_fix_request, theirs={"sentences": "」「".join(uncited)}))
    if not japanese:
        found.append(_own(prompts.japanese_fix_request))
    return found


def revision_message(prompts: HelpDeskAgentPrompts, found: Sequence[str]) -> HumanMessage:
    """The one request to revise a final answer: what :func:`fix_requests` found, then the tail."""
    return HumanMessage(join("\n", [*found, Ours(prompts.revision_request_tail)]))
