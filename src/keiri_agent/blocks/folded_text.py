"""A YAML folded block (``>-``) read as its author wrote the Japanese in it.

YAML folds each line break of a ``>`` block into a space: right for English, wrong where the
author broke a Japanese sentence (``そろえます`` / ``（単位は`` becomes ``そろえます （単位は``),
and every surface that shows the text (the CLI, the app, docs/blocks.md) would show that space.
:func:`load_yaml` reads a YAML document with the safe loader and joins such a fold without a
space when both the line before and the line after are Japanese (a wide character each side of
the fold); a fold between Latin words, or between Latin and Japanese, keeps its space, and a
space the author typed within a line is kept. Only folds are touched: the block's lines are
re-folded by YAML's own rule (blank lines and more-indented lines keep their line breaks) and
the result must equal the loader's text with every fold a space, else the loader's text stands
(a shape this rule does not follow: nothing is guessed).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

import yaml

__all__ = ["folded_join", "load_yaml"]

# libyaml's safe loader when PyYAML was built with it (its wheels are): the same documents and
# errors as yaml.SafeLoader, about ten times faster; every CLI command reads all specs at start-up.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_HEADER = re.compile(r">([+-]?)([1-9]?)([+-]?)")


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def folded_join(before: str, after: str) -> str:
    """What a fold between the line ``before`` and the line ``after`` becomes: nothing between
    two Japanese (wide) characters, a space otherwise."""
    return "" if _wide(before[-1]) and _wide(after[0]) else " "


def load_yaml(text: str) -> Any:
    """``text`` as YAML (safe loader), its folded blocks joined as Japanese is written."""
    loader = _SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        lines = text.splitlines()
        for scalar in _folded_scalars(node):
            scalar.value = _refolded(scalar, lines)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _folded_scalars(node: yaml.Node) -> list[yaml.ScalarNode]:
    found: list[yaml.ScalarNode] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, yaml.ScalarNode):
            found += [current] if current.style == ">" else []
        elif isinstance(current, yaml.SequenceNode):
            pending += current.value
        elif isinstance(current, yaml.MappingNode):
            pending += [part for pair in current.value for part in pair]
    return found


def _refolded(node: yaml.ScalarNode, lines: list[str]) -> str:
    """``node``'s text with its Japanese folds joined (its own text if the lines do not give it)."""
    header = _HEADER.match(lines[node.start_mark.line], node.start_mark.column)
    body = _block_lines(lines, node.start_mark.line + 1)
    if header is None or not body:
        return str(node.value)
    chomp = header.group(1) or header.group(3)
    if _fold(body, chomp, lambda _before, _after: " ") != node.value:
        return str(node.value)  # a shape this rule does not follow: YAML's own text stands
    return _fold(body, chomp, folded_join)


def _block_lines(lines: list[str], first: int) -> list[str]:
    """The lines of a block scalar beginning at line ``first``, its indentation removed (blank
    lines as empty strings)."""
    indent = next((len(line) - len(line.lstrip(" ")) for line in lines[first:] if line.strip()), 0)
    found: list[str] = []
    for line in lines[first:]:
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent:
            break
        found.append(line[indent:] if line.strip() else "")
    while found and not found[-1]:
        found.pop()
    return found if indent else []


def _fold(body: list[str], chomp: str, join: Callable[[str, str], str]) -> str:
    """YAML's folding of ``body`` (PyYAML's ``scan_block_scalar``), a fold made by ``join``."""
    start = next(index for index, line in enumerate(body) if line)
    chunks = ["\n" * start]
    index = start
    while index < len(body):
        line = body[index]
        chunks.append(line)
        following = index + 1
        while following < len(body) and not body[following]:
            following += 1
        breaks = following - index - 1
        if following < len(body):
            nxt = body[following]
            if line[:1] not in (" ", "\t") and nxt[:1] not in (" ", "\t"):
                chunks.append(join(line, nxt) if not breaks else "")
            else:
                chunks.append("\n")
            chunks.append("\n" * breaks)
        index = following
    if chomp != "-":
        chunks.append("\n")
    return "".join(chunks)
