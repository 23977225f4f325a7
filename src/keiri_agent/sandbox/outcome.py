"""The result of one sandboxed action, as JSON-safe data, and how it is built.

The parent never unpickles anything the child wrote. ``outcome_from_report`` builds the outcome
from two sources that are kept apart on purpose:

- what the supervisor observed itself (the worker's exit status or signal, the limit it killed
  the action for, time, peak memory, the files it copied out, the layers it applied): trusted,
  passed in as typed arguments;
- what the worker reported (the ``result`` value, the exception's type, text and traceback) and
  what the code printed: untrusted data, size- and depth-limited and schema-checked
  (``keiri_agent.sandbox.untrusted``); a field of the wrong shape is dropped with a warning.

``outcome_from_supervisor`` re-reads the supervisor's JSON in the parent just as tolerantly, so
no document the parent receives can raise out of ``SandboxExecutor.run``.
"""

from __future__ import annotations

import errno
import signal as signals
from collections.abc import Iterable, Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from keiri_agent.sandbox.layers import LayerStatus
from keiri_agent.sandbox.profiles import SandboxProfile
from keiri_agent.sandbox.untrusted import bound_json, clean_text, parse_report

__all__ = [
    "MAX_ERROR_MESSAGE_CHARS",
    "MAX_ERROR_TYPE_CHARS",
    "MAX_LISTED_FILES",
    "MAX_STREAM_CHARS",
    "MAX_TRACEBACK_LINES",
    "MAX_TRACEBACK_LINE_CHARS",
    "MAX_WARNINGS",
    "WORKER_EXIT_COMPLETED",
    "ExecutionFailure",
    "ExecutionOutcome",
    "KilledBy",
    "LayerReport",
    "outcome_from_report",
    "outcome_from_supervisor",
]

# The worker's exit status when, and only when, ``exec`` of the user's code returned (or the code
# raised SystemExit(0/None)). The only completion signal ``outcome_from_report`` accepts.
WORKER_EXIT_COMPLETED = 0
MAX_STREAM_CHARS = 8 * 1024 * 1024  # stdout and stderr each, above every profile's output cap
MAX_ERROR_TYPE_CHARS = 200
MAX_ERROR_MESSAGE_CHARS = 20_000
MAX_TRACEBACK_LINES = 50
MAX_TRACEBACK_LINE_CHARS = 1_000
MAX_FILE_NAME_CHARS = 4_096
MAX_LISTED_FILES = 10_000
MAX_WARNINGS = 100
MAX_WARNING_CHARS = 2_000
MAX_LAYER_TEXT_CHARS = 1_000
MAX_LINE_NUMBER = 10_000_000

KilledBy = Literal["cpu", "memory", "wall", "output", "fsize", "policy"]
KILLED_BY_VALUES: frozenset[str] = frozenset(get_args(KilledBy))


class ExecutionFailure(BaseModel):
    """Why the user's code failed: exception type, message and its own traceback lines."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    traceback: list[str] = Field(default_factory=list)
    line: int | None = None  # the line of the user's code where it failed, when known


class LayerReport(BaseModel):
    """One isolation layer as it was applied to this action."""

    model_config = ConfigDict(frozen=True)

    name: str
    active: bool
    detail: str = ""


class ExecutionOutcome(BaseModel):
    """Everything a caller (agent, block, CLI) needs to know about one action."""

    model_config = ConfigDict(frozen=True)

    success: bool
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    error: ExecutionFailure | None = None
    files_created: list[str] = Field(default_factory=list)
    duration_s: float = 0.0
    peak_memory_bytes: int = 0
    killed_by: KilledBy | None = None
    profile: str = ""
    layers: list[LayerReport] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    result: Any = None  # JSON value of the variable ``result`` when the code set one
    phases_ms: dict[str, float] = Field(default_factory=dict)  # see ``timeline``

    def summary_ja(self) -> str:
        """One Japanese line for logs and the UI."""
        if self.success:
            return f"成功（{self.duration_s:.2f} 秒、作成ファイル {len(self.files_created)} 件）"
        reason = {
            "cpu": "CPU 時間の上限",
            "memory": "メモリの上限",
            "wall": "実行時間の上限",
            "output": "出力量の上限",
            "fsize": "ファイルサイズ・ファイル数の上限",
            "policy": "安全ポリシー",
        }
        if self.killed_by is not None:
            return f"中断: {reason[self.killed_by]}に達しました（{self.duration_s:.2f} 秒）"
        message = self.error.message if self.error else "不明なエラー"
        kind = self.error.type if self.error else "Error"
        return f"失敗: {kind}: {message}"


def outcome_from_report(
    report: bytes | str | Mapping[str, Any] | None,
    *,
    profile: SandboxProfile,
    exit_code: int | None,
    signal_number: int | None = None,
    killed_by: KilledBy | None = None,
    duration_s: float = 0.0,
    peak_memory_bytes: int = 0,
    files_created: Iterable[str] = (),
    layers: Iterable[LayerReport | LayerStatus] = (),
    stdout: bytes | str = b"",
    stderr: bytes | str = b"",
    stdout_truncated: bool = False,
    stderr_truncated: bool = False,
    warnings: Iterable[str] = (),
) -> ExecutionOutcome:
    """The outcome of one action, from the supervisor's observations and the worker's report.

    Trusted (the supervisor's own observations, keyword arguments):

    - ``exit_code``: the worker's exit status as seen by ``wait4`` (``None`` if it died of a
      signal), ``signal_number``: the signal that ended it (``None`` if it exited);
    - ``killed_by``: the limit the supervisor killed it for, ``None`` if it did not kill it;
    - ``duration_s``, ``peak_memory_bytes``: measured by the supervisor (rusage);
    - ``files_created``: the names the supervisor copied out (only their text is cleaned);
    - ``layers``: the isolation layers the supervisor applied; the report cannot add to them;
    - ``stdout``/``stderr`` and their ``*_truncated`` flags: captured by the supervisor from the
      worker's pipes (their *content* is the code's, so it is cleaned and bounded);
    - ``warnings``: the supervisor's own Japanese warnings.

    Untrusted (``report``): the worker's JSON lines as bytes, or an already parsed dict. Read
    from it: ``result`` (any JSON, kept only on success) and ``error`` (``type``, ``message``,
    ``traceback``, ``line``, ``errno``, used only on failure). Anything else it says, including
    ``ok``, ``success`` or ``layers``, is ignored. Oversized, too deep or wrongly typed fields are
    bounded or dropped with a warning in the outcome.

    ``success`` is True exactly when ``killed_by`` is None, no signal ended the worker, and it
    exited with ``WORKER_EXIT_COMPLETED``. The worker exits with that status only on the path
    where ``exec`` of the code returned, decided by its own control flow and not by any data
    the code can reach: code that replaces ``json.dumps`` (or writes its own report) and then
    raises still makes the worker exit non-zero, so a forged ``{"ok": true}`` changes nothing.
    Code that gains native control of the worker could exit 0 itself, which is no more than
    finishing normally; it still cannot undo a kill, add layers, hide files or change what the
    supervisor measured. A report can only label a failure (``MemoryError`` → ``memory``,
    ``EFBIG`` → ``fsize``), never turn one into a success.

    Never raises for any ``report``, stream or file name.
    """
    notes: list[str] = []
    parsed: Mapping[str, Any]
    if report is None:
        parsed = {}
    elif isinstance(report, Mapping):
        parsed = report
    else:
        parsed, report_warnings = parse_report(report)
        notes.extend(report_warnings)
    observed_kill = killed_by if killed_by in KILLED_BY_VALUES else None
    kill = observed_kill
    if kill is None and signal_number == signals.SIGXCPU:
        kill = "cpu"
    elif kill is None and signal_number == signals.SIGXFSZ:
        kill = "fsize"
    completed = exit_code == WORKER_EXIT_COMPLETED and signal_number is None
    success = completed and kill is None
    error: ExecutionFailure | None = None
    result: Any = None
    if success:
        result, result_warnings = bound_json(parsed.get("result"))
        notes.extend(result_warnings)
        if parsed.get("error") is not None:
            notes.append(
                "実行結果の報告にエラーが含まれていましたが、正常に終了したため無視しました。"
            )
    else:
        if parsed.get("ok") is True or parsed.get("success") is True:
            notes.append(
                "実行結果の報告は成功を主張していますが、ワーカーの終了状態は失敗を示しているため"
                "失敗として扱いました（報告はコードが書き換えられるため信頼しません）。"
            )
        reported = _error(parsed.get("error"), notes)
        if kill is None and reported is not None:
            if reported.type == "MemoryError":
                kill = "memory"
            elif parsed["error"].get("errno") == errno.EFBIG:
                kill = "fsize"
        if observed_kill is None and reported is not None:
            error = reported
        else:
            error = _death_error(exit_code, signal_number, kill, profile)
    out_text, out_cut = _stream(stdout)
    err_text, err_cut = _stream(stderr)
    names = [clean_text(str(name), MAX_FILE_NAME_CHARS)[0] for name in files_created]
    if len(names) > MAX_LISTED_FILES:
        notes.append(
            f"作成されたファイルが多すぎるため、先頭の {MAX_LISTED_FILES:,} 件だけを示します。"
        )
        names = names[:MAX_LISTED_FILES]
    return ExecutionOutcome(
        success=success,
        stdout=out_text,
        stderr=err_text,
        stdout_truncated=stdout_truncated or out_cut,
        stderr_truncated=stderr_truncated or err_cut,
        error=error,
        files_created=names,
        duration_s=max(float(duration_s), 0.0),
        peak_memory_bytes=max(int(peak_memory_bytes), 0),
        killed_by=kill,
        profile=profile.name,
        layers=[_layer(layer) for layer in layers],
        warnings=_warnings([*warnings, *notes]),
        result=result,
    )


def outcome_from_supervisor(raw: object) -> ExecutionOutcome:
    """An ``ExecutionOutcome`` from the supervisor's JSON document, whatever it contains.

    Each field is checked on its own: one of the wrong type is dropped (its default is used)
    with a warning, text is cleaned and bounded and ``result`` is bounded as in
    ``outcome_from_report``. ``success`` is taken only when it is literally ``true``. Never
    raises, so a malformed document cannot become a traceback out of ``SandboxExecutor.run``.
    """
    notes: list[str] = []
    data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if not isinstance(raw, Mapping):
        notes.append("サンドボックスの実行結果が不正な形式だったため、失敗として扱いました。")
    bad: list[str] = []

    def field(name: str, kind: type | tuple[type, ...], default: Any) -> Any:
        value = data.get(name, default)
        if value is default or (isinstance(value, kind) and not _is_bool_for_number(value, kind)):
            return value
        bad.append(name)
        return default

    success = field("success", bool, False) is True
    kill = field("killed_by", str, None)
    if kill is not None and kill not in KILLED_BY_VALUES:
        bad.append("killed_by")
        kill = None
    error = None if data.get("error") is None else _error(data.get("error"), notes)
    if not success and error is None:
        error = ExecutionFailure(type="WorkerFailed", message="実行結果が返りませんでした。")
    result, result_warnings = bound_json(data.get("result"))
    layers_raw = field("layers", list, [])
    layers = [_layer_from_json(item) for item in layers_raw]
    if any(layer is None for layer in layers):
        bad.append("layers")
    files = [name for name in field("files_created", list, []) if isinstance(name, str)]
    out_text, out_cut = _stream(field("stdout", str, ""))
    err_text, err_cut = _stream(field("stderr", str, ""))
    given = [w for w in field("warnings", list, []) if isinstance(w, str)]
    if bad:
        notes.append(
            f"実行結果の項目（{', '.join(sorted(set(bad)))}）の形式が不正なため無視しました。"
        )
    return ExecutionOutcome(
        success=success,
        stdout=out_text,
        stderr=err_text,
        stdout_truncated=field("stdout_truncated", bool, False) or out_cut,
        stderr_truncated=field("stderr_truncated", bool, False) or err_cut,
        error=None if success else error,
        files_created=[clean_text(n, MAX_FILE_NAME_CHARS)[0] for n in files[:MAX_LISTED_FILES]],
        duration_s=max(float(field("duration_s", (int, float), 0.0)), 0.0),
        peak_memory_bytes=max(int(field("peak_memory_bytes", int, 0)), 0),
        killed_by=kill,
        profile=clean_text(field("profile", str, ""), MAX_ERROR_TYPE_CHARS)[0],
        layers=[layer for layer in layers if layer is not None],
        warnings=_warnings([*given, *notes, *result_warnings]),
        result=result if success else None,
    )


def _is_bool_for_number(value: object, kind: type | tuple[type, ...]) -> bool:
    """``True`` is an ``int`` to isinstance; for numeric fields it is still the wrong type."""
    return isinstance(value, bool) and kind is not bool


def _stream(value: bytes | str) -> tuple[str, bool]:
    text = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
    return clean_text(text, MAX_STREAM_CHARS)


def _error(value: object, notes: list[str]) -> ExecutionFailure | None:
    """The reported exception, each part checked and bounded; None if it is not one."""
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        if value is not None:
            notes.append("実行結果の報告のエラー情報の形式が不正なため無視しました。")
        return None
    message = value.get("message")
    lines = value.get("traceback")
    line = value.get("line")
    if not isinstance(message, str):
        message = ""
        notes.append("実行結果の報告のエラーメッセージの形式が不正なため省略しました。")
    if not isinstance(lines, list) or not all(isinstance(item, str) for item in lines):
        if lines is not None:
            notes.append("実行結果の報告のトレースバックの形式が不正なため省略しました。")
        lines = []
    if len(lines) > MAX_TRACEBACK_LINES:
        lines = [
            *lines[: MAX_TRACEBACK_LINES - 1],
            f"…（ほか {len(lines) - MAX_TRACEBACK_LINES + 1} 行）",
        ]
    if isinstance(line, bool) or not isinstance(line, int) or not 0 < line <= MAX_LINE_NUMBER:
        line = None
    return ExecutionFailure(
        type=clean_text(value["type"], MAX_ERROR_TYPE_CHARS)[0] or "Error",
        message=clean_text(message, MAX_ERROR_MESSAGE_CHARS)[0],
        traceback=[clean_text(item, MAX_TRACEBACK_LINE_CHARS)[0] for item in lines],
        line=line,
    )


def _death_error(
    exit_code: int | None, signal_number: int | None, kill: str | None, profile: SandboxProfile
) -> ExecutionFailure:
    reasons = {
        "cpu": f"CPU 時間の上限（{profile.cpu_seconds} 秒）を超えたため停止しました。",
        "wall": f"実行時間の上限（{profile.wall_seconds:g} 秒）を超えたため停止しました。",
        "memory": f"メモリの上限（{profile.memory_bytes // (1024 * 1024)} MB）を超えたため停止しました。",
        "output": f"出力が上限（{profile.output_bytes} バイト）を超えたため停止しました。",
        "fsize": "ファイルの大きさ・数の上限を超えたため停止しました。",
    }
    if kill in reasons:
        return ExecutionFailure(type="SandboxLimitExceeded", message=reasons[kill])
    if signal_number is not None:
        try:
            name = signals.Signals(signal_number).name
        except ValueError:
            name = str(signal_number)
        return ExecutionFailure(type="WorkerKilled", message=f"シグナル {name} で終了しました。")
    detail = f"終了コード {exit_code}" if exit_code is not None else "終了状態不明"
    return ExecutionFailure(
        type="WorkerFailed", message=f"実行結果が返りませんでした（{detail}）。"
    )


def _layer(layer: LayerReport | LayerStatus) -> LayerReport:
    if isinstance(layer, LayerReport):
        return layer
    return LayerReport(name=layer.name, active=layer.active, detail=layer.detail)


def _layer_from_json(value: object) -> LayerReport | None:
    if not isinstance(value, Mapping):
        return None
    name, active, detail = value.get("name"), value.get("active"), value.get("detail", "")
    if not isinstance(name, str) or not isinstance(active, bool) or not isinstance(detail, str):
        return None
    return LayerReport(
        name=clean_text(name, MAX_LAYER_TEXT_CHARS)[0],
        active=active,
        detail=clean_text(detail, MAX_LAYER_TEXT_CHARS)[0],
    )


def _warnings(items: list[str]) -> list[str]:
    cleaned = [clean_text(str(item), MAX_WARNING_CHARS)[0] for item in items]
    if len(cleaned) > MAX_WARNINGS:
        more = len(cleaned) - MAX_WARNINGS + 1
        cleaned = [*cleaned[: MAX_WARNINGS - 1], f"ほかに注意が {more} 件あります。"]
    return cleaned
