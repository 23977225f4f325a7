"""Tolerant extraction from what real models reply: a JSON object, and fenced code blocks.

Models asked for JSON wrap it in prose ("以下が結果です: {...}") or in a ```` ```json ```` fence;
models asked for code put it in one or several ```` ```python ```` fences between explanations.
These helpers find what was meant without guessing at content: a JSON object is taken only
when it decodes as one, and code blocks are returned all of them, in the order written.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "CODE_LANGUAGES",
    "extract_code_blocks",
    "extract_json_object",
    "strip_code_fences",
]

# Tags of fenced blocks that hold Python; other tagged blocks (```text, ```json, ```output)
# are examples or data, not code to run.
CODE_LANGUAGES = frozenset({"", "python", "py", "python3", "py3"})
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n`]*\n(.*?)```", re.S)


def _fenced(text: str) -> list[tuple[str, str]]:
    """(language tag, body) of every fenced block, in order."""
    return [(match.group(1).lower(), match.group(2)) for match in _FENCE.finditer(text)]


def extract_code_blocks(text: str) -> list[str]:
    """Every Python code block of a reply, in order (untagged blocks count as Python).

    A reply without any fence gives an empty list: prose is an answer, not code.
    """
    blocks = [body for tag, body in _fenced(text) if tag in CODE_LANGUAGES]
    return [block for block in blocks if block.strip()]


def strip_code_fences(code: str) -> str:
    """``code`` without Markdown fences: a field meant to hold bare code sometimes holds a
    fenced block (or prose and blocks); the Python blocks, joined in order, are the code."""
    if "```" not in code:
        return code
    blocks = extract_code_blocks(code)
    if not blocks:
        return code
    return "\n".join(block.rstrip("\n") for block in blocks) + "\n"


def _first_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply holds: the whole text, a fenced block, or the first object
    embedded in prose (in that order); None when there is none."""
    stripped = text.strip()
    if not stripped:
        return None
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        pass
    else:
        return value if isinstance(value, dict) else None
    for _tag, body in _fenced(text):
        found = _first_object(body)
        if found is not None:
            return found
    return _first_object(text)
