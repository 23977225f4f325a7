"""Structural rewriting of template snippets: references found by scope, never by text search.

A template's ``graph_snippet`` names its own nodes, its imports (``${imports.<name>}``), its vars
and loop variables in ``${...}`` references inside ``in``, ``when``, ``foreach.input``,
``while.condition``, subflow ``call.inputs`` and loop ``body.plan.exports``. Composition renames
the nodes and substitutes the imports; validation uses the same walk to find references that
point nowhere. Only references are touched: a node id that also appears in plain text, in a var
name or in a Jinja template stays as written, and ``$${`` escapes survive. The export checks of
template validation (``from`` names a top-level node and one of its outputs) live here too.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan import (
    BlockNode,
    Loc,
    LoopNode,
    Reference,
    SubflowNode,
    bare_reference,
    block_outputs,
    find_references,
    format_path,
    node_kind,
)

__all__ = [
    "IMPORTS_ROOT",
    "AnyNode",
    "Frames",
    "SnippetRewriter",
    "all_nodes",
    "check_export_from",
    "ref_text",
]

IMPORTS_ROOT: Final = "imports"
_FIXED_ROOTS: Final = frozenset({"env", "config"})
AnyNode = BlockNode | LoopNode | SubflowNode
# (node ids, loop variables) of each graph around a reference, outermost first
Frames = tuple[tuple[set[str], set[str]], ...]


def ref_text(root: str, path: Sequence[str | int], length: bool) -> str:
    """``${root.a.0}`` (with ``.length`` when asked): a reference written from its parts."""
    parts = [root, *(str(p) for p in path), *(["length"] if length else [])]
    return "${" + ".".join(parts) + "}"


class SnippetRewriter:
    """Walks a snippet's references structurally: node ids by scope, not by text search.

    ``rename`` maps a snippet node id to its new id (every ``${node...}``, ``when``, loop
    condition and loop export follows); ``imports`` returns the replacement text for an
    ``${imports...}`` reference (None keeps it). Problems found on the way (malformed or
    unknown references) are collected in ``problems``; names seen in ``imports_used`` and
    ``vars_used``. Loop variables shadow node ids exactly as in the validator's scopes.
    """

    def __init__(
        self,
        rename: Callable[[str], str] | None = None,
        imports: Callable[[Reference], str | None] | None = None,
    ) -> None:
        self.rename = rename or (lambda node_id: node_id)
        self.imports = imports
        self.problems: list[str] = []
        self.imports_used: set[str] = set()
        self.vars_used: set[str] = set()

    def graph(self, nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """A rewritten deep copy of ``nodes``."""
        out: list[dict[str, Any]] = copy.deepcopy([dict(n) for n in nodes])
        ids = {n["id"] for n in out if isinstance(n.get("id"), str)}
        self._graph(out, ("graph_snippet",), ((ids, set()),))
        return out

    def _node(self, node: dict[str, Any], loc: Loc, frames: Frames) -> None:
        if isinstance(node.get("id"), str):
            node["id"] = self.rename(node["id"])
        if "when" in node:
            node["when"] = self._value(node["when"], (*loc, "when"), frames)
        kind = node_kind(node)
        if kind == "block" and "in" in node:
            node["in"] = self._value(node["in"], (*loc, "in"), frames)
        elif kind == "subflow" and isinstance(node.get("call"), dict) and "inputs" in node["call"]:
            node["call"]["inputs"] = self._value(
                node["call"]["inputs"], (*loc, "call", "inputs"), frames
            )
        elif kind == "loop":
            self._loop(node, loc, frames)

    def _loop(self, node: dict[str, Any], loc: Loc, frames: Frames) -> None:
        loop_vars: set[str] = set()
        foreach = node.get("foreach")
        if isinstance(foreach, dict):
            if "input" in foreach:
                foreach["input"] = self._value(foreach["input"], (*loc, "foreach", "input"), frames)
            loop_vars = {str(foreach.get("itemVar", "item"))}
            loop_vars |= {str(foreach["indexVar"])} if foreach.get("indexVar") else set()
        body = node.get("body")
        plan = body.get("plan") if isinstance(body, dict) else None
        if not isinstance(plan, dict):
            return
        graph: list[Any] = plan["graph"] if isinstance(plan.get("graph"), list) else []
        ids = {n["id"] for n in graph if isinstance(n, dict) and isinstance(n.get("id"), str)}
        inner = (*frames, (ids, loop_vars))
        renamed = {i: self.rename(i) for i in ids}
        self._graph(graph, (*loc, "body", "plan", "graph"), inner)
        whilespec = node.get("while")
        if isinstance(whilespec, dict) and "condition" in whilespec:
            cond = (*loc, "while", "condition")
            whilespec["condition"] = self._value(whilespec["condition"], cond, inner)
        for j, export in enumerate(plan.get("exports") or []):
            if isinstance(export, dict) and isinstance(export.get("from"), str):
                export["from"] = self._from(export["from"], renamed, (*loc, "exports", j))

    def _graph(self, nodes: list[Any], loc: Loc, frames: Frames) -> None:
        for i, node in enumerate(nodes):
            if isinstance(node, dict):
                self._node(node, (*loc, i), frames)

    def _from(self, text: str, renamed: Mapping[str, str], loc: Loc) -> str:
        try:
            ref = bare_reference(text)
        except BlockError as exc:
            self.problems.append(f"{format_path(loc)}: {exc.message}")
            return text
        if ref is None or ref.root not in renamed:
            return text
        return ref_text(renamed[ref.root], ref.path, ref.length)[2:-1]

    def _value(self, value: Any, loc: Loc, frames: Frames) -> Any:
        if isinstance(value, str):
            return self._text(value, loc, frames)
        if isinstance(value, dict):
            return {k: self._value(v, (*loc, str(k)), frames) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, (*loc, i), frames) for i, v in enumerate(value)]
        return value

    def _text(self, text: str, loc: Loc, frames: Frames) -> str:
        try:
            refs = find_references(text)
        except BlockError as exc:
            self.problems.append(f"{format_path(loc)}: {exc.message}")
            return text
        pieces: list[str] = []
        pos = 0
        for ref in refs:
            new = self._reference(ref, loc, frames)
            pieces += [text[pos : ref.start], ref.text if new is None else new]
            pos = ref.end
        return "".join([*pieces, text[pos:]])

    def _reference(self, ref: Reference, loc: Loc, frames: Frames) -> str | None:
        for node_ids, loop_vars in reversed(frames):
            if ref.root in loop_vars:
                return None
            if ref.root in node_ids:
                return ref_text(self.rename(ref.root), ref.path, ref.length)
        if ref.root in (IMPORTS_ROOT, "vars") and not ref.path:
            self.problems.append(f"{format_path(loc)}: {ref.text} には名前が必要です")
        elif ref.root == IMPORTS_ROOT:
            self.imports_used.add(str(ref.path[0]))
            return self.imports(ref) if self.imports is not None else None
        elif ref.root == "vars":
            self.vars_used.add(str(ref.path[0]))
        elif ref.root not in _FIXED_ROOTS:
            self.problems.append(
                f"{format_path(loc)}: {ref.text} の '{ref.root}' はスニペットのノードでも"
                " imports / vars / env / config でもありません"
            )
        return None


def all_nodes(nodes: Iterable[AnyNode]) -> Iterator[AnyNode]:
    for node in nodes:
        yield node
        if isinstance(node, LoopNode):
            yield from all_nodes(node.body.plan.graph)


def _output_names(node: AnyNode, registry: BlockRegistry) -> set[str] | None:
    """Names ``${node.<name>}`` can use; None when unknown (the block is missing)."""
    if isinstance(node, BlockNode):
        spec = registry.find(node.block)
        return None if spec is None else set(block_outputs(node, spec))
    if isinstance(node, LoopNode):
        return set(node.out.names(node.body.plan.exports))
    return {e.as_ for e in node.out.exports}


def check_export_from(
    field: str, source: str, top: Mapping[str, AnyNode], registry: BlockRegistry
) -> list[str]:
    """Problems of an export's ``from`` (``node.output``) against the snippet's top-level nodes."""
    where = f"{field} '{source}'"
    try:
        ref = bare_reference(source)
    except BlockError as exc:
        return [f"{where}: {exc.message}"]
    if ref is None or not ref.path or ref.root not in top:
        nodes = ", ".join(top)
        return [
            f"{where} は graph_snippet の最上位ノードの出力（ノードID.出力名）ではありません（ノード: {nodes}）。"
        ]
    names = _output_names(top[ref.root], registry)
    if names is not None and str(ref.path[0]) not in names:
        known = ", ".join(sorted(names)) or "なし"
        return [
            f"{where}: ノード '{ref.root}' に出力 '{ref.path[0]}' はありません（出力: {known}）。"
        ]
    return []
