"""Property: an error event's progress line (``events.follow.error_line``, printed by
``analyze``, ``helpdesk``, ``convert`` and their pages) is what a person reads: no Python or
library English, no exception class first (``KeyError: '売上'``), no step id (``convert の途中``).

The errors are the ones that really reach it: the CodeAct fallback's failure (the standard
path's reason and the last error, quoting Python's exception), a task past its deadline in each
step, and a failed code run's raw ``Type: message``, for every failing program of the sandbox's
failure test (real exceptions of pandas, numpy, json, decimal...).
"""

from __future__ import annotations

import random
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

from keiri_agent.agents.analysis import progress as analysis_progress
from keiri_agent.agents.analysis.graph import cancelled_error as analysis_cancelled
from keiri_agent.agents.analysis.honesty import deadline_error as analysis_deadline
from keiri_agent.agents.convert import progress as convert_progress
from keiri_agent.agents.convert.failure import (
    deadline_error,
    fallback_failed,
    fallback_reason,
    trigger_info,
)
from keiri_agent.agents.convert.sandbox_eval import SandboxEval
from keiri_agent.agents.convert.sandbox_eval import cancelled_error as convert_cancelled
from keiri_agent.agents.helpdesk import progress as helpdesk_progress
from keiri_agent.errors import CODE_WORDS, BlockError, ErrorCode
from keiri_agent.events import ErrorEvent, LLMCall
from keiri_agent.events.follow import llm_call_line
from keiri_agent.sandbox import SandboxExecutor
from tests.cli.test_no_library_english import library_english
from tests.cli.test_sandbox_failure_words import CASES, SETUP, _raised, _without_code

CLASS_FIRST = re.compile(r"(?<![\w.])[A-Z]\w*(?:Error|Exception|Violation|Exit|Interrupt): ")


def _exception(code: str) -> BaseException:
    try:
        exec(compile(SETUP + code, "<script>", "exec"), {})  # our own test programs
    except BaseException as exc:
        return exc
    raise AssertionError(f"the program did not fail: {code!r}")


def _event(message: str, step: str) -> ErrorEvent:
    return ErrorEvent(id=1, run_id="run", timestamp=datetime.now(UTC), step=step, message=message)


def _messages(rng: random.Random) -> list[tuple[str, str, str, str]]:
    """(what, code, step, message) of every error the generator makes."""
    found = []
    for n, (name, code) in enumerate(CASES):
        failure = _raised(code)
        raised = f"{failure.type}: {failure.message}"
        step = rng.choice(("convert", "viz"))
        failed = fallback_failed(
            target=rng.choice(("xml", "json", "png")),
            reason=fallback_reason(_exception(code)),
            turns=rng.randint(1, 3),
            answer=None,
            last_error="\n".join([raised, *failure.traceback]),
            wrong_format=[],
            trigger=None,
        )
        found.append((f"CodeAct failed: {name} #{n}", code, step, failed.message))
        found.append((f"a failed run: {name} #{n}", code, step, raised))
    for step in convert_progress.STEPS:
        found.append((f"deadline in {step}", "", step, deadline_error(8, step).message))
    return found


def test_an_error_line_says_python_and_steps_in_japanese() -> None:
    wrong: dict[str, list[str]] = {}
    messages = _messages(random.Random(1313))
    for what, code, step, message in messages:
        for describe, steps in (
            (convert_progress.describe_event, convert_progress.STEP_LABELS),
            (helpdesk_progress.describe_event, {}),
        ):
            line = describe(_event(message, step)) or ""
            found = library_english(_without_code(line, code) if code else line)
            found += CLASS_FIRST.findall(line)
            if steps and re.search(rf"(?<![\w.]){step}(?![\w.])", line):
                found.append(f"step id {step}")
            if found:
                wrong[f"{what} ({describe.__module__})"] = [*found, line]
    assert wrong == {}, f"{len(wrong)} of {2 * len(messages)} lines: {wrong}"


def test_a_japanese_error_stays_as_it_is() -> None:
    """The rule touches Python's English only: a Japanese message (a script's own, the
    product's) and quoted user data stay word for word."""
    for message in (
        "変換は取り消されました。",
        "最後のエラー: ValueError: 金額が負です。",
        "列「Amount」が見つかりません。",
        "ファイル convert.csv を読めません。",
    ):
        line = convert_progress.describe_event(_event(message, "fetch")) or ""
        assert line == "  エラー: " + message.replace("ValueError: 金額が負です", "金額が負です")


# --- the errors themselves (CLI's final error, --json's message, the API task's error) ------


def test_a_deadline_error_names_its_step_by_its_label() -> None:
    """The TIMEOUT_ERROR of a conversion (each step) and of an analysis turn (before each step)
    says the step as its progress says it, in its message and in ``details.step``; the id is
    ``details.step_id``."""
    wrong: dict[str, str] = {}
    timeouts = random.Random(1314).sample(range(1, 3600), 40)
    made = [
        (labels, make(timeout, step), step)
        for labels, make in (
            (convert_progress.STEP_LABELS, deadline_error),
            (analysis_progress.STEP_LABELS, analysis_deadline),
        )
        for timeout in timeouts
        for step in labels
    ]
    for labels, error, step in made:
        said = f"{error.message}\n{error.hint}"
        if re.search(rf"(?<![\w.]){step}(?![\w.])", said) or f"「{labels[step]}」" not in said:
            wrong[f"{step} {error.details['timeout_s']}"] = error.message
        if (error.details["step"], error.details["step_id"]) != (labels[step], step):
            wrong[f"details {step}"] = str(error.details)
    assert wrong == {}, f"{len(wrong)} of {len(made)} deadline errors: {wrong}"


def test_a_cancel_names_its_step_as_a_deadline_does() -> None:
    """One rule for every error that names a step: a cancel of an analysis turn (at each step)
    and of a conversion (at each step, CodeAct's runs included) has the step's label in
    ``details.step`` and its id in ``details.step_id``, as a deadline error has."""
    made = [
        (analysis_progress.STEP_LABELS, step, analysis_cancelled(step, code_stopped=stopped))
        for step in analysis_progress.STEP_LABELS
        for stopped in (False, True)
    ] + [
        (convert_progress.STEP_LABELS, step, convert_cancelled(step))
        for step in convert_progress.STEPS
    ]
    wrong = {
        f"{step}: {error.message}": str(error.details)
        for labels, step, error in made
        if (error.details.get("step"), error.details.get("step_id")) != (labels[step], step)
        or error.code != ErrorCode.CANCELLED
    }
    assert wrong == {}, f"{len(wrong)} of {len(made)} cancels: {wrong}"


def test_a_cancel_inside_codeact_names_the_step_it_works_for(tmp_path: Path) -> None:
    """CodeAct's sandbox runs inside the convert or viz step: a cancel there names that step
    (never ``fallback``, which no progress line shows)."""
    stop = threading.Event()
    stop.set()
    for step in ("convert", "viz"):
        sandbox = SandboxEval(SandboxExecutor(), tmp_path / step, cancel=stop, step=step)
        try:
            sandbox("print(1)", {})
        except BlockError as exc:
            error = exc
        else:
            raise AssertionError("a cancelled sandbox run went on")
        assert error.details == {"step": convert_progress.STEP_LABELS[step], "step_id": step}


def test_a_conversion_error_says_python_in_japanese_once() -> None:
    """The standard path's reason and CodeAct's last error, for every failing program: the
    message holds no Python English and is already what its progress line says (no rewording
    doubles it: 値を処理できません: 値を変換・処理できません); Python's words stay in details."""
    wrong: dict[str, list[str]] = {}
    rng = random.Random(1315)
    for n, (name, code) in enumerate(CASES):
        failure = _raised(code)
        last_error = "\n".join([f"{failure.type}: {failure.message}", *failure.traceback])
        exc = _exception(code)
        reason = fallback_reason(exc)
        error = fallback_failed(
            target=rng.choice(("xml", "json", "png", "")),
            reason=reason,
            turns=rng.randint(1, 3),
            answer=None,
            last_error=last_error,
            wrong_format=[],
            trigger=trigger_info("convert", exc),
        )
        found = library_english(_without_code(error.message, code))
        found += CLASS_FIRST.findall(error.message)
        line = convert_progress.describe_event(_event(error.message, "convert")) or ""
        if line != "  エラー: " + error.message.splitlines()[0]:
            found.append(f"reworded: {line}")
        if error.details["last_error"] != last_error or not reason.endswith(f"（{failure.type}）"):
            found.append(f"details: {error.details['last_error']!r}, reason {reason!r}")
        if error.details["trigger"]["message"] != str(exc):
            found.append(f"trigger: {error.details['trigger']}")
        if found:
            wrong[f"{name} #{n}"] = [*found, error.message]
    assert wrong == {}, f"{len(wrong)} of {len(CASES)} conversion errors: {wrong}"


def _llm_call(code: str | None, rng: random.Random) -> LLMCall:
    return LLMCall(
        id=1,
        run_id="run",
        timestamp=datetime.now(UTC),
        role=rng.choice(("codeact", "analysis", "helpdesk")),
        provider="openai",
        model=rng.choice(("gpt-4o-mini", "claude-sonnet", "local/qwen2.5")),
        input_tokens=rng.randint(0, 9000),
        output_tokens=rng.randint(0, 900),
        total_tokens=rng.randint(0, 9900),
        latency_ms=rng.uniform(10, 90_000),
        attempts=rng.randint(1, 4),
        ok=code is None,
        error_code=code,
    )


def test_a_failed_llm_call_says_what_went_wrong_in_japanese() -> None:
    """Every error code an LLM call may end with is said in Japanese on its progress line (the
    code stays in the event); a code without words says 失敗 alone, never the code."""
    rng = random.Random(1316)
    codes = [None, *ErrorCode]
    calls = [_llm_call(rng.choice(codes), rng) for _ in range(300)]
    wrong = {}
    for call in calls:
        line = llm_call_line(call, rng.choice(("", "サブタスク 2: ")))
        words = CODE_WORDS.get(call.error_code or "")
        if re.search(r"\b[A-Z][A-Z_]{3,}\b", line) or (words and f"失敗（{words}）" not in line):
            wrong[call.error_code] = line
        if call.ok == ("失敗" in line):
            wrong[f"ok={call.ok}"] = line
    assert wrong == {}, f"{len(wrong)} kinds of {len(calls)} lines: {wrong}"
    llm_codes = {"API_ERROR", "TIMEOUT_ERROR", "OUTPUT_SCHEMA_MISMATCH", "OUTPUT_EMPTY"}
    assert llm_codes <= set(CODE_WORDS)
