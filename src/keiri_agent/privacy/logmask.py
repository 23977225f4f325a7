"""``LogMask``: personal data kept out of logs (run logs, server task logs, server logs).

A log line keeps the kind, never the value: ``〔電話番号〕``, ``〔人名〕`` (no number, so no line
can be matched with a prompt's placeholder). What is masked: every identifier found by its form
(``patterns``), values under a personal label or column header (``headers``), and every value
the run's LLM masking learnt (:meth:`LogMask.learn`, wired by ``privacy.scope.job_scope``),
names included. Names that no model call has seen are not looked for with Sudachi here: a log
line is written for every node and event, and the parser would cost more than the run.
"""

from __future__ import annotations

from keiri_agent.privacy.detect import find_personal, maybe_personal, resolve
from keiri_agent.privacy.kinds import LABELS, PersonalKind, Span
from keiri_agent.privacy.known import KnownValues
from keiri_agent.privacy.scope import current_vault
from keiri_agent.privacy.vault import CLOSE, OPEN

__all__ = ["MAX_REMEMBERED", "MAX_REMEMBERED_CHARS", "LogMask", "mask_log_line"]

MAX_REMEMBERED = 4096  # masked log strings one LogMask remembers
MAX_REMEMBERED_CHARS = 200  # longer strings are masked each time, not remembered


def _labelled(text: str, spans: list[Span]) -> str:
    """``text`` with each span replaced by its kind (``〔電話番号〕``)."""
    parts: list[str] = []
    at = 0
    for span in spans:
        parts += [text[at : span.start], f"{OPEN}{LABELS[span.kind]}{CLOSE}"]
        at = span.end
    parts.append(text[at:])
    return "".join(parts)


class LogMask:
    """Masks personal data in log text; learns the values a run's LLM masking met (and only
    those: what it finds by form is masked, never kept)."""

    def __init__(self) -> None:
        self._known = KnownValues()  # no placeholders here: a log line keeps the kind only
        # Log strings repeat (keys, statuses, node ids): the masked form of short ones is
        # remembered while the known values stay the same (a dict read is atomic).
        self._seen: dict[str, str] = {}
        self._count = 0

    def learn(self, kind: PersonalKind, value: str) -> None:
        self._known.add(value, kind)

    def mask(self, text: str) -> str:
        if len(text) > MAX_REMEMBERED_CHARS:
            return _mask_with(self._known, text)
        count = len(self._known)
        if count != self._count:
            self._seen, self._count = {}, count
        seen = self._seen
        masked = seen.get(text)
        if masked is None:
            masked = _mask_with(self._known, text)
            if len(seen) < MAX_REMEMBERED:
                seen[text] = masked
        return masked


def _mask_with(known: KnownValues, text: str) -> str:
    if not text:
        return text
    if maybe_personal(text):
        spans = resolve([*find_personal(text, names=False), *known.find(text)])
    elif len(known):
        spans = known.find(text)
    else:
        return text
    return _labelled(text, spans) if spans else text


_BY_FORM = LogMask()  # learns nothing: no value is ever taught to it


def mask_log_line(text: str) -> str:
    """A server log line with personal data masked: by form, and, inside a job
    (``privacy.job_scope``), every value the job's LLM masking learnt."""
    vault = current_vault()
    return _mask_with(vault.known, text) if vault is not None else _BY_FORM.mask(text)
