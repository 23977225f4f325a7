"""Failure classification across provider SDKs, without importing SDKs a command never uses."""

from __future__ import annotations

import subprocess
import sys

import anthropic
import httpx
import openai
import pytest

from keiri_agent.llm.retry import FailureKind, classify_failure

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (openai.APITimeoutError(request=REQUEST), FailureKind.TIMEOUT),
        (anthropic.APITimeoutError(request=REQUEST), FailureKind.TIMEOUT),
        (TimeoutError("read"), FailureKind.TIMEOUT),
        (openai.APIConnectionError(request=REQUEST), FailureKind.CONNECTION),
        (anthropic.APIConnectionError(request=REQUEST), FailureKind.CONNECTION),
        (ConnectionResetError("reset"), FailureKind.CONNECTION),
        (ValueError("bug"), FailureKind.OTHER),
    ],
)
def test_every_sdks_timeouts_and_connection_errors_are_retryable(
    exc: BaseException, kind: FailureKind
) -> None:
    assert classify_failure(exc) is kind
    assert kind.retryable is (kind is not FailureKind.OTHER)


def test_the_llm_layer_does_not_import_an_sdk_it_was_not_asked_for() -> None:
    code = (
        "import sys, keiri_agent.llm, keiri_agent.llm.retry as r\n"
        "assert r.classify_failure(TimeoutError()) is r.FailureKind.TIMEOUT\n"
        "print('anthropic' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert done.stdout.strip() == "False", done.stderr
