"""The 設計 page's inputs besides the instruction: the reference documents (uploaded, saved in
this session's folder and read once per set of files) and the template picker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from keiri_agent.config import Settings
from keiri_agent.design.documents import read_documents
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec
from keiri_agent.errors import BlockError
from keiri_agent.ui import session_state
from keiri_agent.ui.chrome import file_uploader
from keiri_agent.ui.design.state import (
    DOCS_CHANGED_KEY,
    DOCUMENTS_KEY,
    PAGE,
    SEARCH_KEY,
    TAGS_KEY,
    TEMPLATES_KEY,
    keep,
    restore,
    session_dir,
)
from keiri_agent.ui.error_view import render_error
from keiri_agent.workspace import confine

__all__ = ["DOCUMENT_TYPES", "MODE_LABELS", "Documents", "documents_input", "templates_input"]

DOCUMENT_TYPES = ["txt", "md", "pdf", "docx", "xlsx"]
# The ways to use the templates (``design.engine.APPLY_MODES``), as the page offers them.
MODE_LABELS = {
    "hint": "テンプレートを手本に AI が作る",
    "compose": "テンプレートを組み合わせる（AI を使わない）",
    "llm-only": "テンプレートを使わずに AI が作る",
}


@dataclass
class Documents:
    """Uploaded reference documents (saved in the session folder): names and extracted text."""

    signature: tuple[tuple[str, int, str], ...]
    names: list[str]
    texts: list[str]


def _mark_documents_changed() -> None:
    st.session_state[DOCS_CHANGED_KEY] = True


def documents_input(settings: Settings) -> Documents | None:
    """The uploaded documents, read again only when the uploader's files change."""
    uploads = file_uploader(
        "参考ドキュメント（任意・複数可）",
        DOCUMENT_TYPES,
        multiple=True,
        key=session_state.uploader_key(PAGE, "uploads"),
        on_change=_mark_documents_changed,
        help="業務の手順書や帳票の例など。テキストを抜き出して生成の参考にします。",
    )
    current: Documents | None = st.session_state.get(DOCUMENTS_KEY)
    signature = tuple((u.name, u.size, u.file_id) for u in uploads or [])
    changed = bool(st.session_state.pop(DOCS_CHANGED_KEY, False))
    if changed and not uploads:
        st.session_state.pop(DOCUMENTS_KEY, None)
        return None
    if uploads and (current is None or current.signature != signature):
        folder = session_dir(settings, "documents")
        paths = []
        for upload in uploads:
            path = confine(folder, Path(upload.name).name)
            path.write_bytes(upload.getvalue())
            paths.append(path)
        try:
            texts = read_documents(paths)
        except BlockError as exc:
            render_error(exc)
            return current
        current = Documents(signature, [p.name for p in paths], texts)
        st.session_state[DOCUMENTS_KEY] = current
    if current is not None:
        st.caption("読み込んだ資料: " + "、".join(current.names))
    return current


def templates_input(library: TemplateLibrary) -> list[str]:
    """Tag filter, text search and the multi-select of templates; the chosen template ids."""
    left, right = st.columns(2)
    with left:
        restore(TAGS_KEY, [])
        tags = keep(
            TAGS_KEY,
            st.multiselect(
                "タグで絞り込む", library.tags(), key=TAGS_KEY, placeholder="タグを選んでください"
            ),
        )
    with right:
        restore(SEARCH_KEY, "")
        text = keep(SEARCH_KEY, st.text_input("テンプレートを検索", key=SEARCH_KEY))
    restore(TEMPLATES_KEY, [])
    known = {spec.id for spec in library.list()}
    chosen = [t for t in st.session_state[TEMPLATES_KEY] if t in known]
    shown = {spec.id: spec for spec in library.list(tags=tags, text=text)}
    specs: dict[str, TemplateSpec] = {**{t: library.get(t) for t in chosen}, **shown}
    st.session_state[TEMPLATES_KEY] = chosen
    picked: list[str] = st.multiselect(
        f"テンプレート（{len(shown)} 件が条件に一致）",
        list(specs),
        key=TEMPLATES_KEY,
        format_func=lambda t: f"{specs[t].title}（{specs[t].key}）",
        placeholder="テンプレートを選んでください",
        help="選んだテンプレートは hint では手本として LLM に渡し、compose ではそのまま合成します。",
    )
    return list(keep(TEMPLATES_KEY, picked))
