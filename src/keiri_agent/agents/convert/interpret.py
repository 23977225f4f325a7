"""The interpret step: a Japanese or English request becomes a typed ``ConvertJob``.

One structured-output call (role ``interpret``). The source given by the caller (``--source``,
an upload) wins over one the model read from the text. A job that cannot be acted on — no
source anywhere, a conversion without a target format, a chart without its specification — is
an error the user can fix, raised here; LLM failures (``LLMError``) pass through untouched.
"""

from __future__ import annotations

from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.agents.convert.prompts import interpret_messages
from keiri_agent.errors import LLMOutputError, input_error
from keiri_agent.llm import LLMClient

__all__ = ["interpret_request"]

_EXAMPLES = (
    '例: keiri-agent convert "売上.csv を Parquet に変換して" --source ./data/売上.csv、'
    '"s3://bucket/2024/ の CSV を月別の棒グラフにして"'
)


def interpret_request(request: str, *, source: str | None, llm: LLMClient) -> ConvertJob:
    """The job the request asks for (``source`` overrides the one in the text)."""
    if not request.strip():
        raise input_error(
            "依頼文が空です。", "変換またはグラフ化したい内容を書いてください。" + _EXAMPLES
        )
    job = llm.structured(ConvertJob, interpret_messages(request, source))
    given = (source or "").strip()
    if given:
        job = job.model_copy(update={"source": given})
    elif job.source is not None and not job.source.strip():
        job = job.model_copy(update={"source": None})
    _check(job, request)
    return job


def _check(job: ConvertJob, request: str) -> None:
    if not job.source:
        raise input_error(
            "変換するファイルの場所が分かりません（依頼文にも --source にもありません）。",
            "--source にファイル・フォルダーのパスか s3://バケット/プレフィックス を指定するか、"
            "依頼文に書いてください。" + _EXAMPLES,
            request=request,
            job=job.model_dump(mode="json"),
        )
    if job.action == "convert" and not (job.target_format or "").strip():
        raise _incomplete(job, request, "convert の変換先の形式（target_format）")
    if job.action == "viz" and job.chart is None:
        raise _incomplete(job, request, "viz のグラフの指定（chart）")


def _incomplete(job: ConvertJob, request: str, what: str) -> LLMOutputError:
    return LLMOutputError(
        f"依頼の解釈に {what} がありません。",
        hint="依頼文に変換先の形式（例: Parquet）やグラフの種類・列名（例: 月別の売上の棒グラフ）を"
        "具体的に書いて再実行するか、KEIRI_LLM_MODEL_INTERPRET で別のモデルを指定してください。",
        details={"request": request, "job": job.model_dump(mode="json")},
    )
