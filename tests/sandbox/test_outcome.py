"""The worker's report is untrusted: what it says can never crash the host, claim success or
layers, or reach a person's terminal unescaped.

``outcome_from_report`` is fed reports a hostile action could produce (forged success, forged
layers, wrong types, 100 000-level nesting, lone surrogates, megabytes of text) next to what the
supervisor observed; ``outcome_from_supervisor`` is fed malformed supervisor documents. Every
outcome must serialize to one valid JSON document.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.sandbox.layers import LayerStatus
from keiri_agent.sandbox.outcome import (
    MAX_ERROR_MESSAGE_CHARS,
    MAX_TRACEBACK_LINES,
    WORKER_EXIT_COMPLETED,
    ExecutionOutcome,
    LayerReport,
    outcome_from_report,
    outcome_from_supervisor,
)
from keiri_agent.sandbox.profiles import ANALYSIS
from keiri_agent.sandbox.untrusted import (
    MAX_RESULT_DEPTH,
    bound_json,
    terminal_text,
)

APPLIED = [LayerStatus("netns", True, "ネットワークなし"), LayerStatus("uid", False, "root でない")]


def _nested(depth: int) -> Any:
    value: Any = "底"
    for _ in range(depth):
        value = [value]
    return value


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, list) and value:
        value, depth = value[0], depth + 1
    return depth


def _lines(*parts: object) -> bytes:
    return b"".join(json.dumps(part).encode() + b"\n" for part in parts)


def _roundtrip(outcome: ExecutionOutcome) -> dict[str, Any]:
    """The outcome as the CLI's --json prints it, parsed back strictly (valid UTF-8 JSON)."""
    text = outcome.model_dump_json(indent=2)
    data: dict[str, Any] = json.loads(text.encode("utf-8").decode("utf-8", errors="strict"))
    return data


def _observed(report: object, **overrides: Any) -> ExecutionOutcome:
    observed: dict[str, Any] = {
        "profile": ANALYSIS,
        "exit_code": WORKER_EXIT_COMPLETED,
        "duration_s": 0.25,
        "peak_memory_bytes": 50_000_000,
        "files_created": ["集計.csv"],
        "layers": APPLIED,
    }
    observed.update(overrides)
    return outcome_from_report(report, **observed)  # type: ignore[arg-type]


# ---- success comes only from what the supervisor observed ----------------------------------


@pytest.mark.parametrize(
    "forged",
    [
        _lines({"ok": True, "error": None, "result": "偽の結果"}),
        _lines({"success": True, "ok": True, "killed_by": None}),
        _lines(
            {"layers": [{"name": "gvisor", "active": True, "detail": "完全隔離"}]}, {"ok": True}
        ),
    ],
    ids=["ok-true", "success-true", "ok-after-layers"],
)
def test_a_report_claiming_success_after_the_worker_failed_is_a_failure(forged: bytes) -> None:
    outcome = _observed(forged, exit_code=1)
    assert outcome.success is False
    assert outcome.result is None
    assert outcome.error is not None
    assert outcome.error.type == "WorkerFailed"
    assert "終了コード 1" in outcome.error.message
    assert any("成功を主張" in warning for warning in outcome.warnings)
    assert [layer.name for layer in outcome.layers] == ["netns", "uid"]  # the supervisor's only


def test_a_kill_or_a_signal_is_never_undone_by_the_report() -> None:
    claim = _lines({"ok": True, "result": 42})
    walled = _observed(claim, killed_by="wall")
    assert (walled.success, walled.killed_by, walled.result) == (False, "wall", None)
    assert walled.error is not None
    assert "実行時間の上限" in walled.error.message
    cpu = _observed(claim, exit_code=None, signal_number=int(signal.SIGXCPU))
    assert (cpu.success, cpu.killed_by) == (False, "cpu")
    killed = _observed(claim, exit_code=None, signal_number=int(signal.SIGSEGV))
    assert killed.success is False
    assert killed.error is not None
    assert "SIGSEGV" in killed.error.message
    # A forged error line before a wall kill does not replace the supervisor's reason.
    forged_error = _lines({"error": {"type": "ValueError", "message": "偽", "traceback": []}})
    assert _observed(forged_error, killed_by="wall").error.type == "SandboxLimitExceeded"  # type: ignore[union-attr]


def test_layers_in_the_report_are_ignored_and_the_supervisors_are_kept() -> None:
    report = _lines(
        {"layers": [{"name": "seccomp", "active": True, "detail": "偽"}]},
        {"ok": True, "result": {"合計": 350}},
    )
    outcome = _observed(report)
    assert outcome.success is True
    assert outcome.result == {"合計": 350}
    assert outcome.layers == [
        LayerReport(name="netns", active=True, detail="ネットワークなし"),
        LayerReport(name="uid", active=False, detail="root でない"),
    ]
    assert outcome.files_created == ["集計.csv"]
    assert outcome.duration_s == 0.25
    assert outcome.peak_memory_bytes == 50_000_000


def test_a_real_failure_keeps_the_reported_error_and_memory_errors_are_labelled() -> None:
    error = {
        "type": "KeyError",
        "message": "'金額'",
        "traceback": ["3 行目: df['金額']"],
        "line": 3,
    }
    outcome = _observed(_lines({"ok": False, "error": error}), exit_code=1)
    assert outcome.error is not None
    assert (outcome.error.type, outcome.error.message, outcome.error.line) == (
        "KeyError",
        "'金額'",
        3,
    )
    assert outcome.error.traceback == ["3 行目: df['金額']"]
    assert outcome.killed_by is None
    memory = {"type": "MemoryError", "message": "", "traceback": []}
    assert _observed({"error": memory}, exit_code=1).killed_by == "memory"
    too_big = {"type": "OSError", "message": "File too large", "errno": 27}
    assert _observed({"error": too_big}, exit_code=1).killed_by == "fsize"


# ---- schema, size and depth ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "complaint"),
    [
        ({"type": 7, "message": "x"}, "エラー情報の形式"),
        ({"type": "ValueError", "message": ["a"], "traceback": "1 行目"}, "エラーメッセージ"),
        (
            {"type": "ValueError", "message": "m", "traceback": [1, 2], "line": "三"},
            "トレースバック",
        ),
        ("文字列だけのエラー", "エラー情報の形式"),
    ],
)
def test_wrongly_typed_error_fields_are_dropped_with_a_warning(
    error: object, complaint: str
) -> None:
    outcome = _observed({"error": error}, exit_code=1)
    assert outcome.success is False
    assert outcome.error is not None  # a failure always says why, in Japanese at worst
    assert isinstance(outcome.error.type, str)
    assert isinstance(outcome.error.message, str)
    assert outcome.error.line is None
    assert any(complaint in warning for warning in outcome.warnings), outcome.warnings
    _roundtrip(outcome)


def test_a_result_nested_deeper_than_the_limit_is_cut_not_crashed_on() -> None:
    for depth in (900, 100_000):
        outcome = _observed({"result": {"deep": _nested(depth)}})
        assert outcome.success is True
        data = _roundtrip(outcome)
        assert _depth(data["result"]["deep"]) == MAX_RESULT_DEPTH - 1
        assert any("入れ子" in warning for warning in outcome.warnings)
    # Nesting that the JSON parser itself refuses: the line is skipped, success still stands.
    raw = b'{"ok": true, "result": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    skipped = _observed(raw)
    assert skipped.success is True
    assert skipped.result is None
    assert any("読み取れなかった" in warning for warning in skipped.warnings)


def test_oversized_text_is_bounded_and_flagged() -> None:
    error = {
        "type": "ValueError",
        "message": "長" * (MAX_ERROR_MESSAGE_CHARS * 3),
        "traceback": [f"{i} 行目: x" for i in range(1, 500)],
    }
    outcome = _observed({"error": error}, exit_code=1, stdout=b"x" * (9 * 1024 * 1024))
    assert outcome.error is not None
    assert len(outcome.error.message) <= MAX_ERROR_MESSAGE_CHARS
    assert len(outcome.error.traceback) == MAX_TRACEBACK_LINES
    assert outcome.stdout_truncated is True
    big = {"rows": ["行" * 1000] * 20_000}  # 20 million characters
    bounded = _observed({"result": big})
    assert len(json.dumps(bounded.result, ensure_ascii=False)) < 5_000_000
    assert any("大きすぎる" in warning for warning in bounded.warnings)


def test_surrogates_and_non_json_values_never_break_json_output() -> None:
    report = _lines({"ok": True, "result": {"名前\udcff": ["a\ud800b", float("nan")]}})
    outcome = _observed(
        report, stdout="表示\udcfe\n", files_created=["bad-\udcff.csv"], warnings=["注意\ud800"]
    )
    data = _roundtrip(outcome)
    assert data["result"] == {"名前\ufffd": ["a\ufffdb", None]}
    assert data["stdout"] == "表示\ufffd\n"
    assert data["files_created"] == ["bad-\ufffd.csv"]
    value, warnings = bound_json({1: object(), "cycle": (loop := [])})
    loop.append(loop)
    assert value["1"] == "<object>"
    assert warnings


def test_a_cyclic_or_shared_structure_is_bounded() -> None:
    shared: list[Any] = []
    for _ in range(40):
        shared = [shared, shared, shared]  # 3**40 paths through 40 lists
    value, warnings = bound_json(shared)
    assert warnings
    assert len(json.dumps(value)) < 50_000_000


# ---- the supervisor's document, read tolerantly in the parent --------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        None,
        ["not", "a", "dict"],
        {"success": "yes", "layers": [{"name": 1}], "stdout": 5, "duration_s": "fast"},
        {"success": True, "files_created": "a.csv", "killed_by": "gremlins", "warnings": 3},
        {"success": True, "peak_memory_bytes": True, "error": {"type": ["x"]}, "profile": {}},
    ],
)
def test_a_malformed_supervisor_document_becomes_an_outcome_not_a_traceback(raw: object) -> None:
    outcome = outcome_from_supervisor(raw)
    data = _roundtrip(outcome)
    assert data["success"] is (isinstance(raw, dict) and raw.get("success") is True)
    assert outcome.warnings  # what was dropped is said
    if not outcome.success:
        assert outcome.error is not None


def test_a_well_formed_supervisor_document_is_kept_as_it_is() -> None:
    raw = {
        "success": True,
        "stdout": "350\n",
        "stderr": "",
        "stdout_truncated": False,
        "stderr_truncated": False,
        "error": None,
        "files_created": ["out.csv"],
        "duration_s": 0.5,
        "peak_memory_bytes": 123,
        "killed_by": None,
        "profile": "analysis",
        "layers": [{"name": "netns", "active": True, "detail": "有効"}],
        "warnings": [],
        "result": {"合計": [1, 2.5, None, "三"]},
    }
    outcome = outcome_from_supervisor(raw)
    # phases_ms is the executor's, from the timeline marks, never read from the document
    assert outcome.model_dump(exclude={"phases_ms"}) == raw
    assert outcome.phases_ms == {}


# ---- text for people's terminals -----------------------------------------------------------


def test_terminal_text_makes_control_characters_visible() -> None:
    hostile = "赤\x1b[31m字\x07\r上書き\x9b2J\u202eevil\udcff\tend\n"
    shown = terminal_text(hostile)
    assert shown == "赤\\x1b[31m字\\x07\\r上書き\\x9b2J\\u202eevil\\udcff\tend\n"
    assert terminal_text("a\nb\tc", single_line=True) == "a\\nb\\tc"
    assert terminal_text("普通の日本語 ABC 123 😀") == "普通の日本語 ABC 123 😀"


# ---- `keiri-agent sandbox run`, end to end -------------------------------------------------

HOSTILE_OUTPUT = """
rows = []
for _ in range(900):
    rows = [rows]
result = {"deep": rows, "name": "\\x1b]0;owned\\x07"}
print("\\x1b[2J\\x1b[31m消去\\x07\\r上書き")
with open("\\x1b[31m赤い名前.csv", "w", encoding="utf-8") as f:
    f.write("a\\n")
"""

FAILING_OUTPUT = 'raise ValueError("\\x1b[2J画面消去\\x07\\r偽の成功")\n'


def _invoke(tmp_file: Path, workdir: Path, *extra: str) -> Result:
    return CliRunner().invoke(
        app, ["sandbox", "run", str(tmp_file), "--workdir", str(workdir), *extra]
    )


def _script(workdir: Path, name: str, code: str) -> Path:
    path = workdir.parent / f"{workdir.name}-{name}.py"
    path.write_text(code, encoding="utf-8")
    return path


def test_sandbox_run_json_is_one_valid_document_whatever_the_code_returns(workdir: Path) -> None:
    script = _script(workdir, "deep", HOSTILE_OUTPUT)
    try:
        ran = _invoke(script, workdir, "--json")
    finally:
        script.unlink()
    assert ran.exit_code == 0, ran.output
    document = json.loads(ran.stdout)  # one document, nothing before or after it
    assert document["success"] is True
    assert _depth(document["result"]["deep"]) == MAX_RESULT_DEPTH - 1
    assert any("入れ子" in warning for warning in document["warnings"])
    assert "\x1b" not in ran.stdout  # ASCII escapes inside the JSON strings
    assert document["result"]["name"] == "\x1b]0;owned\x07"  # the data itself is kept


def test_sandbox_run_shows_output_names_and_errors_with_control_characters_visible(
    workdir: Path,
) -> None:
    script = _script(workdir, "show", HOSTILE_OUTPUT)
    failing = _script(workdir, "fail", FAILING_OUTPUT)
    try:
        ran = _invoke(script, workdir)
        failed = _invoke(failing, workdir)
    finally:
        script.unlink()
        failing.unlink()
    assert ran.exit_code == 0, ran.output
    for shown in (ran.output, failed.output):
        assert not set(shown) & {"\x1b", "\x07", "\r"}, repr(shown)
    assert "\\x1b[2J\\x1b[31m消去\\x07\\r上書き" in ran.output
    assert "作成: \\x1b[31m赤い名前.csv" in ran.output
    assert failed.exit_code == 1
    # the script's own Japanese message is said as it is (sandbox.failure_words), escaped
    assert "失敗: \\x1b[2J画面消去\\x07\\r偽の成功" in failed.output
