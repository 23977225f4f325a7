"""Which plans the 実行 page offers, and the sample data of the bundled examples.

The choices are the bundled examples, by their Japanese names (サンプル: 月次売上レポート), the
plans under ``KEIRI_DESIGNS_DIR`` (those saved by the 設計 page with the time they were saved),
or a path typed inside the folders the app works in (``server_paths``). A bundled example with
sample data offers サンプルデータを使う: its inputs are filled with the bundled files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Final
from zoneinfo import ZoneInfo

import streamlit as st
import yaml

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.design.store import saved_at
from keiri_agent.localtime import shown_time
from keiri_agent.plan import MAX_PLAN_BYTES, PLAN_SUFFIXES, Plan, load_yaml
from keiri_agent.ui import session_state
from keiri_agent.ui.run.inputs import ui_nodes, use_answers
from keiri_agent.ui.server_paths import check_server_path, plan_areas

__all__ = [
    "EXAMPLE_PREFIX",
    "PATH_CHOICE",
    "PLAN_KEY",
    "SAMPLE_KEY",
    "choose_plan",
    "offer_sample",
    "plan_choices",
]

PAGE: Final = "run"
PLAN_KEY: Final = session_state.page_key(PAGE, "plan")
PATH_KEY: Final = session_state.page_key(PAGE, "plan_path")
SAMPLE_KEY: Final = session_state.page_key(PAGE, "sample")  # plan ids filled with sample data
PATH_CHOICE: Final = "ファイルのパスを指定…"
EXAMPLE_PREFIX: Final = "サンプル: "


@lru_cache(maxsize=1024)
def _is_plan(path: str, mtime_ns: int, size: int) -> bool:
    """Whether a YAML file is a plan (has ``id`` and ``graph``), cached per file version.
    Unreadable YAML is listed too: choosing it shows why it cannot be read (a file over the
    loader's MAX_PLAN_BYTES is listed unread: loading it says so, with the limit)."""
    if size > MAX_PLAN_BYTES:
        return True
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return True
    return isinstance(data, Mapping) and "graph" in data and "id" in data


def plan_choices(designs_dir: Path) -> dict[str, Path]:
    """Label → plan file: the bundled examples (by their Japanese names), then the plans under
    ``designs_dir``."""
    from keiri_agent.examples import example_names, example_plan, example_title

    choices = {
        f"{EXAMPLE_PREFIX}{example_title(name)}": example_plan(name) for name in example_names()
    }
    known = {path.resolve() for path in choices.values()}
    if designs_dir.is_dir():
        found = (p for suffix in PLAN_SUFFIXES for p in designs_dir.rglob(f"*{suffix}"))
        for path in sorted(found):
            stat = path.stat()
            if path.resolve() in known or not _is_plan(str(path), stat.st_mtime_ns, stat.st_size):
                continue
            choices[str(path.relative_to(designs_dir))] = path
    return choices


def _example_of(path: Path) -> str | None:
    """The bundled example whose plan is ``path`` (None for any other plan)."""
    from keiri_agent.examples import example_names, example_plan

    return next((n for n in example_names() if example_plan(n).resolve() == path.resolve()), None)


def offer_sample(path: Path, plan: Plan, registry: BlockRegistry) -> None:
    """サンプルデータを使う: fill the inputs of a bundled example with its sample files."""
    from keiri_agent.examples import example_answers

    example = _example_of(path)
    answers = example_answers(example) if example is not None else {}
    nodes = [node for node in ui_nodes(plan, registry) if answers.get(node.node_id)]
    if not nodes:
        return
    used: set[str] = session_state.get_or_create(SAMPLE_KEY, set)
    if st.button(
        "サンプルデータを使う",
        key=session_state.page_key(PAGE, "use_sample"),
        icon=":material/dataset:",
        help="このサンプルに付いている架空のデータ（examples/data）を入力欄に入れます。",
    ):
        use_answers(nodes, answers)
        used.add(plan.id)
        st.rerun()
    if plan.id in used:
        st.caption("入力欄にサンプルデータが入っています。そのまま「実行」を押してください。")


def _saved_label(choices: Mapping[str, Path], zone: ZoneInfo) -> Callable[[str], str]:
    """A choice as shown: a plan saved by the 設計 page with the time it was saved."""

    def label(choice: str) -> str:
        saved = saved_at(choices[choice]) if choice in choices else None
        return f"{choice}（{shown_time(saved, zone, seconds=False)} 保存）" if saved else choice

    return label


def choose_plan(settings: Settings) -> Path | None:
    choices = plan_choices(settings.keiri_designs_dir)
    options = [*choices, PATH_CHOICE]
    label = session_state.keep(
        PAGE,
        PLAN_KEY,
        st.selectbox(
            "Plan",
            options,
            format_func=_saved_label(choices, settings.keiri_timezone),
            key=session_state.restore(PAGE, PLAN_KEY, allowed=options),
            help=f"サンプルと {settings.keiri_designs_dir} の Plan（設計ページで保存したもの）です。",
        ),
    )
    if label != PATH_CHOICE:
        return choices[label]
    typed = session_state.kept_widget(
        PAGE, PATH_KEY, st.text_input, "Plan ファイルのパス", placeholder="designs/月次/照合.yaml"
    )
    if not typed.strip():
        return None
    return check_server_path(typed.strip(), plan_areas(settings), label="Plan ファイルのパス")
