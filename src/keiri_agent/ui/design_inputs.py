"""State and inputs of the 設計 page: its Session State keys, widget values that survive page
switches, the document uploader, the template picker and the Top-K candidates.

Streamlit drops a widget's state when a run does not draw it (another page's run), so each
input widget is seeded from a kept copy (``design_kept``) whenever its own state is missing, and
its value is copied back after it is drawn. Uploaded documents are saved into this session's
folder under ``KEIRI_WORKSPACE_ROOT`` and read once per set of files; the Top-K ranking is
computed the way the generator asks for it and cached per query.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import LLMRole, Settings
from keiri_agent.design.documents import read_documents
from keiri_agent.design.engine import UI_BLOCK
from keiri_agent.design.models import DesignEngineOptions
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec
from keiri_agent.design.topk import BlockRetriever, RetrievalResult
from keiri_agent.documents.normalize import normalize_for_prompt
from keiri_agent.errors import BlockError
from keiri_agent.ui import session_state
from keiri_agent.ui.chrome import upload_note
from keiri_agent.ui.error_view import render_error
from keiri_agent.workspace import confine, new_session_dir

__all__ = [
    "ANSWERS_KEY",
    "CHAT_KEY",
    "CHECK_KEY",
    "DOCUMENTS_KEY",
    "DOCUMENT_TYPES",
    "ERROR_KEY",
    "INSTRUCTION_KEY",
    "KEPT_KEY",
    "MODE_KEY",
    "MODE_LABELS",
    "PAGE",
    "PLAN_ID_KEY",
    "SAVED_KEY",
    "SEARCH_KEY",
    "TAGS_KEY",
    "TEMPLATES_KEY",
    "YAML_KEY",
    "Documents",
    "candidates",
    "documents_input",
    "keep",
    "restore",
    "retriever_for",
    "session_dir",
    "set_widget",
    "templates_input",
]

PAGE = "design"
(
    INSTRUCTION_KEY,
    TAGS_KEY,
    SEARCH_KEY,
    TEMPLATES_KEY,
    MODE_KEY,
    PLAN_ID_KEY,
    YAML_KEY,
    KEPT_KEY,
    CHAT_KEY,
    ANSWERS_KEY,
    ERROR_KEY,
    DOCUMENTS_KEY,
    DOCS_CHANGED_KEY,
    SESSION_DIR_KEY,
    TOPK_KEY,
    CHECK_KEY,
    SAVED_KEY,
) = session_state.page_keys(
    PAGE,
    "instruction",
    "tags",
    "template_search",
    "templates",
    "apply_mode",
    "plan_id",
    "yaml",
    "kept",  # widget key → value (session_state.kept)
    "chat",
    "answers",  # render_fields' store
    "error",  # the last generation or answer error
    "documents",
    "documents_changed",
    "session_dir",
    "topk",
    "check",
    "saved",
)
T = TypeVar("T")
DOCUMENT_TYPES = ["txt", "md", "pdf", "docx", "xlsx"]
MODE_LABELS = {
    "hint": "hint（テンプレートを手本として LLM が生成）",
    "compose": "compose（テンプレートを合成。LLM 不要）",
    "llm-only": "llm-only（テンプレートを使わず LLM が生成）",
}


@dataclass
class Documents:
    """Uploaded reference documents (saved in the session folder): names and extracted text."""

    signature: tuple[tuple[str, int, str], ...]
    names: list[str]
    texts: list[str]


def restore(key: str, default: Any) -> None:
    """Give the widget under ``key`` its kept value (Streamlit drops it when another page runs)."""
    session_state.restore(PAGE, key, default)


def keep(key: str, value: T) -> T:
    return session_state.keep(PAGE, key, value)


def set_widget(key: str, value: Any) -> None:
    """Set a widget's value before it is drawn in this run (and its kept copy)."""
    st.session_state[key] = value
    keep(key, value)


def session_dir(settings: Settings, name: str) -> Path:
    """``<workspace>/<session>/<name>``, the session folder created on first use."""
    root = st.session_state.get(SESSION_DIR_KEY)
    if root is None:
        root = new_session_dir(settings.keiri_workspace_root)
        st.session_state[SESSION_DIR_KEY] = root
    folder = Path(root) / name
    folder.mkdir(exist_ok=True)
    return folder


def _mark_documents_changed() -> None:
    st.session_state[DOCS_CHANGED_KEY] = True


def documents_input(settings: Settings) -> Documents | None:
    """The uploaded documents, read again only when the uploader's files change."""
    uploads = st.file_uploader(
        "参考ドキュメント（任意・複数可）",
        type=DOCUMENT_TYPES,
        accept_multiple_files=True,
        key=session_state.uploader_key(PAGE, "uploads"),
        on_change=_mark_documents_changed,
        help="業務の手順書や帳票の例など。テキストを抜き出して生成の参考にします。",
    )
    st.caption(upload_note(DOCUMENT_TYPES))
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


@st.cache_resource(max_entries=4, show_spinner=False)
def _retriever(
    _registry: BlockRegistry, _settings: Settings, key: tuple[Any, ...]
) -> BlockRetriever:
    return BlockRetriever(_registry, settings=_settings)


def _setup(registry: BlockRegistry, settings: Settings) -> tuple[Any, ...]:
    """What a retriever depends on: the registry, the embedding model, the embedding cache."""
    return id(registry), str(settings.model_for(LLMRole.EMBEDDING)), str(settings.keiri_cache_dir)


def retriever_for(registry: BlockRegistry, settings: Settings) -> BlockRetriever:
    """One retriever per setup, shared by the candidates table and the generator."""
    return _retriever(registry, settings, _setup(registry, settings))


def candidates(
    instruction: str,
    documents: Documents | None,
    templates: list[TemplateSpec],
    registry: BlockRegistry,
    settings: Settings,
) -> RetrievalResult:
    """Top-K for the instruction, asked the way the generator asks (cached per query)."""
    options = DesignEngineOptions()
    docs = [(f"資料{i + 1}", t) for i, t in enumerate(documents.texts if documents else []) if t]
    normalized = normalize_for_prompt(docs, max(options.max_docs_chars, 1)).text
    query = instruction.strip()
    required = list(dict.fromkeys([UI_BLOCK, *(b for t in templates for b in t.blocks())]))
    setup = (
        id(registry),
        str(settings.model_for(LLMRole.EMBEDDING)),
        str(settings.keiri_cache_dir),
    )
    cache_key = (query, normalized, options.retrieval_mode, tuple(required), setup)
    cached = st.session_state.get(TOPK_KEY)
    if cached is not None and cached[0] == cache_key:
        result: RetrievalResult = cached[1]
        return result
    result = retriever_for(registry, settings).retrieve(
        query,
        documents=normalized,
        mode=options.retrieval_mode,
        k_per_category=options.topk_per_category,
        max_total=options.topk_total,
        required=required,
        token_budget=options.token_budget,
    )
    st.session_state[TOPK_KEY] = (cache_key, result)
    return result
