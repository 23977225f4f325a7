"""BlockError: the seed's fields, codes, Japanese rendering, and a lossless dict form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.errors import (
    BlockError,
    CredentialsMissingError,
    ErrorCode,
    LLMTimeoutError,
    PathEscapeError,
    UserFile,
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


_NOTES = UserFile(
    "メモ {file} が見つかりません。",
    hint="パスを確認してください。",
    unreadable="メモ {file} を読めません",
)


def test_a_user_file_that_is_missing_is_an_input_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "notes.txt"
    with pytest.raises(BlockError) as caught:
        _NOTES.read_text(missing)
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert caught.value.message == f"メモ {missing} が見つかりません。"
    assert caught.value.hint == "パスを確認してください。"
    assert caught.value.details == {"file": str(missing)}


def test_a_user_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    binary = tmp_path / "notes.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    for file in (binary, tmp_path):  # not UTF-8; a folder
        with pytest.raises(BlockError) as caught:
            _NOTES.read_text(file)
        assert caught.value.code == ErrorCode.FILE_UNREADABLE
        assert caught.value.message.startswith(f"メモ {file} を読めません: ")
        assert caught.value.details["file"] == str(file)
        assert caught.value.details["cause"].startswith(("UnicodeDecodeError", "IsADirectoryError"))


def test_a_parse_failure_inside_reading_is_unreadable_and_other_errors_pass(tmp_path: Path) -> None:
    file = tmp_path / "n.json"
    file.write_text("{", encoding="utf-8")
    with pytest.raises(BlockError) as caught, _NOTES.reading(file, errors=(ValueError,)):
        json.loads(file.read_text(encoding="utf-8"))
    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    with pytest.raises(KeyError), _NOTES.reading(file):  # not a reading failure: not turned
        raise KeyError("x")


def test_without_a_missing_message_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    plain = UserFile("", hint="", unreadable="{file} を読み込めません")
    with pytest.raises(BlockError) as caught:
        plain.read_text(tmp_path / "gone.py")
    assert caught.value.code == ErrorCode.FILE_UNREADABLE
    assert caught.value.message.endswith("を読み込めません: ファイルまたはフォルダがありません")
    assert "No such file" in caught.value.details["cause"]
