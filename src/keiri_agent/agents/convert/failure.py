"""How the conversion pipeline words its hand-overs and failures (Japanese, one sentence each).

- :func:`fallback_reason`: why the standard path handed the job to CodeAct (a Python exception
  said as the sandbox says a failure, ``sandbox.failure_words``: never Python's English).
- :func:`fallback_failed`: CodeAct ran and made no file in the requested format. Its code is
  ``CODE_EXECUTION_FAILED`` (not the trigger's code: an ``UNSUPPORTED_FORMAT`` trigger says why
  CodeAct was asked, not why it failed), its hint fits the last failure (a refused operation,
  a sandbox limit, a wrong format, an error in the code, no code at all).
- :func:`deadline_error`: the whole task ran past ``KEIRI_CONVERT_TIMEOUT_S``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from keiri_agent.agents.convert.models import (
    FetchError,
    UnsupportedFormatError,
    UnsupportedVizParamError,
)
from keiri_agent.agents.convert.progress import STEP_LABELS
from keiri_agent.agents.deadline import deadline_error as past_deadline
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.sandbox.failure_words import failure_said
from keiri_agent.sandbox.outcome import ExecutionFailure

__all__ = [
    "deadline_error",
    "fallback_failed",
    "fallback_reason",
    "model_reason",
    "sentence",
    "trigger_info",
]

# The class of an exception a line starts with: Python's (a module path before it allowed), or
# a script's own with a Japanese name (``締め日エラー``), never the sandbox's ``中断``/``失敗``.
_RAISED = re.compile(r"(?:[A-Za-z_][\w.]*|\w+(?:エラー|例外))")
_END_PUNCTUATION = ("。", "．", ".", "！", "!", "？", "?")


def sentence(text: str) -> str:
    """``text`` as one sentence: stripped, ending in "。" unless it already ends in punctuation."""
    text = text.strip()
    if not text:
        return ""
    return text if text.endswith(_END_PUNCTUATION) else text + "。"


def fallback_reason(exc: BaseException) -> str:
    """A Japanese line saying why the standard path handed the job to CodeAct."""
    if isinstance(exc, UnsupportedFormatError | UnsupportedVizParamError):
        return f"{exc.message}（{type(exc).__name__}）"
    if isinstance(exc, FetchError):
        return f"{exc.message}（{exc.attempts} 回試行、FetchError）"
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else ""
        return f"列または項目 {key!r} が見つかりません（KeyError）"
    # Python's exception as the sandbox says a failure: its kind in Japanese, the values its
    # message quotes, the class last; Python's English stays in ``trigger_info`` (details).
    return _failure_said(type(exc).__name__, str(exc))


def _failure_said(kind: str, message: str) -> str:
    said = failure_said(ExecutionFailure(type=kind, message=message))
    return said if said.endswith(f"（{kind}）") else f"{said}（{kind}）"


def _said(line: str) -> str:
    """The first line of CodeAct's last error as the sandbox says a failure, where it is a
    Python exception (``InvalidOperation: [<class ...>]``, a script's own ``締め日エラー: ...``);
    the sandbox's own Japanese (``中断: メモリの上限に…``) as it is. The whole error, in
    Python's words, stays in ``details.last_error``."""
    kind, colon, message = line.partition(": ")
    if colon and _RAISED.fullmatch(kind):
        return _failure_said(kind.rsplit(".", 1)[-1], message)
    return line


def model_reason(reason: str, trigger: Mapping[str, Any] | None) -> str:
    """``reason`` as CodeAct's model reads it: the person's line, then the exception in
    Python's own words (``trigger_info``), which the model writes its code from."""
    message = str((trigger or {}).get("message", ""))
    if not trigger or message in reason:  # our own Japanese error, said as it is
        return reason
    return f"{reason}\n（Python の例外: {trigger['type']}: {message}）"


def trigger_info(step: str, exc: BaseException) -> dict[str, Any]:
    """The error that sent the job to the fallback, as the result's details keep it (the step
    by its label, its id in ``step_id``, as every error names a step)."""
    info: dict[str, Any] = {
        "step": STEP_LABELS[step],
        "step_id": step,
        "type": type(exc).__name__,
        "message": str(exc),
    }
    to_dict = getattr(exc, "to_dict", None)
    if callable(to_dict):
        info["error"] = to_dict()
    return info


def _hint(
    last_error: str, wrong_format: Sequence[str], target: str, ran: bool, answered: bool
) -> str:
    what = target.upper() or "依頼の形式"
    if wrong_format:
        return (
            f"CodeAct は {what} 形式のファイルを作れませんでした。依頼文に {what} の形（ルート要素名・"
            "列の並び・文字コードなど）を具体的に書くか、対応形式（CSV / TSV / Excel / JSON / JSONL /"
            " Parquet）を選んで再実行してください。"
        )
    if "PolicyViolation" in last_error:
        return (
            "生成コードがサンドボックスで許可されていない操作（モジュールの import など）を使いました。"
            "依頼を簡単にするか、対応形式（CSV / TSV / Excel / JSON / JSONL / Parquet）を選んでください。"
        )
    if any(word in last_error for word in ("制限時間", "CPU 時間", "メモリ", "上限", "強制終了")):
        return (
            "生成コードがサンドボックスの制限（CPU 120 秒・メモリ 512 MB・1 ファイル 10 MB）を超えました。"
            "入力を小さくするか、ファイル名のパターンで対象を絞って再実行してください。"
        )
    if not ran and not answered:
        return (
            "CodeAct のモデルが空の応答を返しました。KEIRI_LLM_MODEL_CODEACT で別のモデルを指定するか、"
            "時間をおいて再実行してください。"
        )
    if not ran:
        return (
            "CodeAct はコードを書かずに答えました。その説明を読み、依頼文に形式・列名・グラフの種類を"
            "具体的に書いて再実行してください。"
        )
    return (
        "CodeAct の最後のエラーを確認し、依頼文に形式・列名・グラフの種類を具体的に書いて"
        "再実行してください（詳細は --json の code_runs や実行ログにあります）。"
    )


def fallback_failed(
    *,
    target: str,
    reason: str,
    turns: int,
    answer: str | None,
    last_error: str | None,
    wrong_format: Sequence[str],
    trigger: dict[str, Any] | None,
) -> BlockError:
    """The error of a CodeAct run that ended without a file in the requested format."""
    first_line = _said(next(iter((last_error or "").strip().splitlines()), ""))
    what = f"{target.upper()} の" if target else ""
    parts = [
        "標準の処理で対応できなかったため CodeAct（生成コード）で試みましたが、"
        f"{what}ファイルを作成できませんでした（コード実行 {turns} 回）。",
        sentence(f"標準の処理で対応できなかった理由: {reason}") if reason else "",
        sentence(f"最後のエラー: {first_line}") if first_line else "",
        sentence(f"CodeAct の説明: {answer}") if answer else "",
    ]
    return BlockError(
        "".join(parts),
        code=ErrorCode.CODE_EXECUTION_FAILED,
        hint=_hint(last_error or "", wrong_format, target, ran=turns > 0, answered=bool(answer)),
        details={
            "fallback_reason": reason,
            "trigger": trigger or {},
            "code_turns": turns,
            "codeact_answer": answer,
            "last_error": last_error,
            "wrong_format": list(wrong_format),
        },
    )


def deadline_error(timeout_s: float, step: str) -> BlockError:
    """The TIMEOUT_ERROR of a conversion that ran past its deadline."""
    hint = (
        "入力をファイル名のパターンで絞る・依頼を分けるなどして小さくするか、"
        "KEIRI_CONVERT_TIMEOUT_S を延ばして再実行してください。"
    )
    label = STEP_LABELS.get(step, step)
    return past_deadline(
        "変換タスク", timeout_s, step, label=label, cut="途中", hint=hint, recoverable=True
    )
