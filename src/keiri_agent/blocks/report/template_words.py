"""Why a report template could not be read, in Japanese.

Jinja words its syntax errors in English (``Unexpected end of template. Jinja was looking for
the following tags: 'endif'``); the person who wrote the template reads them when a plan is
checked or run. :func:`template_problem` says the common ones in Japanese and keeps the
template's own words in them (the tag to close, ``endif``; the character that cannot stand
there): an unclosed block, a tag Jinja does not know or that closes the wrong block, a
``{{ … }}`` or ``{% … %}`` left open, a character or word out of place. Any other problem is
left to the caller's "the template is wrong at line N" (:func:`template_problem` is None); Jinja's own text goes
into ``details['cause']`` (``errors.cause_of``), never into the message.
"""

from __future__ import annotations

import re
from typing import Final

from jinja2 import TemplateSyntaxError

__all__ = ["template_problem"]

# Jinja's names for the tokens it expected, in the template's own notation.
_TOKENS: Final = {
    "end of print statement": "}}",
    "end of statement block": "%}",
    "end of template": "テンプレートの終わり",
    "name": "名前",
}
_INNERMOST: Final = re.compile(r"The innermost block that needs to be closed is '(\w+)'")
_UNKNOWN_TAG: Final = re.compile(r"^Encountered unknown tag '(\w+)'")
_OPEN_AT_END: Final = re.compile(r"^unexpected end of template, expected '([^']+)'")
_CHAR: Final = re.compile(r"^unexpected char (['\"])(.+)\1 at \d+")
_BRACKET: Final = re.compile(r"^unexpected '(.+)', expected '(.+)'$")
_TOKEN: Final = re.compile(r"^expected token '([^']+)', got '(.+)'$")
_EXPRESSION: Final = re.compile(r"^Expected an expression, got '([^']+)'")


def _token(name: str) -> str:
    return _TOKENS.get(name, name)


def _unclosed(message: str) -> str | None:
    """``{% if %} が閉じられていません（{% endif %} が必要です）`` when Jinja names the block."""
    block = _INNERMOST.search(message)
    if block is None:
        return None
    name = block.group(1)  # every Jinja block closes with end + its name (if → endif)
    return f"{{% {name} %}} が閉じられていません（{{% end{name} %}} が必要です）"


def _unknown_tag(tag: str, message: str) -> str:
    unclosed = _unclosed(message)
    if unclosed is not None:
        return f"{{% {tag} %}} はここに書けません。{unclosed}"
    if tag.startswith("end") or tag in {"else", "elif"}:
        return f"{{% {tag} %}} に対応する開始タグがありません"
    return f"{{% {tag} %}} というタグはありません（使えるのは if・for・set など）"


def template_problem(exc: TemplateSyntaxError) -> str | None:
    """What is wrong with the template, in Japanese (without the line: the caller names it);
    None for a problem without a Japanese wording."""
    message = exc.message or ""
    if message.startswith("Unexpected end of template"):
        return _unclosed(message) or "タグが閉じられないままテンプレートが終わっています"
    if found := _UNKNOWN_TAG.match(message):
        return _unknown_tag(found.group(1), message)
    if found := _OPEN_AT_END.match(message):
        return (
            f"閉じられないままテンプレートが終わっています（{_token(found.group(1))} が必要です）"
        )
    if found := _CHAR.match(message):
        char = found.group(2)
        if char in {"'", '"'}:
            return f"文字列の引用符 {char} が閉じられていません"
        return f"{{{{ … }}}} や {{% … %}} の中に使えない文字「{char}」があります"
    if found := _BRACKET.match(message):
        return (
            f"括弧が閉じられていません（「{found.group(1)}」の前に「{found.group(2)}」が必要です）"
        )
    if found := _TOKEN.match(message):
        expected, got = _token(found.group(1)), _token(found.group(2))
        return f"「{got}」はここに書けません（ここには {expected} が必要です）"
    if found := _EXPRESSION.match(message):
        return f"値か式が必要なところに {_token(found.group(1))} があります（値が書かれていません）"
    return None
