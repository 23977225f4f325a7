"""What the AST policy learns about a module before judging it, and the small AST helpers.

One pass over the tree (``TreeFacts.of``) collects the facts that the checker's rules depend on
but cannot see at a single node: which names the code binds, which names stand for a module
(``import pandas as pd``) or for a known function (``from numpy import load as L``,
``f = np.load``), which names only ever hold string literals (so ``template.format(...)`` can be
checked), which names only ever hold dict literals (the keywords ``**name`` passes), which
``**kwargs`` are merely forwarded, and which string literals are annotations
(``x: "expr"``: code that typing and functools.singledispatch evaluate).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from importlib.machinery import PathFinder

from keiri_agent.sandbox.policy_rules import PREFERRED_PACKAGES
from keiri_agent.sandbox.profiles import SandboxProfile

__all__ = [
    "MAX_QUOTE_CHARS",
    "TreeFacts",
    "callee_name",
    "compact_allowlist",
    "inert",
    "is_false",
    "is_pgf",
    "is_submodule",
    "quote",
    "string",
]

MAX_QUOTE_CHARS = 60
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@functools.lru_cache(maxsize=1024)
def is_submodule(dotted: str) -> bool:
    """Whether ``dotted`` names a module on disk, found without importing anything."""
    head, *rest = dotted.split(".")
    spec = PathFinder.find_spec(head)
    for part in rest:
        if spec is None or spec.submodule_search_locations is None:
            return False
        spec = PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None


def quote(text: str) -> str:
    return text if len(text) <= MAX_QUOTE_CHARS else text[: MAX_QUOTE_CHARS - 1] + "…"


def callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def is_pgf(node: ast.expr) -> bool:
    return (string(node) or "").lower().startswith("pgf")


def is_false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def compact_allowlist(profile: SandboxProfile) -> str:
    tops = {name.split(".")[0] for name in profile.allowed_imports}
    first = [p for p in PREFERRED_PACKAGES if p in tops]
    return ", ".join(first + sorted(tops - set(first)))


def inert(node: ast.expr) -> bool:
    """A literal value (or a lambda): it cannot carry an object whose attributes a format
    field could walk, nor be a format template built at run time."""
    if isinstance(node, ast.Constant | ast.Lambda):
        return True
    if isinstance(node, ast.UnaryOp):
        return inert(node.operand)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(inert(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and inert(k) for k in node.keys) and all(
            inert(v) for v in node.values
        )
    return False


@dataclass
class TreeFacts:
    """Facts about one module's names, gathered once before the checker visits it."""

    bound: set[str] = field(default_factory=set)
    modules: dict[str, str] = field(default_factory=dict)  # local name -> dotted module
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> function it names
    literal_strings: set[str] = field(default_factory=set)  # names only ever bound to str literals
    forwarded: set[int] = field(default_factory=set)  # ids of ``**kwargs`` that only forward
    annotations: list[ast.Constant] = field(default_factory=list)  # str literals in annotations
    alias_values: set[int] = field(default_factory=set)  # ids of ``np.load`` in ``f = np.load``
    # names only ever bound to dict literals with string keys: the keys ``**name`` passes
    literal_dicts: dict[str, list[ast.Dict]] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: ast.Module) -> TreeFacts:
        facts = cls()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                facts.bound.add(node.id)
            elif isinstance(node, ast.arg):
                facts.bound.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                facts.bound.add(node.name)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    facts.modules[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    dotted = f"{node.module}.{alias.name}"
                    local = alias.asname or alias.name
                    if is_submodule(dotted):
                        facts.modules[local] = dotted
                    else:
                        facts.aliases[local] = alias.name
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                facts._note_assignment(node.targets[0], node.value)
            if isinstance(node, _FUNCTIONS):
                facts._note_forwarding(node)
            facts._note_annotations(node)
        bindings, literal, dicts = _bindings(tree)
        facts.literal_strings = {n for n, count in literal.items() if bindings.get(n) == count}
        facts.literal_dicts = {n: d for n, d in dicts.items() if bindings.get(n) == len(d)}
        # Only names used for nothing but ``**name``: any other use could change the mapping.
        spreads = {
            id(k.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            for k in n.keywords
            if k.arg is None and isinstance(k.value, ast.Name)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Load)
                and id(node) not in spreads
            ):
                facts.literal_dicts.pop(node.id, None)
        return facts

    def _note_assignment(self, target: ast.expr, value: ast.expr) -> None:
        if not isinstance(target, ast.Name):
            return
        if isinstance(value, ast.Attribute):
            self.aliases[target.id] = value.attr
            self.alias_values.add(id(value))
        elif isinstance(value, ast.Name) and value.id in self.modules:
            self.modules[target.id] = self.modules[value.id]

    def _note_forwarding(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        """``def f(**kw): g(**kw)``: kw reaches g unchanged when it is used for nothing else."""
        if node.args.kwarg is None:
            return
        name = node.args.kwarg.arg
        uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
        spreads = {
            id(k.value)
            for n in ast.walk(node)
            if isinstance(n, ast.Call)
            for k in n.keywords
            if k.arg is None and isinstance(k.value, ast.Name) and k.value.id == name
        }
        if all(id(use) in spreads for use in uses):
            self.forwarded |= spreads

    def _note_annotations(self, node: ast.AST) -> None:
        roots: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        for root in roots:
            if root is None:
                continue
            for inner in ast.walk(root):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    self.annotations.append(inner)


def _literal_keys(node: ast.expr) -> bool:
    return isinstance(node, ast.Dict) and all(string(k) is not None for k in node.keys)


def _bindings(
    tree: ast.Module,
) -> tuple[dict[str, int], dict[str, int], dict[str, list[ast.Dict]]]:
    """How often each name is bound in any way, how often by ``name = "a literal"``, and the
    dict literals (string keys only) assigned to each name."""
    counts: dict[str, int] = {}
    literal: dict[str, int] = {}
    dicts: dict[str, list[ast.Dict]] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.append(node.id)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.extend((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.append(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.append(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.extend(node.names)  # bound elsewhere, where the checker cannot follow
        if isinstance(node, ast.Assign) and string(node.value) is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    literal[target.id] = literal.get(target.id, 0) + 1
        if isinstance(node, ast.Assign) and _literal_keys(node.value):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value, ast.Dict):
                    dicts.setdefault(target.id, []).append(node.value)
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts, literal, dicts
