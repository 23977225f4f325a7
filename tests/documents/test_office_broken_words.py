"""A broken Office file or an unopenable path is refused in Japanese only: the library's
exception (``KeyError``, ``PermissionError``) stays in the error's details, never in the message.

Every part of a Word / PowerPoint file is dropped in turn (what a cut download or a careless
zip tool leaves): whatever the libraries raise, the message a person reads has no Latin word
but the file's own name.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import docx
import pptx
import pytest

from keiri_agent.documents.office import read_docx, read_pptx
from keiri_agent.documents.source import read_source
from keiri_agent.errors import FileProcessingError

_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
PRODUCT_NAMES = ("PowerPoint", "Word", "Excel")  # names a Japanese office uses as they are


def _word() -> bytes:
    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("請求書 株式会社青葉商事 御中")
    document.save(buffer)
    return buffer.getvalue()


def _slides() -> bytes:
    buffer = io.BytesIO()
    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "月次報告"
    deck.save(buffer)
    return buffer.getvalue()


def _without(data: bytes, part: str) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename != part:
                target.writestr(info, source.read(info))
    return out.getvalue()


def _cases() -> list[tuple[str, bytes, str]]:
    cases = []
    for name, data in (("見積書.docx", _word()), ("報告.pptx", _slides())):
        for part in zipfile.ZipFile(io.BytesIO(data)).namelist():
            cases.append((name, data, part))
    return cases


def _said(error: FileProcessingError, name: str) -> str:
    said = f"{error.message}\n{error.hint}".replace(name, "")
    for product in PRODUCT_NAMES:
        said = said.replace(product, "")
    return said


def _refusal(name: str, data: bytes) -> FileProcessingError | None:
    readers = {".docx": read_docx, ".pptx": read_pptx}
    try:
        readers[Path(name).suffix](data, name)
    except FileProcessingError as error:
        return error
    return None  # a part the reader does not need


def test_every_dropped_part_is_refused_in_japanese_with_the_cause_in_details() -> None:
    refusals = [(part, _refusal(name, _without(data, part)), name) for name, data, part in _cases()]
    refused = [(part, error, name) for part, error, name in refusals if error is not None]
    for part, error, name in refused:
        assert not _LATIN_WORD.search(_said(error, name)), (part, error.message)
        assert error.details["reason"], part  # the library's own words, for an engineer
    assert len(refused) >= 4  # the main parts cannot be missed


def test_a_missing_main_part_names_the_library_error_only_in_details() -> None:
    with pytest.raises(FileProcessingError) as caught:
        read_docx(_without(_word(), "word/document.xml"), "見積書.docx")
    error = caught.value
    assert "KeyError" not in error.message
    assert "壊れている" in error.message
    assert error.details["reason"].startswith("KeyError: ")


def test_a_folder_given_as_a_file_is_said_in_japanese(tmp_path: Path) -> None:
    folder = tmp_path / "請求書"
    folder.mkdir()
    with pytest.raises(FileProcessingError) as caught:
        read_source(folder, label="請求書")
    error = caught.value
    assert not _LATIN_WORD.search(_said(error, "請求書")), error.message
    assert "フォルダー" in error.message
    assert error.details["reason"].startswith("IsADirectoryError")
