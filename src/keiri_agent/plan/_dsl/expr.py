"""The closed expression language of ``when`` and ``while`` conditions (seed 002 §5.1, §5.2).

Plans come from users and from an LLM, so a condition is never handed to Python's ``eval``:
a small tokenizer and a recursive-descent parser build an AST of frozen dataclasses, and only
the operators and functions below exist::

    or_expr    := and_expr (("or" | "||") and_expr)*
    and_expr   := not_expr (("and" | "&&") not_expr)*
    not_expr   := ("not" | "!") not_expr | comparison
    comparison := unary (("==" | "!=" | ">" | ">=" | "<" | "<=") unary)?
    unary      := "-" unary | primary
    primary    := number | 'string' | true | false | null | ${reference}
                | function "(" args ")" | "(" or_expr ")"

Values are never converted implicitly: ``true != 1``, ordering only works between two numbers
or two strings, and truthiness is refused for objects such as DataFrames instead of asking
them via ``__bool__``. References go outside quotes (``${a.status} == 'done'``); a ``${`` inside
a quoted string is an error rather than a silently literal text.
"""

from __future__ import annotations

import datetime as dt
import numbers
import operator
from collections.abc import Callable, Mapping, Sized
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.plan._dsl.ref_values import type_label
from keiri_agent.plan._dsl.refs import Reference, caret_excerpt

__all__ = [
    "FUNCTIONS",
    "MAX_EXPRESSION_CHARS",
    "MAX_NESTING",
    "ORDERINGS",
    "SYNTAX_HINT",
    "CallNode",
    "CompareNode",
    "ExprNode",
    "Expression",
    "ExpressionEvalError",
    "ExpressionSyntaxError",
    "LiteralNode",
    "LogicalNode",
    "RefNode",
    "UnaryNode",
    "truthy",
]

MAX_EXPRESSION_CHARS: Final = 2000
MAX_NESTING: Final = 50

Resolver = Callable[[Reference], Any]

SYNTAX_HINT = (
    "使える書き方: 比較 == != > >= < <=、論理 and or not（&& || !）、括弧、"
    "値 数値・'文字列'・true/false/null・${参照}、"
    "関数 len lower upper trim contains startswith endswith empty exists"
)
_NULL_HINT = (
    "null になりうる値は exists(...) で先に確かめてください（例: exists(${x}) and ${x} > 0）。"
)
ORDERINGS: Final = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


class ExpressionSyntaxError(BlockError):
    """An expression cannot be parsed; ``details`` has the text and where it went wrong."""

    def __init__(self, text: str, position: int | None, reason: str, hint: str = "") -> None:
        if position is None:
            message = f"条件の書き方が不正です: {reason}"
        else:
            message = f"式の {position + 1} 文字目が不正です: {reason}\n"
            message += caret_excerpt(text, position)
        column = None if position is None else position + 1
        super().__init__(
            message,
            code=ErrorCode.INVALID_EXPRESSION,
            hint=hint or SYNTAX_HINT,
            details={"expression": text, "position": position, "column": column, "reason": reason},
        )


class ExpressionEvalError(BlockError):
    """A well-formed expression met values it cannot work with (``null > 3``, a DataFrame)."""

    def __init__(
        self, reason: str, hint: str, expression: str | None = None, **details: Any
    ) -> None:
        message = (
            reason if expression is None else f"条件式 {expression} を評価できません: {reason}"
        )
        if expression is not None:
            details["expression"] = expression
        super().__init__(message, code=ErrorCode.INVALID_EXPRESSION, hint=hint, details=details)
        self.reason = reason
        self.expression = expression


def _is_number(value: Any) -> bool:
    # numbers.Real also covers the numpy scalars pandas hands out; bool is not a number here.
    return isinstance(value, numbers.Real | Decimal) and not isinstance(value, bool)


def truthy(value: Any) -> bool:
    """The truth of a condition's value; refuses types whose truth would be a guess."""
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if _is_number(value):
        return bool(value != 0)
    if isinstance(value, str | list | tuple | dict):
        return len(value) > 0
    hint = "比較（例: ${x.length} > 0）や empty(...) / exists(...) で条件を書いてください。"
    raise ExpressionEvalError(f"{type_label(value)} は真偽を判定できません", hint)


def _equal(a: Any, b: Any) -> bool:
    for value in (a, b):
        plain = value is None or isinstance(value, bool | str | list | tuple | Mapping)
        if not (plain or _is_number(value) or isinstance(value, dt.date | dt.time)):
            hint = "比較できるのは数値・文字列・真偽値・null・リスト・辞書・日付です。"
            raise ExpressionEvalError(f"{type_label(value)} は == や != で比較できません", hint)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and bool(a == b)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return len(a) == len(b) and all(k in b and _equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _order(op: str, a: Any, b: Any) -> bool:
    if (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str)):
        return bool(ORDERINGS[op](a, b))
    # Japanese runs straight on, but an ASCII label such as "null" gets spaces around it.
    left, right = (f" {t} " if t.isascii() else t for t in (type_label(a), type_label(b)))
    raise ExpressionEvalError(
        f"{left.lstrip()}と{right}は比較できません（{op}）",
        "大小比較は数値どうし・文字列どうしでのみ行えます。" + _NULL_HINT,
        operator=op,
        left_type=type_label(a),
        right_type=type_label(b),
    )


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        _check("contains", item, "str")
        return item in container
    return any(_equal(element, item) for element in container)


# Arguments are checked before a function runs, so no builtin ever sees a surprising type.
_KINDS: Final[dict[str, tuple[tuple[type, ...], str]]] = {
    "str": ((str,), "文字列"),
    "sized": ((Sized,), "文字列・リスト・辞書・表"),
    "container": ((str, list, tuple, Mapping), "文字列・リスト・辞書"),
    "any": ((object,), "値"),
}
FUNCTIONS: Final[dict[str, tuple[tuple[str, ...], Callable[..., Any]]]] = {
    "len": (("sized",), len),
    "lower": (("str",), str.lower),
    "upper": (("str",), str.upper),
    "trim": (("str",), str.strip),
    "contains": (("container", "any"), _contains),
    "startswith": (("str", "str"), str.startswith),
    "endswith": (("str", "str"), str.endswith),
    "empty": (("any",), lambda x: x is None or (isinstance(x, Sized) and len(x) == 0)),
    "exists": (("any",), lambda x: x is not None),
}


def _check(name: str, value: Any, kind: str) -> None:
    types, wanted = _KINDS[kind]
    if not isinstance(value, types):
        reason = f"{name}(...) に{type_label(value)}は渡せません（{wanted}が必要です）"
        raise ExpressionEvalError(reason, _NULL_HINT, function=name)


class ExprNode:
    """A node of a parsed condition's tree (built by ``expr_parse``, evaluated here)."""

    def evaluate(self, resolve: Resolver) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class LiteralNode(ExprNode):
    value: bool | int | float | str | None

    def evaluate(self, resolve: Resolver) -> Any:
        return self.value


@dataclass(frozen=True)
class RefNode(ExprNode):
    reference: Reference

    def evaluate(self, resolve: Resolver) -> Any:
        return resolve(self.reference)


@dataclass(frozen=True)
class UnaryNode(ExprNode):
    op: str  # "not" or "-"
    operand: ExprNode

    def evaluate(self, resolve: Resolver) -> Any:
        value = self.operand.evaluate(resolve)
        if self.op == "not":
            return not truthy(value)
        if not _is_number(value):
            reason = f"{type_label(value)} に - は付けられません"
            raise ExpressionEvalError(reason, "符号を反転できるのは数値だけです。")
        return -value


@dataclass(frozen=True)
class LogicalNode(ExprNode):
    op: str  # "and" or "or"
    operands: tuple[ExprNode, ...]  # n-ary, so long chains do not nest (and recurse) deeply

    def evaluate(self, resolve: Resolver) -> Any:
        decisive = self.op == "or"
        for operand in self.operands:
            if truthy(operand.evaluate(resolve)) is decisive:
                return decisive
        return not decisive


@dataclass(frozen=True)
class CompareNode(ExprNode):
    op: str
    left: ExprNode
    right: ExprNode

    def evaluate(self, resolve: Resolver) -> Any:
        a, b = self.left.evaluate(resolve), self.right.evaluate(resolve)
        if self.op in ("==", "!="):
            return _equal(a, b) is (self.op == "==")
        return _order(self.op, a, b)


@dataclass(frozen=True)
class CallNode(ExprNode):
    name: str
    args: tuple[ExprNode, ...]

    def evaluate(self, resolve: Resolver) -> Any:
        kinds, function = FUNCTIONS[self.name]
        values = [arg.evaluate(resolve) for arg in self.args]
        for value, kind in zip(values, kinds, strict=True):
            _check(self.name, value, kind)
        return function(*values)


class Expression:
    """A parsed condition: its text, the references it reads, and ``evaluate``."""

    __slots__ = ("_root", "references", "text")

    def __init__(self, text: str, root: ExprNode, references: list[Reference]) -> None:
        self.text = text
        self.references = references
        self._root = root

    def evaluate(self, resolve: Resolver) -> Any:
        """The value of the expression; ``resolve`` supplies each reference's value."""
        try:
            return self._root.evaluate(resolve)
        except ExpressionEvalError as error:
            if error.expression is not None:
                raise
            raise ExpressionEvalError(
                error.reason, error.hint, expression=self.text, **error.details
            ) from error

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"
