"""The 実行 page's 設定値: a plan's ``vars`` as a person sets them before a run.

A plan run from the CLI takes its vars with ``--var``; on the page each var is a field, seeded
from the plan's default and labelled as the plan labels the var (``ui.vars``; its name, as the
CLI's ``--var`` takes it, in the field's help; an unlabelled var by its name): a checkbox for true/false, a number field for numbers, a text field
for text and for null (left empty: null), YAML for lists and mappings. A var given to a block
as a file it reads (``plan.var_paths``) is the app's file field (:mod:`keiri_agent.ui.fields`,
as in the input nodes): a file uploaded there (saved in the workspace's uploads folder, where
the run reads it) or a path typed on the server, which must lie where the page may read (the
workspace or the example data, :mod:`keiri_agent.ui.server_paths`); a refused path stops the
run. Its uploader offers the file types the blocks reading it accept (each port's ``accept``;
where several read it, the types all of them accept; any type when one names none). Such a
field without a ``ui.vars`` label is named as the plan names the node that reads it; an example plan's default
``examples/...`` is the bundled sample file, shown as サンプルデータ. Each file var has a field
set of its own (its own store key), whose one field has the id ``FILE_FIELD_ID``: any var name
works, even one an input field may not have (``approved``). Values are kept per plan
with the page's other inputs (only リセット clears them, uploads included).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import streamlit as st
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.ui.field_types import accepted_extensions
from keiri_agent.errors import reason_of
from keiri_agent.examples import example_path
from keiri_agent.plan import Plan, PlanNames, VarPath, load_yaml, var_paths
from keiri_agent.ui import session_state
from keiri_agent.ui.fields import WIDGET_PREFIX, render_fields, widget_key

__all__ = ["FILE_FIELD_ID", "VARS_LABEL", "render_vars", "reset_vars", "var_key"]

VARS_LABEL: Final = "設定値（vars）"
FILE_FIELD_ID: Final = "file"  # the field of a file var within its own store key


def var_key(page: str, plan_id: str, name: str) -> str:
    """The Session State key of the field of var ``name`` of ``plan_id`` (for a file var: the
    key its file field keeps its value under)."""
    return session_state.page_key(page, f"var:{plan_id}:{name}")


def reset_vars(page: str, plan_id: str) -> None:
    """Forget the values given to the vars of ``plan_id`` (the page's リセット), uploads too."""
    prefix = var_key(page, plan_id, "")
    kept = session_state.kept(page)
    for key in map(str, list(st.session_state.keys())):
        if key.startswith((prefix, WIDGET_PREFIX + prefix)):
            del st.session_state[key]
    for key in [k for k in kept if k.startswith(prefix)]:
        del kept[key]


def _cli_note(name: str) -> str:
    """Where the var's id is shown (a field's help): its name as the CLI takes it."""
    return f"設定値 {name}（CLI の --var {name}=…）"


def _field(page: str, key: str, name: str, label: str, default: Any) -> Any:
    """The value a person gives var ``name`` (seeded from its plan default), its field
    labelled ``label`` (the id in its help)."""
    draw = functools.partial(session_state.kept_widget, page, key, help=_cli_note(name))
    if isinstance(default, bool):
        return draw(st.checkbox, label, default=default)
    if isinstance(default, int):  # a whole number stays one (step 1)
        return draw(st.number_input, label, default=default, step=1)
    if isinstance(default, float):
        return draw(st.number_input, label, default=default)
    if default is None or isinstance(default, str):
        text = draw(st.text_input, label, default="" if default is None else default)
        return text if text.strip() else None
    shown = yaml.safe_dump(default, allow_unicode=True, default_flow_style=True).strip()
    text = draw(st.text_input, label, default=shown)
    return load_yaml(text) if text.strip() else None


def _file_kind(default: Any) -> str | None:
    """The file field a read var's default fits: one file, several, or None (not paths)."""
    if default is None or isinstance(default, str):
        return "file"
    if isinstance(default, list) and all(isinstance(item, str) for item in default):
        return "files"
    return None


def _file_field(key: str, name: str, reader: _Reader, default: Any, kind: str) -> tuple[Any, bool]:
    """The file var ``name`` as the app's file field (upload or typed path): its value, and
    whether a typed path was refused (its error is shown under the field)."""
    requirement = {
        "id": FILE_FIELD_ID,
        "type": kind,
        "label": reader.label,
        "accept": reader.accept or None,
        "required": False,
        "default": default,
        "description": _cli_note(name),
    }
    value = render_fields([requirement], store_key=key).get(FILE_FIELD_ID)
    typed = str(st.session_state.get(widget_key(key, FILE_FIELD_ID, "path")) or "")
    return value, bool(typed.strip()) and not value


@dataclass(frozen=True)
class _Reader:
    """What the blocks reading a file var make of its field: its label and accepted types."""

    label: str
    accept: str  # ".csv,.xlsx"; empty: any type


def _accept(uses: list[VarPath]) -> str:
    """The extensions every use accepts, in the first use's order; empty (any) when one use
    names none or no extension is common to all."""
    lists = [accepted_extensions(use.accept) for use in uses]
    if not all(lists):
        return ""
    return ",".join(ext for ext in lists[0] if all(ext in other for other in lists[1:]))


def _file_readers(plan: Plan, registry: BlockRegistry, names: PlanNames) -> dict[str, _Reader]:
    """File var → its field: labelled as the plan labels the var (``ui.vars``), else as the plan
    names the node that reads it (請求一覧の読み込み), or, where a node reads several files, as
    the block names its input (取引先マスタ)."""
    reading = {
        name: [use for use in uses if use.mode == "read"]
        for name, uses in var_paths(plan, registry).items()
    }
    per_node = Counter(use.node_id for uses in reading.values() for use in uses)
    return {
        name: _Reader(
            names.vars.get(name)
            or "・".join(
                dict.fromkeys(
                    names.node(use.node_id) if per_node[use.node_id] == 1 else use.label or name
                    for use in uses
                )
            ),
            _accept(uses),
        )
        for name, uses in reading.items()
        if uses
    }


def render_vars(
    page: str, plan: Plan, registry: BlockRegistry, names: PlanNames
) -> dict[str, Any] | None:
    """Draw the plan's vars; their values, or None when one is refused (the error is shown)."""
    defaults: Mapping[str, Any] = plan.vars or {}
    if not defaults:
        return {}
    readers = _file_readers(plan, registry, names)
    reads = set(readers)
    values: dict[str, Any] = {}
    refused = False
    with st.expander(VARS_LABEL, expanded=bool(reads)):  # open when it names files to read
        st.caption(
            "Plan の vars（CLI の --var と同じもの）です。空欄は「指定なし」になります。"
            "読み込むファイルはアップロードするか、作業ディレクトリかサンプルデータの中の"
            "パスを指定してください。"
        )
        for name, default in defaults.items():
            key = var_key(page, plan.id, name)
            default = example_path(default)
            kind = _file_kind(default) if name in reads else None
            if kind is not None:
                values[name], wrong = _file_field(key, name, readers[name], default, kind)
                refused = refused or wrong
                continue
            try:
                values[name] = _field(page, key, name, names.var(name), default)
            except yaml.YAMLError as exc:
                st.error(f"{names.var(name)} の値を YAML として読めません: {reason_of(exc)}")
                refused = True
    return None if refused else values
