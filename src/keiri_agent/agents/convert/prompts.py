"""Prompts of the conversion pipeline: request interpretation and the CodeAct fallback.

The interpret prompt turns a Japanese or English request into a ``ConvertJob``; it asks for the
user's own words for formats and chart kinds, so an unsupported one reaches convert/viz and the
seed's fallback triggers instead of being "corrected" by the model. The CodeAct prompts follow
seed 003 §5 (system: "You are CodeAct. Generate Python 3.11 code only."; user: what to convert
and where to save it, "Return code only"), with the sandbox's rules and the inputs spelled out. The prompts' text is marked the product's own (``privacy.ours``): the
wire masks only the request, the file names and previews, the answers and what the code printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.privacy import Ours, compose, fill, join

__all__ = [
    "MAX_OUTPUT_IN_PROMPT",
    "InputSummary",
    "codeact_prompt",
    "codeact_task",
    "exec_feedback",
    "interpret_messages",
]

MAX_OUTPUT_IN_PROMPT = 1_500  # characters of stdout/stderr fed back to the model
CODEACT_LIBRARIES = "pandas, numpy, matplotlib, seaborn"

INTERPRET_SYSTEM = """あなたはファイルの形式変換とグラフ作成の依頼を解釈するアシスタントです。
ユーザーの依頼文（日本語または英語）を読み、処理の指定（ConvertJob）に変換します。

## 項目
- action: 形式の変換なら "convert"、グラフ・チャート・可視化・plot なら "viz"。
- source: 依頼文に書かれた入力の場所（ローカルのパス、または s3://バケット/プレフィックス）。書かれていなければ null。
- files: 入力の中から使うファイル名やパターン（例: "売上.csv", "*.csv"）。特に指定がなければ空のリスト。
- target_format: convert のときの変換先の形式を、小文字の拡張子で（例: parquet, csv, xlsx, json）。
  対応しているかどうかに関係なく、ユーザーが指定した形式をそのまま書きます（例: XML なら "xml"）。
- chart: viz のときのグラフの指定。
  - kind: line（折れ線）/ bar（棒）/ scatter（散布図）/ hist（ヒストグラム）/ box（箱ひげ図）。
    それ以外の種類（円グラフなど）を求められたら、その名前をそのまま英語で書きます（例: "pie"）。
  - x, y: 横軸の列名と値の列名（依頼文に書かれた列名をそのまま）。y はリストです。
  - title, xlabel, ylabel: 依頼文にあれば。format: 画像形式（既定 png、SVG を求められたら svg）。
  - bins: ヒストグラムの階級数、group_by: 系列を分ける列名（あれば）。
- output_name: 出力ファイル名の指定があれば拡張子なしで。なければ null。
- summary_ja: 依頼をどう解釈したかを日本語で 1〜2 文。

依頼にない値を作らないこと。分からない項目は null または空にします。"""

INTERPRET_TASK = """## 依頼文
{request}
{source_note}"""


def interpret_messages(request: str, source: str | None) -> list[BaseMessage]:
    """Messages for the structured ``ConvertJob`` call."""
    note = (
        compose(Ours("\n## 入力（指定済み）\n"), source, Ours("\n（source にはこの値を使います）"))
        if source
        else compose(Ours("\n## 入力\n（依頼文の中のパスや s3:// URL を source にしてください）"))
    )
    task = fill(INTERPRET_TASK, theirs={"request": request.strip(), "source_note": note})
    return [SystemMessage(compose(Ours(INTERPRET_SYSTEM))), HumanMessage(task)]


@dataclass(frozen=True)
class InputSummary:
    """One input file as the CodeAct prompt describes it."""

    relpath: str  # relative to the CodeAct workdir, e.g. "inputs/売上.csv"
    size: int
    table: str | None = None  # shape, columns and first rows when it reads as a table
    problem: str | None = None  # why it does not read as a table


CODEACT_SYSTEM = """You are CodeAct. Generate Python 3.11 code **only**.

## 実行環境
- コードは隔離されたサンドボックスで実行されます。カレントディレクトリは作業ディレクトリ {workdir} で、
  ファイルを書き込めるのはこの中だけです（ファイル 1 つ 10 MB まで、CPU 時間 120 秒まで）。
- 使えるライブラリ: {libraries} と標準ライブラリの一部（math, json, csv, re, datetime, io など）。
  os・subprocess・socket・ネットワーク・ファイル一覧の取得は使えません。
- 入力ファイルは作業ディレクトリの inputs/ にあります（パスは依頼に列挙します）。
- {df_note}
- コードブロックは 1 つずつ新しいプロセスで実行されます。変数は次のコードに引き継がれませんが、保存したファイルは残ります。
- 日本語フォントは設定済みです。グラフを保存したら plt.close() します。

## 出力
- ```python で始まるコードブロックを返してください。説明は不要です。ブロックが複数あるときは書いた順に続けて実行します。
- 結果のファイルは依頼された形式で、作業ディレクトリの直下に保存し、保存したファイル名と件数などの要点を print してください。
  保存したファイルは内容が依頼の形式かどうか確かめられます（拡張子だけ変えても通りません）。
- 依頼を実行するのに欠かせない情報が分からないときは、コードを書かずに、ユーザーへの質問を 1 つだけ日本語で返してください
  （例: ルート要素名は何にしますか？）。ユーザーの回答を受け取ってから作業を続けます。推測でデータを作らないでください。"""

DF_NOTE = "変数 `df` に最初の表（{relpath}）が DataFrame として読み込み済みです。"
NO_DF_NOTE = (
    "表として読み込めた入力はありません。必要ならコードで inputs/ のファイルを開いてください。"
)

CODEACT_TASK = """## 依頼
{request}

## 依頼の解釈
{summary}

## 標準の処理で対応できなかった理由
{reason}

## 入力ファイル
{inputs}

## 作るもの
{goal}
{answers}
Return code only, no explanation."""


def codeact_prompt(workdir: str, df_relpath: str | None) -> str:
    """The CodeAct system prompt for one run."""
    if df_relpath:
        note = fill(DF_NOTE, theirs={"relpath": df_relpath})
    else:
        note = compose(Ours(NO_DF_NOTE))
    return fill(
        CODEACT_SYSTEM,
        ours={"libraries": CODEACT_LIBRARIES},
        theirs={"workdir": workdir, "df_note": note},  # a folder may be named after its user
    )


def _inputs(inputs: Sequence[InputSummary]) -> str:
    if not inputs:
        return compose(Ours("（入力ファイルはありません）"))
    lines = []
    for item in inputs:
        lines.append(compose(Ours("- "), item.relpath, Ours(f"（{item.size:,} バイト）")))
        if item.table:
            lines.append(compose(Ours("  "), item.table.replace("\n", "\n  ")))
        elif item.problem:
            lines.append(compose(Ours("  表として読み込めませんでした: "), item.problem))
    return join("\n", lines)


def _goal(job: ConvertJob, workdir: str, output_name: str, multiple: bool) -> str:
    if job.action == "viz" and job.chart is not None:
        chart = job.chart.model_dump(exclude_none=True)
        fmt = job.chart.format or "png"
        return (
            f"次の指定のグラフを作成し、`{workdir}/{output_name}.{fmt}` に保存してください。\n"
            f"{chart}"
        )
    fmt = (job.target_format or "").lower().lstrip(".")
    if multiple:
        return (
            f"入力の各ファイルを {fmt} 形式に変換し、`{workdir}/<元のファイル名（拡張子なし）>.{fmt}`"
            " としてそれぞれ保存してください。"
        )
    return f"入力の表を {fmt} 形式に変換し、`{workdir}/{output_name}.{fmt}` に保存してください。"


def codeact_task(
    job: ConvertJob,
    *,
    request: str,
    reason: str,
    workdir: str,
    inputs: Sequence[InputSummary],
    output_name: str,
    answers: Sequence[tuple[str, str]] = (),
) -> str:
    """The CodeAct user message: the request, why the standard path failed, inputs, the goal,
    and the user's answers to CodeAct's earlier questions (``(question, answer)`` pairs)."""
    qa = ""
    if answers:
        lines = [compose(Ours("- 質問: "), q, Ours("\n  回答: "), a) for q, a in answers]
        qa = compose(Ours("\n## ユーザーへの確認と回答\n"), join("\n", lines), Ours("\n"))
    return fill(
        CODEACT_TASK,
        theirs={
            "reason": reason,  # a library's error, which may quote a cell
            "request": request.strip(),
            "summary": job.summary_ja or job.model_dump_json(exclude_none=True),
            "inputs": _inputs(inputs),
            # the goal names the output after the user's file or a name the model chose
            "goal": _goal(job, workdir, output_name, multiple=len(inputs) > 1),
            "answers": qa,
        },
    )


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_OUTPUT_IN_PROMPT else "…" + text[-MAX_OUTPUT_IN_PROMPT:]


def exec_feedback(
    *,
    success: bool,
    stdout: str,
    error: str | None,
    files: Sequence[str],
    wrong_format: Sequence[str] = (),
    target: str = "",
) -> str:
    """What the model reads after an execution (the sandbox's "output" in CodeAct terms).

    ``wrong_format`` lists the problems of saved files that are not in the requested format
    ``target`` (checked by content): the model is told and asked to save the right one.
    """
    lines = [compose(Ours("実行結果: " + ("成功" if success else "失敗")))]
    if stdout.strip():
        lines.append(compose(Ours("標準出力:\n```\n"), _cut(stdout), Ours("\n```")))
    if error:
        lines.append(compose(Ours("エラー:\n```\n"), _cut(error), Ours("\n```")))
    created = ", ".join(files) if files else ""
    lines.append(compose(Ours("作成されたファイル: " + ("" if files else "なし")), created))
    if not success:
        lines.append(
            compose(Ours("エラーを直したコードを ```python のコードブロックで返してください。"))
        )
    elif wrong_format:
        listing = join("\n", (compose(Ours("- "), problem) for problem in wrong_format))
        lines.append(
            compose(
                Ours(f"保存されたファイルは依頼の形式（{target.upper()}）ではありません:\n"),
                listing,
                Ours(
                    f"\n{target.upper()} 形式の内容で、拡張子 .{target} のファイルとして"
                    "保存し直すコードを返してください。"
                ),
            )
        )
    elif not files:
        lines.append(
            compose(
                Ours(
                    "ファイルが保存されていません。結果を作業ディレクトリに保存するコードを"
                    "返してください。"
                )
            )
        )
    return join("\n\n", lines)
