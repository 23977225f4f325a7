"""The AST policy's rules about strings: literals, format templates, query and annotation strings.

A mixin of ``policy_checker.Checker``: string literals that name dunders, host paths or external
programs; ``str.format`` templates that are not visible; ``DataFrame.query`` conditions; and
string annotations, which typing and functools.singledispatch evaluate as code and which are
therefore parsed and checked like the code around them.
"""

from __future__ import annotations

import ast
import re

from keiri_agent.sandbox.policy_rules import (
    EXTERNAL_PROCESS_RCPARAMS,
    HOST_PATH_PREFIXES,
    INTERNAL_ATTRIBUTES,
    PICKLE_ATTRIBUTES,
    PIVOT_ATTRIBUTES,
    SAFE_DUNDERS,
)
from keiri_agent.sandbox.policy_scope import TreeFacts, inert, quote, string

__all__ = ["DOTTED_PART", "DUNDER", "MAX_ANNOTATION_NESTING", "StringRules"]

MAX_ANNOTATION_NESTING = 4  # "list['dict[str, \"x\"]']": strings inside annotation strings
DUNDER = re.compile(r"(?<![A-Za-z0-9])__[A-Za-z][A-Za-z0-9_]*__(?![A-Za-z0-9])")
_FORMAT_FIELD = re.compile(r"\{([^{}]*)\}")
DOTTED_PART = re.compile(r"\.(\w+)")


class StringRules(ast.NodeVisitor):
    """String rules; the checker provides ``report`` and the state below."""

    facts: TreeFacts
    checked: set[int]
    inert: set[int]

    def report(self, node: ast.AST, key: str, **fields: object) -> None:
        raise NotImplementedError

    def check_format_receiver(
        self, node: ast.AST, receiver: ast.expr, args: list[ast.expr] | None
    ) -> None:
        """``template.format(...)``: the template must be visible (a literal, or a name only ever
        bound to literals) unless nothing passed in is an object a field could walk. ``args``
        is None when the method is taken as a value: its arguments are never seen."""
        if string(receiver) is not None:
            return
        if isinstance(receiver, ast.Name) and receiver.id in self.facts.literal_strings:
            return
        if args is not None and all(inert(a) for a in args):
            return
        self.report(node, "format-template")

    def check_query(self, node: ast.Call) -> None:
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "expr")]
        expr = given[0] if given else None
        text = string(expr)
        denied = PIVOT_ATTRIBUTES | INTERNAL_ATTRIBUTES | PICKLE_ATTRIBUTES
        if text is None:
            why = "条件が文字列リテラルではありません"
        elif "@" in text or "__" in text:
            why = "条件に '@'（ローカル変数の参照）か '__' が含まれています"
        elif bad := sorted(set(DOTTED_PART.findall(text)) & denied):
            why = f"条件に使えない属性（{', '.join(bad)}）が含まれています"
        else:
            self.checked.add(id(expr))
            return
        self.report(node, "query-expression", why=why)

    # --- string literals -----------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> None:
        text = node.value
        if not isinstance(text, str) or id(node) in self.checked:
            return
        for field in _FORMAT_FIELD.findall(text):
            parts = DOTTED_PART.findall(re.split(r"[:!]", field, maxsplit=1)[0])
            if "__" in field or any(
                p in PIVOT_ATTRIBUTES or p in INTERNAL_ATTRIBUTES or p.startswith("_")
                for p in parts
            ):
                self.report(node, "format-string", text=quote(text))
                return
        if text.startswith("module://"):
            self.report(node, "dynamic-import", name=quote(text))
        elif text.startswith(HOST_PATH_PREFIXES):
            self.report(node, "host-path", text=quote(text))
        elif text.startswith(EXTERNAL_PROCESS_RCPARAMS):
            self.report(node, "external-process", name=quote(text))
        elif id(node) in self.inert:
            return
        elif dunders := [m for m in DUNDER.findall(text) if m not in SAFE_DUNDERS]:
            self.report(node, "dunder-string", text=quote(text), name=dunders[0])

    def check_annotation_strings(self, strings: list[ast.Constant], budget: int) -> None:
        """String annotations are code: typing.get_type_hints and functools.singledispatch
        evaluate them. Each is parsed and checked like the code around it."""
        for constant in strings:
            try:
                expr = ast.parse(str(constant.value).strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.report(constant, "annotation-string", text=quote(str(constant.value)))
                continue
            for inner in ast.walk(expr):  # located at the string in the user's code
                if isinstance(inner, ast.expr):
                    inner.lineno, inner.col_offset = constant.lineno, constant.col_offset
                    inner.end_lineno, inner.end_col_offset = constant.lineno, 0
            self.visit(expr)
            nested = [
                n
                for n in ast.walk(expr)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            if nested and budget <= 0:
                self.report(constant, "annotation-string", text=quote(str(constant.value)))
            elif nested:
                self.check_annotation_strings(nested, budget - 1)
