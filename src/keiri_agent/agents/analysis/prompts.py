"""Japanese prompts of the analysis agent, following seed 000's prompt policy.

Each builder returns the message list for one structured-output call. Tables enter prompts only
as ``DataFrameInfo`` text; execution results are summarized with their errors and outputs, and
long stdout is cut, so prompts stay small however long the conversation gets.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from keiri_agent.agents.analysis.dfinfo import DataFrameInfo
from keiri_agent.agents.analysis.models import MAX_LOOPS, ExecutionResult

__all__ = ["codegen_messages", "reason_messages", "report_messages"]

MAX_STDOUT_IN_PROMPT = 1_500
MAX_HISTORY_MESSAGES = 20
ALLOWED_LIBRARIES = "pandas, numpy, sklearn, matplotlib, seaborn"


def _tables(infos: Sequence[DataFrameInfo]) -> str:
    return "\n\n".join(info.to_prompt() for info in infos) or "（データなし）"


def _results(results: Sequence[ExecutionResult], *, detailed: bool = False) -> str:
    if not results:
        return "（まだ実行していません）"
    blocks = []
    for number, result in enumerate(results, start=1):
        status = "成功" if result.success else "失敗"
        lines = [f"#### 実行 {number}（{status}）", f"指示: {result.instruction or '-'}"]
        if detailed:
            lines.append("コード:\n```python\n" + result.code + "\n```")
        if result.stdout:
            out = result.stdout[-MAX_STDOUT_IN_PROMPT:]
            lines.append("標準出力:\n```\n" + out + "\n```")
        if result.error:
            lines.append("エラー:\n```\n" + result.error[-MAX_STDOUT_IN_PROMPT:] + "\n```")
        for output in result.outputs:
            lines.append(f"出力: {output.file_name}（{output.output_type}）{output.description}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


REASON_SYSTEM = """あなたはデータ分析アシスタントです。ユーザーの要求を理解し、次の行動を 1 つ選びます。

## 選択肢
- "ask": 分析に必要な情報（対象の列、期間、粒度、指標など）が不足していて、妥当な仮定も置けない場合。
  question に、仮説を含めた最小限の質問を日本語で書きます。
- "act": 分析を実行する場合。instruction に、コードを書く人がそのまま実装できる具体的な分析指示を日本語で書きます
  （使う列、集計方法、作る図や表とそのファイル名の方針）。
- "finalize": これまでの実行結果でユーザーの要求を満たせた場合。レポート作成に進みます。

## 判断ルール
- 直前の実行がエラーなら、エラー内容を読み、指示を直して再実行するか（act）、条件を緩めるか（サンプリング・列の絞り込み）、
  列名や型の確認をユーザーに質問します（ask）。
- 仮定を置いて進めた場合は assumption に書きます。
- rationale に判断理由を簡潔に書きます。
- 分析ループは最大 {max_loops} 回です（現在 {loop} 回目）。"""

REASON_TASK = """## DataFrame 情報
{tables}

## 過去の実行結果
{results}

## タスク
会話の最新のユーザー要求に対して、次の行動（ask / act / finalize）を選んでください。"""


def reason_messages(
    history: Sequence[BaseMessage],
    infos: Sequence[DataFrameInfo],
    results: Sequence[ExecutionResult],
    loop: int,
) -> list[BaseMessage]:
    system = REASON_SYSTEM.format(max_loops=MAX_LOOPS, loop=loop)
    task = REASON_TASK.format(tables=_tables(infos), results=_results(results))
    return [SystemMessage(system), *history[-MAX_HISTORY_MESSAGES:], HumanMessage(task)]


CODEGEN_SYSTEM = """あなたは Python のデータ分析コードを書くアシスタントです。指示どおりのコードだけを書きます。

## 実行環境と制約
- 変数 `df` で最初の DataFrame に、`dfs["名前"]` ですべての DataFrame にアクセスできます（読み込み済み。ファイルから読み直さないこと）。
- 使えるライブラリ: {libraries}（それ以外の import、ファイル・ネットワーク・OS へのアクセスはできません）。
- カレントディレクトリが作業ディレクトリ（{workspace_dir}）です。ファイルは相対パスのファイル名だけで保存します
  （図: plt.savefig("ファイル名.png", dpi=100, bbox_inches="tight")、表: df.to_csv("ファイル名.csv", index=False)）。
- 日本語フォントは設定済みです。タイトル・軸ラベル・凡例は日本語で書きます。図を保存したら plt.close() します。
- 結果の要点（数値）は print で出力します。
- expected_outputs には、コードが実際に保存するファイルだけを、ファイル名・説明・種類（figure / table）とともに列挙します。"""

CODEGEN_TASK = """## DataFrame 情報
{tables}

## 分析指示
{instruction}
{previous_error}"""


def codegen_messages(
    instruction: str,
    infos: Sequence[DataFrameInfo],
    workspace_dir: str,
    previous: ExecutionResult | None,
) -> list[BaseMessage]:
    previous_error = ""
    if previous is not None and previous.error:
        previous_error = (
            "\n## 前回のコードとエラー（同じ誤りを繰り返さないこと）\n```python\n"
            + previous.code
            + "\n```\n```\n"
            + previous.error[-MAX_STDOUT_IN_PROMPT:]
            + "\n```"
        )
    system = CODEGEN_SYSTEM.format(libraries=ALLOWED_LIBRARIES, workspace_dir=workspace_dir)
    task = CODEGEN_TASK.format(
        tables=_tables(infos), instruction=instruction, previous_error=previous_error
    )
    return [SystemMessage(system), HumanMessage(task)]


REPORT_SYSTEM = """あなたは分析結果を日本語のレポートにまとめるアシスタントです。

## 形式
- title: レポートのタイトル
- conclusion: 結論（ユーザーの問いへの答えを 1〜3 文で）
- evidence: 結論の根拠（実行結果の数値や図表にもとづく箇条書き、1 つ以上）
- sections: 本文のセクション
  - section_type: "text"（content は Markdown）/ "image"（content は図のファイル名をそのまま）/
    "table"（content はレコードの配列の JSON）
  - description: 画像や表の説明
- suggestions: 追加の深掘り分析の提案（任意）

## 注意
- 実行結果にない数値や図を作らないこと。画像は実行結果の出力ファイル名だけを使います。
- 置いた仮定があれば本文で触れます。"""

REPORT_TASK = """## 実行結果
{results}

## 仮定
{assumptions}
{forced}
## タスク
会話のユーザー要求に答えるレポートを作成してください。"""

FORCED_NOTE = (
    "\n## 注意\n分析ループの上限（{max_loops} 回）に達したため、ここまでの中間結果でレポートを作成します。"
    "未完了の点は本文に明記し、続きの分析を suggestions に書いてください。\n"
)


def report_messages(
    history: Sequence[BaseMessage],
    results: Sequence[ExecutionResult],
    assumptions: Sequence[str],
    *,
    forced: bool,
) -> list[BaseMessage]:
    task = REPORT_TASK.format(
        results=_results(results, detailed=True),
        assumptions="\n".join(f"- {a}" for a in assumptions) or "（なし）",
        forced=FORCED_NOTE.format(max_loops=MAX_LOOPS) if forced else "",
    )
    return [SystemMessage(REPORT_SYSTEM), *history[-MAX_HISTORY_MESSAGES:], HumanMessage(task)]
