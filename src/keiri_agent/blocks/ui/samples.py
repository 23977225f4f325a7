"""Example answers for ``ui.interactive_input`` requirements.

One rule for every place that needs a plausible answer before a person gives one: the answers
file the CLI suggests when a run waits for input, and the dry run, whose ``collected_data`` has
exactly the plan's requirement ids (seed 002 §3: the keys of ``collected_data`` are the ids), so
``${collect.collected.workbook}`` is checked against what the plan really asks for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["collected_sample", "example_value"]


def example_value(req: Mapping[str, Any]) -> Any:
    """The requirement's default, else an example of its type (a path, a number, a choice)."""
    default = req.get("default")
    if default not in (None, "", [], {}):
        return default
    kind = req.get("type")
    ext = str(req.get("accept") or "").split(",")[0].strip()
    options = [o.get("value") if isinstance(o, Mapping) else o for o in req.get("options") or []]
    examples: dict[str, Any] = {
        "file": f"path/to/file{ext}",
        "files": [f"path/to/file{ext}"],
        "folder": "path/to/folder",
        "boolean": True,
        "number": (req.get("validation") or {}).get("min", 0),
        "table": [{"列名": "値"}],
        "select": options[0] if options else "",
        "enum": options[0] if options else "",
    }
    return examples.get(str(kind), req.get("hint") or "（ここに入力）")


def collected_sample(requirements: Sequence[Any]) -> dict[str, Any]:
    """``collected_data`` as a run would produce it: requirement id → example answer."""
    return {
        str(req["id"]): example_value(req)
        for req in requirements
        if isinstance(req, Mapping) and isinstance(req.get("id"), str)
    }
