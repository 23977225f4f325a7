"""The hash chain of a run log: a line changed, removed or added afterwards shows, with its place.

Every line a chained :class:`~keiri_agent.events.sink.JsonlSink` writes is its JSON object with
one more key, ``chain``, the last one::

    chain(line n) = SHA-256( chain(line n-1) + "\\n" + text of line n without its chain key )

with :data:`GENESIS` before the first line. A line's chain value therefore hashes the previous
line's (which hashed the one before it...): one changed character changes it, and it no longer
matches what the line says. The sink keeps the newest value; when a run ends, its run record
keeps the number of lines and the last value (:class:`Seal`), so lines cut from the end or added
after it show as well.

:func:`verify_lines` reads a log once and names every finding by its line number (1-based, as an
editor counts) and, where the line has one, its event id: a line whose text does not give its
chain value (changed), event ids that jump (lines removed before a line), lines after the sealed
end (appended), a sealed end that is missing (lines cut from the end). One changed line is named
once: the line after it is checked against the value the changed line states and against the one
its text gives, so a change to either part of a line does not blame its neighbour.

Readers of the log (``events.models.parse_event``) drop the ``chain`` key: an event read back
equals the event written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CHAIN_KEY",
    "GENESIS",
    "ChainFinding",
    "ChainReport",
    "FindingKind",
    "Seal",
    "chain_line",
    "link",
    "split_line",
    "verify_lines",
]

CHAIN_KEY = "chain"
GENESIS = hashlib.sha256(b"keiri-agent run log").hexdigest()  # the value before line 1
_SUFFIX = re.compile(r'(?:, )?"chain": "([0-9a-f]{64})"\}$')

FindingKind = Literal["altered", "unchained", "removed", "appended", "truncated", "end", "torn"]
# Kinds that say the log is not as it was written; "torn" is a crash's cut tail (readers drop it).
TAMPER_KINDS = frozenset({"altered", "unchained", "removed", "appended", "truncated", "end"})


def link(previous: str, text: str) -> str:
    """The chain value of a line with ``text`` after a line whose value is ``previous``."""
    return hashlib.sha256(f"{previous}\n{text}".encode()).hexdigest()


def chain_line(text: str, previous: str) -> tuple[str, str]:
    """``(line, value)``: ``text`` (one JSON object, no newline) with its chain value added."""
    if not text.endswith("}"):
        raise ValueError("a chained log line is one JSON object")
    value = link(previous, text)
    body = text[:-1].rstrip()
    sep = "" if body.endswith("{") else ", "
    return f'{body}{sep}"{CHAIN_KEY}": "{value}"}}', value


def split_line(line: str) -> tuple[str, str | None]:
    """``(text, value)`` of a chained line: the text the value was computed over, and the value
    (None when the line has no chain value at its end)."""
    match = _SUFFIX.search(line)
    if match is None:
        return line, None
    head = line[: match.start()]
    return (head + "}" if head != "{" else "{}"), match[1]


@dataclass(frozen=True)
class Seal:
    """What a run record keeps of its finished log: how many lines, and the last chain value."""

    lines: int
    digest: str


@dataclass(frozen=True)
class ChainFinding:
    """One thing wrong with a log: ``kind``, the line it is at (1-based), and how many lines."""

    kind: FindingKind
    line: int
    count: int = 1
    event_id: int | None = None
    first_missing_id: int | None = None  # removed: the ids that are gone
    last_missing_id: int | None = None
    expected_lines: int | None = None  # truncated/end: what the seal says

    @property
    def tampered(self) -> bool:
        return self.kind in TAMPER_KINDS

    def describe(self) -> str:
        """The finding in Japanese, with its position."""
        at = f"{self.line} 行目" + (f"（イベント id {self.event_id}）" if self.event_id else "")
        if self.kind == "altered":
            return f"{at}が書き換えられています（行の内容がハッシュチェーンの値と合いません）。"
        if self.kind == "unchained":
            return f"{at}にハッシュチェーンの値がありません（後から書き足されたか、書き換えられた行です）。"
        if self.kind == "removed":
            ids = (
                f"イベント id {self.first_missing_id}〜{self.last_missing_id}"
                if self.first_missing_id != self.last_missing_id
                else f"イベント id {self.first_missing_id}"
            )
            return f"{self.line} 行目の前の {self.count} 行が削除されています（{ids}）。"
        if self.kind == "appended":
            return f"{at}は実行の終了後に書き足された行です（実行記録の最終行より後）。"
        if self.kind == "truncated":
            return (
                f"末尾の {self.count} 行が削除されています（実行記録では {self.expected_lines} 行、"
                f"ログは {self.line - 1} 行）。"
            )
        if self.kind == "end":
            return (
                f"ログの終わりが実行記録と合いません（実行記録では {self.expected_lines} 行で、"
                "その最終行のハッシュがログのどの行にもありません）。"
            )
        return f"{at}が途中で切れています（書き込み中に異常終了した実行の最終行。読むときは除かれます）。"

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"kind": self.kind, "line": self.line, "count": self.count}
        for name in ("event_id", "first_missing_id", "last_missing_id", "expected_lines"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        data["tampered"] = self.tampered
        data["message"] = self.describe()
        return data


@dataclass
class ChainReport:
    """The result of :func:`verify_lines`: the lines read, the last chain value, the findings."""

    lines: int = 0
    last: str | None = None
    findings: list[ChainFinding] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        """No finding says the log was changed (a crash's torn tail is not a change)."""
        return not any(f.tampered for f in self.findings)


@dataclass(frozen=True)
class _Line:
    number: int
    text: str
    value: str | None
    event_id: int | None
    torn: bool


def _event_id(text: str) -> int | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    found = data.get("id") if isinstance(data, dict) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def _lines(raw_lines: Iterable[bytes]) -> Iterator[_Line]:
    for number, raw in enumerate(raw_lines, start=1):
        torn = not raw.endswith(b"\n")
        line = raw.rstrip(b"\n").decode("utf-8", errors="replace")
        if not line.strip() and torn:
            return
        text, value = split_line(line)
        yield _Line(number, text, value, _event_id(text), torn)


def verify_lines(
    raw_lines: Iterable[bytes], seal: Seal | None = None, *, first_id: int = 1
) -> ChainReport:
    """Check a chained log, given as its raw lines (newline included, as ``readline`` returns
    them); ``seal``: what its run record keeps (None: a run that has not ended, or has no
    record); ``first_id``: the id of the log's first event (1 for a run log)."""
    report = ChainReport()
    candidates = {GENESIS}
    previous_id: int | None = first_id - 1
    sealed_at: int | None = None  # the line whose value the seal names
    last_flagged = 0
    stream = _lines(raw_lines)
    current = next(stream, None)
    while current is not None:
        upcoming = next(stream, None)
        if current.torn and upcoming is None and seal is None:
            report.findings.append(ChainFinding("torn", current.number))
            break
        report.lines = current.number
        if current.value is None:
            report.findings.append(
                ChainFinding("unchained", current.number, event_id=current.event_id)
            )
            last_flagged = current.number
            candidates |= {link(c, current.text) for c in candidates}
        else:
            expected = {link(c, current.text) for c in candidates}
            if current.value not in expected:
                report.findings.append(_break(current, upcoming, previous_id))
                last_flagged = current.number
                candidates = {current.value} | expected
            else:
                candidates = {current.value}
            report.last = current.value
            if seal is not None and sealed_at is None and current.value == seal.digest:
                sealed_at = current.number
        if current.event_id is not None:
            previous_id = current.event_id
        current = upcoming
    if seal is not None:
        report.findings = _against_seal(report, seal, sealed_at, last_flagged)
    return report


def _break(line: _Line, upcoming: _Line | None, previous_id: int | None) -> ChainFinding:
    """A line whose value its text does not give: lines removed before it when the event ids
    jump there (and go on from it), else the line itself was changed."""
    gap = (
        line.event_id is not None
        and previous_id is not None
        and line.event_id > previous_id + 1
        and (upcoming is None or upcoming.event_id in (None, line.event_id + 1))
    )
    if gap:
        assert line.event_id is not None
        assert previous_id is not None
        return ChainFinding(
            "removed",
            line.number,
            count=line.event_id - previous_id - 1,
            first_missing_id=previous_id + 1,
            last_missing_id=line.event_id - 1,
        )
    return ChainFinding("altered", line.number, event_id=line.event_id)


def _against_seal(
    report: ChainReport, seal: Seal, sealed_at: int | None, last_flagged: int
) -> list[ChainFinding]:
    """The findings with the seal's: lines after the sealed end (appended), or a sealed end
    that is gone (lines cut from the end, or the end changed)."""
    found = report.findings
    if sealed_at is not None:
        # Every line after the sealed end was added, chained or not: named once, as appended.
        kept = [f for f in found if f.line <= sealed_at]
        return kept + [ChainFinding("appended", n) for n in range(sealed_at + 1, report.lines + 1)]
    if last_flagged == report.lines and report.lines:
        return found  # the last line is already named as changed: that is why the end differs
    if report.lines < seal.lines:
        cut = seal.lines - report.lines
        return [
            *found,
            ChainFinding("truncated", report.lines + 1, count=cut, expected_lines=seal.lines),
        ]
    return [*found, ChainFinding("end", report.lines, expected_lines=seal.lines)]
