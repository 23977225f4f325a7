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
import re
from collections.abc import Callable, Mapping, Sized
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events.models import type_label
from keiri_agent.plan._dsl.refs import (
    Reference,
    ReferenceSyntaxError,
    caret_excerpt,
    parse_reference_at,
    split_template,
)

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
    "compile_when",
    "parse_expression",
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
    """A node of a parsed condition's tree (built by the parser below, evaluated by its own ``evaluate``)."""

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


# --- the parser: text → Expression (a tokenizer and a recursive-descent parser) ------------------
# compile_when accepts both spellings of ``when``: an expression string or a ``{left, op, right}``
# comparison.

_WHEN_HINT = (
    'when は次のいずれかで書きます: 式の文字列 "${a.count} > 0"、{expr: "${a.count} > 0"}、'
    '{left: "${a.count}", op: gt, right: 0}（op は eq/ne/gt/gte/lt/lte）'
)
_QUOTED_REF = (
    "参照は引用符の外に書きます（例: ${a.status} == 'done'）。「${」という文字は「$${」と書きます"
)
_CHAR_HINTS: Final = {
    "=": "等しいかの比較は == です",
    "&": "「かつ」は and か && です",
    "|": "「または」は or か || です",
    "$": "参照は ${...} と書きます",
}
_OPERATORS = ("==", "!=", ">=", "<=", "&&", "||", ">", "<", "!", "-", "(", ")", ",")
_COMPARISONS = ("==", "!=", *ORDERINGS)
_WHEN_OPS: Final = {"eq": "==", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_LITERALS: Final[dict[str, Any]] = {
    "true": True, "false": False, "null": None, "True": True, "False": False, "None": None,
}  # fmt: skip
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "str", "ref", "name", "op", "end"
    pos: int
    value: Any = None


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if match := _NUMBER.match(text, pos):
            raw, end = match.group(), match.end()
            token = _Token("num", pos, int(raw) if raw.isdigit() else float(raw))
        elif match := _NAME.match(text, pos):
            token, end = _Token("name", pos, match.group()), match.end()
        elif ch in "'\"":
            value, end = _read_string(text, pos)
            token = _Token("str", pos, value)
        elif text.startswith("${", pos):
            ref = _reference_at(text, pos)
            token, end = _Token("ref", pos, ref), ref.end
        elif op := next((o for o in _OPERATORS if text.startswith(o, pos)), None):
            token, end = _Token("op", pos, op), pos + len(op)
        else:
            extra = f"（{_CHAR_HINTS[ch]}）" if ch in _CHAR_HINTS else ""
            raise ExpressionSyntaxError(text, pos, f"「{ch}」は式に使えません{extra}")
        tokens.append(token)
        pos = end
    tokens.append(_Token("end", len(text)))
    return tokens


def _reference_at(text: str, pos: int) -> Reference:
    try:
        return parse_reference_at(text, pos)
    except ReferenceSyntaxError as error:
        raise ExpressionSyntaxError(text, error.position, error.reason) from error


def _read_string(text: str, start: int) -> tuple[str, int]:
    quote, chars, pos = text[start], [], start + 1
    while pos < len(text) and text[pos] != quote:
        if text[pos] == "\\":
            if pos + 1 >= len(text) or text[pos + 1] not in "\\'\"":
                reason = "「\\」の後に書けるのは \\ ' \" だけです（\\ 自体は \\\\ と書きます）"
                raise ExpressionSyntaxError(text, pos, reason)
            pos += 1  # keep the escaped character
        elif text.startswith("$${", pos):
            pos += 1  # "$${" reads as a literal "${"
        elif text.startswith("${", pos):
            raise ExpressionSyntaxError(text, pos, "引用符の中に参照は書けません", _QUOTED_REF)
        chars.append(text[pos])
        pos += 1
    if pos >= len(text):
        raise ExpressionSyntaxError(text, start, f"文字列が {quote} で閉じられていません")
    return "".join(chars), pos + 1


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.depth = 0

    def parse(self) -> ExprNode:
        if self.tokens[0].kind == "end":
            raise ExpressionSyntaxError(self.text, 0, "式が空です")
        node = self.or_expr()
        if (token := self.tokens[self.index]).kind != "end":
            raise ExpressionSyntaxError(
                self.text, token.pos, "式の終わりの後に余分な記述があります"
            )
        return node

    def at(self, *values: str) -> bool:
        token = self.tokens[self.index]
        return token.kind in ("op", "name") and token.value in values

    def take(self) -> _Token:
        self.index += 1
        return self.tokens[self.index - 1]

    def expect(self, op: str, reason: str) -> None:
        token = self.take()
        if token.kind != "op" or token.value != op:
            raise ExpressionSyntaxError(self.text, token.pos, reason)

    def enter(self, token: _Token) -> None:
        # Every construct that recurses counts, so hostile input cannot exhaust the stack.
        self.depth += 1
        if self.depth > MAX_NESTING:
            reason = f"括弧・not・-・関数の入れ子が深すぎます（最大 {MAX_NESTING} 段）"
            raise ExpressionSyntaxError(self.text, token.pos, reason)

    def chain(self, words: tuple[str, str], operand: Callable[[], ExprNode]) -> ExprNode:
        operands = [operand()]
        while self.at(*words):
            self.take()
            operands.append(operand())
        return operands[0] if len(operands) == 1 else LogicalNode(words[0], tuple(operands))

    def prefixed(
        self,
        words: tuple[str, ...],
        again: Callable[[], ExprNode],
        otherwise: Callable[[], ExprNode],
    ) -> ExprNode:
        if not self.at(*words):
            return otherwise()
        self.enter(self.take())
        node = UnaryNode(words[0], again())
        self.depth -= 1
        return node

    def or_expr(self) -> ExprNode:
        return self.chain(("or", "||"), self.and_expr)

    def and_expr(self) -> ExprNode:
        return self.chain(("and", "&&"), self.not_expr)

    def not_expr(self) -> ExprNode:
        return self.prefixed(("not", "!"), self.not_expr, self.comparison)

    def unary(self) -> ExprNode:
        return self.prefixed(("-",), self.unary, self.primary)

    def comparison(self) -> ExprNode:
        left = self.unary()
        if not self.at(*_COMPARISONS):
            return left
        op = self.take().value
        right = self.unary()
        if self.at(*_COMPARISONS):
            reason = "比較は続けて書けません（0 < ${x} and ${x} < 10 のように and でつなぎます）"
            raise ExpressionSyntaxError(self.text, self.tokens[self.index].pos, reason)
        return CompareNode(op, left, right)

    def primary(self) -> ExprNode:
        token = self.take()
        kind, value = token.kind, token.value
        if kind in ("num", "str"):
            return LiteralNode(value)
        if kind == "ref":
            return RefNode(value)
        if kind == "name" and value in _LITERALS:
            return LiteralNode(_LITERALS[value])
        if kind == "name" and value in FUNCTIONS:
            return self.call(token)
        if kind == "op" and value == "(":
            self.enter(token)
            node = self.or_expr()
            self.expect(")", "「(」に対応する「)」がありません")
            self.depth -= 1
            return node
        if kind == "end":
            raise ExpressionSyntaxError(self.text, token.pos, "式が途中で終わっています")
        if kind == "name" and value not in ("and", "or", "not"):
            hint = "文字列は '...' で囲み、値は ${...} で参照します。" + SYNTAX_HINT
            reason = f"「{value}」という名前や関数はありません"
            raise ExpressionSyntaxError(self.text, token.pos, reason, hint)
        raise ExpressionSyntaxError(self.text, token.pos, f"値が必要な位置に「{value}」があります")

    def call(self, name: _Token) -> ExprNode:
        self.enter(name)
        self.expect("(", f"関数 {name.value} の後には「(」が必要です")
        args: list[ExprNode] = []
        if not self.at(")"):
            args.append(self.or_expr())
        while args and self.at(","):
            self.take()
            args.append(self.or_expr())
        self.expect(")", f"関数 {name.value} の引数が「)」で閉じられていません")
        self.depth -= 1
        if len(args) != (arity := len(FUNCTIONS[name.value][0])):
            reason = f"関数 {name.value} の引数は {arity} 個ですが {len(args)} 個あります"
            raise ExpressionSyntaxError(self.text, name.pos, reason)
        return CallNode(name.value, tuple(args))


def parse_expression(text: str) -> Expression:
    """Parse ``text``; raises ExpressionSyntaxError pointing at the offending character."""
    if len(text) > MAX_EXPRESSION_CHARS:
        reason = f"式が長すぎます（{len(text)} 文字、最大 {MAX_EXPRESSION_CHARS} 文字）"
        raise ExpressionSyntaxError(text, MAX_EXPRESSION_CHARS, reason)
    parser = _Parser(text)
    root = parser.parse()
    references = [token.value for token in parser.tokens if token.kind == "ref"]
    return Expression(text, root, references)


def _operand(value: Any, side: str) -> tuple[ExprNode, str]:
    """A compare-form operand as a node, and how it reads in the expression's text."""
    if value is None or isinstance(value, bool):
        return LiteralNode(value), "null" if value is None else str(value).lower()
    if isinstance(value, int | float):
        return LiteralNode(value), repr(value)
    if not isinstance(value, str):
        reason = f"{side} には{type_label(value)}を指定できません（数値・文字列・真偽値・null）"
        raise ExpressionSyntaxError(str(value), None, reason, _WHEN_HINT)
    try:
        parts = split_template(value)
    except ReferenceSyntaxError as error:
        raise ExpressionSyntaxError(value, error.position, error.reason) from error
    refs = [p for p in parts if isinstance(p, Reference)]
    if (refs and any(isinstance(p, str) and p.strip() for p in parts)) or len(refs) > 1:
        reason = f"{side} の参照は前後に文字を付けずに単独で書いてください"
        raise ExpressionSyntaxError(value, refs[0].start, reason, _QUOTED_REF)
    if refs:
        return RefNode(refs[0]), refs[0].text
    literal = "".join(str(p) for p in parts)
    escaped = literal.replace("\\", "\\\\").replace('"', '\\"').replace("${", "$${")
    return LiteralNode(literal), f'"{escaped}"'


def compile_when(when: str | Mapping[str, Any]) -> Expression:
    """Compile a ``when``/``while`` condition: a string, ``{expr}`` or ``{left, op, right}``."""
    if isinstance(when, str):
        return parse_expression(when)
    if not isinstance(when, Mapping):
        raise ExpressionSyntaxError(
            str(when), None, f"条件に{type_label(when)}は指定できません", _WHEN_HINT
        )
    if set(when) == {"expr"}:
        if not isinstance(when["expr"], str):
            reason = f"expr には文字列を指定してください（{type_label(when['expr'])}です）"
            raise ExpressionSyntaxError(str(when["expr"]), None, reason, _WHEN_HINT)
        return parse_expression(when["expr"])
    if set(when) != {"left", "op", "right"}:
        reason = f"条件のキーが不正です: {', '.join(sorted(map(str, when))) or '（なし）'}"
        raise ExpressionSyntaxError(str(dict(when)), None, reason, _WHEN_HINT)
    op = _WHEN_OPS.get(when["op"]) if isinstance(when["op"], str) else None
    if op is None:
        reason = f"op「{when['op']}」は使えません"
        raise ExpressionSyntaxError(str(dict(when)), None, reason, _WHEN_HINT)
    left, left_text = _operand(when["left"], "left")
    right, right_text = _operand(when["right"], "right")
    references = [node.reference for node in (left, right) if isinstance(node, RefNode)]
    return Expression(f"{left_text} {op} {right_text}", CompareNode(op, left, right), references)
