"""Showing a ``BlockError`` as seed 002 §9.3 draws it: the message, the details in an expander,
the hint, and a rerun button when rerunning can succeed.

The details are said in words (``errors.CODE_WORDS``, :data:`DETAIL_WORDS`, values by
``screen_words.shown_value``): the kind of error, whether running again can help, and the details
a person can act on (the file, the line, the column, the setting...). The whole record, with the
program's own names and a library's English cause, is for whoever supports the person: it is
offered as a file to download, not drawn on the page.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any, Final

import streamlit as st
from streamlit.errors import (
    StreamlitDuplicateElementId,
    StreamlitDuplicateElementKey,
    StreamlitInvalidLayoutContextError,
)

from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import BlockError, code_word
from keiri_agent.ui.screen_words import shown_table, shown_value

__all__ = ["DETAIL_WORDS", "detail_rows", "render_error", "settings_or_error"]

# The details a person can act on, by the name the code gives them. Others (ids, the inputs,
# a library's English cause) are in the record to download.
DETAIL_WORDS: Final[Mapping[str, str]] = {
    "file": "ファイル",
    "path": "ファイル",
    "sheet": "シート",
    "column": "列",
    "columns": "列",
    "row": "行",
    "line": "行",
    "position": "位置",
    "cell": "セル",
    "reason": "理由",
    "problem": "問題",
    "problems": "問題",
    "received": "受け取った値",
    "expected": "期待する値",
    "missing": "未設定の項目",
    "variable": "設定",
    "provider": "AI の提供元",
    "model": "モデル",
    "purpose": "用途",
    "folder": "フォルダ",
    "directory": "フォルダ",
    "index_dir": "資料の索引のフォルダ",
    "limit": "上限",
    "size": "大きさ",
    "timeout_s": "待ち時間（秒）",
    "max_iterations": "繰り返しの上限",
    "version": "版",
    "plan_id": "Plan",
    "run_id": "実行 ID",
}
FILE_KEYS: Final = frozenset({"file", "path"})
RECORD_FILE: Final = "エラーの記録.json"


def _said(value: Any) -> str:
    """A detail's value in words: of a list of records, each record's known details."""
    if isinstance(value, Mapping):
        parts = [shown_value(v) for k, v in value.items() if k in DETAIL_WORDS]
        return "・".join(p for p in parts if p)
    if isinstance(value, list | tuple) and any(isinstance(v, Mapping) for v in value):
        return "、".join(p for p in (_said(v) for v in value) if p)
    return shown_value(value)


def detail_rows(error: BlockError) -> list[dict[str, str]]:
    """The error's details as a person reads them: 項目 and 内容, one row each."""
    code = str(error.code)
    rows = [{"項目": "エラーの種類", "内容": f"{code_word(code)}（{code}）"}]
    rows.append(
        {
            "項目": "もう一度実行すると",
            "内容": "成功することがあります（同じ内容で再実行できます）"
            if error.recoverable
            else "同じ結果になります（ヒントのとおり直してから実行してください）",
        }
    )
    for key, value in error.details.items():
        if key in FILE_KEYS and isinstance(value, str) and PurePath(value).is_absolute():
            value = PurePath(value)  # where the app keeps it is in the record: its name here
        said = _said(value) if key in DETAIL_WORDS else ""
        if said:
            rows.append({"項目": DETAIL_WORDS[key], "内容": said})
    return rows


def _offer_record(error: BlockError) -> None:
    """The whole record as a file to download, once per page: the same error shown twice
    (an earlier turn of a chat) offers the file where it is shown first; inside a form (a field's
    refused path) Streamlit allows no download."""
    record = json.dumps(error.to_dict(), ensure_ascii=False, indent=2, default=str)
    digest = hashlib.sha256(record.encode()).hexdigest()[:16]
    try:
        st.download_button(
            "サポート用の記録（JSON）をダウンロード",
            data=record,
            file_name=RECORD_FILE,
            mime="application/json",
            key=f"error_record_{digest}",
            on_click="ignore",
            icon=":material/download:",
            help="サポートに問い合わせるとき、このファイルを添えてください。",
        )
    except (StreamlitDuplicateElementKey, StreamlitDuplicateElementId):
        st.caption("サポート用の記録は、上に同じエラーを表示したところからダウンロードできます。")
    except StreamlitInvalidLayoutContextError:  # a field of a form (Streamlit allows no download)
        st.caption("この入力欄の中では、サポート用の記録はダウンロードできません。")


def render_error(error: BlockError, *, retry_key: str | None = None) -> bool:
    """Show ``error``; returns True when its 再実行 button (shown with ``retry_key``) was pressed."""
    st.error(error.message, icon="❌")
    with st.expander("エラー詳細"):
        st.dataframe(shown_table(detail_rows(error)), hide_index=True)
        _offer_record(error)
    if error.hint:
        st.info(error.hint, icon="💡")
    if retry_key is not None and error.recoverable:
        return st.button("再実行", key=retry_key, help="同じ内容をもう一度実行します。")
    return False


def settings_or_error() -> Settings | None:
    """The settings, or None once the error saying why they cannot be loaded is shown."""
    try:
        return load_settings()
    except BlockError as exc:
        render_error(exc)
        return None
