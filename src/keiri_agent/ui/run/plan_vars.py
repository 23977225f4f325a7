"""The 実行 page's 設定値: a plan's ``vars`` as a person sets them before a run.

A plan run from the CLI takes its vars with ``--var``; on the page each var is a field, seeded
from the plan's default: a checkbox for true/false, a number field for numbers, a text field
for text and for null (left empty: null), YAML for lists and mappings. A var given to a block
as a file it reads (``plan.var_paths``) must lie where the page may read (the workspace or the
example data, :mod:`keiri_agent.ui.server_paths`), as the page's file fields must; an example
plan's default ``examples/...`` is the bundled sample file. Values are kept per plan with the
page's other inputs (only リセット clears them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import streamlit as st
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.examples import example_path
from keiri_agent.plan import Plan, load_yaml, var_paths
from keiri_agent.ui import session_state
from keiri_agent.ui.error_view import render_error
from keiri_agent.ui.server_paths import check_server_path, data_areas

__all__ = ["VARS_LABEL", "render_vars", "reset_vars", "var_key"]

VARS_LABEL: Final = "設定値（vars）"


def var_key(page: str, plan_id: str, name: str) -> str:
    """The Session State key of the field of var ``name`` of ``plan_id``."""
    return session_state.page_key(page, f"var:{plan_id}:{name}")


def reset_vars(page: str, plan_id: str) -> None:
    """Forget the values given to the vars of ``plan_id`` (the page's リセット)."""
    prefix = var_key(page, plan_id, "")
    kept = session_state.kept(page)
    for key in [k for k in map(str, st.session_state.keys()) if k.startswith(prefix)]:
        del st.session_state[key]
    for key in [k for k in kept if k.startswith(prefix)]:
        del kept[key]


def _field(page: str, key: str, name: str, default: Any) -> Any:
    """The value a person gives var ``name`` (seeded from its plan default)."""
    if isinstance(default, bool):
        return session_state.kept_widget(page, key, st.checkbox, name, default=default)
    if isinstance(default, int):  # a whole number stays one (step 1)
        return session_state.kept_widget(page, key, st.number_input, name, default=default, step=1)
    if isinstance(default, float):
        return session_state.kept_widget(page, key, st.number_input, name, default=default)
    if default is None or isinstance(default, str):
        text = session_state.kept_widget(
            page, key, st.text_input, name, default="" if default is None else default
        )
        return text if text.strip() else None
    shown = yaml.safe_dump(default, allow_unicode=True, default_flow_style=True).strip()
    text = session_state.kept_widget(page, key, st.text_input, name, default=shown)
    return load_yaml(text) if text.strip() else None


def render_vars(
    page: str, plan: Plan, registry: BlockRegistry, settings: Settings
) -> dict[str, Any] | None:
    """Draw the plan's vars; their values, or None when one is refused (the error is shown)."""
    defaults: Mapping[str, Any] = plan.vars or {}
    if not defaults:
        return {}
    reads = {
        name
        for name, uses in var_paths(plan, registry).items()
        if any(u.mode == "read" for u in uses)
    }
    values: dict[str, Any] = {}
    refused = False
    with st.expander(VARS_LABEL, expanded=bool(reads)):  # open when it names files to read
        st.caption(
            "Plan の vars（CLI の --var と同じもの）です。空欄は null（指定なし）になります。"
            "読み込むファイルは作業ディレクトリかサンプルデータの中のものを指定してください。"
        )
        for name, default in defaults.items():
            try:
                value = _field(page, var_key(page, plan.id, name), name, example_path(default))
                if name in reads and isinstance(value, str):
                    value = str(check_server_path(value, data_areas(settings), label=name))
            except BlockError as exc:
                render_error(exc)
                refused = True
                continue
            except yaml.YAMLError as exc:
                st.error(f"{name} の値を YAML として読めません: {str(exc).splitlines()[0]}")
                refused = True
                continue
            values[name] = value
    return None if refused else values
