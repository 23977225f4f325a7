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
from datetime import UTC, datetime

from keiri_agent.agents.convert import progress as convert_progress
from keiri_agent.agents.convert.failure import deadline_error, fallback_failed, fallback_reason
from keiri_agent.agents.helpdesk import progress as helpdesk_progress
from keiri_agent.events import ErrorEvent
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
