"""reason_of: a Japanese reason for any exception a library raises, its own words kept in details."""

from __future__ import annotations

import codecs
import csv
import errno
import io
import json
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest
import yaml
from openpyxl import load_workbook
from pydantic import BaseModel

from keiri_agent.byte_place import decode_text
from keiri_agent.errors import BlockError, UserFile, cause_of, reason_of
from keiri_agent.plan._dsl.yaml_read import YamlLimitError

# A word of three or more Latin letters: what an English library message is made of.
_ENGLISH = re.compile(r"[A-Za-z]{3,}")


class _Shape(BaseModel):
    amount: int
    name: str


def _raised(action: object) -> BaseException:
    try:
        action()  # type: ignore[operator]
    except Exception as exc:
        return exc
    raise AssertionError("nothing was raised")


def _query(file: Path) -> None:
    connection = sqlite3.connect(file)
    try:
        connection.execute("select * from sqlite_master").fetchall()
    finally:
        connection.close()


def _cases(tmp: Path) -> list[tuple[BaseException, str]]:
    (tmp / "db.sqlite").write_bytes(b"this is not a database file at all, really" * 40)
    return [
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "x"), "ありません"),
        (PermissionError(errno.EACCES, "Permission denied", "x"), "権限"),
        (OSError(errno.ENOSPC, "No space left on device"), "ディスクの空き"),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "x"), "フォルダです"),
        (OSError(errno.EROFS, "Read-only file system"), "読み取り専用"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), "接続"),
        (TimeoutError("timed out"), "時間内"),
        (OSError(errno.EPROTO, "Protocol error"), "エラー番号"),
        (_raised(lambda: b"\xff\xfe bad".decode("utf-8")), "文字コード"),
        (_raised(lambda: "円".encode("ascii")), "表せない文字"),
        (_raised(lambda: yaml.safe_load("a: b: c\n")), "1 行 5 列目"),
        (_raised(lambda: yaml.safe_load("key: [unclosed\n")), "YAML"),
        (_raised(lambda: json.loads('{"a": 1,\n  oops}')), "2 行 3 列目"),
        (_raised(lambda: _Shape.model_validate({"amount": "many"})), "amount、name"),
        (_raised(lambda: zipfile.ZipFile(io.BytesIO(b"not a zip archive"))), "ZIP"),
        (_raised(lambda: load_workbook(str(tmp / "book.txt"))), "Excel"),
        (_raised(lambda: _query(tmp / "db.sqlite")), "データベース"),
        (_raised(lambda: list(csv.reader(['"abc'], strict=True))), "CSV"),
        (_raised(lambda: re.compile("(unclosed")), "正規表現"),
        (_raised(lambda: __import__("no_such_module_here")), "no_such_module_here"),
        (ValueError("something went wrong deep inside"), "ValueError"),
        (KeyError("run_id"), "項目 run_id がありません"),
        (RuntimeError("worker crashed"), "RuntimeError"),
    ]


def test_every_kind_of_exception_gets_a_japanese_reason_and_keeps_its_own_words(
    tmp_path: Path,
) -> None:
    for exc, expected in _cases(tmp_path):
        reason = reason_of(exc)
        assert expected in reason, (exc, reason)
        english = set(_ENGLISH.findall(str(exc))) - {
            type(exc).__name__,
            *_ENGLISH.findall(expected),
        }
        assert not english & set(_ENGLISH.findall(reason)), (exc, reason)
        assert re.search(r"[ぁ-んァ-ン一-龥]", reason), reason
        assert cause_of(exc) == f"{type(exc).__name__}: {exc}"


def test_this_packages_own_errors_are_their_own_reason() -> None:
    assert reason_of(BlockError("請求書が空です。")) == "請求書が空です。"
    limit = YamlLimitError("エイリアスの展開が上限を超えました")  # also a yaml.YAMLError
    assert reason_of(limit) == "エイリアスの展開が上限を超えました"


def test_a_folder_given_as_a_file_says_it_is_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BlockError) as caught:
        UserFile("", hint="", unreadable="メモ {file} を読めません").read_text(tmp_path)
    assert caught.value.message == f"メモ {tmp_path} を読めません: ファイルではなくフォルダです"
    assert "Is a directory" in caught.value.details["cause"]
    assert "Errno" not in caught.value.message + caught.value.hint


# Excel's "CSV UTF-8" (BOM first) with one byte that is no UTF-8 on line 3: the 35th byte of the
# file as a person counts, BOM included (offset 34).
BOM_CSV_WITH_BAD_BYTE = codecs.BOM_UTF8 + "取引先,金額\n㈱山田,100\n".encode() + b"\xff,200\n"


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "UTF_8_SIG"])
def test_a_decoding_error_names_the_line_and_byte_as_counted_in_the_file(codec: str) -> None:
    assert BOM_CSV_WITH_BAD_BYTE[34] == 0xFF
    exc = _raised(lambda: decode_text(BOM_CSV_WITH_BAD_BYTE, codec))

    assert isinstance(exc, UnicodeDecodeError)
    assert exc.start == 34  # utf-8-sig's own error says 31: it counts after the BOM
    assert (
        reason_of(exc)
        == "文字コードが UTF-8 ではなく、3 行目（先頭から 35 バイト目）以降を読めません"
    )


def test_decode_text_reads_as_bytes_decode_does() -> None:
    data = codecs.BOM_UTF8 + "取引先\n".encode()
    assert decode_text(data, "utf-8-sig") == data.decode("utf-8-sig") == "取引先\n"
    assert decode_text(data, "utf-8") == "\ufeff取引先\n"
    assert decode_text("金額".encode("cp932"), "cp932") == "金額"


def test_a_file_read_whole_is_named_at_its_line_and_byte(tmp_path: Path) -> None:
    memo = tmp_path / "memo.txt"
    memo.write_bytes("1 行目\n2 行目\n".encode() + b"\x82\xa0")

    with pytest.raises(BlockError) as caught:
        UserFile("", hint="", unreadable="メモ {file} を読めません").read_text(memo)

    assert caught.value.message == (
        f"メモ {memo} を読めません: 文字コードが UTF-8 ではなく、3 行目（先頭から 19 バイト目）以降を読めません"
    )
