"""The expression language of ``table.compute``: a closed grammar, parsed by recursive descent.

Nothing here is Python: the text is tokenized and parsed into the small tree below, and
:mod:`keiri_agent.blocks.table.expr_eval` evaluates that tree. There is no way to reach a name,
attribute or function outside :data:`FUNCTIONS`.

Grammar (lowest precedence first; comparisons do not chain)::

    expr    := or
    or      := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | compare
    compare := concat (("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") concat)?
    concat  := sum ("&" sum)*
    sum     := product (("+" | "-") product)*
    product := unary (("*" | "/") unary)*
    unary   := ("-" | "+") unary | primary
    primary := NUMBER | STRING | COLUMN | NAME "(" args ")" | NAME | "true" | "false"
             | "(" expr ")"

- COLUMN is ``[列名]`` (or full-width ``［列名］``); ``]]`` inside stands for ``]``. Any name works
  in brackets: ``[差額率(%)]``, ``[4月 売上]``. A bare NAME not followed by ``(`` (letters,
  digits, ``_``, kana and kanji, not starting with a digit) is a column too: ``金額 * 0.1``.
- NUMBER: ``110000``, ``0.1``, ``1,000`` is not a number (write ``1000``).
- STRING: ``"..."`` or ``'...'``; a backslash escapes the next character.
- Positions in errors are 1-based characters of the expression as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from keiri_agent.errors import BlockError, input_error

__all__ = [
    "COMPARISONS",
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXPRESSION_CHARS",
    "MAX_ROUND_DIGITS",
    "Binary",
    "Call",
    "Column",
    "Literal",
    "Node",
    "Unary",
    "parse_formula",
    "round_digits",
]

MAX_EXPRESSION_CHARS: Final = 2000
MAX_DEPTH: Final = 60  # nesting of parentheses and calls
MAX_ROUND_DIGITS: Final = 10  # round(x, d): |d| at most this
# name → (minimum, maximum) number of arguments (None: no maximum)
FUNCTIONS: Final[dict[str, tuple[int, int | None]]] = {
    "round": (1, 2),
    "rounddown": (1, 2),
    "roundup": (1, 2),
    "abs": (1, 1),
    "min": (2, None),
    "max": (2, None),
    "days": (2, 2),
    "if": (3, 3),
}
COMPARISONS: Final = {"=": "==", "==": "==", "!=": "!=", "<>": "!=", "<": "<", "<=": "<="}
COMPARISONS.update({">": ">", ">=": ">="})
_KEYWORDS: Final = frozenset({"and", "or", "not", "true", "false"})
_SYMBOLS: Final = (
    "==",
    "!=",
    "<>",
    "<=",
    ">=",
    "=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "&",
    "(",
    ")",
    ",",
)
_BRACKETS: Final = {"[": "]", "［": "］"}
_EXAMPLES: Final = (
    '例: [税抜金額] * 0.1、round([金額] / 1.1, 0)、[姓] & " " & [名]、days([支払日], [請求日])、'
    'if([金額] >= 50000, "要承認", "")'
)


@dataclass(frozen=True)
class Literal:
    value: Decimal | str | bool
    pos: int


@dataclass(frozen=True)
class Column:
    name: str
    pos: int


@dataclass(frozen=True)
class Unary:
    op: str  # "-", "+", "not"
    operand: Node
    pos: int


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / & == != < <= > >= and or
    left: Node
    right: Node
    pos: int  # the operator's position


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Node, ...]
    pos: int


Node = Literal | Column | Unary | Binary | Call


@dataclass(frozen=True)
class _Token:
    kind: str  # num, str, col, name, op, end
    text: str
    pos: int  # 1-based


class _Parser:
    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where
        self.tokens = self._tokenize()
        self.index = 0
        self.depth = 0

    # --- errors ---------------------------------------------------------------------------

    def error(self, pos: int, problem: str) -> BlockError:
        return input_error(
            f"{self.where}式「{self.text}」の {pos} 文字目: {problem}",
            '式には列 [列名]、数値、"文字列"、演算子 + - * / & = != < <= > >= and or not、'
            f"関数 {', '.join(FUNCTIONS)} が使えます。{_EXAMPLES}",
            field="columns",
            expression=self.text,
            position=pos,
        )

    # --- tokens ---------------------------------------------------------------------------

    def _tokenize(self) -> list[_Token]:
        text, i = self.text, 0
        tokens: list[_Token] = []
        while i < len(text):
            ch = text[i]
            if ch.isspace() or ch == "\u3000":
                i += 1
            elif ch in _BRACKETS:
                i = self._bracket(i, tokens)
            elif ch in "\"'":
                i = self._string(i, tokens)
            elif ch.isdigit() and ch.isascii():
                start = i
                while i < len(text) and text[i].isascii() and text[i].isdigit():
                    i += 1
                if i + 1 < len(text) and text[i] == "." and text[i + 1].isdigit():
                    i += 1
                    while i < len(text) and text[i].isascii() and text[i].isdigit():
                        i += 1
                if i < len(text) and (text[i].isalpha() or text[i] == "_"):
                    raise self.error(
                        start + 1,
                        f"「{text[start : i + 1]}…」は数値でも列名でもありません"
                        "（数字で始まる列名は [4月売上] のように [ ] で囲みます）。",
                    )
                tokens.append(_Token("num", text[start:i], start + 1))
            elif ch.isalpha() or ch == "_":
                start = i
                while i < len(text) and (text[i].isalnum() or text[i] == "_"):
                    i += 1
                tokens.append(_Token("name", text[start:i], start + 1))
            else:
                symbol = next((s for s in _SYMBOLS if text.startswith(s, i)), None)
                if symbol is None:
                    raise self.error(i + 1, f"文字「{ch}」は式に使えません。")
                tokens.append(_Token("op", symbol, i + 1))
                i += len(symbol)
        tokens.append(_Token("end", "", len(text) + 1))
        return tokens

    def _bracket(self, i: int, tokens: list[_Token]) -> int:
        close, start, name = _BRACKETS[self.text[i]], i, []
        i += 1
        while i < len(self.text):
            if self.text[i] == close:
                if self.text.startswith(close * 2, i):
                    name.append(close)
                    i += 2
                    continue
                column = "".join(name).strip()
                if not column:
                    raise self.error(start + 1, "[ ] の中に列名がありません。")
                tokens.append(_Token("col", column, start + 1))
                return i + 1
            name.append(self.text[i])
            i += 1
        raise self.error(
            start + 1, f"列名の「{self.text[start]}」が閉じられていません（{close} がありません）。"
        )

    def _string(self, i: int, tokens: list[_Token]) -> int:
        quote, start, chars = self.text[i], i, []
        i += 1
        while i < len(self.text):
            ch = self.text[i]
            if ch == "\\" and i + 1 < len(self.text):
                chars.append(self.text[i + 1])
                i += 2
                continue
            if ch == quote:
                tokens.append(_Token("str", "".join(chars), start + 1))
                return i + 1
            chars.append(ch)
            i += 1
        raise self.error(start + 1, f"文字列の {quote} が閉じられていません。")

    # --- grammar --------------------------------------------------------------------------

    @property
    def token(self) -> _Token:
        return self.tokens[self.index]

    def take(self, *texts: str) -> _Token | None:
        token = self.token
        keyword = token.kind == "name" and token.text in _KEYWORDS
        if (token.kind == "op" or keyword) and token.text in texts:
            self.index += 1
            return token
        return None

    def parse(self) -> Node:
        node = self.expr()
        if self.token.text == "," and self.token.kind == "op":
            raise self.error(
                self.token.pos,
                "「,」は関数の引数の区切りにだけ使えます（金額の 1,000 は 1000 と書きます）。",
            )
        if self.token.kind != "end":
            raise self.error(self.token.pos, f"「{self.token.text}」の前に演算子が足りません。")
        return node

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(self.token.pos, f"入れ子が深すぎます（{MAX_DEPTH} 段まで）。")
        node = self.binary(0)
        self.depth -= 1
        return node

    _LEVELS: Final = (("or",), ("and",), None, ("&",), ("+", "-"), ("*", "/"))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        ops = self._LEVELS[level]
        if ops is None:  # comparisons: "not" binds looser, and they do not chain
            if (token := self.take("not")) is not None:
                return Unary("not", self.binary(level), token.pos)
            left = self.binary(level + 1)
            if (token := self.take(*COMPARISONS)) is not None:
                right = self.binary(level + 1)
                if self.token.text in COMPARISONS and self.token.kind == "op":
                    raise self.error(
                        self.token.pos,
                        "比較は続けて書けません（a < b < c ではなく a < b and b < c）。",
                    )
                return Binary(COMPARISONS[token.text], left, right, token.pos)
            return left
        node = self.binary(level + 1)
        while (token := self.take(*ops)) is not None:
            node = Binary(token.text, node, self.binary(level + 1), token.pos)
        return node

    def unary(self) -> Node:
        if (token := self.take("-", "+")) is not None:
            return Unary(token.text, self.unary(), token.pos)
        return self.primary()

    def primary(self) -> Node:
        token = self.token
        self.index += 1
        if token.kind == "num":
            return Literal(Decimal(token.text), token.pos)
        if token.kind == "str":
            return Literal(token.text, token.pos)
        if token.kind == "col":
            return Column(token.text, token.pos)
        if token.kind == "name":
            if token.text in ("true", "false"):
                return Literal(token.text == "true", token.pos)
            if token.text in _KEYWORDS:
                raise self.error(token.pos, f"「{token.text}」の前に値がありません。")
            if self.take("(") is not None:
                return self.call(token)
            return Column(token.text, token.pos)
        if token.kind == "op" and token.text == "(":
            node = self.expr()
            if self.take(")") is None:
                raise self.error(self.token.pos, "「(」に対応する「)」がありません。")
            return node
        if token.kind == "end":
            raise self.error(token.pos, "式が途中で終わっています（値が足りません）。")
        raise self.error(token.pos, f"「{token.text}」の位置に値（列・数値・文字列）が必要です。")

    def call(self, name: _Token) -> Node:
        function = name.text.lower()
        if function not in FUNCTIONS:
            raise self.error(
                name.pos,
                f"関数「{name.text}」はありません（使える関数: {', '.join(FUNCTIONS)}）。",
            )
        args: list[Node] = []
        if self.take(")") is None:
            args.append(self.expr())
            while self.take(",") is not None:
                args.append(self.expr())
            if self.take(")") is None:
                raise self.error(self.token.pos, f"{function}( の「)」がありません。")
        low, high = FUNCTIONS[function]
        if len(args) < low or (high is not None and len(args) > high):
            count = (
                f"{low}" if low == high else f"{low} 個以上" if high is None else f"{low}〜{high}"
            )
            raise self.error(
                name.pos, f"{function} の引数は {count} 個です（指定: {len(args)} 個）。"
            )
        if function.startswith("round") and len(args) == 2 and round_digits(args[1]) is None:
            raise self.error(
                args[1].pos,
                f"{function} の桁数は -{MAX_ROUND_DIGITS}〜{MAX_ROUND_DIGITS} の整数で書いてください"
                f"（例: {function}([金額] * 0.1, 0) で整数、{function}([単価], 2) で小数第 2 位まで、"
                f"{function}([金額], -3) で千円単位）。",
            )
        return Call(function, tuple(args), name.pos)


def round_digits(node: Node) -> int | None:
    """The digits argument of round/rounddown/roundup: an integer constant, else None."""
    sign = 1
    if isinstance(node, Unary) and node.op in ("-", "+"):
        sign = -1 if node.op == "-" else 1
        node = node.operand
    if not isinstance(node, Literal) or not isinstance(node.value, Decimal):
        return None
    value = sign * node.value
    if value != value.to_integral_value() or abs(value) > MAX_ROUND_DIGITS:
        return None
    return int(value)


def parse_formula(text: str, *, where: str = "") -> Node:
    """The tree of ``text``; a BlockError naming the position of the first problem."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise input_error(
            f"{where}式が長すぎます（{len(text):,} 文字。上限 {MAX_EXPRESSION_CHARS:,} 文字）。",
            "式を短くするか、途中の結果を別の列として columns に分けて書いてください。",
            field="columns",
        )
    if not text.strip():
        raise input_error(f"{where}式が空です。", _EXAMPLES, field="columns")
    return _Parser(text, where).parse()
