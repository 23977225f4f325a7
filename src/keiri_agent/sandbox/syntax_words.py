"""Why Python could not read a piece of code, in Japanese.

Python words its syntax errors in English (``invalid syntax. Perhaps you forgot a comma?``,
``'(' was never closed``, ``invalid character '、' (U+3001)``); the person who runs a script in
the sandbox (``keiri-agent sandbox run``) or reads why an analysis' code did not run sees them.
:func:`syntax_problem` says each kind CPython reports in Japanese, keeping the code's own
characters (the bracket, the character that cannot stand there, the statement, the line); a kind
this table does not know is said as "Python の文法に合いません" (the position and the line of
code say where). Python's own text stays in the BlockError's ``details['error']`` (the
sandbox's outcome carries the Japanese message; the model repairing analysis code reads it too).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["syntax_problem"]

GENERIC: Final = "Python の文法に合いません"
# CPython's messages (3.11–3.13), most specific first: pattern → Japanese ({1}, {2}: the groups).
_PROBLEMS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(pattern), japanese)
    for pattern, japanese in (
        (r"Perhaps you forgot a comma", f"{GENERIC}（カンマ「,」が抜けていませんか）"),
        (r"Maybe you meant '==' or ':='", f"{GENERIC}（比べるなら「==」です）"),
        (r"^unterminated triple-quoted string", "三重引用符の文字列が閉じていません"),
        (r"^unterminated (?:string|f-string)", "文字列の引用符が閉じていません"),
        (r"^EOL while scanning string", "文字列の引用符が閉じていません"),
        (r"^'(.)' was never closed", "「{1}」が閉じていません"),
        (r"^unmatched '(.)'", "「{1}」に対応する開き括弧がありません"),
        (
            r"^closing parenthesis '(.)' does not match opening parenthesis '(.)'",
            "閉じ括弧「{1}」が開き括弧「{2}」と合いません",
        ),
        (r"^closing parenthesis '(.)'", "閉じ括弧「{1}」が開き括弧と合いません"),
        (r"^invalid character '(.)' \((U\+[0-9A-F]+)\)", "使えない文字「{1}」（{2}）があります"),
        (r"^invalid non-printable character (U\+[0-9A-F]+)", "見えない文字（{1}）があります"),
        (r"null bytes", "コードに NUL 文字があります"),
        (r"^expected an indented block after '?(\w+)'?", "{1} の後に字下げしたブロックが必要です"),
        (r"^expected an indented block", "字下げしたブロックが必要です"),
        (r"^unexpected indent", "ここで字下げはできません"),
        (r"^unindent does not match", "字下げの深さが外側のどの行とも合いません"),
        (r"^inconsistent use of tabs and spaces", "字下げにタブと空白が混ざっています"),
        (r"^expected '(.+?)'", "「{1}」が必要です"),
        (r"^invalid (?:decimal|hexadecimal|octal|binary|digit)", "数値の書き方が正しくありません"),
        (r"^leading zeros in decimal", "数値の先頭に 0 は付けられません"),
        (r"^unexpected EOF|^unexpected end of", "コードが途中で終わっています"),
        (r"^unexpected character after line continuation", "行をつなぐ「\\」の後に文字があります"),
        (r"^Missing parentheses in call to '(\w+)'", "{1} の呼び出しに括弧「( )」がありません"),
        (r"^'(\w+)' outside (?:async )?(?:function|loop)", "{1} は書ける場所の外にあります"),
        (r"^cannot assign to|^cannot delete", "代入できないものに代入しています"),
        (r"^positional argument follows keyword", "名前付きの引数の後に名前なしの引数があります"),
        (r"^keyword argument repeated|^duplicate argument", "同じ名前の引数が二つあります"),
        (r"^f-string", "f 文字列の書き方が正しくありません"),
        (r"^invalid syntax", GENERIC),
    )
)


def syntax_problem(reason: str) -> str:
    """What Python's syntax error ``reason`` (``SyntaxError.msg``) means, in Japanese."""
    for pattern, japanese in _PROBLEMS:
        found = pattern.search(reason)
        if found is not None:
            return japanese.format(None, *found.groups())
    return GENERIC
