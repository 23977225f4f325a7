"""A document the user named that is not there is one error, whichever reader looks for it:
the file's name, where to look, and its path in the details."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from keiri_agent.documents import ExcelManager, open_archive
from keiri_agent.documents.source import read_source
from keiri_agent.errors import FileProcessingError

READERS: dict[str, Callable[[Path], object]] = {
    "any document": lambda path: read_source(path, label=path.name),
    "Excel": ExcelManager,
    "ZIP": open_archive,
}


@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_a_missing_document_is_named_the_same_by_every_reader(
    reader: Callable[[Path], object], tmp_path: Path
) -> None:
    missing = tmp_path / "請求書.xlsx" if reader is ExcelManager else tmp_path / "請求書.zip"
    with pytest.raises(FileProcessingError) as caught:
        reader(missing)
    assert caught.value.code == "FILE_UNREADABLE"
    assert caught.value.message == f"「{missing.name}」が見つかりません。"
    assert caught.value.hint == "ファイル名と保存場所を確認してください。"
    assert caught.value.details["path"] == str(missing)
