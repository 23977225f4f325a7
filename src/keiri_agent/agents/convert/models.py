"""Job models and errors of the conversion pipeline (seed 003).

``ConvertJob`` is what the interpret step makes of a Japanese request; ``FetchedFile`` is one
input after fetching. ``kind``, ``format`` and ``target_format`` are plain strings, not
literals: an unsupported value must reach ``convert``/``viz`` and raise the seed's fallback
triggers there (``UnsupportedFormatError(fmt)``, ``UnsupportedVizParamError(param)``) instead
of failing the model's structured output.

Errors::

    KeiriError (and ValueError)
     ├── UnsupportedFormatError(fmt)       a table format convert cannot read or write
     └── UnsupportedVizParamError(param)   a chart parameter viz cannot honour
    BlockError
     └── FetchError                        a source could not be fetched (details: source, attempts)

The two ``ValueError`` subclasses are the seed's fallback triggers: the graph hands them to the
CodeAct fallback. They are not ``BlockError``s (a handler of ``BlockError`` must not take them
for a failure of the task), but still carry a Japanese ``message``, a ``hint`` and a ``code`` so
that, when no fallback runs, the user reads the same kind of explanation as for a ``BlockError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, Field

from keiri_agent.errors import BlockError, ErrorCode, KeiriError, input_error

__all__ = [
    "CHART_KINDS",
    "IMAGE_FORMATS",
    "TABLE_FORMATS",
    "ChartKind",
    "ChartSpec",
    "Continuation",
    "ConvertJob",
    "FetchError",
    "FetchedFile",
    "ImageFormat",
    "TableFormat",
    "UnsupportedFormatError",
    "UnsupportedVizParamError",
]

TableFormat = Literal["csv", "tsv", "xlsx", "json", "jsonl", "parquet"]
ChartKind = Literal["line", "bar", "scatter", "hist", "box"]
ImageFormat = Literal["png", "svg"]

TABLE_FORMATS: tuple[str, ...] = get_args(TableFormat)
CHART_KINDS: tuple[str, ...] = get_args(ChartKind)
IMAGE_FORMATS: tuple[str, ...] = get_args(ImageFormat)


class ChartSpec(BaseModel):
    """What to plot. Column names are the table's own (Japanese names are fine)."""

    kind: str = Field(description="グラフの種類: line / bar / scatter / hist / box")
    x: str | None = Field(default=None, description="横軸の列名")
    y: list[str] = Field(default_factory=list, description="値の列名（複数可）")
    title: str | None = Field(default=None, description="グラフのタイトル")
    xlabel: str | None = Field(default=None, description="横軸のラベル（省略時は列名）")
    ylabel: str | None = Field(default=None, description="縦軸のラベル（省略時は列名）")
    format: str = Field(default="png", description="画像形式: png / svg")
    bins: int | None = Field(default=None, description="ヒストグラムの階級数")
    group_by: str | None = Field(default=None, description="系列を分ける列名")


class ConvertJob(BaseModel):
    """One request, as the interpret step understood it."""

    action: Literal["convert", "viz"] = Field(
        title="依頼の種類", description="convert: 形式変換 / viz: グラフ化"
    )
    source: str | None = Field(
        default=None,
        description="入力: ローカルのファイルかフォルダー、または s3://バケット/プレフィックス",
    )
    files: list[str] = Field(
        default_factory=list,
        description="入力の中から使うファイル名またはパターン（例: *.csv）。空ならすべて",
    )
    target_format: str | None = Field(
        default=None, description="変換先の形式: csv / tsv / xlsx / json / jsonl / parquet"
    )
    chart: ChartSpec | None = Field(default=None, description="グラフ化の指定（viz のとき）")
    output_name: str | None = Field(default=None, description="出力ファイル名（拡張子なし）")
    summary_ja: str = Field(default="", description="依頼内容の解釈（日本語で 1〜2 文）")


class Continuation(BaseModel):
    """What a conversion paused on CodeAct's question needs to go on once the user answers.

    The job as interpreted, why the standard path handed it to CodeAct, the questions answered
    so far and the open ``question``. A continuation fetches the inputs again and goes straight
    to CodeAct with the answers in its task; nothing is interpreted twice.
    """

    request: str
    source: str | None = None
    job: ConvertJob
    fallback_reason: str | None = None
    trigger: dict[str, Any] | None = None
    answers: list[tuple[str, str]] = Field(default_factory=list)
    question: str = ""

    def answered(self, answer: str) -> Continuation:
        """This continuation with ``answer`` given to the open question."""
        text = answer.strip()
        if not text:
            raise input_error(
                "回答が空です。", f"CodeAct の質問「{self.question}」への回答を入力してください。"
            )
        return self.model_copy(
            update={"answers": [*self.answers, (self.question, text)], "question": ""}
        )


class FetchedFile(BaseModel):
    """One fetched input: ``path`` is its copy under the run's directory."""

    name: str  # relative POSIX path under the fetch destination
    path: Path
    size: int
    source: str  # where it came from: an absolute local path or s3://bucket/key


_FORMAT_LIST = "CSV / TSV / Excel（.xlsx）/ JSON / JSONL / Parquet"


class _FallbackTriggerError(Exception):
    """What the two fallback triggers share: the value at fault (``subject``, reported in
    ``details`` under ``SUBJECT``), a message and a hint (the class's defaults when not
    given), pickling with all three, and ``to_dict()`` in ``BlockError``'s JSON form."""

    code: str
    SUBJECT: ClassVar[str]
    DEFAULT_MESSAGE: ClassVar[str]  # str.format template with {subject}
    DEFAULT_HINT: ClassVar[str]

    def __init__(
        self, subject: str, message: str | None = None, *, hint: str | None = None
    ) -> None:
        self.subject = subject
        self.message = message or self.DEFAULT_MESSAGE.format(subject=subject)
        self.hint = hint or self.DEFAULT_HINT
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.subject, self.message), {"hint": self.hint})

    def to_dict(self) -> dict[str, Any]:
        """The same JSON form as ``BlockError.to_dict()``."""
        return _error_dict(self.code, self.message, self.hint, {self.SUBJECT: self.subject})


class UnsupportedFormatError(_FallbackTriggerError, KeiriError, ValueError):
    """A table format that convert cannot read or write (seed 003 fallback trigger)."""

    code: str = str(ErrorCode.UNSUPPORTED_FORMAT)
    SUBJECT = "fmt"
    DEFAULT_MESSAGE = "形式 '{subject}' には対応していません（対応形式: " + _FORMAT_LIST + "）。"
    DEFAULT_HINT = (
        "対応形式のファイルを指定するか、変換先を csv / tsv / xlsx / json / jsonl / parquet"
        " から選んでください。"
    )

    @property
    def fmt(self) -> str:
        """The format at fault."""
        return self.subject


class UnsupportedVizParamError(_FallbackTriggerError, KeiriError, ValueError):
    """A chart parameter that viz cannot honour (seed 003 fallback trigger).

    ``param`` names the ``ChartSpec`` field at fault (kind, format, x, y, bins, group_by).
    """

    code: str = str(ErrorCode.INPUT_VALIDATION_FAILED)
    SUBJECT = "param"
    DEFAULT_MESSAGE = "グラフの指定 '{subject}' には対応していません。"
    DEFAULT_HINT = (
        "種類は line / bar / scatter / hist / box、形式は png / svg から選び、"
        "x・y には表にある列名を指定してください。"
    )

    @property
    def param(self) -> str:
        """The ``ChartSpec`` field at fault."""
        return self.subject


def _error_dict(code: str, message: str, hint: str, details: dict[str, Any]) -> dict[str, Any]:
    return {
        "code": code,
        "message": message,
        "details": details,
        "input_snapshot": {},
        "hint": hint,
        "recoverable": False,
    }


class FetchError(BlockError):
    """A source could not be fetched.

    ``transient`` is True when the store kept failing in a way that retrying can fix (5xx,
    throttling, connection errors) and every retry was used: the seed forwards those to the
    fallback "after 3 retries". ``attempts`` counts the calls made, the first one included.
    Permanent failures (missing bucket or key, access denied, a path that does not exist, a
    size limit) are raised at once with ``attempts`` = 1 and ``transient`` False.
    """

    default_code = ErrorCode.API_ERROR

    def __init__(
        self,
        message: str,
        *,
        source: str,
        attempts: int = 1,
        hint: str = "",
        code: ErrorCode | str | None = None,
        transient: bool = False,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            message,
            code=code,
            hint=hint,
            details={"source": source, "attempts": attempts, "transient": transient}
            | dict(details or {}),
            recoverable=transient,
        )
        self.source = source
        self.attempts = attempts
        self.transient = transient
