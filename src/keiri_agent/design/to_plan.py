"""The LLM's reply shape (``design.schema``) → the Plan DSL mapping (``apiVersion: v1``).

The reply keeps the seed's names (``foreach.items``/``var``, ``when: {expr}``, loop ``collect``,
subflow ``exports``); this module turns a parsed reply into the plan the validator reads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["to_plan_dict"]


def _when(value: Any) -> Any:
    return value["expr"] if isinstance(value, dict) and set(value) == {"expr"} else value


def _node(raw: dict[str, Any]) -> dict[str, Any]:
    kind = raw.get("type")
    node: dict[str, Any] = {"id": raw["id"]}
    if raw.get("description"):
        node["description"] = raw["description"]
    if kind == "loop":
        node["type"] = "loop"
        if raw.get("foreach"):
            each = raw["foreach"]
            node["foreach"] = {"input": each["items"], "itemVar": each.get("var") or "item"}
            if each.get("max_concurrency", 1) != 1:
                node["foreach"]["max_concurrency"] = each["max_concurrency"]
        if raw.get("while"):
            spec = raw["while"]
            node["while"] = {
                "condition": _when(spec["condition"]),
                "max_iterations": spec["max_iterations"],
            }
        plan = raw["body"]["plan"]
        body: dict[str, Any] = {"graph": [_node(n) for n in plan["graph"]]}
        if plan.get("exports"):
            body["exports"] = plan["exports"]
        node["body"] = {"plan": body}
        if raw.get("collect"):
            node["out"] = {"collect": raw["collect"]}
    elif kind == "subflow":
        node["type"] = "subflow"
        node["call"] = {k: v for k, v in raw["call"].items() if v or k == "plan_id"}
        if raw.get("exports"):
            node["out"] = {"exports": raw["exports"]}
    else:
        node["block"] = raw["block"]
        node["in"] = {k: v for k, v in (raw.get("in") or {}).items() if v is not None}
        out = {k: v for k, v in (raw.get("out") or {}).items() if v}
        if out:
            node["out"] = out
    if raw.get("when") is not None:
        node["when"] = _when(raw["when"])
    return node


def to_plan_dict(design: BaseModel) -> dict[str, Any]:
    """The Plan mapping (``apiVersion: v1``) for a parsed ``LLMDesignModel``."""
    raw = design.model_dump(by_alias=True, exclude_none=False)
    plan: dict[str, Any] = {"apiVersion": "v1", "id": raw["id"], "version": raw["version"]}
    if raw.get("description"):
        plan["description"] = raw["description"]
    plan["vars"] = dict(raw.get("vars") or {})
    if raw.get("policy"):
        plan["policy"] = {k: v for k, v in raw["policy"].items() if v is not None}
    ui = {key: value for key, value in (raw.get("ui") or {}).items() if value}
    if ui:
        plan["ui"] = ui  # layout, vars (each var's label)
    plan["graph"] = [_node(node) for node in raw["graph"]]
    if raw.get("exports"):
        plan["exports"] = raw["exports"]
    return plan
