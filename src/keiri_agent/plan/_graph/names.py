"""What people read for a plan's nodes and result tables: Japanese names, never ids.

A **var** is named by the plan's ``ui.vars`` label (``差し引かれてもよい振込手数料の上限（円）``), else
by its name. A **node** is named by its plan: the node's ``description`` (its first sentence, when short), else
its block's name (``表の集計``; a custom block's as ``shown_name`` says it, never the node's id); nodes
of the same block name without a description are told apart by number (``表の集計 2``). Loops and subflows without a description are ``繰り返し`` and
``サブフロー``. A node inside a loop or a subflow (``loop[2]/extract``) takes the name of its
own node.

A **result table** (a node's output) is named where the plan writes it out: a mapping of a
node's inputs that holds exactly the reference to the table and a literal ``name`` or ``sheet``
(its own, or that of a mapping it holds) is the table's sheet in a workbook, so
``{name: 照合結果, rows: ${reconcile.matched}}`` (excel.write_report) names ``reconcile.matched``
照合結果, and ``{data: ${reconcile.differences}, output_config: {sheet: 差異一覧}}`` (excel.write)
names it 差異一覧; a table inside an output is named by its path (``check_lines.results.items``
→ key ``(check_lines, results.items)``). A table the plan does not write out is named by its port's label
(``重複候補``), with its node's name when two such tables would share it.

Tables are **ordered** as the plan presents them: the written ones in the order the plan writes
them (the workbook's sheets), then the others in node order. Files written are ordered by the
node that wrote them (``PlanNames.place``: node order, then a loop's iterations by number), so
nodes that run side by side list their files the same way whichever finished first.

A table the plan does not write out is **superseded** when a node downstream of its own gives a
table of the same label: a first pass whose result a second pass (after a person's answers)
replaces. Two tables of the same label side by side (two files read) both stand. People see the
tables that stand; the superseded ones are kept apart (the app's 途中の表, the CLI's count).

A check's **message** (the validator's, the dry run's) names what it is about the same way,
through :class:`PlanWords`: a node by its name, a block by its label, a port by its label, a
reference by its node's name and its output's label, each with the YAML name after it in
parentheses for whoever edits the YAML (``「明細の読み込み」（read）``, ``「売上の集計」の「答え」
（${calc.answer}）``), as ``Plan.var_text`` names a var; a name without a label stays the YAML name.

A **block** is named by ``BlockSpec.shown_name`` (``blocks/block_names``), the one rule of every
place that names a block (the checks' messages through :func:`block_said`, the 設計 page, the CLI's
dry run, ``blocks list/show``, the catalog): its label; a custom block without one by its
description's first sentence, when short (``指定秒数待ってから返す``), else by its category
(``表の処理のブロック``, ``block_names.CATEGORY_WORDS``). A **subflow** is named by
:func:`subflow_said`: as a plan is named where people choose one (its description's first
sentence), else as the calling node is named, with the ``plan_id`` the YAML calls it by after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from keiri_agent.blocks.block_names import (
    category_word,
    description_name,
)
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.models import BlockNode, LoopNode, Node, Plan, SubflowNode
from keiri_agent.plan._dsl.refs import single_reference
from keiri_agent.plan._graph.compiled import compile_graph

__all__ = [
    "NAME_KEYS",
    "PlanNames",
    "PlanWords",
    "block_said",
    "category_word",
    "description_name",
    "plan_names",
    "plan_words",
    "subflow_said",
]

NAME_KEYS: Final = ("name", "sheet")
_LOOP_PART: Final = re.compile(r"\[[^\]]*\]$")
_DIGITS: Final = re.compile(r"([0-9]+)")
_KIND_NAMES: Final = {"loop": "繰り返し", "subflow": "サブフロー"}

Key = tuple[str, str]  # (node id, output name as the plan calls it)


@dataclass(frozen=True)
class PlanNames:
    """Names for one plan's nodes and tables (see the module docstring)."""

    nodes: Mapping[str, str] = field(default_factory=dict)
    tables: Mapping[Key, str] = field(default_factory=dict)
    written: Mapping[Key, int] = field(default_factory=dict)  # write order of written tables
    order: Mapping[str, int] = field(default_factory=dict)  # node order
    superseded: frozenset[Key] = frozenset()  # unwritten tables another of the same label replaces
    contracts: frozenset[Key] = frozenset()  # outputs their block marks ``result: false``
    vars: Mapping[str, str] = field(default_factory=dict)  # var name → its ``ui.vars`` label

    def var(self, name: str) -> str:
        """The label of var ``name`` (the plan's ``ui.vars``), else its name."""
        return self.vars.get(name) or name

    def node(self, path: str) -> str:
        """The name of the node at ``path`` (``loop[2]/extract`` → extract's name)."""
        return self.nodes.get(path) or self.nodes.get(_tail(path)) or path

    def table(self, node: str, output: str) -> str:
        """The name of output ``output`` of ``node`` (its own name when the plan has none)."""
        return self.tables.get((node, output)) or f"{self.node(node)}: {output}"

    def is_written(self, node: str, output: str) -> bool:
        return (node, output) in self.written

    def is_superseded(self, node: str, output: str) -> bool:
        return (node, output) in self.superseded

    def is_result(self, node: str, output: str) -> bool:
        """False for an output its block marks ``result: false`` and the plan does not write."""
        return (node, output) not in self.contracts or (node, output) in self.written

    def place(self, path: str) -> tuple[int, str, tuple[int | str, ...]]:
        """Sort key of a node path (``write``, ``loop[2]/write``): its top-level node's place in
        the plan (nodes it does not know after, by id), then the path with numbers as numbers
        (``loop[2]`` before ``loop[10]``)."""
        top = _LOOP_PART.sub("", path.split("/", 1)[0])
        parts = tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(path))
        return (self.order.get(top, len(self.order)), top, parts)

    def rank(self, node: str, output: str) -> tuple[int, int]:
        """Sort key of a table: the written ones first, in write order, then node order."""
        if (node, output) in self.written:
            return (0, self.written[(node, output)])
        return (1, self.order.get(node, len(self.order)))


def _literal(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and "${" not in value:
        return value.strip()
    return None


def _name_of(mapping: Mapping[str, Any]) -> str | None:
    """The literal ``name``/``sheet`` of a mapping, or of a mapping directly inside it."""
    for candidate in (mapping, *(v for v in mapping.values() if isinstance(v, Mapping))):
        for key in NAME_KEYS:
            name = _literal(candidate.get(key))
            if name is not None:
                return name
    return None


def _written_names(value: Any, found: dict[Key, str]) -> None:
    if isinstance(value, Mapping):
        name = _name_of(value)
        for item in value.values():
            ref = single_reference(item) if name is not None and isinstance(item, str) else None
            if name is not None and ref is not None and ref.path and not ref.length:
                found.setdefault((ref.root, ".".join(str(p) for p in ref.path)), name)
            _written_names(item, found)
    elif isinstance(value, list):
        for item in value:
            _written_names(item, found)


def _walk(nodes: Iterable[Node]) -> Iterable[Node]:
    for node in nodes:
        yield node
        if isinstance(node, LoopNode):
            yield from _walk(node.body.plan.graph)


def _described(node: Node | Plan | Mapping[str, Any]) -> str | None:
    text = node.get("description") if isinstance(node, Mapping) else node.description
    return description_name(text if isinstance(text, str) else None)


def _node_names(nodes: list[Node], registry: BlockRegistry) -> dict[str, str]:
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for node in nodes:
        if node.id in names:  # a duplicate id is named at its first definition
            continue
        own = _described(node)
        if own is not None:
            names[node.id] = own
            continue
        if isinstance(node, BlockNode):
            spec = registry.find(node.block)
            base = spec.shown_name if spec is not None else node.id
        else:
            base = _KIND_NAMES.get(node.type, node.id)
        counts[base] = counts.get(base, 0) + 1
        names[node.id] = base if counts[base] == 1 else f"{base} {counts[base]}"
    return names


def _port_names(node: BlockNode, registry: BlockRegistry) -> dict[Key, str]:
    try:
        spec = registry.get(node.block)
    except BlockError:  # a plan that no longer validates still shows its tables
        return {}
    return {(node.id, node.out.get(port, port)): spec.port_label(port) for port in spec.outputs}


def plan_names(plan: Plan, registry: BlockRegistry) -> PlanNames:
    """The names of ``plan``'s nodes and tables (see the module docstring)."""
    nodes = list(_walk(plan.graph))
    node_names = _node_names(nodes, registry)
    written: dict[Key, str] = {}
    ports: dict[Key, str] = {}
    contracts: set[Key] = set()
    for node in nodes:
        if isinstance(node, BlockNode):
            _written_names(node.inputs, written)
            ports.update(_port_names(node, registry))
            contracts.update(_contract_outputs(node, registry))
        elif isinstance(node, SubflowNode):
            _written_names(node.call.inputs, written)
    superseded = _superseded(plan, ports, written)
    standing = [label for key, label in ports.items() if key not in superseded]
    shared = {label for label in standing if standing.count(label) > 1}
    tables = {
        key: (
            f"{label}（{node_names.get(key[0], key[0])}）"
            if label in shared or (key in superseded and label in standing)
            else label
        )
        for key, label in ports.items()
    }
    tables.update(written)
    return PlanNames(
        nodes=node_names,
        tables=tables,
        written={key: index for index, key in enumerate(written)},
        order={node.id: index for index, node in enumerate(nodes)},
        superseded=superseded,
        contracts=frozenset(contracts),
        vars=dict(plan.ui.vars),
    )


def _contract_outputs(node: BlockNode, registry: BlockRegistry) -> set[Key]:
    """The node's outputs its block marks ``result: false``."""
    try:
        spec = registry.get(node.block)
    except BlockError:
        return set()
    return {
        (node.id, node.out.get(port, port)) for port in spec.outputs if not spec.is_result(port)
    }


def _superseded(plan: Plan, ports: Mapping[Key, str], written: Mapping[Key, str]) -> frozenset[Key]:
    """The unwritten tables that a table of the same label downstream replaces (see the module
    docstring); only the plan's top-level nodes are compared."""
    try:
        graph = compile_graph(list(plan.graph))
    except BlockError:  # a plan that no longer validates: every table stands
        return frozenset()
    groups: dict[str, list[Key]] = {}
    for key, label in ports.items():
        if key[0] in graph.nodes:
            groups.setdefault(label, []).append(key)
    found: set[Key] = set()
    for keys in (k for k in groups.values() if len(k) > 1):
        for key in keys:
            later = graph.downstream(key[0])
            if key not in written and any(other[0] in later for other in keys if other != key):
                found.add(key)
    return frozenset(found)


@dataclass(frozen=True)
class PlanWords:
    """How a check's message names a plan's nodes, blocks, ports and references (see the
    module docstring)."""

    names: PlanNames
    registry: BlockRegistry
    blocks: Mapping[str, str] = field(default_factory=dict)  # node id → its block id
    aliases: Mapping[Key, str] = field(default_factory=dict)  # (node, output as called) → port

    def node(self, node_id: str) -> str:
        """``「name」（id）``; ``'id'`` for a node the plan does not name."""
        name = self.names.node(node_id)
        return f"「{name}」（{node_id}）" if name != node_id else f"'{node_id}'"

    def block(self, block_id: str) -> str:
        """:func:`block_said` in this plan's registry."""
        return block_said(block_id, self.registry)

    def port(self, block_id: str | None, port: str, called: str | None = None) -> str:
        """Port ``port`` of block ``block_id``: ``「label」（port）``, else ``'port'``;
        ``called``: the name the plan gives an output (``out``), said instead of the port's."""
        spec = self.registry.find(block_id.split("@", 1)[0]) if block_id else None
        label = spec.port_label(port) if spec is not None else port
        yaml_name = called or port
        return f"「{label}」（{yaml_name}）" if label != port else f"'{yaml_name}'"

    def node_port(self, node_id: str, port: str) -> str:
        """Port ``port`` of the block of node ``node_id`` (``loop/child`` too)."""
        return self.port(self.blocks.get(_tail(node_id)), port)

    def place(self, node_id: str | None, path: str) -> str:
        """Where in node ``node_id`` a check looked (``in.table``): ``「name」の入力「表」（table）``."""
        side, _, port = path.partition(".")
        if node_id is None or side not in ("in", "out") or not port or "." in port:
            return path
        what = "入力" if side == "in" else "出力"
        name = self.names.node(node_id)
        whose = f"「{name}」" if name != node_id else f"'{node_id}' "
        said = self.node_port(node_id, port)
        return f"{whose}の{what}{said if said.startswith('「') else ' ' + said}"

    def reference(self, text: str) -> str:
        """A ``${node.output…}`` or ``${vars.name}`` as people read it, the reference after it;
        any other text as it is."""
        try:
            ref = single_reference(text)
        except BlockError:
            return text
        if ref is None or not ref.path:
            return text
        first = str(ref.path[0])
        if ref.root == "vars":
            label = self.names.vars.get(first)
            return f"設定値「{label}」（{text}）" if label else text
        if ref.root not in self.blocks:
            return text
        port = self.aliases.get((ref.root, first), first)
        spec = self.registry.find(self.blocks[ref.root])
        label = spec.port_label(port) if spec is not None and port in spec.outputs else first
        output = f"「{label}」" if label != first else f"'{first}'"
        return f"「{self.names.node(ref.root)}」の{output}（{text}）"


def block_said(block_id: str, registry: BlockRegistry) -> str:
    """``「name」（block id）`` (``BlockSpec.shown_name``); ``ブロック 'id'`` for a block not known."""
    spec = registry.find(block_id.split("@", 1)[0])
    return f"「{spec.shown_name}」（{block_id}）" if spec is not None else f"ブロック '{block_id}'"


def subflow_said(
    plan_id: str, subflow: Plan | Mapping[str, Any] | None, caller: Node | None = None
) -> str:
    """``サブフロー「name」（plan_id）``: the subflow's description's first sentence (a plan, or
    the raw mapping of one that does not parse), else the calling node's; ``サブフロー 'plan_id'``
    when neither describes it."""
    names = (_described(n) for n in (subflow, caller) if n is not None)
    name = next((n for n in names if n is not None), None)
    return f"サブフロー「{name}」（{plan_id}）" if name is not None else f"サブフロー '{plan_id}'"


def _tail(node_id: str) -> str:
    """The node of a path (``loop[2]/extract`` → ``extract``)."""
    return _LOOP_PART.sub("", node_id.rsplit("/", 1)[-1])


def plan_words(plan: Plan, registry: BlockRegistry) -> PlanWords:
    """The words of ``plan``'s check messages (see :class:`PlanWords`)."""
    nodes = list(_walk(plan.graph))
    blocks: dict[str, str] = {}
    aliases: dict[Key, str] = {}
    for node in nodes:
        if isinstance(node, BlockNode):
            blocks.setdefault(node.id, node.block)
            aliases.update({(node.id, alias): port for port, alias in node.out.items()})
    names = PlanNames(nodes=_node_names(nodes, registry), vars=dict(plan.ui.vars))
    return PlanWords(names, registry, blocks, aliases)
