"""What makes an analysis report honest: grounded in runs that showed something, in Japanese,
and finished within the turn's deadline.

- A turn is *grounded* when at least one of its code runs succeeded with visible output (text on
  stdout, or a table or file saved). Code that neither prints nor saves proves nothing, and a
  model may finalize after every run failed: such a report is flagged, never passed off as a
  normal one.
  A turn whose report is not grounded ends with the status ``unverified`` everywhere the turn
  is shown (``TurnResult.status``; the CLI's exit code 1, the API task's status, the app's
  label), with :data:`UNVERIFIED_MESSAGE` saying what was not backed.
- The report body must be Japanese (seed 000's prompt policy); an English body is sent back once
  for a rewrite, then flagged (``llm.revise``: the check and the send-back-once are shared with
  the help-desk answer).
- A whole turn has a deadline (``KEIRI_ANALYSIS_TURN_TIMEOUT_S``), checked before every step.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from keiri_agent.agents.analysis.models import ExecutionResult, ReportOutput
from keiri_agent.agents.analysis.progress import STEP_LABELS
from keiri_agent.agents.deadline import deadline_error as past_deadline
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.llm.revise import MIN_JAPANESE_RATIO, is_japanese_text

__all__ = [
    "JAPANESE_REWRITE_REQUEST",
    "MIN_JAPANESE_RATIO",
    "NOT_JAPANESE_NOTE",
    "UNGROUNDED_NOTE",
    "UNVERIFIED_HINT",
    "UNVERIFIED_LABEL",
    "UNVERIFIED_MESSAGE",
    "check_deadline",
    "deadline_error",
    "has_visible_output",
    "is_grounded",
    "is_japanese",
    "unverified_error",
]

UNGROUNDED_NOTE = (
    "注意: このターンでは、出力（標準出力・表・ファイル）のあるコード実行が 1 度も成功していません。"
    "以下の内容はデータの実行結果で裏付けられていないため、数値を業務に使わないでください。"
)
# What an unverified turn is called, and what was not backed (CLI stderr, API, app band).
UNVERIFIED_LABEL = "未検証の結果です（計算結果の裏付けがありません）"
UNVERIFIED_MESSAGE = (
    "未検証の結果です。このターンでは、出力（標準出力・表・ファイル）のあるコード実行が 1 度も"
    "成功していないため、レポートの結論と数値はデータの計算結果で裏付けられていません。"
)
UNVERIFIED_HINT = (
    "レポートの数値を業務に使わないでください。実行結果（コードとエラー）を確かめ、列名・期間・"
    "集計方法を具体的に書いて、もう一度依頼してください。"
)
NOT_JAPANESE_NOTE = "注意: レポート本文が日本語で書かれていません（書き直しを 1 度依頼しましたが直りませんでした）。"
JAPANESE_REWRITE_REQUEST = (
    "レポートの本文（title・conclusion・evidence・text セクション・suggestions）が日本語ではありません。"
    "内容と数値は変えずに、すべて日本語で書き直してください。"
)
_DEADLINE_HINT = (
    "質問を絞る（列・期間を指定する）か、KEIRI_ANALYSIS_TURN_TIMEOUT_S を延ばして再実行してください。"
    "ここまでの実行結果と図は作業ディレクトリに残っています。"
)


def has_visible_output(result: ExecutionResult) -> bool:
    """A successful run that showed something: stdout text, or a file it saved."""
    return result.success and bool((result.stdout or "").strip() or result.files_created)


def is_grounded(results: Sequence[ExecutionResult]) -> bool:
    return any(has_visible_output(result) for result in results)


def unverified_error(*, hint: str = UNVERIFIED_HINT, **details: Any) -> BlockError:
    """What an unverified turn failed to back, as a ``RESULT_UNVERIFIED`` error (a plan node
    fails with it; an API task carries its code, message and hint in ``details.unverified``)."""
    return BlockError(
        UNVERIFIED_MESSAGE, code=ErrorCode.RESULT_UNVERIFIED, hint=hint, details=details
    )


def _body(report: ReportOutput) -> str:
    parts = [report.title, report.conclusion, *report.evidence, *(report.suggestions or [])]
    parts += [s.content for s in report.sections if s.section_type == "text"]
    return "\n".join(parts)


def is_japanese(report: ReportOutput) -> bool:
    return is_japanese_text(_body(report))


def deadline_error(timeout_s: float, step: str) -> BlockError:
    """The TIMEOUT_ERROR of a turn past its deadline before ``step`` (an id of ``STEP_LABELS``)."""
    label = STEP_LABELS.get(step, step)
    return past_deadline(
        "分析の 1 ターン", timeout_s, step, label=label, cut="前", hint=_DEADLINE_HINT
    )


def check_deadline(deadline: float | None, timeout_s: float, step: str) -> None:
    """Raise the turn's TIMEOUT_ERROR when ``deadline`` (``time.monotonic()``) has passed."""
    if deadline is not None and time.monotonic() >= deadline:
        raise deadline_error(timeout_s, step)
