"""Times written with a zone, and money by the day under a header with 日 in it, in whole
files: a seeded generator of small ledgers (CSV in UTF-8, with a BOM, or CP932, and workbooks
of text or number cells), each cell with what ``read_table`` must give back (in Tokyo's zone).

The other ledger generators (``ledger_dates``, ``ledger_foreign``...) write times in Japan's
zone or UTC. This one draws, by kind:

* ``javascript``: JavaScript's ``Date.toString()`` as web systems' exports keep it
  (``Tue Feb 03 2026 09:00:00 GMT+0900 (日本標準時)``, ``… GMT-0800 (Pacific Standard
  Time)``, no description), from servers in several zones;
* ``zoned``: ISO 8601 and RFC 2822 times with an offset or a zone's name other than
  JST/UTC/GMT (``2026-02-03T10:00:00+0900``, ``…+09:00[Asia/Tokyo]`` or ``[asia/tokyo]``,
  ``2026-02-03 10:00:00 PST``, ``Tue, 03 Feb 2026 10:15:00 EST``, ``… UTC+9``; the names now and then in lower or
  title case, ``pst``, ``Jst``, ``utc+9``), a day with a zone and no time
  (``2026-02-03+09:00``), and now and then a name that is two zones' (``CST``, ``IST``) or
  a misspelt IANA name (``[Asia/Tokio]``): listed with why;
* ``per_day``: money by the day under a header with 日 in it (``日割``, ``日額``,
  ``1日あたり``, ``日計``, ``日商``, ``日割賃料``) whose numbers lie where Excel's serial dates
  do (20,000-80,000): numbers, never dates.

:class:`ledger_dates.Drawn` holds each cell as written and what it must read to: a naive datetime (the
moment in Tokyo), a number, or None (listed at its line with a reason other than the generic
one).
"""

from __future__ import annotations

import datetime as dt
import random
from zoneinfo import ZoneInfo

from tests.support.ledger_dates import Drawn
from tests.support.ledger_foreign import MONTH_ABBREVIATIONS as _MON

__all__ = ["FILES", "KINDS", "TOKYO", "draw"]

KINDS = ("javascript", "zoned", "per_day")
# CSV in UTF-8 (with a BOM or not) or CP932, and a workbook of the cells as drawn (numbers as
# number cells): ``ledger_dates.ledger_file`` writes them.
FILES = ("utf8", "utf8_bom", "cp932", "xlsx_text")
TOKYO = ZoneInfo("Asia/Tokyo")

_WEEK = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# The zones JavaScript servers run in, with the description Chrome gives in Japanese and in
# English (Node prints the English one; some builds print none).
_JS_ZONES = (
    ("Asia/Tokyo", ("日本標準時", "Japan Standard Time")),
    ("UTC", ("協定世界時", "Coordinated Universal Time")),
    ("America/Los_Angeles", ("北米太平洋標準時", "Pacific Standard Time")),
    ("America/New_York", ("北米東部標準時", "Eastern Standard Time")),
    ("Europe/Berlin", ("中央ヨーロッパ標準時", "Central European Standard Time")),
    ("Asia/Singapore", ("シンガポール標準時", "Singapore Standard Time")),
)
# Zone names with one offset, as RFC 2822 and logs write them (winter: the standard time).
_NAMED = {"PST": -8, "EST": -5, "MST": -7, "CET": 1, "KST": 9, "HKT": 8, "SGT": 8, "AEST": 10}
# Names two zones use: a time written with one is listed, never read in either.
_TWO_ZONES = ("CST", "IST", "BST")
_PER_DAY = (
    "日割",
    "日割額",
    "日額",
    "1日あたり",
    "1日当たり",
    "日計",
    "日商",
    "日割賃料",
    "日割家賃",
)


def _moment(rng: random.Random) -> dt.datetime:
    """A moment in the fiscal year 2025 (in UTC), to the second."""
    start = dt.datetime(2025, 4, 1, tzinfo=dt.UTC)
    return start + dt.timedelta(seconds=rng.randrange(365 * 86_400))


def _offset(stamp: dt.datetime, colon: bool = True) -> str:
    minutes = int(stamp.utcoffset().total_seconds() // 60)  # type: ignore[union-attr]
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}{':' if colon else ''}{rest:02d}"


def _tokyo(stamp: dt.datetime) -> dt.datetime:
    return stamp.astimezone(TOKYO).replace(tzinfo=None)


def _javascript(rng: random.Random) -> tuple[str | int, object | None]:
    zone, descriptions = rng.choice(_JS_ZONES)
    local = _moment(rng).astimezone(ZoneInfo(zone))
    described = rng.choice((*descriptions, None))
    text = (
        f"{_WEEK[local.weekday()]} {_MON[local.month - 1]} {local.day:02d} {local.year} "
        f"{local:%H:%M:%S} GMT{_offset(local, colon=False)}"
    )
    return (text if described is None else f"{text} ({described})"), _tokyo(local)


def _cased(rng: random.Random, name: str) -> str:
    """A zone's name as systems write it: ``PST`` mostly, now and then ``pst`` or ``Pst``
    (PHP's and some loggers' lower case, a hand-typed title case); an IANA name the same
    (``Asia/Tokyo``, ``asia/tokyo``, as lower-casing code and hand-typed settings write it)."""
    return rng.choice((name, name, name.lower(), name.title()))


def _zoned(rng: random.Random) -> tuple[str | int, object | None]:
    moment = _moment(rng)
    if rng.random() < 0.08:
        local = moment.astimezone(dt.timezone(dt.timedelta(hours=-6)))
        return f"{local:%Y-%m-%d %H:%M:%S} {_cased(rng, rng.choice(_TWO_ZONES))}", None
    if rng.random() < 0.1:  # a day with its zone and no time: the day as written
        local = moment.astimezone(TOKYO)
        zone = rng.choice(("+09:00", "Z"))
        return f"{local:%Y-%m-%d}{zone}", dt.datetime(local.year, local.month, local.day)
    if rng.random() < 0.05:  # a misspelt IANA name: no offset to check the time's against
        local = moment.astimezone(TOKYO)
        return f"{local:%Y-%m-%dT%H:%M:%S}+09:00[{_cased(rng, 'Asia/Tokio')}]", None
    name = rng.choice(sorted(_NAMED))
    written = _cased(rng, name)
    named = moment.astimezone(dt.timezone(dt.timedelta(hours=_NAMED[name])))
    zone_key = rng.choice(("Asia/Tokyo", "America/New_York", "Europe/London", "Asia/Kolkata"))
    iana = moment.astimezone(ZoneInfo(zone_key))
    tokyo = moment.astimezone(TOKYO)
    forms: tuple[tuple[str, dt.datetime], ...] = (
        (f"{tokyo:%Y-%m-%dT%H:%M:%S}{_offset(tokyo, colon=False)}", tokyo),
        (f"{iana:%Y-%m-%dT%H:%M:%S}{_offset(iana)}", iana),
        (f"{iana:%Y-%m-%dT%H:%M:%S}{_offset(iana)}[{_cased(rng, zone_key)}]", iana),
        (f"{named:%Y-%m-%d %H:%M:%S} {written}", named),
        (
            f"{_WEEK[named.weekday()]}, {named.day:02d} {_MON[named.month - 1]} {named.year} "
            f"{named:%H:%M:%S} {written}",
            named,
        ),
        (f"{tokyo:%Y-%m-%d %H:%M:%S} {_cased(rng, 'UTC')}+9", tokyo),
        (f"{tokyo:%Y/%m/%d %H:%M:%S} {_cased(rng, 'GMT')}+09:00", tokyo),
        (f"{tokyo:%Y/%m/%d %H:%M:%S} {_cased(rng, 'JST')}", tokyo),
    )
    text, stamp = rng.choice(forms)
    return text, _tokyo(stamp)


def _per_day(rng: random.Random) -> tuple[str | int, object | None]:
    number = rng.randrange(20_000, 80_000)
    if rng.random() < 0.3:
        return f"{number:,}", number
    return number, number


def draw(seed: int, kind: str, rows: int = 12) -> Drawn:
    """A column of ``kind`` (``KINDS``) of ``rows`` cells, drawn from ``seed``."""
    rng = random.Random(f"ledger-zones-{seed}-{kind}")
    if kind == "per_day":
        header = rng.choice(_PER_DAY)
    else:
        header = rng.choice(("登録日時", "作成日時", "日時", "Timestamp", "更新日時", "受付日時"))
    draw_one = {"javascript": _javascript, "zoned": _zoned, "per_day": _per_day}[kind]
    pairs = [draw_one(rng) for _ in range(rows)]
    return Drawn(kind, header, [p[0] for p in pairs], [p[1] for p in pairs])
