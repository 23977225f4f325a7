"""Task tokens out of log text: the value of every ``token`` query parameter becomes ``***``.

Download links and the SSE URL carry a per-task token (``?token=...``, see ``auth``), and the
server reads the query the way Starlette does (``urllib.parse``: ``+`` is a space, ``%74oken``
is ``token``). Matching the literal ``token=`` is not enough: ``?%74oken=...`` authenticates
too. :func:`redact` therefore reads every query-like part of a text as parameters:

- the text is cut at whitespace into runs (a URL has no raw whitespace); in a run, a parameter
  starts at its beginning and after every ``?``, ``&``, ``;`` and ``#`` (queries, fragments,
  and the ``;`` some parsers split on);
- a parameter whose name, percent-decoded with ``urllib.parse.unquote_plus`` until it no longer
  changes (at most :data:`MAX_DECODE_ROUNDS` times: double encoding too) and stripped of
  surrounding spaces and quotes, is ``token`` in any letter case has its value replaced, up to
  the next ``&`` or the end of the run (wider than any parser's value: ``?``, ``;`` and ``#``
  may belong to it);
- a parameter whose decoded value itself holds a token parameter (a URL inside a URL) has its
  whole value replaced.

Redacting too much is harmless; leaving a token is not.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

__all__ = ["MAX_DECODE_ROUNDS", "REDACTED", "TOKEN_PARAM", "redact"]

TOKEN_PARAM = "token"
REDACTED = "***"
MAX_DECODE_ROUNDS = 4  # percent-decoding rounds of a name or value (nested encodings)
_RUN_RE = re.compile(r"\S+")
_STARTS = frozenset("?&;#")  # a parameter starts after one of these
_NAME_PADDING = " \t\"'`([{<"


def _decoded(text: str) -> str:
    for _ in range(MAX_DECODE_ROUNDS):
        plain = unquote_plus(text)
        if plain == text:
            break
        text = plain
    return text


def _is_token_name(name: str) -> bool:
    return _decoded(name).strip(_NAME_PADDING).casefold() == TOKEN_PARAM


def _holds_token(value: str, depth: int) -> bool:
    """Whether ``value``, decoded, is text with a token parameter in it (a nested URL)."""
    if depth >= MAX_DECODE_ROUNDS or "=" not in (plain := _decoded(value)):
        return False
    return _redact(plain, depth + 1) != plain


def _redact_run(run: str, depth: int) -> str:
    out: list[str] = []
    copied = 0  # run[:copied] is in out
    start = 0  # where the current parameter starts
    while start < len(run):
        end = start
        while end < len(run) and run[end] not in _STARTS:
            end += 1
        name, equals, value = run[start:end].partition("=")
        value_start = start + len(name) + 1
        if equals and _is_token_name(name):
            end = run.find("&", value_start)
            end = len(run) if end < 0 else end
            out += [run[copied:value_start], REDACTED]
            copied = end
        elif equals and _holds_token(value, depth):
            out += [run[copied:value_start], REDACTED]
            copied = end
        start = end + 1
    out.append(run[copied:])
    return "".join(out)


def _redact(text: str, depth: int) -> str:
    return _RUN_RE.sub(lambda match: _redact_run(match.group(), depth), text)


def redact(text: str) -> str:
    """``text`` with the value of every ``token`` query parameter, however it is spelled and
    encoded, replaced by ``***``."""
    if "=" not in text:  # no parameter at all: most log lines
        return text
    return _redact(text, 0)
