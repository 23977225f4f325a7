"""BlockError: the seed's fields, codes, Japanese rendering, and a lossless dict form."""

from __future__ import annotations

import json

from keiri_agent.errors import (
    BlockError,
    CredentialsMissingError,
    ErrorCode,
    LLMTimeoutError,
    PathEscapeError,
)


def test_block_error_carries_the_seed_fields_and_round_trips_through_json() -> None:
    error = BlockError(
        "入力ファイルが見つかりません",
        code=ErrorCode.INPUT_VALIDATION_FAILED,
        hint="ファイルを選び直してください",
        details={"node_id": "collect_inputs", "field": "workbook"},
        input_snapshot={"workbook": None},
        recoverable=True,
    )
    data = json.loads(json.dumps(error.to_dict(), ensure_ascii=False))
    assert set(data) == {"code", "message", "details", "input_snapshot", "hint", "recoverable"}
    again = BlockError.from_dict(data)
    assert again.to_dict() == error.to_dict()
    assert (
        str(error)
        == "[INPUT_VALIDATION_FAILED] 入力ファイルが見つかりません（ヒント: ファイルを選び直してください）"
    )


def test_seed_codes_exist() -> None:
    for code in (
        "INPUT_VALIDATION_FAILED",
        "OUTPUT_SCHEMA_MISMATCH",
        "DEPENDENCY_NOT_FOUND",
        "API_ERROR",
        "TIMEOUT_ERROR",
        "PERMISSION_DENIED",
    ):
        assert ErrorCode(code) == code


def test_subclasses_pick_their_codes_and_recoverability() -> None:
    assert LLMTimeoutError("x").code == "TIMEOUT_ERROR"
    assert LLMTimeoutError("x").recoverable is True
    assert PathEscapeError("x").code == "PERMISSION_DENIED"
    assert PathEscapeError("x").recoverable is False
    missing = CredentialsMissingError("azure", ["AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"])
    assert missing.code == "CONFIGURATION_ERROR"
    assert "AZURE_OPENAI_API_KEY" in missing.message
    assert "OPENAI_API_VERSION" in missing.hint
    assert missing.details["missing"] == ["AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"]
