"""Requirement fields (seed 002 §3) drawn as Streamlit widgets, their values kept by the §8.2
Session State contract.

``render_fields`` draws one widget per requirement of ``ui.interactive_input`` (file, files,
folder, text, select, boolean, number, chat, table, enum) and returns the current values
(requirement id → value). The values live under ``store_key`` through
:class:`~keiri_agent.blocks.ui.answer_state.SessionStateStore` (merge + warning when the
requirements change), not in the widgets: Streamlit drops a widget's state when its page is not
shown, so each widget is seeded from the stored value whenever its own state is missing, and
every change is written back at once. Values therefore survive reruns and page switches and are
cleared only by :func:`reset_fields` (an explicit リセット).

Uploaded files are saved under ``upload_dir`` (by default one folder per browser session under
``KEIRI_WORKSPACE_ROOT``) and the saved path becomes the value; the field says which file it
uses by name (アップロードしたファイル: 売上明細.csv), never by the folder the app keeps it in.
The same holds for the bundled sample data (the 実行 page's サンプルデータを使う, and the defaults
of its file vars: ``ui.run.plan_vars`` draws each as a file field). Beside the uploader, a path
on the server can be typed instead: a typed path wins over an upload. A typed path (there, or
in a folder field) is a value only inside the folders ``keiri_agent.ui.server_paths`` allows;
any other is refused with its error under the field, and the field has no value.
"""

from __future__ import annotations

import io
import math
import re
import uuid
from collections.abc import Mapping, MutableMapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Final, cast

import pandas as pd
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from keiri_agent.blocks.ui.answer_state import SessionStateStore
from keiri_agent.blocks.ui.field_types import normalize_requirements
from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import BlockError
from keiri_agent.examples import example_data_dir
from keiri_agent.ui.chrome import file_uploader
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.server_paths import Area, check_server_path, data_areas

__all__ = [
    "WIDGET_PREFIX",
    "render_fields",
    "reset_fields",
    "session_mapping",
    "upload_folder",
    "widget_key",
]

WIDGET_PREFIX: Final = "fields::"
UPLOAD_DIR_KEY: Final = "fields_upload_dir"  # one upload folder per browser session
UPLOAD_TOKEN_CHARS: Final = 8  # hex digits of an uploader's key token: unique per field and reset
REQUIRED_MARK: Final = "（必須）"
BOOLEAN_LABELS: Final = {True: "はい", False: "いいえ"}
_BRACKETS: Final = re.compile(r"[（(][^）)]*[）)]")
_FORMAT_WORDS: Final = re.compile(
    r"zip|excel|csv|tsv|pdf|word|json|parquet|ファイル|エクセル", re.IGNORECASE
)


def widget_key(store_key: str, field_id: str, part: str = "value") -> str:
    """The Session State key of one widget of a field (``part``: value, path, upload_<token>,
    editor, csv). Widgets of all fields start with ``fields::{store_key}::``."""
    return f"{WIDGET_PREFIX}{store_key}::{field_id}::{part}"


def upload_folder() -> Path:
    """This browser session's folder for uploads (created on first use)."""
    from keiri_agent.workspace import new_session_dir

    if UPLOAD_DIR_KEY not in st.session_state:
        root = new_session_dir(load_settings().keiri_workspace_root)
        st.session_state[UPLOAD_DIR_KEY] = str(root / "uploads")
    return Path(st.session_state[UPLOAD_DIR_KEY])


def reset_fields(store_key: str, *, state: MutableMapping[str, Any] | None = None) -> list[str]:
    """Clear the values under ``store_key`` and its widgets (the explicit リセット)."""
    doomed = SessionStateStore(_state(state)).reset_at(store_key)
    prefix = f"{WIDGET_PREFIX}{store_key}::"
    widgets = [k for k in map(str, st.session_state.keys()) if k.startswith(prefix)]
    for key in widgets:
        del st.session_state[key]
    return doomed + widgets


def render_fields(
    requirements: Sequence[Mapping[str, Any]],
    *,
    store_key: str,
    state: MutableMapping[str, Any] | None = None,
    upload_dir: Path | None = None,
    disabled: bool = False,
) -> dict[str, Any]:
    """Draw the fields and return their current values (requirement id → value, field order)."""
    store = SessionStateStore(_state(state))
    reqs = normalize_requirements(requirements)
    merged = store.get_at(store_key, reqs)
    if merged.warnings:
        # The stored values were merged into new requirements: widgets show the merged values.
        prefix = f"{WIDGET_PREFIX}{store_key}::"
        for key in [k for k in map(str, st.session_state.keys()) if k.startswith(prefix)]:
            del st.session_state[key]
        st.warning(
            "入力項目が変わったため、入力済みの値を引き継ぎました:\n\n"
            + "\n".join(f"- {line}" for line in merged.warnings),
            icon="⚠️",
        )
    values = merged.values
    paths = _Paths(upload_dir)
    for req in reqs:
        field = _Field(req, store_key, upload_dir, disabled, paths)
        new = field.render(values.get(req["id"]))
        if req.get("description"):
            st.caption(str(req["description"]))
        if not _same(new, values.get(req["id"])):
            try:
                store.update_at(store_key, req["id"], new)
            except BlockError as exc:
                render_error(exc)
    return store.collected_at(store_key)


def session_mapping() -> MutableMapping[str, Any]:
    """Streamlit's Session State typed as the mapping :class:`SessionStateStore` works on."""
    return cast("MutableMapping[str, Any]", st.session_state)


def _state(state: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
    return state if state is not None else session_mapping()


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def _option_values(options: Sequence[Any]) -> list[Any]:
    return [o["value"] if isinstance(o, Mapping) and "value" in o else o for o in options]


def _option_labels(options: Sequence[Any]) -> dict[Any, str]:
    labels: dict[Any, str] = {}
    for option in options:
        if isinstance(option, Mapping) and "value" in option:
            labels[option["value"]] = str(option.get("label") or option["value"])
        else:
            labels[option] = str(option)
    return labels


class _Paths:
    """Where typed paths may point, read from the settings when a path field needs it."""

    def __init__(self, uploads: Path | None) -> None:
        self.uploads = uploads

    @cached_property
    def settings(self) -> Settings:
        return load_settings()

    @cached_property
    def areas(self) -> list[Area]:
        return data_areas(self.settings, uploads=self.uploads)


class _Field:
    """One requirement's widgets."""

    def __init__(
        self,
        req: Mapping[str, Any],
        store_key: str,
        upload_dir: Path | None,
        disabled: bool,
        paths: _Paths,
    ) -> None:
        self.req = req
        self.id = str(req["id"])
        self.store_key = store_key
        self.upload_dir = upload_dir
        self.disabled = disabled
        self.paths = paths
        self.label = str(req["label"]) + (REQUIRED_MARK if req["required"] else "")
        self.help = str(req["hint"]) if req.get("hint") else None

    def key(self, part: str = "value") -> str:
        return widget_key(self.store_key, self.id, part)

    def typed_paths(self, typed: str) -> list[str] | None:
        """The paths typed (one a line), resolved; None once a refused one's error is shown."""
        label = str(self.req["label"])
        try:
            return [
                str(check_server_path(line.strip(), self.paths.areas, label=label))
                for line in typed.splitlines()
                if line.strip()
            ]
        except BlockError as exc:
            render_error(exc)
            return None

    def seed(self, part: str, value: Any) -> str:
        """The widget key, seeded from the stored value when the widget has no state."""
        key = self.key(part)
        if key not in st.session_state:
            st.session_state[key] = value
        return key

    def render(self, value: Any) -> Any:
        kind = self.req["type"]
        if kind in ("file", "files"):
            return self.files(value, multiple=kind == "files")
        if kind in ("select", "enum"):
            return self.select(value)
        if kind == "boolean":
            return self.boolean(value)
        if kind == "number":
            return self.number(value)
        if kind == "table":
            return self.table(value)
        return self.text(value, area=kind == "chat")

    # --- widgets ---------------------------------------------------------------------------

    def text(self, value: Any, *, area: bool) -> str | None:
        placeholder = f"例: {self.help}" if self.help else None
        if self.req["type"] == "folder":
            placeholder = placeholder or "サーバー上のフォルダのパス"
        key = self.seed("value", "" if value is None else str(value))
        widget = st.text_area if area else st.text_input
        text = widget(
            self.label, key=key, placeholder=placeholder, help=self.help, disabled=self.disabled
        )
        if self.req["type"] == "folder" and text.strip():
            return next(iter(self.typed_paths(text) or []), None)
        return text if text.strip() else None

    def select(self, value: Any) -> Any:
        options = self.req["options"]
        choices = _option_values(options)
        labels = _option_labels(options)
        key = self.seed("value", value if value in choices else None)
        return st.selectbox(
            self.label,
            choices,
            index=None,
            key=key,
            format_func=lambda choice: labels.get(choice, str(choice)),
            placeholder="選択してください",
            help=self.help,
            disabled=self.disabled,
        )

    def boolean(self, value: Any) -> bool:
        key = self.seed("value", bool(value))
        chosen = st.radio(
            self.label,
            [True, False],
            key=key,
            format_func=BOOLEAN_LABELS.__getitem__,
            horizontal=True,
            help=self.help,
            disabled=self.disabled,
        )
        return bool(chosen)

    def number(self, value: Any) -> int | float | None:
        rules = self.req["validation"]
        low, high = rules.get("min"), rules.get("max")
        floats = any(isinstance(v, float) for v in (low, high, value, self.req.get("default")))
        cast = float if floats else int
        seeded = None if value is None else cast(value)
        key = self.seed("value", seeded)
        number = st.number_input(
            self.label,
            min_value=None if low is None else cast(low),
            max_value=None if high is None else cast(high),
            step=None if floats else 1,
            key=key,
            placeholder="数値を入力",
            help=self.help,
            disabled=self.disabled,
        )
        return None if number is None else cast(number)

    def _provided(self, path: str) -> str | None:
        """How the app provided the file at ``path`` (an upload, the sample data), or None for
        a path a person typed."""
        uploads = self.upload_dir or st.session_state.get(UPLOAD_DIR_KEY)
        given = Path(path)
        if uploads is not None and given.is_relative_to(Path(uploads)):
            return "アップロードしたファイル"
        if given.is_relative_to(example_data_dir()):
            return "サンプルデータ"
        return None

    def files(self, value: Any, *, multiple: bool) -> Any:
        accept = [e.strip() for e in str(self.req["accept"] or "").split(",") if e.strip()]
        example = _path_example(self.req, accept, self.paths.settings.keiri_workspace_root)
        stored = [str(v) for v in (value if multiple else [value]) if v] if value else []
        provided = [p for p in stored if self._provided(p)]
        given_key = self.key("given")  # files the app provided, used unless a path is typed
        if self.key("path") not in st.session_state:  # first shown, or back from another page
            st.session_state[given_key] = provided
        path_key = self.seed("path", "\n".join(p for p in stored if not self._provided(p)))
        upload_key = self.upload_key()
        marker = self.key("uploaded")  # which upload the field uses, not a widget
        if upload_key not in st.session_state:  # drawn anew (first, after a page switch or a
            st.session_state[marker] = None  # reset): it holds no file, and none was removed
        got = file_uploader(
            self.label,
            accept,
            multiple=multiple,
            key=upload_key,
            help=self.help,
            disabled=self.disabled,
        )
        ids = [upload.file_id for upload in got]
        if ids and st.session_state.get(marker) != ids:
            st.session_state[given_key] = [str(self._save(upload)) for upload in got]
            st.session_state[marker] = ids
        elif not ids and st.session_state.get(marker):  # the upload removed
            st.session_state[given_key] = []
            st.session_state[marker] = None
        label = "またはサーバー上のパス" + ("（1 行に 1 つ）" if multiple else "")
        widget = st.text_area if multiple else st.text_input
        typed = widget(label, key=path_key, disabled=self.disabled, placeholder=f"例: {example}")
        if typed.strip():
            chosen = self.typed_paths(typed) or []
        else:
            chosen = list(st.session_state[given_key])
            for path in chosen:
                st.caption(f"{self._provided(path) or '使うファイル'}: {Path(path).name}")
        return chosen if multiple else next(iter(chosen), None)

    def upload_key(self) -> str:
        """The uploader's key, new after each リセット: a browser keeps the files of an uploader
        whose state the server deleted and sends them again, but empties an uploader with a new
        key. The key's token is kept beside the field's widgets (not a widget: it survives page
        switches) and goes with them when a reset deletes them."""
        token = self.key("upload_token")
        if token not in st.session_state:
            st.session_state[token] = uuid.uuid4().hex[:UPLOAD_TOKEN_CHARS]
        return self.key(f"upload_{st.session_state[token]}")

    def _save(self, upload: UploadedFile) -> Path:
        from keiri_agent.workspace import confine

        base = self.upload_dir if self.upload_dir is not None else upload_folder()
        folder = confine(base, Path(self.id) / upload.file_id)
        folder.mkdir(parents=True, exist_ok=True)
        target = confine(folder, Path(upload.name).name)
        target.write_bytes(upload.getvalue())
        return target

    def table(self, value: Any) -> list[dict[str, Any]]:
        rows = [dict(r) for r in value or [] if isinstance(r, Mapping)]
        default = [r for r in self.req.get("default") or [] if isinstance(r, Mapping)]
        columns = list(dict.fromkeys(k for r in [*default, *rows] for k in r))
        if not columns:
            return self._csv_table(rows)
        base_key = self.key("base")  # the rows the editor started from (edits apply on top)
        editor_key = self.key("editor")
        if editor_key not in st.session_state:
            st.session_state[base_key] = rows
        st.markdown(f"**{self.label}**", help=self.help)
        edited = st.data_editor(
            pd.DataFrame(st.session_state[base_key], columns=columns),
            key=editor_key,
            num_rows="dynamic",
            hide_index=True,
            disabled=self.disabled,
            width="stretch",
        )
        return _records(edited)

    def _csv_table(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A table whose columns the plan does not define: typed as CSV with a header row."""
        text = pd.DataFrame(rows).to_csv(index=False) if rows else ""
        key = self.seed("csv", text)
        typed = st.text_area(
            self.label,
            key=key,
            help=self.help,
            disabled=self.disabled,
            placeholder="1 行目を見出しにした CSV で入力してください（例: 取引先,金額）",
        )
        if not typed.strip():
            return []
        try:
            frame = pd.read_csv(io.StringIO(typed), dtype=object)
        except (ValueError, pd.errors.ParserError) as exc:
            st.warning(f"「{self.req['label']}」を表として読めません: {exc}", icon="⚠️")
            return rows
        return _records(frame)


def _path_example(req: Mapping[str, Any], accept: Sequence[str], folder: Path) -> str:
    """An example server path for a file field, in ``folder`` (the workspace, as configured),
    from the field's own label and accepted extensions: 請求書 ZIP（取引先ごとのフォルダ）with
    ``.zip`` → ``workspace/請求書.zip``. Words naming the format (ZIP, Excel...) and notes in
    brackets are left out of the file name."""
    stem = _FORMAT_WORDS.sub("", _BRACKETS.sub("", str(req["label"])))
    stem = re.sub(r"\s+", "", stem) or str(req["id"])
    ext = accept[0].lower() if accept else ""
    ext = ext if not ext or ext.startswith(".") else f".{ext}"
    return (folder / f"{stem}{ext}").as_posix()


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame rows as plain dicts (missing cells → None, NumPy scalars → Python values)."""
    records: list[dict[str, Any]] = []
    for row in frame.astype(object).to_dict("records"):
        clean: dict[str, Any] = {}
        for column, cell in row.items():
            item = cell.item() if hasattr(cell, "item") else cell
            clean[str(column)] = None if isinstance(item, float) and math.isnan(item) else item
        records.append(clean)
    return records
