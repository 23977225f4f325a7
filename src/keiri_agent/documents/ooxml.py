"""Office Open XML files (.xlsx/.xlsm/.docx/.pptx) as hostile input: one way to open them.

An Office file is a ZIP of XML parts, so it gets the archive limits (``zipcheck.
check_container``) before any library opens it, and its XML is parsed without entity
expansion: openpyxl uses defusedxml (a dependency of ours, which openpyxl picks up by itself)
and python-docx/python-pptx parse with lxml's ``resolve_entities=False``. A part that declares
entities ("billion laughs") or that the XML parser refuses becomes ``xml_error``'s Japanese
``FileProcessingError`` instead of a ParseError traceback.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException  # type: ignore[import-untyped]
from lxml.etree import XMLSyntaxError  # type: ignore[import-untyped]
from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.workbook.workbook import Workbook

from keiri_agent.documents.failures import RESAVE_HINT, exception_reason, unreadable, unsafe
from keiri_agent.documents.zipcheck import check_container
from keiri_agent.errors import FileProcessingError

__all__ = ["XML_ERRORS", "open_workbook", "xml_error"]

# What the XML parsers raise on a malformed or hostile part.
XML_ERRORS: tuple[type[Exception], ...] = (DefusedXmlException, ParseError, XMLSyntaxError)
# openpyxl's typed descriptors raise TypeError on a malformed attribute.
_WORKBOOK_ERRORS = (
    zipfile.BadZipFile,
    InvalidFileException,
    KeyError,
    OSError,
    TypeError,
    ValueError,
)
_SAVE_AS_XLSX_HINT = (
    "Excel で開けるか確認し、「名前を付けて保存」で .xlsx として保存し直してください。"
)


def xml_error(label: str, exc: Exception) -> FileProcessingError:
    """The error for an XML part that could not be parsed: an entity bomb or broken XML."""
    reason = exception_reason(exc)
    if isinstance(exc, DefusedXmlException) or "amplification" in str(exc):
        return unsafe(
            label,
            (
                f"「{label}」の中の XML がエンティティ（DTD）を定義しています。展開すると巨大になる"
                "「XML 爆弾」の疑いがあるため読み込みません。"
            ),
            (
                "Office が保存したファイルに DTD は含まれません。作成元に確認し、Excel・Word・"
                "PowerPoint で開いて保存し直したファイルを渡してください。"
            ),
            reason=reason,
        )
    return unreadable(
        label,
        f"「{label}」の中の XML が壊れているため読み込めません。",
        RESAVE_HINT,
        reason=reason,
    )


def open_workbook(
    source: bytes | Path, label: str, *, read_only: bool, data_only: bool, keep_vba: bool = False
) -> Workbook:
    """``openpyxl.load_workbook`` after ``check_container``, with Japanese errors."""
    if isinstance(source, bytes):
        check_container(source, label)
    else:
        with open(source, "rb") as handle:
            check_container(handle, label)
    with warnings.catch_warnings():
        # openpyxl warns about features it drops (data validation, slicers); not our concern.
        warnings.simplefilter("ignore")
        try:
            target: Any = io.BytesIO(source) if isinstance(source, bytes) else source
            return load_workbook(
                target, read_only=read_only, data_only=data_only, keep_vba=keep_vba
            )
        except XML_ERRORS as exc:
            raise xml_error(label, exc) from exc
        except _WORKBOOK_ERRORS as exc:
            cause = _xml_cause(exc)  # openpyxl re-raises a part's ValueError as its own
            if cause is not None:
                raise xml_error(label, cause) from exc
            raise unreadable(
                label,
                f"「{label}」は Excel ブックとして読めません（破損しているか、別形式のファイルです）。",
                _SAVE_AS_XLSX_HINT,
                reason=exception_reason(exc),
            ) from exc


def _xml_cause(exc: BaseException) -> Exception | None:
    """The XML parser's exception behind ``exc``, if there is one in its chain."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, XML_ERRORS):
            return current
        current = current.__cause__ or current.__context__
    return None
