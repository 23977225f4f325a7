"""Real failures end to end: what a person reads is Japanese, the library's words are in details.

A users file and a plan's config file with a YAML mistake name its line and column; a folder
given where a file belongs says it is a folder; a file without read permission says so; a
search index whose JSON is broken names the line and column. No English word of the library's
message reaches the message or the hint.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from keiri_agent.errors import BlockError
from keiri_agent.plan import load_config
from keiri_agent.retrieval.bm25 import META_FILE, BM25Index
from keiri_agent.users import load_users
from tests.server.conftest import make_settings

_ENGLISH = re.compile(r"[A-Za-z]{3,}")


def _leaked(error: BlockError, path: Path) -> set[str]:
    """The words of the library's message (its cause, less the path) in the error's message
    (the hints are fixed texts: they name settings such as ``role: user|admin``)."""
    library = set(_ENGLISH.findall(error.details["cause"].split(": ", 1)[1]))
    library -= set(_ENGLISH.findall(str(path)))
    return library & set(_ENGLISH.findall(error.message))


def test_a_users_file_with_a_yaml_mistake_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "users.yaml"
    path.write_text("users:\n  - name: sato\n    role: user: admin\n", encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        load_users(make_settings(tmp_path, keiri_api_keys_file=path))
    error = caught.value
    assert "3 行 15 列目あたりの YAML の書き方に誤りがあります" in error.message
    assert "mapping values are not allowed" in error.details["cause"]
    assert _leaked(error, path) == set()


def test_a_users_file_that_breaks_the_rules_names_the_fields_in_japanese(tmp_path: Path) -> None:
    path = tmp_path / "users.yaml"
    path.write_text("users:\n  - {name: a, key_sha256: abc, role: root}\n", encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        load_users(make_settings(tmp_path, keiri_api_keys_file=path))
    assert "件の値が決まりに合いません" in caught.value.message
    assert "Input should be" in caught.value.details["cause"]
    assert _leaked(caught.value, path) == {"key", "sha", "role"}  # key_sha256, role: its fields


def test_a_plan_config_with_a_yaml_mistake_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("company:\n  name: 山田商事\n  fiscal: [4, 3\n", encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        load_config(path)
    error = caught.value
    assert error.message.startswith(f"設定ファイル {path} を読めません: 4 行 1 列目あたりの")
    assert _leaked(error, path) == set()
    assert "expected ',' or ']'" in error.details["cause"]


def test_a_folder_given_as_the_plan_config_says_it_is_a_folder(tmp_path: Path) -> None:
    with pytest.raises(BlockError) as caught:
        load_config(tmp_path)
    assert (
        caught.value.message
        == f"設定ファイル {tmp_path} を読めません: ファイルではなくフォルダです"
    )
    assert "Is a directory" in caught.value.details["cause"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_plan_config_without_read_permission_says_so(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(BlockError) as caught:
        load_config(path)
    assert caught.value.message.endswith("アクセスする権限がありません")
    assert "Permission denied" in caught.value.details["cause"]


def test_a_search_index_with_broken_json_names_its_line_and_column(tmp_path: Path) -> None:
    target = BM25Index.build(["請求書の締め日"]).save(tmp_path / "index")
    (target / META_FILE).write_text('{"kind": "bm25",\n  "ids": [oops]}', encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        BM25Index.load(target)
    error = caught.value
    assert error.message.endswith("2 行 11 列目が JSON として正しくありません")
    assert "Expecting value" in error.details["cause"]
    assert _leaked(error, target) == set()


def test_a_search_index_with_a_wrong_meta_file_says_so_in_japanese(tmp_path: Path) -> None:
    target = BM25Index.build(["請求書の締め日"]).save(tmp_path / "index")
    (target / META_FILE).write_text('{"kind": "other"}', encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        BM25Index.load(target)
    assert "BM25 の検索インデックスのものではありません" in caught.value.message
    assert "unexpected" not in caught.value.message
