"""How a value is written in a command a message tells a person to type (``keiri-agent
extract 4月の請求書/*.pdf``): as it is, unless the shell would split it or read it otherwise (a
space, a quote, ``$``, ``*``...); then in single quotes, as ``shlex.quote`` writes it. A
Japanese path without such characters stays as the person typed it."""

from __future__ import annotations

import re
import shlex
from typing import Final

__all__ = ["typed"]

# What a POSIX shell reads as it is in an argument: everything but white space and the
# characters it gives a meaning (quotes, $, globs, redirections, separators, ~ first).
_PLAIN: Final = re.compile(r"[^\s'\"\\$`!*?\[\]{}();&|<>#~]+")


def typed(value: str) -> str:
    """``value`` as one argument of a shell command line."""
    return value if _PLAIN.fullmatch(value) else shlex.quote(value)
