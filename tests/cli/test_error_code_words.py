"""An error's code reaches the accountant in words, from the one table (``errors.CODE_WORDS``):
the CLI's error line (``エラー（承認が必要）: ...``), a plan's progress line for a failed node and
an LLM call's line say the same words the app does; the code itself stays for support and
scripts in ``--json`` (and the run log). A seeded generator of errors as commands raise them."""

from __future__ import annotations

import io
import json
import random
import re
from datetime import UTC, datetime

import pytest
from rich.console import Console
from typer.testing import CliRunner

from keiri_agent.cli import app, common
from keiri_agent.errors import CODE_WORDS, BlockError, ErrorCode, code_word
from keiri_agent.events.follow import llm_call_line
from keiri_agent.events.models import LLMCall, NodeFailed
from keiri_agent.plan._run.progress import describe_event

runner = CliRunner()
SEED, CASES = 2020, 300
RAW_CODE = re.compile(r"\b[A-Z][A-Z]+(?:_[A-Z]+)+\b")  # APPROVAL_REQUIRED, TIMEOUT_ERROR, ...

MESSAGES = (
    "Plan keiri/close の版 3f2a9c0d1e4b は承認されていないため実行できません（承認待ち）。",
    "入力「売上明細」のファイル 売上_2026年11月.xlsx が見つかりません。",
    "設定ファイル /home/keiri/plan_config.yaml の 3 行目を読めません。",
    "LLM の応答が制限時間内に返りませんでした（3 回試行）: gpt-4o-mini",
    "請求書 INV-2026-0042 の金額 12,800 円が明細の合計 12,000 円と合いません。",
    "ブロック table.mystery は見つかりません。",
)
HINTS = ("", "ファイル名を確認してください。", "承認できる人: kato。")


def _errors(rng: random.Random) -> list[BlockError]:
    """Errors of every code, with messages, hints and nodes as commands give them."""
    codes = list(ErrorCode)
    made = [BlockError(rng.choice(MESSAGES), code=code) for code in codes]  # each code once
    while len(made) < CASES:
        node = rng.choice(("", "sales", "confirm_totals"))
        made.append(
            BlockError(
                rng.choice(MESSAGES),
                code=rng.choice(codes),
                hint=rng.choice(HINTS),
                details={"node_id": node} if node else {},
            )
        )
    return made


def _shown(error: BlockError, monkeypatch: pytest.MonkeyPatch) -> str:
    screen = io.StringIO()
    monkeypatch.setattr(common, "err_console", Console(file=screen, width=400))
    # A command without --json: an earlier test's `--json` invocation in this process must not
    # decide how this error is shown (the CLI keeps the invocation it runs in).
    monkeypatch.setattr(common, "_current", common._Invocation())
    common.show_error(error)
    return screen.getvalue()


def test_the_error_line_says_the_code_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every code's error line starts with its words, the message after; no raw code."""
    wrong = {}
    for error in _errors(random.Random(SEED)):
        shown = _shown(error, monkeypatch)
        first = shown.splitlines()[0]
        if first != f"エラー（{code_word(error.code)}）: {error.message}" or RAW_CODE.search(shown):
            wrong[error.code] = shown
    assert wrong == {}, f"{len(wrong)} of {len(ErrorCode)} codes: {wrong}"


def test_a_failed_node_says_the_code_in_words() -> None:
    """A plan's progress line for a failed node: the same words as the error line."""
    wrong = {}
    rng = random.Random(SEED)
    for n, error in enumerate(_errors(rng)):
        will_retry = rng.choice((None, True, False))
        event = NodeFailed(
            id=n, run_id="run", timestamp=datetime.now(UTC), node_id="sales",
            error=error.to_dict(), will_retry=will_retry,
        )  # fmt: skip
        line = describe_event(event) or ""
        then = "（再試行します）" if will_retry else ""
        if line != f"✗ sales エラー（{code_word(error.code)}）: {error.message}{then}":
            wrong[error.code] = line
    assert wrong == {}, f"{len(wrong)} of {len(ErrorCode)} codes: {wrong}"


def test_a_failed_llm_call_says_its_code_in_the_same_words() -> None:
    """An LLM call's line words its code from the one table, not a second one of its own."""
    rng = random.Random(SEED)
    wrong = {}
    for code in [*ErrorCode, *rng.choices(list(ErrorCode), k=CASES)]:
        call = LLMCall(
            id=1, run_id="run", timestamp=datetime.now(UTC), role="codeact", provider="openai",
            model="gpt-4o-mini", input_tokens=rng.randint(0, 9000),
            output_tokens=rng.randint(0, 900), total_tokens=rng.randint(0, 9900),
            latency_ms=rng.uniform(10, 90_000), attempts=rng.randint(1, 4), ok=False,
            error_code=code,
        )  # fmt: skip
        if not llm_call_line(call).endswith(f"、失敗（{code_word(code)}）"):
            wrong[code] = llm_call_line(call)
    assert wrong == {}, f"{len(wrong)} of {len(ErrorCode)} codes: {wrong}"


def test_the_words_name_one_code_each() -> None:
    """Support reads the code back from the words on a user's screen: one code per wording,
    every code worded."""
    assert set(CODE_WORDS) == set(ErrorCode)
    assert len(set(CODE_WORDS.values())) == len(CODE_WORDS)
    assert "その他" not in CODE_WORDS.values()  # the words of a code the table lacks


def test_a_command_says_words_and_json_keeps_the_code() -> None:
    """A real failing command: words on stderr, the code in ``--json`` for scripts and support."""
    said = runner.invoke(app, ["blocks", "show", "no.such_block"])
    assert said.exit_code == 2
    assert said.stderr.startswith(f"エラー（{code_word(ErrorCode.BLOCK_NOT_FOUND)}）: ")
    assert "BLOCK_NOT_FOUND" not in said.stderr
    document = runner.invoke(app, ["blocks", "show", "no.such_block", "--json"])
    assert json.loads(document.stdout)["error"]["code"] == ErrorCode.BLOCK_NOT_FOUND
