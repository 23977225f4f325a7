"""The plans a user may run from the progress page (``GET /agent/plans``).

Each entry says what a person needs to run it: the name to send (``plan``: a bundled example's
name, or a plan's path under ``KEIRI_DESIGNS_DIR`` without its suffix, as ``POST /agent/run``
takes it), its Japanese title and description, whether it has bundled sample data (then the run
may use it: a request without ``answers``), the requests of its input nodes known before the run
(``plan.input_requests``: the page draws them as a form, with file uploads), and the Japanese
names of its nodes (the page names a node's progress lines by them). A plan file that does not
load is listed with the reason, so a person sees why it cannot be chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError

from keiri_agent.blocks.registry import BlockRegistry, settings_registry
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.examples import example_answers, example_names, example_plan, example_title
from keiri_agent.plan import (
    MAX_PLAN_BYTES,
    PLAN_SUFFIXES,
    Plan,
    input_requests,
    load_source,
    load_yaml,
    plan_names,
)

__all__ = ["MAX_LISTED_PLANS", "plan_catalog"]

MAX_LISTED_PLANS: Final = 200  # plans of the designs folder listed (a page, not an archive)


def _entry(name: str, path: Path, registry: BlockRegistry) -> dict[str, Any]:
    try:
        plan = Plan.model_validate(load_source(path).raw)
        requests = input_requests(plan, registry)
        names = plan_names(plan, registry)
    except (BlockError, ValidationError) as exc:
        reason = exc.message if isinstance(exc, BlockError) else "Plan の書式が正しくありません。"
        return {"plan": name, "title": name, "description": "", "error": reason}
    text = (plan.description or "").strip()
    return {
        "plan": name,
        "title": text.split("。", 1)[0].strip() or name,
        "description": text,
        "inputs": requests,
        "node_names": dict(names.nodes),
    }


def plan_catalog(settings: Settings) -> list[dict[str, Any]]:
    """The bundled examples first (with ``sample_data``), then the designs folder's plans."""
    registry = settings_registry(settings)
    entries = []
    for name in example_names():
        entry = _entry(name, example_plan(name), registry)
        entry["title"] = example_title(name)
        entry["sample_data"] = bool(example_answers(name))
        entries.append(entry)
    known = {example_plan(name).resolve() for name in example_names()}
    designs = Path(settings.keiri_designs_dir)
    found = sorted(p for suffix in PLAN_SUFFIXES for p in designs.rglob(f"*{suffix}"))
    plans = [p for p in found if p.resolve() not in known and _is_plan(p)]
    for path in plans[:MAX_LISTED_PLANS]:
        name = path.relative_to(designs).with_suffix("").as_posix()
        entries.append({**_entry(name, path, registry), "sample_data": False})
    return entries


def _is_plan(path: Path) -> bool:
    """Whether a YAML file is meant as a plan (``id`` and ``graph`` at its top: templates and
    answer files are not); one that cannot be read is listed, with the reason."""
    if path.stat().st_size > MAX_PLAN_BYTES:
        return True
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return True
    return isinstance(data, Mapping) and "graph" in data and "id" in data
