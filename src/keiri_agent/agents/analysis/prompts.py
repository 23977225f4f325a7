"""Japanese prompts of the analysis agent, following seed 000's prompt policy.

Each builder returns the message list for one structured-output call. Tables enter prompts only
as ``DataFrameInfo`` text. Execution results are shown newest first within a budget: the latest
``RECENT_IN_DETAIL`` runs with their (cut) output, errors and files, older runs as one line
each, and the oldest dropped with a count once the budget is spent, so every prompt stays under
``PROMPT_BUDGET_CHARS`` however long the session gets (tables of a few columns assumed). The
prompts' text is marked the product's own (``privacy.ours``): the wire masks only the tables, the
conversation, the code and what it printed.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from keiri_agent.agents.analysis.dfinfo import DataFrameInfo
from keiri_agent.agents.analysis.models import MAX_LOOPS, ExecutionResult
from keiri_agent.privacy import Ours, compose, fill, join

__all__ = [
    "PROMPT_BUDGET_CHARS",
    "RECENT_IN_DETAIL",
    "RESULTS_BUDGET_CHARS",
    "codegen_messages",
    "reason_messages",
    "report_messages",
]

PROMPT_BUDGET_CHARS = 24_000  # every prompt of the agent, with one table of a few columns
RESULTS_BUDGET_CHARS = 12_000  # of which the execution history may take this much
RECENT_IN_DETAIL = 3  # the newest runs shown with output and errors; older ones in one line
MAX_STDOUT_IN_PROMPT = 1_200
MAX_CODE_IN_PROMPT = 2_000
MAX_SUMMARY_CHARS = 160
MAX_HISTORY_MESSAGES = 12
MAX_OLD_MESSAGE_CHARS = 600  # earlier conversation messages are cut to this (the latest is whole)
ALLOWED_LIBRARIES = "pandas, numpy, sklearn, matplotlib, seaborn"


def _tables(infos: Sequence[DataFrameInfo]) -> str:
    return join("\n\n", (info.to_prompt() for info in infos)) or compose(Ours("（データなし）"))


def _history(history: Sequence[BaseMessage]) -> list[BaseMessage]:
    recent = list(history[-MAX_HISTORY_MESSAGES:])
    cut: list[BaseMessage] = []
    for index, message in enumerate(recent):
        text = message.text
        if index < len(recent) - 1 and len(text) > MAX_OLD_MESSAGE_CHARS:
            message = message.model_copy(update={"content": text[:MAX_OLD_MESSAGE_CHARS] + "…"})
        cut.append(message)
    return cut


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _summary(number: int, result: ExecutionResult) -> str:
    status = "成功" if result.success else "失敗"
    what = " ".join((result.instruction or "-").split())
    if result.error:
        what += " → エラー: " + result.error.strip().splitlines()[0]
    elif result.outputs:
        what += " → " + ", ".join(o.file_name for o in result.outputs)
    room = MAX_SUMMARY_CHARS - len(head := f"- 実行 {number}（{status}）: ")
    return compose(Ours(head), what if len(what) <= room else what[: max(room, 0)] + "…")


def _fenced(title: str, text: str, language: str = "") -> str:
    """``text`` in a code fence under ``title``, the fence and the title the product's."""
    return compose(Ours(f"{title}:\n```{language}\n"), text, Ours("\n```"))


def _detail(number: int, result: ExecutionResult, *, with_code: bool) -> str:
    status = "成功" if result.success else "失敗"
    lines = [
        compose(Ours(f"#### 実行 {number}（{status}）")),
        compose(Ours("指示: "), result.instruction or "-"),
    ]
    if with_code:
        lines.append(_fenced("コード", _tail(result.code, MAX_CODE_IN_PROMPT), "python"))
    if result.stdout:
        lines.append(_fenced("標準出力", _tail(result.stdout, MAX_STDOUT_IN_PROMPT)))
    elif result.success and not result.files_created:
        lines.append(
            compose(Ours("（標準出力もファイルもありません: この実行は何も示していません）"))
        )
    if result.error:
        lines.append(_fenced("エラー", _tail(result.error, MAX_STDOUT_IN_PROMPT)))
    for output in result.outputs:
        lines.append(
            compose(
                Ours("出力: "),
                output.file_name,
                Ours(f"（{output.output_type}）"),
                output.description,
            )
        )
    return join("\n", lines)


def _results(
    results: Sequence[ExecutionResult],
    *,
    detailed: bool = False,
    budget: int = RESULTS_BUDGET_CHARS,
) -> str:
    """The execution history within ``budget`` characters, newest runs in most detail."""
    if not results:
        return compose(Ours("（まだ実行していません）"))
    blocks: list[str] = []
    used = 0
    omitted = 0
    for index in range(len(results) - 1, -1, -1):
        number, result = index + 1, results[index]
        block = _summary(number, result)
        if len(results) - index <= RECENT_IN_DETAIL:
            full = _detail(number, result, with_code=detailed)
            block = full if used + len(full) <= budget else block
        if used + len(block) > budget:
            omitted = index + 1
            break
        blocks.append(block)
        used += len(block) + 2
    blocks.reverse()
    if omitted:
        blocks.insert(0, compose(Ours(f"（それより前の実行 {omitted} 件は省略）")))
    return join("\n\n", blocks)


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
    system = fill(REASON_SYSTEM, ours={"max_loops": str(MAX_LOOPS), "loop": str(loop)})
    task = fill(REASON_TASK, theirs={"tables": _tables(infos), "results": _results(results)})
    return [SystemMessage(system), *_history(history), HumanMessage(task)]


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
        previous_error = compose(
            Ours("\n## 前回のコードとエラー（同じ誤りを繰り返さないこと）\n```python\n"),
            _tail(previous.code, MAX_CODE_IN_PROMPT),
            Ours("\n```\n```\n"),
            _tail(previous.error, MAX_STDOUT_IN_PROMPT),
            Ours("\n```"),
        )
    system = fill(
        CODEGEN_SYSTEM,
        ours={"libraries": ALLOWED_LIBRARIES},
        theirs={"workspace_dir": workspace_dir},  # a folder may be named after its user
    )
    task = fill(
        CODEGEN_TASK,
        theirs={
            "tables": _tables(infos),
            "instruction": instruction,
            "previous_error": previous_error,
        },
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
{forced}{ungrounded}
## タスク
会話のユーザー要求に答えるレポートを作成してください。"""

FORCED_NOTE = (
    "\n## 注意\n分析ループの上限（{max_loops} 回）に達したため、ここまでの中間結果でレポートを作成します。"
    "未完了の点は本文に明記し、続きの分析を suggestions に書いてください。\n"
)


UNGROUNDED_PROMPT_NOTE = (
    "\n## 注意\nこの依頼では、出力のあるコード実行が 1 度も成功していません。実行結果にない数値・結論を"
    "書かず、分析できなかったこととその理由を conclusion に書いてください。\n"
)


def report_messages(
    history: Sequence[BaseMessage],
    results: Sequence[ExecutionResult],
    assumptions: Sequence[str],
    *,
    forced: bool,
    grounded: bool = True,
) -> list[BaseMessage]:
    listed = join("\n", (compose(Ours("- "), a) for a in assumptions))
    task = fill(
        REPORT_TASK,
        ours={
            "forced": FORCED_NOTE.format(max_loops=MAX_LOOPS) if forced else "",
            "ungrounded": "" if grounded else UNGROUNDED_PROMPT_NOTE,
        },
        theirs={
            "results": _results(results, detailed=True),
            "assumptions": listed or compose(Ours("（なし）")),
        },
    )
    return [SystemMessage(compose(Ours(REPORT_SYSTEM))), *_history(history), HumanMessage(task)]
