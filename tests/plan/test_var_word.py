"""A plan's ``vars`` have one name wherever a person reads about them: 設定値.

The server's 403 (``設定値「締め月のファイル」``), ``schedule add/list`` (``設定値 締め月: 3``), the
実行 page (``設定値（vars）``), ``plan diff`` (``設定値 tolerance: 1000 → 2000``), the dry run, the
templates and the design page say 設定値, never 変数 (which stays for what is a variable: an
environment variable, a loop's variable, a name in Python code). The source is read as a grep
would, but by its syntax: a message (a string, an f-string, the arguments of one call, the
items of one table entry) that speaks of ``vars`` may not call them 変数.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "keiri_agent"
_VARIABLE = re.compile(r"(?<!環境)(?<!ループ)変数")


def _text(node: ast.AST) -> str | None:
    """The words of a string or an f-string (its literal parts), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_text(part) or " " for part in node.values)
    return None


def _messages(tree: ast.AST) -> Iterator[tuple[int, list[str]]]:
    """Each group of strings a person reads together: a string, one call's arguments, one
    tuple's items, one dict entry."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant | ast.JoinedStr):
            parts = [node]
        elif isinstance(node, ast.Call):
            parts = [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Tuple | ast.List):
            parts = list(node.elts)
        elif isinstance(node, ast.Dict):
            parts = [p for p in (*node.keys, *node.values) if p is not None]
        else:
            continue
        texts = [t for t in map(_text, parts) if t is not None]
        if texts:
            yield node.lineno, texts


def vars_called_variables(source: str) -> list[tuple[int, str]]:
    """The messages of ``source`` that speak of ``vars`` and call them 変数."""
    found = []
    for line, texts in _messages(ast.parse(source)):
        if any("vars" in t for t in texts) and any(_VARIABLE.search(t) for t in texts):
            found.append((line, " / ".join(texts)))
    return found


def test_the_finder_sees_the_words_of_one_message() -> None:
    assert vars_called_variables('PREFIXES = (("vars.", "変数 "),)\n')
    assert vars_called_variables("f'変数で受け取るなら vars.{name} と'\n")
    assert vars_called_variables("add(f\"変数 '{n}' はありません\", '定義されている vars: x')\n")
    assert not vars_called_variables('("vars.", "設定値 ")\n')
    assert not vars_called_variables("hint('環境変数 KEIRI_X を設定', 'vars/env/config')\n")
    assert not vars_called_variables("('ループ変数 item', 'vars')\n")


def test_no_message_calls_a_plans_vars_variables() -> None:
    wrong = {
        f"{path.relative_to(SRC)}:{line}": text
        for path in sorted(SRC.rglob("*.py"))
        for line, text in vars_called_variables(path.read_text(encoding="utf-8"))
    }
    assert wrong == {}, f"{len(wrong)} messages call vars 変数: {wrong}"
