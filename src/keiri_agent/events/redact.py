"""Secrets kept out of events: values registered with a :class:`Redactor` are masked.

A plan run registers every value it reads from the environment (``${env.X}``), config values
under secret-looking keys (``password``, ``token``, ``api_key``, ...) and the API keys of the
settings. Its :class:`~keiri_agent.events.EventStream` masks them in every event before the
event is numbered, logged, kept or handed to a listener, so the run log, the server's copy of
the events (SSE) and everything built from them never hold the value.

Values of at least :data:`MIN_SUBSTRING_CHARS` characters are masked wherever they occur inside
a string; shorter ones only where a whole string equals them (masking every "ab" inside other
text would destroy the log and protect nothing).

Personal data is masked in the same walk (:meth:`Redactor.clean`, what the stream applies to
every event): the kinds ``keiri_agent.privacy`` finds by form or label become their kind
(``〔電話番号〕``), and so does every value the run's LLM masking learnt
(:meth:`Redactor.learn_personal`, names included). Only the log is cleaned of it: a run's
result (:meth:`Redactor.redact`, the ``--json`` output) is the user's own and keeps the values,
and :meth:`Redactor.contains` still asks about secrets only (a node's outputs holding a phone
number are stored for a resume like any other).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

from keiri_agent.errors import BlockError
from keiri_agent.events.models import is_table
from keiri_agent.privacy import LogMask, PersonalKind

__all__ = ["MASK", "MIN_SUBSTRING_CHARS", "SECRET_KEY_RE", "Redactor"]

T = TypeVar("T")

MASK = "****"
MIN_SUBSTRING_CHARS = 4
# Config keys whose values are treated as secrets.
SECRET_KEY_RE = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|private[_-]?key|credential|auth",
    re.IGNORECASE,
)


class Redactor:
    """A growing set of secret strings and the walk that masks them."""

    def __init__(self) -> None:
        self._exact: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._long: set[str] = set()
        self._lock = threading.Lock()
        self._personal = LogMask()

    @property
    def active(self) -> bool:
        return bool(self._exact)

    def add(self, value: Any) -> None:
        """Register every string in ``value`` (a string, or strings inside lists and mappings)."""
        found = [s for s in _strings(value, deep=True) if s and s != MASK]
        if not found or all(s in self._exact for s in found):
            return
        with self._lock:
            self._exact.update(found)
            self._long.update(s for s in found if len(s) >= MIN_SUBSTRING_CHARS)
            if self._long:
                # Longest first, so a secret that contains another is masked whole.
                ordered = sorted(self._long, key=len, reverse=True)
                self._pattern = re.compile("|".join(map(re.escape, ordered)))

    def add_named(self, name: str, value: Any) -> None:
        """Register ``value`` when ``name`` (a config key) looks like it holds a secret."""
        if SECRET_KEY_RE.search(name):
            self.add(value)

    def learn_personal(self, kind: PersonalKind, value: str) -> None:
        """Mask ``value`` (personal data of ``kind`` met by the run's LLM masking) in the log."""
        self._personal.learn(kind, value)

    def clean(self, value: T) -> T:
        """``value`` as a log may keep it: secrets masked, and personal data too."""
        return cast(T, self._clean(value))

    def _clean(self, value: Any) -> Any:
        # Called for every string of every logged event: exact types first (no ABC checks).
        kind = type(value)
        if kind is str:
            return self._personal.mask(self.mask_text(value) if self._exact else value)
        if kind is dict:
            clean = self._clean
            return {clean(k): clean(v) for k, v in value.items()}
        if kind is list:
            clean = self._clean
            return [clean(v) for v in value]
        if kind in (int, float, bool) or value is None:
            return value
        if isinstance(value, str):
            return self._clean(str(value))
        if isinstance(value, Mapping):
            return {self._clean(k): self._clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._clean(v) for v in value)
        return value

    def mask_text(self, text: str) -> str:
        if text in self._exact:
            return MASK
        pattern = self._pattern
        return pattern.sub(MASK, text) if pattern is not None else text

    def contains(self, value: Any) -> bool:
        """Whether any registered secret occurs in ``value`` (strings, containers, tables)."""
        if not self._exact:
            return False
        return any(self.mask_text(s) != s for s in _strings(value, deep=True))

    def redact(self, value: T) -> T:
        """``value`` with secrets masked (JSON-like values; others are returned unchanged)."""
        if not self._exact:
            return value
        if isinstance(value, str):
            return cast(T, self.mask_text(value))
        if isinstance(value, Mapping):
            return cast(T, {self.redact(k): self.redact(v) for k, v in value.items()})
        if isinstance(value, list | tuple):
            return cast(T, type(value)(self.redact(v) for v in value))
        return value

    def scrub_error(self, error: BlockError) -> BlockError:
        """Mask secrets in an error's text, details and input snapshot, in place."""
        if self._exact:
            error.message = self.mask_text(error.message)
            error.hint = self.mask_text(error.hint)
            error.details = self.redact(error.details)
            error.input_snapshot = self.redact(error.input_snapshot)
            error.args = tuple(self.redact(list(error.args)))
        return error


def _strings(value: Any, *, deep: bool = False) -> Iterable[str]:
    """The strings inside ``value``; ``deep`` also looks into tables and byte strings."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif deep and isinstance(item, bytes | bytearray):
            yield bytes(item).decode("utf-8", "replace")
        elif deep and is_table(item):
            stack.append(item.frame)
        elif deep and type(item).__name__ == "DataFrame":
            stack.extend(str(c) for c in item.columns)
            for column in item.columns:
                if (
                    item[column].dtype.kind in "OSU"
                ):  # text columns; numbers in tables are not searched
                    stack.extend(item[column].astype(str).unique().tolist())
        elif deep and isinstance(item, int | float) and not isinstance(item, bool):
            yield str(item)
