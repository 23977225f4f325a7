"""``Vault``: the placeholders of one job, kept in memory, and the two ways through them.

:meth:`Vault.mask` replaces each piece of personal data in a text by a placeholder that names
its kind and a number (``〔人名1〕``, ``〔電話番号2〕``); :meth:`Vault.restore` puts the real values
back where a reply uses them. The same value is the same placeholder for the vault's whole
life (one plan run, one analysis turn, one help-desk question, one server task: see
``privacy.scope``), whatever its spacing or width (``長谷川 美咲`` and ``長谷川　美咲`` are one
person); a value once masked is masked wherever it occurs again, even where nothing around it
says what it is. Tables given to :meth:`learn_table` teach the vault the cells of their
personal columns (by header) before any text is sent. A number a text gives as a business
number (in a 会員番号 column, after 受付番号) stays one for the job: where a later text shows it
without its label (a printed table cut above its header), it is not taken for a マイナンバー or a
card, unless the job knows it as personal already.

The mapping never leaves the vault: nothing here writes it, logs it or returns it whole.
Listeners (the run's log redactor) are told each value as it is learnt, so that the logs of
the run mask it too.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.privacy.detect import NUMBER_KINDS, Found, detect, digits_of, resolve
from keiri_agent.privacy.headers import header_kind, holds_no_one
from keiri_agent.privacy.kinds import LABELS, PersonalKind, Span
from keiri_agent.privacy.known import MIN_KNOWN_CHARS, KnownValues

__all__ = [
    "MAX_CACHED_TEXTS",
    "MAX_LEARNED_CELLS",
    "MIN_KNOWN_CHARS",
    "Masked",
    "Vault",
    "placeholder_pattern",
]

MAX_LEARNED_CELLS = 200_000  # distinct cells one table teaches (a ledger's name column fits)
MAX_CACHED_TEXTS = 256  # texts whose detection is remembered (a conversation is re-sent whole)
MAX_CACHED_CHARS = 200_000  # texts longer than this are not remembered
MAX_BUSINESS_NUMBERS = 100_000  # business numbers a job remembers (beyond, none is added)
MIN_BUSINESS_DIGITS = 10  # shorter numbers (amounts, counts) are no identifier's look-alike
OPEN, CLOSE = "〔", "〕"

_BY_LABEL = {label: kind for kind, label in LABELS.items()}
Listener = Callable[[PersonalKind, str], None]


def placeholder_pattern() -> re.Pattern[str]:
    """A placeholder as a model may write it back: ``〔人名1〕``, also in ``[]``, ``［］``,
    ``【】`` or ``<>`` and with spaces inside."""
    labels = "|".join(map(re.escape, sorted(_BY_LABEL, key=len, reverse=True)))
    return re.compile(rf"[〔\[［【<]\s*({labels})\s*([0-9]+)\s*[〕\]］】>]")


_PLACEHOLDER = placeholder_pattern()


# Spaces, hyphens and brackets, dropped from a value's key (str.translate: a table's cells are
# learnt by the hundred thousand).
_NOT_IN_KEY = dict.fromkeys(map(ord, " \t\n\r\f\v\u3000-‐‑‒–—―−ー()"))


def _key(value: str) -> str:
    """What makes two spellings one value: width, case, spaces and hyphens do not count."""
    if not unicodedata.is_normalized("NFKC", value):
        value = unicodedata.normalize("NFKC", value)
    normal = value.lower()
    return normal.translate(_NOT_IN_KEY) or normal


@dataclass(frozen=True)
class Masked:
    """A masked text and how many values of each kind were replaced in it."""

    text: str
    counts: Mapping[str, int]


class Vault:
    """Placeholders ↔ values for one job; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, str] = {}  # value key → placeholder
        self._values: dict[str, str] = {}  # placeholder → the value as first seen
        self._kinds: dict[str, PersonalKind] = {}  # placeholder → kind
        self._numbers: Counter[PersonalKind] = Counter()
        self._spellings = KnownValues()  # every spelling seen → kind, found again in texts
        self._listeners: list[Listener] = []
        self._cache: OrderedDict[str, Found] = OrderedDict()
        self._business: set[str] = set()  # digits of the numbers given as business numbers

    # --- what the vault knows -----------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(kind, value)`` for every value learnt from now on, and for those
        already known."""
        with self._lock:
            if listener in self._listeners:
                return
            self._listeners.append(listener)
            known = self._spellings.items()
        for value, kind in known:
            listener(kind, value)

    def _learn(self, kind: PersonalKind, value: str) -> tuple[str, bool]:
        """(placeholder, whether the spelling is new); the caller holds the lock."""
        key = _key(value)
        placeholder = self._by_key.get(key)
        if placeholder is None:
            self._numbers[kind] += 1
            placeholder = f"{OPEN}{LABELS[kind]}{self._numbers[kind]}{CLOSE}"
            self._by_key[key] = placeholder
            self._values[placeholder] = value
            self._kinds[placeholder] = kind
            known_kind = kind
        else:
            known_kind = self._kinds[placeholder]
        return placeholder, self._spellings.add(value, known_kind)

    def learn(self, kind: PersonalKind, value: str) -> str:
        """The placeholder of ``value`` (a new one the first time it is seen)."""
        with self._lock:
            placeholder, new = self._learn(kind, value)
            listeners = list(self._listeners) if new else []
        for listener in listeners:
            listener(kind, value)
        return placeholder

    def learn_table(self, table: Any) -> int:
        """Learn the cells of the personal columns (by header) of ``table``: a DataFrame, a
        ``documents.Table`` or a list of records. Returns the number of values learnt."""
        learnt = 0
        new: list[tuple[PersonalKind, str]] = []
        for kind, values in _personal_cells(table):
            cells = [
                text
                for v in values
                if len(text := str(v).strip()) >= MIN_KNOWN_CHARS and not holds_no_one(kind, text)
            ]
            cells = cells[: MAX_LEARNED_CELLS - learnt]
            known = self._spellings  # a spelling seen before has its placeholder already
            with self._lock:  # once per column, not once per cell
                new.extend(
                    (kind, text)
                    for text in cells
                    if text not in known and self._learn(kind, text)[1]
                )
            learnt += len(cells)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            for kind, text in new:
                listener(kind, text)
        return learnt

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind the vault holds (never the values)."""
        with self._lock:
            return {kind.value: n for kind, n in sorted(self._numbers.items()) if n}

    def __len__(self) -> int:
        return len(self._values)  # one read of a dict's size: atomic, no lock needed

    @property
    def known(self) -> KnownValues:
        """Every spelling learnt, with its kind (for the logs, which keep the kind only)."""
        return self._spellings

    # --- masking and restoring ----------------------------------------------------------------

    def _detected(self, text: str, names: bool) -> list[Span]:
        found = self._found(text, names)
        business = [d for d in found.business if len(d) >= MIN_BUSINESS_DIGITS]
        with self._lock:
            if business and len(self._business) < MAX_BUSINESS_NUMBERS:
                self._business.update(business)
            if not self._business:
                return found.spans
            return [
                s
                for s in found.spans
                if s.kind not in NUMBER_KINDS
                or text[s.start : s.end] in self._spellings
                or digits_of(text[s.start : s.end]) not in self._business
            ]

    def _found(self, text: str, names: bool) -> Found:
        if len(text) > MAX_CACHED_CHARS or not names:
            return detect(text, names=names)
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        found = detect(text, names=names)
        with self._lock:
            self._cache[text] = found
            while len(self._cache) > MAX_CACHED_TEXTS:
                self._cache.popitem(last=False)
        return found

    def spans(self, text: str, *, names: bool = True, detect: bool = True) -> list[Span]:
        """The personal data in ``text``: what detection finds (``detect``; names with Sudachi
        when ``names``) and every value already known."""
        found = self._detected(text, names) if detect else []
        known = self._spellings.find(text)
        if known:
            found = resolve([*found, *known])
        return found

    def mask(
        self,
        text: str,
        *,
        names: bool = True,
        detect: bool = True,
        numbered: bool = True,
        view: str | None = None,
    ) -> Masked:
        """``text`` with every piece of personal data replaced by its placeholder.

        ``numbered=False`` writes the kind alone (``〔人名〕``): for text that is never read back
        (embeddings, logs), so the same text always gives the same result. ``view``: the text
        to look in, as long as ``text`` (JSON text with its escapes blanked: ``privacy.structured``).
        """
        if view is not None and len(view) != len(text):
            raise ValueError("view must be as long as the text")
        look = text if view is None else view
        spans = self.spans(look, names=names, detect=detect)
        if not spans:
            return Masked(text, {})
        if detect and any(look[s.start : s.end] not in self._spellings for s in spans):
            # a value found here for the first time is masked wherever else it is in this text
            # too (社員番号 E-0007、E-0007 の残業), as it will be in every text after
            for span in spans:
                self.learn(span.kind, text[span.start : span.end])
            spans = resolve([*spans, *self._spellings.find(look)])
        parts: list[str] = []
        counts: Counter[str] = Counter()
        at = 0
        for span in spans:
            value = text[span.start : span.end]
            placeholder = self.learn(span.kind, value)
            parts.append(text[at : span.start])
            parts.append(placeholder if numbered else f"{OPEN}{LABELS[span.kind]}{CLOSE}")
            counts[span.kind.value] += 1
            at = span.end
        parts.append(text[at:])
        return Masked("".join(parts), dict(counts))

    def restore(self, text: str) -> str:
        """``text`` with the placeholders this vault gave out replaced by their values."""
        if not text or not self._values:
            return text

        def value_of(match: re.Match[str]) -> str:
            placeholder = f"{OPEN}{match.group(1)}{match.group(2)}{CLOSE}"
            return self._values.get(placeholder, match.group())

        return _PLACEHOLDER.sub(value_of, text)


def _personal_cells(table: Any) -> Iterable[tuple[PersonalKind, Iterable[Any]]]:
    """(kind, distinct non-empty cells) of each personal column of ``table``."""
    frame = getattr(table, "frame", table)
    columns = getattr(frame, "columns", None)
    if columns is not None and hasattr(frame, "__getitem__"):
        for column in list(columns):
            kind = header_kind(str(column))
            if kind is None:
                continue
            series = frame[column]
            if getattr(series, "ndim", 1) != 1:
                continue  # duplicate labels give a frame; its columns come one by one
            yield kind, (v for v in series.dropna().unique().tolist() if str(v).strip())
        return
    if isinstance(table, list):
        by_column: dict[str, set[str]] = {}
        for record in table[:MAX_LEARNED_CELLS]:
            if not isinstance(record, Mapping):
                continue
            for column, value in record.items():
                if value is not None and header_kind(str(column)) is not None:
                    by_column.setdefault(str(column), set()).add(str(value))
        for column, values in by_column.items():
            kind = header_kind(column)
            assert kind is not None
            yield kind, values
