"""Times as people read them: a stored UTC time, in the zone they live in, with its label.

Everything keiri-agent stores is UTC: event timestamps and run log names
(``20261206T031500Z.jsonl``), run ids (``run_20261206031500_…``), task records
(``created_at``, ``finished_at``), analysis workspace and saved plan names, file times. What a
person reads (the app, the CLI, the server's progress page) goes through :func:`shown_time`,
in the zone of ``KEIRI_TIMEZONE`` (default Asia/Tokyo, handed down from the settings):
``2026-12-06 12:15:00 JST``. The label is the zone's abbreviation in the tz database (JST;
EST or EDT as daylight saving time comes and goes), or the UTC offset where the database has
none (Asia/Dubai: ``UTC+04:00``). A stamp in a name is read back by :func:`parse_stamp` with
the format of the module that names the file. A time stored as text (a JSON record, an API
answer) is :func:`utc_text`: ISO 8601 in UTC with ``Z`` (``2026-12-06T03:15:00Z``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

__all__ = [
    "SHOWN_FORMAT",
    "SHOWN_MINUTES_FORMAT",
    "parse_stamp",
    "shown_time",
    "to_utc",
    "utc_text",
    "zone_label",
]

SHOWN_FORMAT = "%Y-%m-%d %H:%M:%S"  # date and wall-clock time, then the zone's label
SHOWN_MINUTES_FORMAT = "%Y-%m-%d %H:%M"  # for stamps stored to the minute (saved plans)


def to_utc(value: datetime | str | float) -> datetime:
    """A stored time as an aware UTC datetime: a datetime with its zone, ISO 8601 text with its
    offset (``2026-12-06T03:15:00Z``, ``…+00:00``), or POSIX seconds (a file's mtime).

    A time without a zone is refused (ValueError): which zone it was meant in is not known.
    """
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"time without a zone: {value!r} (stored times are UTC)")
    return when.astimezone(UTC)


def utc_text(
    value: datetime | str | float, *, timespec: Literal["auto", "milliseconds"] = "auto"
) -> str:
    """``value`` (see :func:`to_utc`) as stored text: ISO 8601 in UTC with ``Z`` for ``+00:00``
    (``2026-12-06T03:15:00Z``; ``timespec="milliseconds"``: ``2026-12-06T03:15:00.000Z``)."""
    return to_utc(value).isoformat(timespec=timespec).replace("+00:00", "Z")


def zone_label(moment: datetime) -> str:
    """The label of an aware time's zone: its abbreviation, else ``UTC±hh:mm``."""
    name = moment.tzname() or ""
    if any(c.isalpha() for c in name):
        return name
    offset = moment.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def shown_time(value: datetime | str | float, zone: ZoneInfo, *, seconds: bool = True) -> str:
    """``value`` (see :func:`to_utc`) as a person in ``zone`` reads it, labelled:
    ``2026-12-06 12:15:00 JST`` (``seconds=False``: ``2026-12-06 12:15 JST``)."""
    local = to_utc(value).astimezone(zone)
    text = local.strftime(SHOWN_FORMAT if seconds else SHOWN_MINUTES_FORMAT)
    return f"{text} {zone_label(local)}"


def parse_stamp(text: str, fmt: str) -> datetime | None:
    """The UTC time of a stamp written with ``fmt`` (``%Y%m%d%H%M%S``) at the start of
    ``text``; None when ``text`` does not start with one. ``fmt`` is the naming module's own
    (``workspace.SESSION_DIR_FORMAT``, ``design.store.STAMP_FORMAT``), its fields fixed-width."""
    width = len(datetime(2000, 1, 1, tzinfo=UTC).strftime(fmt))
    if len(text) < width:
        return None
    try:
        when = datetime.strptime(text[:width], fmt)
    except ValueError:
        return None
    return when.replace(tzinfo=UTC)
