"""Finding a library's English in what a user is shown (CLI output, API error bodies, the app).

A library speaks English: Click and Typer (``Invalid value for``, ``No such option``), Pydantic
(``Input should be``, ``Field required``), Starlette (``Not Found``), Python (a traceback) and
the OS (``[Errno 2] No such file or directory``). :func:`english_of` finds those words, and any
other phrase of two English words with a lower-case one, once the names a user types or reads
as names are taken out: quoted text, options, paths, settings, ids (anything with punctuation or
a digit) and CONSTANT names, plus the words the caller allows (commands a user types).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache
from typing import Any

__all__ = ["LIBRARY_WORDS", "cli_words", "english_of"]

# What libraries say, word for word (``Error:`` as Click's lead; ``SyntaxError:`` is a name).
LIBRARY_WORDS = re.compile(
    r"Usage:|Try '|\bError:|Traceback|Errno|No such|Permission denied|Is a directory|Not a"
    r" directory|File exists|Invalid value|Missing (?:argument|option|parameter|command)"
    r"|Got unexpected|is not (?:a valid|one of)|does not exist|requires an argument"
    r"|Input should|Field required|Extra inputs|Value error|validation error|decode error"
    r"|unable to parse|Not Found|Method Not Allowed|Invalid file|Aborted"
)
_NAMES = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\S*[-_./=<>|@\\$\d\[\]{}:]\S*|\b[A-Z][A-Z0-9_]+\b")
_PHRASE = re.compile(r"\b[A-Za-z]{2,}(?: [A-Za-z]{2,})+\b")
_LOWER_WORD = re.compile(r"\b[a-z]{2,}\b")


def english_of(text: str, *, allowed: Collection[str] = ()) -> list[str]:
    """The library English ``text`` shows; words in ``allowed`` are names, not English."""
    found: list[str] = LIBRARY_WORDS.findall(text)
    for phrase in _PHRASE.findall(_NAMES.sub(" ", text)):
        if any(word not in allowed for word in _LOWER_WORD.findall(phrase)):
            found.append(phrase)
    return found


@cache
def cli_words() -> frozenset[str]:
    """The words of every ``keiri-agent`` command (``plan``, ``run``, ``dry``...) and of the
    other programs a message tells a user to type (``streamlit run``): names, not English."""
    from typer.main import get_command

    from keiri_agent.cli import app

    words = {"streamlit"}

    def walk(command: Any) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            words.update(name.split("-"))
            walk(sub)

    walk(get_command(app))
    return frozenset(words)
