"""How Japanese ledgers and exports write amounts, dates and months: the one place these forms live.

Every reader of a cell (``read_table``'s column typing, the table blocks, chart and report
blocks, field extraction) asks here, so a form read in one place is read everywhere. Each
reader returns None for a text it cannot read; the matching ``*_problem`` function says why in
Japanese (called only for the cells that failed, so the common path stays cheap).

Amounts, after NFKC (full-width digits, ``，``, ``￥``, ``（）`` and ``－`` become ASCII):

* digits with well-formed thousands separators (``1,234``) or none, an optional fraction; a
  space typed beside a comma (``1, 234``, ``１，　２３４``) is read as the comma alone and
  noted on the column (``is_spaced_comma``); a space in place of a comma (``1 234``) is not
  read (two numbers or one?);
* a currency mark before the digits (the sign before or after it: ``-¥1,200``, ``¥▲1,200``): ``¥``, ``\\`` (the yen of CP932 text decoded as ASCII),
  ``JPY`` (also after the digits: ``1,200 JPY``), ``$`` (never added to yen in one column:
  ``table_types.dollar_cells``); ``円`` after them;
* yen written with the places 億・万・千 between the digits (``1万2,000円``, ``1億2,345万円``,
  ``1万2千円``: ``_places``); one place alone (``12万円``) is a unit, as below;
* a unit after them (``1,200千円``, ``3.5百万円``, ``12万円``; ``￥1,200千`` after a yen mark):
  ``read_amount_unit`` gives the number as written and the unit; ``read_amount`` reads only
  yen (no unit or ``円``), so a number in thousands is never taken for yen by a reader that
  does not keep the unit (``table_types`` decides a column's unit from its cells);
* minus: ``-`` (and the Unicode minus and dashes), ``▲``/``△`` (Japanese accounting), the
  whole amount in parentheses ``(1,200)`` (accounting formats), or a minus after the digits
  (``1,200-``: the trailing sign of many accounting systems' printouts and exports;
  ``is_trailing_minus``); at most one of these. A trailing minus follows the digits directly
  (after a parenthesis it is not read);
* a dash after a yen amount (``¥1,200-``, ``￥12,000－``, ``\\3,300ー``, ``1,200円-``; after
  a ``$`` amount or one after ``金`` too: ``$1,200-``, ``金12,000-``) is
  either the end mark (止め) that receipts, 領収書 and 請求書 write so that no digit can be
  added, or a system's trailing minus: one cell cannot say which, so ``read_amount`` refuses it
  (``amount_problem`` says why) and the reader of a column passes the reading its other cells
  show (``dash``: ``DASH_END`` or ``DASH_MINUS``; ``dash_form`` classifies the cells,
  ``table_types`` decides; in a document's text it is the end mark: ``text.extract_fields``).
  A dash after ``円`` and the long-vowel mark ``ー`` are never a minus, only an end mark;
* ``赤字`` in words before the amount is a minus too (``赤字1,200``);
* 銭 after whole 円 (``1,200円50銭`` is 1200.5);
* a receipt's marks: ``金`` before and ``也`` after an unsigned yen amount (``金1,200円也``),
  and the ``※`` that closes an amount (``¥1,200※``);
* spaces around any of these parts (never between two digits);
* a leading zero (``0123``) makes a code, not an amount;
* a point between thousands and a comma before the decimals (``1.200,50``, ``1.200.000``, as
  much of Europe writes them) is never read: which mark is the decimal point cannot be known
  (``is_european``; ``table_types`` then lists a column's ``1.200`` cells too, as it does where
  the column's other cells do not show which the point is: ``DOT_THOUSANDS``).

Dates (the result is a ``datetime.date``, or a ``datetime`` when a time is written):

* ``2026-02-03``, ``2026/2/3``, ``2026.2.3``, ``2026年2月3日``, 月末 (``2026年2月末日``,
  ``2026/2/末``: the month's last day), each optionally followed by a
  weekday (``(火)``, ``（火曜日）``, ``(火・祝)``, `` 火曜日``) and a time (``10:15``, ``10:15:30``,
  ``10時15分``, ``10時``, ``10時半``; ``午前``/``午後`` or ``AM``/``PM`` before it, or
  ``a.m.``/``p.m.`` after it: ``午後3:30``, ``3:30 PM``), ``T`` between date and time as in
  ISO 8601. 12 o'clock with 午前/午後 is not read (noon or midnight: Japan writes both), nor
  午後 before an hour past 12 (``午後15時``); AM/PM keep their English meaning (12 PM is noon);
* ``20260203`` (eight digits, years 1900-2099);
* an English month's name or abbreviation, as foreign systems export dates (``3-Feb-2026``,
  ``03-FEB-2026``, ``03/Feb/2026``, ``Feb 3, 2026``, ``February 3rd, 2026``,
  ``3 February 2026``, ``2026-Feb-03``), a time after it as above: the name says which part
  is the month, so the day and the year are known (with a two-digit year, ``03-FEB-26``, they
  are not: not read); an ordinal after the day (``3rd Feb 2026``, ``3rd of February 2026``)
  and a weekday before the date, as mail headers (RFC 2822) and English systems write it
  (``Tue, 3 Feb 2026``, ``Tuesday, February 3, 2026``, ``Tue Feb 3 2026``,
  ``Tue, 03 Feb 2026 10:15:00 +0900``), a weekday that is not the date's not read; the time
  between the day and the year as ``date(1)`` and ``ctime`` print it
  (``Tue Feb 3 10:15:00 JST 2026``);
* Japanese eras: ``令和8年2月3日``, ``R8.2.3``, ``R8/2/3``, ``R.08/02/03`` (弥生's exports),
  ``平成31年4月30日``, ``H31.4.30``, ``令和元年5月1日``, ``令8.2.3``; 令和 (R, 令), 平成 (H, 平),
  昭和 (S, 昭), 大正 (T, 大); an era year is 元 or 1-99 (``令和0年`` is not a year). A date
  outside its era's days (``平成31年5月1日``: 平成 ended on 2019-04-30; ``令和元年4月1日``, as
  a 令和元年度 is written) names one day all the same (平成31年 is 2019): it is read as that
  day, and ``era_outside`` says so, for a note beside the column (the government accepts such
  dates on forms printed before the change). A year without its era (``元年5月1日``,
  ``31年5月1日``) is not read: which era is not written.

A time written with a UTC offset (``2026-02-03T23:30:00+00:00``, ``…Z``) is read in the local
zone (``local_time``: ``KEIRI_TIMEZONE``, default Asia/Tokyo), so the same moment is the same
day wherever a cell is read: that is 2026-02-04 08:30 in Tokyo. Zones are also written as
``+09`` (PostgreSQL), ``GMT+0900``/``UTC+9`` (JavaScript's ``Tue Feb 03 2026 09:00:00
GMT+0900 (日本標準時)``, whose bracket only describes the offset), or by a name of one offset
(``JST``, ``UTC``, ``PST``, ``CET``, ``(JST)``: ``_ZONE_NAMES``); a name two zones use (``CST``:
US Central or China) is not read, nor a bracket after the offset naming another zone
(``+09:00[America/New_York]``), nor an offset no zone has (``+25:00``): ``_zone`` says why. A
day with a zone and no time (``2026-02-03+09:00``, XML's ``date``) is that day. A minus after a
time without seconds or ``T`` (``10:00-12:00``) may end a time range, so it is not read
(``_zone_doubt``).

Months (the first day of the month, ``YearMonth``): ``2026年2月``, ``2026/02``, ``2026-02``,
``令和8年2月``, ``R8.2``, ``R.08/02``.

Percentages (``read_percent``): ``10%``, ``８％``, ``120.5%``, ``-3%``, ``△3%`` are the fractions
0.1, 0.08, 1.205, -0.03, -0.03 (as a workbook holds a cell formatted ``0%``); never amounts.

Numbered column headings: ``(1)``, ``（１）``, ``⑴``, and the circled numbers ``①``-``㊿`` (and
the other circled digits of Unicode: ``❶``, ``➀``, ``⓵``) (``heading_number``); a row of them in
sequence is a header row (``table_infer``). Alone, ``(1)`` is an amount (-1, accounting's
parentheses); a number written as one symbol (``①``, ``⑴``, ``⒈``, ``²``: ``numeral_marks``) is a
list marker, never an amount, though NFKC makes digits of it (``①`` → 1, ``⑴`` → (1)).

Codes: digits with a leading zero (``0123``, ``00456``, ``0012-``), and digits more than a
number keeps (``CODE_DIGITS``: a 16-20 digit 照会番号 or 記録番号, which a float would round
and an int64 overflow), are codes (``is_code``), never amounts.

A two-digit year (``26/2/3``) is not read: the century cannot be known; nor, alone, a year
written last (``02/03/2026``: month/day/year or day/month/year): ``read_date`` reads it in the
order its column shows (``order``: a day above 12 first or second, ``day_order``; the column
decides in ``table_types``, as it decides ``1.200``). Nor is a month and day
without a year (``2/3``, ``2月3日``: ``is_month_day``) here: the year would be a guess (a
ledger whose title names its period is read in it: ``cell_period``). A weekday
that is not the date's (``2026年2月3日(水)``: the 3rd is a Tuesday) makes the cell unreadable:
which of the two is wrong cannot be known.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
import unicodedata
import zoneinfo
from collections import Counter
from decimal import Decimal
from typing import NamedTuple
from zoneinfo import ZoneInfo

from keiri_agent.config import DEFAULT_TIMEZONE

__all__ = [
    "AMOUNT_UNITS",
    "CODE_DIGITS",
    "DASH_END",
    "DASH_MINUS",
    "DASH_TEXTS",
    "DAY_FIRST",
    "DOLLAR_AMONG_YEN",
    "DOT_THOUSANDS",
    "ERAS",
    "ISO_DATE",
    "MONTH_FIRST",
    "NOT_DIGITS",
    "PLAIN_NUMBER",
    "WEEKDAYS",
    "YEN_DASH_PROBLEM",
    "YEN_FACTORS",
    "YearMonth",
    "amount_problem",
    "dash_form",
    "date_problem",
    "day_order",
    "digits_of",
    "ends_in_dash",
    "era_outside",
    "heading_number",
    "is_code",
    "is_dash",
    "is_dollar",
    "is_european",
    "is_month_day",
    "is_spaced_comma",
    "is_trailing_minus",
    "local_time",
    "local_zone",
    "month_day",
    "normalize_cell_text",
    "numeral_marks",
    "read_amount",
    "read_amount_unit",
    "read_date",
    "read_month",
    "read_percent",
]

# Units an accountant writes in a header or a title row: the amount is kept as written (never
# multiplied); the unit is reported beside the column.
AMOUNT_UNITS: tuple[str, ...] = ("百万円", "千円", "万円", "円")
# Each unit as a multiple of one yen (a cell's unit against its column's, a workbook's display
# scale against the header's unit, the agents' conversion to yen).
YEN_FACTORS: dict[str, int] = {"円": 1, "千円": 1_000, "万円": 10_000, "百万円": 1_000_000}

# A plain number as most cells of a long column write it (``1234``, ``1,234``, ``-5.5``), for
# readers that test whole columns at once (pandas on Arrow strings: ASCII spaces only, as
# ``\s`` sends Arrow's regex engine back to Python, cell by cell). Leading zeros are codes.
PLAIN_NUMBER = r" *[+\-]?(?:0|[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*)(?:\.[0-9]+)? *"

# A date, or a date and time, as ISO 8601 and programs write it (``2026-02-03``,
# ``2026-02-03 10:15:30.5``, ``2026-02-03T10:15``), whole: no header cell writes one
# (``table_infer``), and a JSON column of them is dates (``agents.convert.formats``).
ISO_DATE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)?"
)

# Era name (and its one-letter abbreviation) -> the Gregorian year before its first year.
ERAS: dict[str, int] = {
    "令和": 2018,
    "R": 2018,
    "平成": 1988,
    "H": 1988,
    "昭和": 1925,
    "S": 1925,
    "大正": 1911,
    "T": 1911,
    # One kanji for the era, as forms and stamps abbreviate it (令8.2.3).
    "令": 2018,
    "平": 1988,
    "昭": 1925,
    "大": 1911,
}
# Each era's first and last day (大正 began on 1912-07-30); a date outside them is read with a
# note (``era_outside``).
_ERA_DAYS: dict[int, tuple[dt.date, dt.date]] = {
    2018: (dt.date(2019, 5, 1), dt.date.max),
    1988: (dt.date(1989, 1, 8), dt.date(2019, 4, 30)),
    1925: (dt.date(1926, 12, 25), dt.date(1989, 1, 7)),
    1911: (dt.date(1912, 7, 30), dt.date(1926, 12, 24)),
}

# Characters that mean minus (after NFKC) besides ASCII "-".
_MINUS_CHARS = "\u2212\u2010\u2011\u2012\u2013\u2014\u2015\ufe63"
_MINUS_TABLE = str.maketrans(dict.fromkeys(_MINUS_CHARS, "-"))
# How the dash after a yen amount (``¥1,200-``, ``1,200円-``) is read: the end mark (止め) of
# receipts and invoices (no sign) or the trailing minus of a system's export. One cell cannot
# say which; the reader of a column decides from its other cells (``table_types``).
DASH_END = "end"
DASH_MINUS = "minus"
# The marks that make an amount a yen amount before the digits (``\\``: CP932's yen as ASCII;
# ``JPY``, the currency code banks and payment services write, before or after the digits).
_YEN_MARKS = ("¥", "\\", "JPY")
# The currency marks after whose amount a dash may be the end mark (止め) that receipts write:
# the yen marks and ``$`` (a receipt of a trip abroad: ``$1,200-``), as ``金`` before the
# amount says too (``金12,000-``).
_CURRENCY_MARKS = (*_YEN_MARKS, "$")
# Why one cell's dash after a yen amount is not read (``amount_problem``).
YEN_DASH_PROBLEM = (
    "¥・$・円・金の付いた金額の末尾の「-」は、領収書・請求書では金額の終わりの印（止め）、会計システム"
    "の出力ではマイナスで、このセルだけではどちらか決められません（マイナスなら ▲1,200 か "
    "-1,200、止めなら「-」を付けずに書いてください）"
)
_UNIT_DASH_PROBLEM = (
    "円の後の「-」は領収書・請求書の止め（金額の終わりの印）で、マイナスではありません。止めは"
    "列のどの ¥・円の金額にも付いているときに読みます（マイナスなら末尾の - は数字のすぐ後に"
    "書いてください: 1,200-）"
)
# Why a ``$`` amount is not read among yen amounts (``table_types.dollar_cells`` refuses it
# there; alone, or in a column of dollars, it is read as its number).
DOLLAR_AMONG_YEN = (
    "ドル（$）の金額ですが、この列のほかの金額は円（記号のない金額を含む）で、ドルと円は"
    "合計できません（円に換算した金額を書くか、外貨の金額は別の列に分けてください）"
)
# A lone dash is how accounting formats show zero (Excel's accounting format displays 0 as "-").
_DASHES = frozenset({"-", "ー", "―"})

_AMOUNT = re.compile(
    r"(?P<kin>金)?\s*(?P<open>\()?\s*(?P<sign>[-+▲△]|赤字)?\s*(?P<cur>[¥\\$]|JPY)?\s*(?P<sign2>[-+▲△])?\s*"
    r"(?P<int>[0-9]{1,3}(?: ?, ?[0-9]{3})+|[0-9]+)(?P<frac>\.[0-9]+)?(?P<tail>\s*[-ー])?\s*"
    r"(?P<unit>(?:百万|千|万)?円|百万|千|万|JPY)?(?P<utail>\s*[-ー])?"
    r"(?:\s*(?P<sen>[0-9]{1,2})\s*銭)?\s*(?P<close>\))?"
    r"\s*(?P<end>也|※)?"
)
# A space typed beside a thousands comma (``1, 200``, ``１，　２００`` after NFKC): read as the
# comma alone (``_AMOUNT``), noted on the column (``is_spaced_comma``). A space in place of a
# comma (``1 200``) is not read: it may stand between two numbers.
_SPACED_COMMA = re.compile(r"[0-9](?: ,|, )")
# Words and marks that mean minus before an amount (``赤字`` written in words).
_NEGATIVE_SIGNS = ("-", "▲", "△", "赤字")
# A weekday after the date: ``(火)``, ``（火曜日）``, ``(火・祝)``, or ``火曜日`` after a space.
_WEEKDAY = (
    r"(?:\s*\((?P<w>月|火|水|木|金|土|日|祝)(?:曜日?)?(?:・祝)?\)"
    r"|\s+(?P<w2>月|火|水|木|金|土|日)曜日?)?"
)
# The weekdays as ``date.weekday()`` numbers them (Monday is 0).
WEEKDAYS = "月火水木金土日"
# A time after the date: ``10:15``, ``10:15:30.5``, ``10時15分``, ``10時``, ``10時半``, with
# 午前/午後 or AM/PM before it (``午後3:30``, ``PM3:30``) or AM/PM after it (``3:30 PM``),
# directly after a weekday's bracket too (``(火)10:15``); seconds to nanoseconds as pandas and
# databases export them (kept to the microsecond); a zone after it (``_zone``): ``Z``,
# ``+09:00``, ``+0900``, ``+09`` (PostgreSQL), ``GMT+0900``/``UTC+9`` (JavaScript, Windows),
# a space before it, or a zone's name in any case (``JST``, ``PST``, ``pst``, ``Utc``:
# ``_ZONE_NAMES``; also in brackets:
# ``10:15 (JST)``), maybe followed by the zone's description in brackets (JavaScript's
# ``GMT+0900 (日本標準時)``) or its IANA name in any case (Java's ``+09:00[Asia/Tokyo]``,
# ``[asia/tokyo]``: ``_iana_names``).
_TIME = (
    r"(?:(?:(?P<iso>\s*T\s*)|\s+|(?<=日)|(?<=\)))(?P<ap>午前|午後|[AaPp]\.?[Mm]\.?)?\s*(?P<H>[0-9]{1,2})\s*"
    r"(?::\s*(?P<M>[0-9]{2})(?:\s*:\s*(?P<S>[0-9]{2})(?P<f>\.[0-9]{1,9})?)?"
    r"|時(?:\s*(?P<Mj>[0-9]{1,2})\s*分(?:\s*(?P<Sj>[0-9]{1,2})\s*秒)?|\s*(?P<half>半))?)"
    r"(?:\s*(?P<ap2>[AaPp]\.?[Mm]\.?))?"
    r"(?:\s*(?P<tz>[Zz]|(?:(?P<tzg>(?i:UTC|GMT|UT))\s*(?=[+-]))?[+-][0-9]{1,2}(?::?[0-9]{2})?"
    r"|[A-Za-z]{3,5})"
    r"(?:\s*\((?P<tzl>[^()]{1,40})\)|\[(?P<tzi>[A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*)\])?"
    r"|\s*\((?P<tzp>[A-Za-z]{3,5})\))?)?"
)
# A minus offset after a time without seconds and without ISO's ``T`` (``2026/2/3 10:00-12:00``)
# is as likely a time range (勤怠, 会議室の予約) as a zone: not read (``_zone_doubt``).
# A day with a time range after it (``2026/2/3 4:30-8:00``, ``10時～12時``), for the reason.
_TIME_RANGE = re.compile(
    r".*[0-9]\s*(?::\s*[0-9]{2}|時)\s*[-~〜～]\s*[0-9]{1,2}\s*(?::\s*[0-9]{2}|時)?"
)
# The zones written by name after a time, as offsets from UTC in minutes (RFC 822's and the
# common abbreviations that name one offset: PST is -8 hours whatever the season).
_ZONE_NAMES = {
    **dict.fromkeys(("Z", "UT", "UTC", "GMT", "WET"), 0),
    **{"JST": 540, "KST": 540, "HKT": 480, "SGT": 480, "AWST": 480, "PHT": 480, "ICT": 420},
    **{"WIB": 420, "ACST": 570, "ACDT": 630, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780},
    **{"HST": -600, "AKST": -540, "AKDT": -480, "PST": -480, "PDT": -420, "MST": -420},
    **{"MDT": -360, "EST": -300, "EDT": -240, "CET": 60, "CEST": 120, "WEST": 60, "EET": 120},
    **{"EEST": 180, "MSK": 180},
}
# Zone names that name two offsets (CST: US Central or China; IST: India, Israel or Ireland;
# BST: Britain or Bangladesh; AST: Atlantic or Arabia...): a time with one is not read.
_AMBIGUOUS_ZONES = {
    "CST": "米国中部（-6時間）か中国（+8時間）",
    "CDT": "米国中部夏時間（-5時間）かキューバ夏時間（-4時間）",
    "IST": "インド（+5時間30分）かイスラエル（+2時間）かアイルランド（+1時間）",
    "BST": "英国夏時間（+1時間）かバングラデシュ（+6時間）",
    "AST": "大西洋（-4時間）かアラビア（+3時間）",
    "GST": "湾岸（+4時間）かサウスジョージア（-2時間）",
    "SST": "サモア（-11時間）かシンガポール（+8時間）",
}
# The largest UTC offset any zone has (Kiribati, +14:00).
_MAX_OFFSET = dt.timedelta(hours=14)
_YMD = re.compile(
    r"(?P<y>[0-9]{4})\s*(?P<s1>[-/.年])\s*(?P<m>[0-9]{1,2})\s*(?P<s2>[-/.月])\s*"
    r"(?P<d>[0-9]{1,2}|末)\s*日?" + _WEEKDAY + _TIME
)
# A day with a zone and no time, as XML Schema's ``date`` writes it (``2026-02-03+09:00``,
# ``2026-02-03Z``): a day, not a moment, so it is read as written.
_ZONED_DAY = re.compile(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})(?:Z|[+-][0-9]{2}:[0-9]{2})"
)
_COMPACT = re.compile(r"(?P<y>(?:19|20)[0-9]{2})(?P<m>[0-9]{2})(?P<d>[0-9]{2})")
# English month names and abbreviations, as foreign systems' exports write dates with them
# (``3-Feb-2026``, ``03/Feb/2026``, ``Feb 3, 2026``, ``3 February 2026``, ``2026-Feb-03``):
# the name says which part is the month, so the day and the year are known as well.
_MONTH_NAMES = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_MONTHS = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
_MON = rf"(?i:(?P<mon>{_MONTHS}))\.?"
# The English weekdays as ``date.weekday()`` numbers them, by their first three letters.
_EN_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# An English weekday before the date, as mail headers (RFC 2822: ``Tue, 3 Feb 2026``) and
# English systems write it (``Tuesday, February 3, 2026``, ``Tue Feb 3 2026``).
_EN_WEEKDAY = (
    r"(?:(?i:(?P<ew>mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:r|rs|rsday)?|fri(?:day)?|"
    r"sat(?:urday)?|sun(?:day)?))\.?\s*,?\s+)?"
)
# An ordinal after the day (``3rd``, ``21st``), as English writes it.
_ORDINAL = r"(?i:st|nd|rd|th)?"
# Day, month, year (the separators alike; ``3rd Feb 2026``, ``3rd of February 2026``); month,
# day, year; year, month, day; each maybe after a weekday.
_NAMED_MONTH_DATES = (
    *(
        re.compile(_EN_WEEKDAY + form + _TIME)
        for form in (
            rf"(?P<d>[0-9]{{1,2}})(?P<s>[-/ ]){_MON}(?P=s)(?P<y>[0-9]{{4}})",
            rf"(?P<d>[0-9]{{1,2}}){_ORDINAL}\s+(?i:of\s+)?{_MON},?\s+(?P<y>[0-9]{{4}})",
            rf"{_MON}\s+(?P<d>[0-9]{{1,2}}){_ORDINAL}\s*,?\s+(?P<y>[0-9]{{4}})",
            rf"{_MON}-(?P<d>[0-9]{{1,2}})-(?P<y>[0-9]{{4}})",
            rf"(?P<y>[0-9]{{4}})(?P<s>[-/ ]){_MON}(?P=s)(?P<d>[0-9]{{1,2}})",
        )
    ),
    # The time (and zone) between the day and the year, as ``date(1)`` and C's ``ctime`` print
    # it (``Tue Feb 3 10:15:00 JST 2026``, ``Tue Feb  3 10:15:00 2026``).
    re.compile(_EN_WEEKDAY + rf"{_MON}\s+(?P<d>[0-9]{{1,2}})" + _TIME + r"\s+(?P<y>[0-9]{4})"),
)
# The same with a two-digit year (``03-FEB-26``, as Oracle prints dates): which century is not
# written.
_NAMED_MONTH_SHORT_YEAR = re.compile(
    rf"[0-9]{{1,2}}[-/ ](?i:{_MONTHS})\.?[-/ ,]\s*[0-9]{{2}}|(?i:{_MONTHS})\.?[- ]\s*[0-9]{{1,2}},?\s*[-/ ]?[0-9]{{2}}"
)
_ERA_NAMES = "|".join(sorted(ERAS, key=len, reverse=True))
# The era and its year: 弥生 writes a dot after the letter (R.08/02/03); year 0 does not exist.
_ERA_YEAR = rf"(?P<era>{_ERA_NAMES})\.?\s*(?P<y>0?[1-9]|[1-9][0-9]|元)"
_ERA_YMD = re.compile(
    _ERA_YEAR + r"\s*(?P<s1>[-/.年])\s*(?P<m>[0-9]{1,2})\s*(?P<s2>[-/.月])"
    r"\s*(?P<d>[0-9]{1,2}|末)\s*日?" + _WEEKDAY + _TIME
)
_YM = re.compile(r"(?P<y>[0-9]{4})\s*(?:[-/.]\s*(?P<m>[0-9]{1,2})|年\s*(?P<mj>[0-9]{1,2})\s*月)")
_ERA_YM = re.compile(_ERA_YEAR + r"\s*(?:[-/.]\s*(?P<m>[0-9]{1,2})|年\s*(?P<mj>[0-9]{1,2})\s*月)")
# A year written without its era (元年5月1日, 31年5月1日): which era cannot be known.
_ERALESS = re.compile(r"(?:元|[0-9]{1,2})\s*年\s*[0-9]{1,2}\s*月\s*[0-9]{1,2}\s*日.*")
# More digits than a number keeps exactly (Excel keeps 15 significant digits; a float 15 to 17).
CODE_DIGITS = 16
_CODE = re.compile(rf"0[0-9]+-?|[1-9][0-9]{{{CODE_DIGITS - 1},}}")
# Three digits after one point, after one to three (``1.200``, of ``digits_of``): 1.2, or
# 1,200 written with a point; ``table_types`` decides by the cells of the column.
DOT_THOUSANDS = r"[0-9]{1,3}\.[0-9]{3}"
# What ``digits_of`` takes out of a cell.
NOT_DIGITS = r"[^0-9,.]"
# Digits as much of Europe writes them, a point between thousands and a comma before the
# decimals (1.200,50): which mark is the decimal point cannot be known in a Japanese ledger.
_EUROPEAN = re.compile(r"[0-9]{1,3}(?:\.[0-9]{3})+,[0-9]+|[0-9]{1,3}(?:\.[0-9]{3}){2,}")
# A numbered column heading (after NFKC, which also turns ``⑴`` into ``(1)``).
_HEADING_NUMBER = re.compile(r"\(\s*(?P<n>[1-9][0-9]?)\s*\)")
# The largest heading number (two digits, as the pattern above; Unicode's circled numbers end
# at 50).
_MAX_HEADING_NUMBER = 99
# A minus written after the digits (``1,200-``), as a cell's text ends.
_TRAILING_MINUS = re.compile(r".*[0-9]\s*-")
_PERCENT = re.compile(r"(?P<sign>[-+▲△])?\s*(?P<num>[0-9]+(?:\.[0-9]+)?)\s*%")
# A date with its year last (02/03/2026: February 3rd in the US, March 2nd in Europe), as
# Excel and foreign systems export it (``2/3/2026 0:00``, ``2/3/2026 10:15 AM``): read only in
# the order its column shows (``order``, ``day_order``).
_YEAR_LAST = re.compile(r"[0-9]{1,2}\s*[-/.]\s*[0-9]{1,2}\s*[-/.]\s*[0-9]{4}(?:\s.*)?")
_DMY = re.compile(
    r"(?P<a>[0-9]{1,2})\s*(?P<s1>[-/.])\s*(?P<b>[0-9]{1,2})\s*(?P<s2>[-/.])\s*(?P<y>[0-9]{4})"
    + _WEEKDAY
    + _TIME
)
# The orders a date with its year last is read in (``read_date``'s ``order``).
DAY_FIRST = "DMY"
MONTH_FIRST = "MDY"
_SHORT_YEAR = re.compile(r"[0-9]{2}\s*[-/.]\s*[0-9]{1,2}\s*[-/.]\s*[0-9]{1,2}")
# A month and day without a year (``2/3``, ``2月3日``, ``2月3日(火)``): which year is not written.
_MONTH_DAY = re.compile(
    r"(?P<m>[0-9]{1,2})\s*(?:/\s*(?P<d>[0-9]{1,2})|月\s*(?P<dj>[0-9]{1,2})\s*日)" + _WEEKDAY
)
# Yen written with the places 億・万・千 between the digits (``1万2,000円``, ``1億2,345万円``,
# ``1万2千円``): each place's digits below the next place; yen by ``円`` or a yen mark.
_PLACES = re.compile(
    r"(?P<sign>[-▲△])?\s*(?P<cur>[¥\\]|JPY)?\s*"
    r"(?:(?P<oku>[1-9][0-9]{0,3})\s*億)?\s*(?:(?P<man>[1-9](?:[0-9]{0,3}|,[0-9]{3}))\s*万)?\s*"
    r"(?:(?P<sen>[1-9])\s*千)?\s*(?P<rest>[0-9]{1,4}|[0-9],[0-9]{3})?\s*(?P<yen>円)?"
)


class YearMonth(NamedTuple):
    """A month as a ledger names it (``2026年2月``)."""

    year: int
    month: int

    def first_day(self) -> dt.date:
        return dt.date(self.year, self.month, 1)

    def isoformat(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"


def normalize_cell_text(text: str) -> str:
    """``text`` as the readers compare it: NFKC, every minus sign as ``-``, stripped."""
    if text.isascii():
        return text.strip()
    return unicodedata.normalize("NFKC", text).translate(_MINUS_TABLE).strip()


def is_dash(text: str) -> bool:
    """A lone dash, which accounting formats print for zero."""
    return normalize_cell_text(text) in _DASHES


# Every single character a lone-dash cell may hold before normalization (half- and full-width,
# Unicode dashes and minus signs), for readers that compare whole columns at once.
DASH_TEXTS = frozenset(
    c for c in "-－ーｰ―‐‑‒–—−﹣" + _MINUS_CHARS if normalize_cell_text(c) in _DASHES
)


def is_code(text: str) -> bool:
    """Digits with a leading zero (``0123``, ``0012-``) or of ``CODE_DIGITS`` or more: a code
    (an account, a customer, a slip number, a bank's 照会番号), never an amount."""
    return bool(_CODE.fullmatch(normalize_cell_text(text)))


def heading_number(text: str) -> int | None:
    """The number of a numbered column heading (``(1)``, ``（１）``, ``⑴``, ``①``: 1-99), or
    None. A circled number is asked before NFKC, which would make ``①`` the digit 1."""
    stripped = text.strip()
    if len(stripped) == 1 and "CIRCLED" in unicodedata.name(stripped, ""):
        number = unicodedata.numeric(stripped, 0)
        return int(number) if 1 <= number <= _MAX_HEADING_NUMBER else None
    match = _HEADING_NUMBER.fullmatch(normalize_cell_text(text))
    return None if match is None else int(match["n"])


def numeral_marks(text: str) -> str:
    """The characters of ``text`` that write a number as one symbol, which NFKC would turn into
    digits (``①``, ``⑳``, ``⑴``, ``⒈``, ``²``): list markers and footnote numbers, never the
    digits of an amount. Empty for ASCII text and for kanji numerals (which NFKC keeps)."""
    if text.isascii():
        return ""
    return "".join(
        c
        for c in text
        if c.isnumeric()
        and not c.isdecimal()
        and any(d in "0123456789" for d in unicodedata.normalize("NFKC", c))
    )


def is_european(text: str) -> bool:
    """Digits written with a point between thousands and a comma before the decimals
    (``1.200,50``, ``1.200.000``): never read (``amount_problem`` says why)."""
    return bool(_EUROPEAN.fullmatch(digits_of(text)))


def digits_of(text: str) -> str:
    """The digits, commas and points of ``text`` as the readers compare it (``¥1.200`` →
    ``1.200``), for the questions a column asks of its points (``DOT_THOUSANDS``)."""
    return re.sub(NOT_DIGITS, "", normalize_cell_text(text))


def is_trailing_minus(text: str) -> bool:
    """Whether ``text`` writes its minus after the digits (``1,200-``), for notes on a column
    (call only for a text ``read_amount`` read)."""
    return bool(_TRAILING_MINUS.fullmatch(normalize_cell_text(text)))


def is_spaced_comma(text: str) -> bool:
    """Whether ``text`` writes a space beside a thousands comma (``1, 200``, ``１，　２００``),
    for a note on its column (call only for a text ``read_amount`` read)."""
    return bool(_SPACED_COMMA.search(normalize_cell_text(text)))


def is_dollar(text: str) -> bool:
    """Whether ``text`` is an amount written with ``$`` (a dollar amount: never yen, which
    ``table_types`` keeps apart from the yen amounts of a column)."""
    match = _AMOUNT.fullmatch(normalize_cell_text(text))
    return match is not None and match["cur"] == "$"


def ends_in_dash(text: str) -> bool:
    """Whether ``text``, as the readers compare it (``normalize_cell_text``), ends in ``-`` or
    ``ー``: the only cells whose dash after the digits ``dash_form`` may find. One look at the
    last character (its normal form, remembered per character): NFKC maps each character on
    its own, and neither mark is made by composing two, so the text's normal form ends in one
    exactly when its last character's does."""
    stripped = text.rstrip()
    return bool(stripped) and _dash_last(stripped[-1])


@functools.cache
def _dash_last(char: str) -> bool:
    return normalize_cell_text(char).endswith(("-", "ー"))


def dash_form(text: str) -> str | None:
    """How an amount cell stands to the dash after a yen amount, for a column's decision:
    ``"yen_dash"`` (``¥1,200-``, ``1,200円-``: end mark or minus), ``"trailing"`` (``1,200-``
    without a yen mark: a system's minus), ``"yen"`` (``¥1,200``, ``1,200円``: a yen amount
    with no sign and no dash), ``"unsigned"`` (another amount with no sign: ``1,200``), or
    None (not an amount, or signed otherwise: ``▲1,200``)."""
    if numeral_marks(text) or read_amount_unit(text, DASH_END) is None:
        return None
    match = _AMOUNT.fullmatch(normalize_cell_text(text))
    if match is None:  # pragma: no cover - read above
        return None
    yen = _marked(match) or (match["unit"] or "").endswith(("円", "JPY"))
    if match["tail"] or match["utail"]:
        return "yen_dash" if yen else "trailing"
    if match["open"] or match["sign"] or match["sign2"]:
        return None
    return "yen" if yen else "unsigned"


def read_amount(text: str, dash: str | None = None) -> int | float | None:
    """The amount ``text`` spells, or None (see the module docstring for the forms). An amount
    written with a larger unit (``1,200千円``) is None here: its number is not yen, and only a
    reader that keeps the unit (``read_amount_unit``) may read it. ``dash``: how the dash after
    a yen amount is read (``DASH_END``, ``DASH_MINUS``; None: not read, one cell cannot say)."""
    read = read_amount_unit(text, dash)
    if read is None or read[1] not in (None, "円"):
        return None
    return read[0]


def read_amount_unit(text: str, dash: str | None = None) -> tuple[int | float, str | None] | None:
    """The amount ``text`` spells and the unit written in it (``1,200千円`` → (1200, "千円"),
    ``￥1,200千`` → (1200, "千円"), ``1,200円`` → (1200, "円"), ``1,200`` → (1200, None)), or
    None. ``千``, ``万``, ``百万`` without ``円`` are a unit only after a currency mark.
    ``dash`` as for ``read_amount``."""
    if numeral_marks(text):
        return None
    norm = normalize_cell_text(text)
    match = _AMOUNT.fullmatch(norm)
    if match is None:
        return _places(norm)
    unit = "円" if match["unit"] == "JPY" else match["unit"]  # 1,200 JPY: a bank's yen
    if unit is not None and not unit.endswith("円"):
        if match["cur"] not in _YEN_MARKS:
            return None  # 1,200千: a count of thousands, not yen unless a yen mark says so
        unit += "円"
    parens = bool(match["open"]) + bool(match["close"])
    signs = [s for s in (match["sign"], match["sign2"]) if s]
    ended = False  # the dash after the digits read as the end mark
    if match["tail"] or match["utail"]:
        sign = _dash_sign(match, unit, dash)
        if sign is None:
            return None
        signs += [sign] if sign else []
        ended = not sign
    if (
        parens == 1
        or len(signs) > 1
        or (parens and signs)
        or not _receipt_marks(match, unit, ended)
    ):
        return None
    value = _unsigned_value(match)
    if value is None:
        return None
    if match["sen"]:
        if unit != "円" or match["frac"]:
            return None  # 銭 only after whole 円: 1,200円50銭
        value = float(Decimal(value) + Decimal(match["sen"]) / 100)
    negative = parens == 2 or (signs and signs[0] in _NEGATIVE_SIGNS)
    return (-value if negative else value), unit


def _places(norm: str) -> tuple[int, str] | None:
    """The yen of an amount written with 億・万・千 between its digits (``1万2,000円`` →
    (12000, "円"), ``▲1億2,345万円``), or None. One place alone (``12万円``, ``3千円``) is a
    unit (``read_amount_unit``), except 億, which is no unit of a ledger (``1億円``)."""
    match = _PLACES.fullmatch(norm)
    if match is None or not (match["yen"] or match["cur"]):
        return None
    oku, man, sen, rest = (int((match[g] or "0").replace(",", "")) for g in _PLACE_GROUPS)
    places = [g for g in _PLACE_GROUPS if match[g]]
    if (places in ([], ["man"], ["sen"], ["rest"])) or man >= 10_000:
        return None
    if rest >= (1_000 if match["sen"] else 10_000) or (match["rest"] or "").startswith("0,"):
        return None
    value = oku * 100_000_000 + man * 10_000 + sen * 1_000 + rest
    return (-value if match["sign"] in _NEGATIVE_SIGNS else value), "円"


# The groups of ``_PLACES``, from the highest place.
_PLACE_GROUPS = ("oku", "man", "sen", "rest")


def _dash_sign(match: re.Match[str], unit: str | None, dash: str | None) -> str | None:
    """The sign a dash after the digits (or after ``円``) writes: ``"-"`` (a trailing minus),
    ``""`` (the end mark of a yen amount), or None where it is not read: a yen amount's dash
    without its column's reading, ``ー`` or a dash after ``円`` as a minus, ``(1,200-)``."""
    if (match["tail"] and match["utail"]) or match["close"] or match["end"] or match["sen"]:
        return None
    if match["utail"]:  # after 円: no system writes its sign there; only the end mark
        return "" if dash == DASH_END and unit is not None and unit.endswith("円") else None
    if unit:
        return None  # 1,200-千円: the sign between the digits and the unit
    minus = match["tail"].strip() == "-"  # the long-vowel mark ー is never a minus
    if _marked(match):
        if dash == DASH_END:
            return ""
        return "-" if dash == DASH_MINUS and minus else None
    return "-" if minus else None


def _marked(match: re.Match[str]) -> bool:
    """Whether a currency mark (``¥``, ``$``) or ``金`` stands before the amount: then a dash
    after it may be the end mark (``dash``)."""
    return match["cur"] in _CURRENCY_MARKS or bool(match["kin"])


def _receipt_marks(match: re.Match[str], unit: str | None, ended: bool) -> bool:
    """Whether a receipt's marks around an amount stand where a receipt writes them: ``金``
    first and ``也`` last only around yen with no sign (``金1,200円也``; ``金12,000-`` where
    the dash is read as the end mark: ``ended``), ``※`` (the 止め that closes an amount)
    after it."""
    if match["kin"] or match["end"] == "也":
        dashed = bool(match["tail"] or match["utail"]) and not ended
        plain = not (match["open"] or match["sign"] or match["sign2"] or dashed)
        return plain and (match["end"] != "也" or unit == "円")
    return True


def read_percent(text: str) -> float | None:
    """The fraction a percentage spells (``10%`` → 0.1, ``△3%`` → -0.03), or None."""
    match = _PERCENT.fullmatch(normalize_cell_text(text))
    if match is None:
        return None
    value = float(Decimal(match["num"]) / 100)
    return -value if match["sign"] in _NEGATIVE_SIGNS else value


def _unsigned_value(match: re.Match[str]) -> int | float | None:
    """The number of a match's ``int`` (thousands commas allowed) and ``frac`` groups, or None
    for digits with a leading zero, which are a code (``0123``), not a number."""
    digits = match["int"].replace(",", "").replace(" ", "")
    if len(digits) > 1 and digits.startswith("0"):
        return None
    return float(digits + match["frac"]) if match["frac"] else int(digits)


def amount_problem(text: str) -> str:
    """Why ``text`` is not an amount, in Japanese (for a text ``read_amount`` refused)."""
    norm = normalize_cell_text(text)
    if not norm:
        return "空欄です"
    marks = numeral_marks(text)
    if marks:
        shown = "".join(dict.fromkeys(marks))[:10]
        return f"丸数字などの番号の記号（{shown}）は金額として読みません"
    if dash_form(norm) == "yen_dash":
        return _UNIT_DASH_PROBLEM if re.search(r"円\s*[-ー]$", norm) else YEN_DASH_PROBLEM
    if is_dollar(norm):  # read alone: refused only beside yen amounts
        return DOLLAR_AMONG_YEN
    if norm.count("(") != norm.count(")"):
        return "括弧が閉じていません"
    if read_percent(norm) is not None:
        return f"百分率（{norm}）は金額として読みません"
    read = read_amount_unit(norm)
    if read is not None:  # a larger unit: read only where the column's unit is known
        return (
            f"{read[1]}単位の金額です（円の金額としては読みません。列のほかのセルと単位を"
            "そろえてください）"
        )
    if is_european(norm):
        return (
            "小数点にカンマ、桁区切りに点を使う書き方（1.200,50）は、どちらが小数点か"
            "決められないため読みません（1,200.50 のように書いてください）"
        )
    if "銭" in norm:
        return "銭は 1,200円50銭 のように、円の後に 2 桁までで書いてください"
    if re.fullmatch(r"[-+]?[0-9]+(?:\.[0-9]+)?[eE][-+]?[0-9]+", norm):
        return (
            "指数の表記（1.2E+06）は、Excel が丸めて表示した値（標準の表示形式の 12 桁以上の数値や"
            "幅の狭い列）を CSV に保存したもので、元の金額が分かりません（Excel で列の表示形式を"
            "数値にしてから保存し直してください）"
        )
    if any(c in norm for c in "億万千") and any(c.isdigit() for c in norm):
        return (
            "億・万・千の位で書いた金額は、1万2,000円・1億2,345万円 のように各位の数字を次の位より"
            "小さく書き、円を付けてください（万円・千円だけの金額は列の単位として読みます）"
        )
    stray = [
        c for c in norm.replace("赤字", "") if not (c.isdigit() or c in ",.¥\\$円()-+▲△ 金也※")
    ]
    if stray:
        shown = "".join(dict.fromkeys(stray))[:10]
        return f"数字以外の文字（{shown}）を含みます"
    if not any(c.isdigit() for c in norm):
        return "数字がありません（記号や 赤字・金・也 だけでは金額になりません）"
    digits = re.sub(r"[^0-9,.]", "", norm)
    if re.fullmatch(r"0[0-9]+(?:\.[0-9]+)?", digits.replace(",", "")):
        return "先頭が 0 の数字は番号（コード）として扱います"
    if re.search(r"[0-9] +[0-9]", norm):
        return (
            "数字の間に空白があり、一つの金額か二つの数か決められません（1,200 のようにカンマで"
            "区切るか、空白を消してください）"
        )
    if "," in digits and not re.fullmatch(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?", digits):
        return "桁区切りのカンマの位置が正しくありません"
    if digits.count(".") > 1:
        return "小数点が 2 つ以上あります"
    if sum(norm.count(s) for s in ("-", "+", "▲", "△", "赤字")) + ("(" in norm) > 1:
        return "マイナスの書き方（-・▲・△・括弧・末尾の -）が重なっています"
    if re.search(r"[円)]\s*-$", norm):
        return "末尾のマイナスは数字のすぐ後に書いてください（1,200-）"
    if "金" in norm or "也" in norm:
        return "金・也は 金1,200円也 のように、符号のない円の金額の前後に書いたときだけ読みます"
    return "金額の書き方として読めません"


def _era_year(era: str, year: str) -> int:
    return ERAS[era] + (1 if year == "元" else int(year))


def _hour(match: re.Match[str]) -> int | None:
    """The hour of a matched ``_TIME`` on the 24-hour clock, or None: 午前/午後 (or AM/PM)
    with an hour above 12, or with 12 itself after 午前/午後 (noon or midnight: written both
    ways in Japan), or two markers."""
    hour = int(match["H"])
    marks = [m for m in (match["ap"], match["ap2"]) if m]
    if not marks:
        return hour
    mark = marks[0].replace(".", "").upper()
    if len(marks) > 1 or hour > 12 or (hour == 12 and mark in ("午前", "午後")):
        return None
    return hour % 12 + (12 if mark in ("午後", "PM") else 0)


def _time(match: re.Match[str], day: dt.date) -> dt.date | dt.datetime | None:
    if match["H"] is None:
        return day
    hour = _hour(match)
    minute = 30 if match["half"] else int(match["M"] or match["Mj"] or 0)
    second = int(match["S"] or match["Sj"] or 0)
    micro = int((match["f"] or ".0")[1:7].ljust(6, "0"))
    if hour is None:
        return None
    try:
        stamp = dt.datetime(day.year, day.month, day.day, hour, minute, second, micro)
    except ValueError:
        return None
    if _zone_doubt(match):
        return None
    zone = _zone(match, stamp)
    if isinstance(zone, str):
        return None
    return stamp.replace(tzinfo=zone)


def _zone(match: re.Match[str], stamp: dt.datetime) -> dt.timezone | str | None:
    """The zone written after a matched ``_TIME`` (None where none is written), or why it is
    not read, in Japanese: a name of two zones (``CST``: ``_AMBIGUOUS_ZONES``) or of none, an
    offset no zone has (``+25:00``), or a name beside the offset that is another zone's
    (``+09:00[America/New_York]``, ``GMT+0900 (PST)``). The offset decides; a description in
    words (``GMT+0900 (日本標準時)``, ``(Pacific Standard Time)``) only names it."""
    tz = (match["tz"] or match["tzp"] or "").upper()  # pst, Jst, utc: as PST, JST, UTC
    if not tz:
        return None
    if tz in _AMBIGUOUS_ZONES:
        return f"時差の名前 {tz} は{_AMBIGUOUS_ZONES[tz]}の両方に使われ、時差が決まりません"
    if tz[0] in "+-" or match["tzg"]:
        sign = -1 if "-" in tz else 1
        hours, _, minutes = re.sub(r"^[A-Z]*\s*[+-]", "", tz).partition(":")
        if not minutes and len(hours) > 2:
            hours, minutes = hours[:-2], hours[-2:]
        offset = dt.timedelta(hours=int(hours), minutes=int(minutes or 0))
        if offset > _MAX_OFFSET or int(minutes or 0) >= 60:
            return f"時差 {tz} はどの地域の時差でもありません（+14:00 までです）"
        offset = sign * offset
    elif tz in _ZONE_NAMES:
        offset = dt.timedelta(minutes=_ZONE_NAMES[tz])
    else:
        return f"時差の名前 {tz} が分かりません"
    named = _named_offset(match["tzl"], match["tzi"], stamp)
    if named == dt.timedelta.max:
        return f"時差の後の地域の名前 {match['tzi']} が分かりません"
    if named is not None and named != offset:
        return (
            f"時差 {tz} と、その後の地域の名前（{match['tzl'] or match['tzi']}）の時差が合いません"
        )
    return dt.timezone(offset)


def _named_offset(label: str | None, iana: str | None, stamp: dt.datetime) -> dt.timedelta | None:
    """The offset a bracket after a time's zone names at ``stamp``: a zone's abbreviation
    (``(JST)``) or IANA name in any case (``[Asia/Tokyo]``, ``[asia/tokyo]``; one not known names no offset we can check,
    ``dt.timedelta.max``); None for a description in words (``(日本標準時)``)."""
    if label is not None:
        name = label.strip().upper()
        return dt.timedelta(minutes=_ZONE_NAMES[name]) if name in _ZONE_NAMES else None
    if iana is None:
        return None
    key = _iana_names().get(iana.casefold())  # asia/tokyo, ASIA/TOKYO: Asia/Tokyo
    if key is None:
        return dt.timedelta.max
    try:
        return stamp.replace(tzinfo=ZoneInfo(key)).utcoffset()
    except (ValueError, KeyError):  # ZoneInfoNotFoundError is a KeyError
        return dt.timedelta.max


@functools.cache
def _iana_names() -> dict[str, str]:
    """The IANA zone names ``zoneinfo`` knows, by their case-folded spelling; names that differ
    only in case (none in today's database) are left out: which one is meant is not known."""
    names = sorted(zoneinfo.available_timezones())
    folded = Counter(name.casefold() for name in names)
    return {name.casefold(): name for name in names if folded[name.casefold()] == 1}


def _zone_reason(match: re.Match[str], day: dt.date) -> str | None:
    """Why the zone written after the time of a date ``read_date`` refused is not read, for
    ``date_problem`` (None where the zone is read or none is written)."""
    if match["H"] is None:
        return None
    reason = _zone(match, dt.datetime(day.year, day.month, day.day, min(int(match["H"]), 23)))
    if not isinstance(reason, str):
        return None
    return f"{reason}（2026-02-03T10:00:00+09:00 のように時差を数字で書いてください）"


def _zone_doubt(match: re.Match[str]) -> bool:
    """Whether the minus after a time (``10:00-12:00``) may end a time range as well as start
    a zone: no seconds and no ``T`` (``10:00:00-05:00`` and ``T10:00-05:00`` are ISO 8601)."""
    tz = match["tz"] or ""
    return tz.startswith("-") and not match["S"] and not match["iso"]


def _same_separators(first: str, second: str) -> bool:
    """``2026/2/3`` and ``2026年2月3日``, not ``2026/2-3`` or ``2026年2/3``."""
    return (first, second) == ("年", "月") or (first == second and first not in "年月")


def _day(year: int, month: str, day: str) -> dt.date | None:
    """The day, or None where it does not exist; ``末`` (``2026年2月末日``: 月末, as payment
    terms write it) is the month's last day."""
    try:
        if day == "末":
            return dt.date(year, int(month), calendar.monthrange(year, int(month))[1])
        return dt.date(year, int(month), int(day))
    except ValueError:
        return None


def _weekday_clash(match: re.Match[str], day: dt.date) -> str | None:
    """The weekday written beside ``day`` when it is not ``day``'s (``2026年2月3日(水)``,
    ``Wed, 3 Feb 2026``: the 3rd is a Tuesday), else None (none written, or 祝, which names
    no weekday)."""
    groups = [g for g in ("w", "w2", "ew") if g in match.re.groupindex]
    written = next((match[g] for g in groups if match[g]), None)
    if written is None or written == "祝":
        return None
    number = (
        WEEKDAYS.index(written) if written in WEEKDAYS else _EN_WEEKDAYS.index(written[:3].lower())
    )
    return None if number == day.weekday() else written


def _written_day(match: re.Match[str], year: int) -> dt.date | dt.datetime | None:
    """The date (and time) of a matched ``_YMD`` or ``_ERA_YMD``, or None when it does not
    exist or its weekday is not the date's (which of the two is wrong cannot be known)."""
    if not _same_separators(match["s1"], match["s2"]):
        return None
    day = _day(year, match["m"], match["d"])
    if day is None or _weekday_clash(match, day) is not None:
        return None
    return _time(match, day)


def read_date(text: str, order: str | None = None) -> dt.date | dt.datetime | None:
    """The date (or date and time) ``text`` spells, or None (forms: the module docstring).
    ``order`` (``DAY_FIRST`` or ``MONTH_FIRST``): how the column of ``text`` writes a date
    with its year last (``02/03/2026``), which one cell cannot say (``day_order``); without
    it such a date is not read."""
    norm = normalize_cell_text(text)
    if match := _YMD.fullmatch(norm):
        return _written_day(match, int(match["y"]))
    if match := _COMPACT.fullmatch(norm) or _ZONED_DAY.fullmatch(norm):
        return _day(int(match["y"]), match["m"], match["d"])
    if match := _ERA_YMD.fullmatch(norm.upper() if norm.isascii() else norm):
        return _written_day(match, _era_year(match["era"], match["y"]))
    if order is not None and (match := _DMY.fullmatch(norm)):
        return _ordered_day(match, order)
    return _named_month_day(norm)


def _ordered_day(match: re.Match[str], order: str) -> dt.date | dt.datetime | None:
    """The date (and time) of a matched ``_DMY`` read in ``order``, or None."""
    if match["s1"] != match["s2"]:
        return None
    month, day = (match["b"], match["a"]) if order == DAY_FIRST else (match["a"], match["b"])
    found = _day(int(match["y"]), month, day)
    if found is None or _weekday_clash(match, found) is not None:
        return None
    return _time(match, found)


def day_order(text: str) -> str | None:
    """For a date with its year last (``13/02/2026``, ``2/13/2026``): the order it shows,
    ``DAY_FIRST`` where its first number is above 12, ``MONTH_FIRST`` where its second is;
    ``""`` where both could be the month (``02/03/2026``); None for any other text. A column
    reads such dates in the one order its cells show (``table_types``)."""
    match = _DMY.fullmatch(normalize_cell_text(text))
    if match is None or match["s1"] != match["s2"]:
        return None
    first, second = int(match["a"]), int(match["b"])
    if first > 12 >= second:
        return DAY_FIRST
    if second > 12 >= first:
        return MONTH_FIRST
    return "" if first <= 12 and second <= 12 else None


def _named_month_day(norm: str) -> dt.date | dt.datetime | None:
    """The date (and time) of ``norm`` written with an English month name (``3-Feb-2026``,
    ``03/Feb/2026``, ``Feb 3, 2026``, ``Tue, 3 Feb 2026``), or None (a weekday that is not
    the date's too)."""
    for pattern in _NAMED_MONTH_DATES:
        if match := pattern.fullmatch(norm):
            day = _day(int(match["y"]), str(_MONTH_NAMES[match["mon"].lower()]), match["d"])
            if day is None or _weekday_clash(match, day) is not None:
                return None
            return _time(match, day)
    return None


def era_outside(text: str) -> str | None:
    """For a 和暦 date ``read_date`` read that is not a day of its era (``平成31年5月1日``,
    ``令和元年4月1日``): the era's span in Japanese, for a note; else None."""
    norm = normalize_cell_text(text)
    match = _ERA_YMD.fullmatch(norm.upper() if norm.isascii() else norm)
    if match is None:
        return None
    base = ERAS[match["era"]]
    day = _day(_era_year(match["era"], match["y"]), match["m"], match["d"])
    first, last = _ERA_DAYS[base]
    if day is None or first <= day <= last:
        return None
    name = next(n for n, b in ERAS.items() if b == base)  # the era's full name comes first
    span = f"{first:%Y/%m/%d}〜" + ("" if last == dt.date.max else f"{last:%Y/%m/%d}")
    return f"{name}は {span}"


def is_month_day(text: str) -> bool:
    """A month and day without a year (``2/3``, ``2月3日``, ``2月3日(火)``), which
    ``read_date`` does not read: the year would have to be guessed."""
    return month_day(text) is not None


def month_day(text: str) -> tuple[int, int, str | None] | None:
    """The month, the day and the weekday written (``月``...``日``, or None) of a month and
    day without a year (``2/3``, ``2月3日(火)``), or None (``cell_period`` reads them in a
    period a title names)."""
    match = _MONTH_DAY.fullmatch(normalize_cell_text(text))
    if match is None:
        return None
    day = _day(2000, match["m"], match["d"] or match["dj"])  # 2000: has 2/29
    if day is None:
        return None
    weekday = match["w"] or match["w2"]
    return day.month, day.day, None if weekday == "祝" else weekday


def local_zone(zone: dt.tzinfo | None = None) -> dt.tzinfo:
    """The zone times with an offset are read in: ``zone`` (a reader's ``KEIRI_TIMEZONE``),
    else ``config.DEFAULT_TIMEZONE``."""
    return zone or ZoneInfo(DEFAULT_TIMEZONE)


def local_time(value: dt.datetime, zone: dt.tzinfo | None = None) -> dt.datetime:
    """``value`` as a naive wall-clock time: one with a UTC offset first turned into
    ``local_zone(zone)``'s time (the same moment reads the same whatever offset it was
    written with), one without an offset as written."""
    if value.tzinfo is None or value.utcoffset() is None:
        return value
    return value.astimezone(local_zone(zone)).replace(tzinfo=None)


def read_month(text: str) -> YearMonth | None:
    """The month ``text`` names (``2026年2月``, ``2026/02``, ``R8.2``), or None."""
    norm = normalize_cell_text(text)
    match = _YM.fullmatch(norm)
    if match is not None:
        year = int(match["y"])
    else:
        match = _ERA_YM.fullmatch(norm.upper() if norm.isascii() else norm)
        if match is None:
            return None
        year = _era_year(match["era"], match["y"])
    month = int(match["m"] or match["mj"])
    return YearMonth(year, month) if 1 <= month <= 12 and 1 <= year <= 9999 else None


def _clash_problem(written: str, day: dt.date) -> str:
    """Why a date whose weekday is not the one written beside it is not read."""
    return (
        f"曜日（{written}）が日付と合いません（{day.year}年{day.month}月{day.day}日は"
        f"{WEEKDAYS[day.weekday()]}曜日です）。日付と曜日のどちらが正しいか確かめてください"
    )


def _year_last_problem(norm: str) -> str:
    """Why a date with its year last is not read: its column shows no order (every day 12 or
    below), or both orders (it is a day in the order it shows), or it is no day."""
    shown = day_order(norm)
    if shown == "":
        return (
            "年が最後に書かれた日付で、列のどのセルも日と月が 12 以下のため、月/日/年 か "
            "日/月/年 か決められません（13 日以降の日付のある列はその並びで読みます。"
            "2026/2/3 のように年から書いてください）"
        )
    if shown and read_date(norm, shown) is not None:  # 13/02/2026 beside 02/13/2026
        return (
            "年が最後に書かれた日付で、列に 日/月/年 と 月/日/年 の両方の並びがあり、どちらで"
            "読むか決められません（2026/2/3 のように年から書いてください）"
        )
    return (
        "年が最後に書かれた日付として読めません（存在しない日付か時刻か、区切りか曜日が合いません）"
    )


def date_problem(text: str) -> str:
    """Why ``text`` is not a date, in Japanese (for a text ``read_date`` refused)."""
    norm = normalize_cell_text(text)
    if not norm:
        return "空欄です"
    if _YEAR_LAST.fullmatch(norm):
        return _year_last_problem(norm)
    if _SHORT_YEAR.fullmatch(norm) or _NAMED_MONTH_SHORT_YEAR.fullmatch(norm):
        return "年が 2 桁のため、何年か決められません（2026/2/3 のように 4 桁で書いてください）"
    match = _YMD.fullmatch(norm) or _ERA_YMD.fullmatch(norm.upper() if norm.isascii() else norm)
    if match is not None and not _same_separators(match["s1"], match["s2"]):
        return "年・月・日の区切りの書き方がそろっていません"
    if match is not None:
        year = _era_year(match["era"], match["y"]) if "era" in match.re.groupindex else None
        day = _day(year or int(match["y"]), match["m"], match["d"])
        clash = None if day is None else _weekday_clash(match, day)
        if day is not None and clash is not None:
            return _clash_problem(clash, day)
        if day is not None and match["H"] is not None and _zone_doubt(match):
            return (
                f"時刻の後の「{match['tz']}」が、時刻の範囲の終わりか時差か決められません（範囲なら"
                "開始と終了を別の列に、時差なら 2026-02-03T10:00:00-05:00 のように秒まで書いてください）"
            )
        if day is not None and (zone := _zone_reason(match, day)) is not None:
            return zone
        if day is not None and match["H"] is not None and _hour(match) is None:
            return (
                "午前・午後と時刻の書き方が合いません（午後12時は正午とも午前0時とも読めます。"
                "15:30 のように 24 時間で書いてください）"
            )
        return "存在しない日付か時刻です"
    named = next(filter(None, (p.fullmatch(norm) for p in _NAMED_MONTH_DATES)), None)
    if named is not None:
        day = _day(int(named["y"]), str(_MONTH_NAMES[named["mon"].lower()]), named["d"])
        clash = None if day is None else _weekday_clash(named, day)
        if day is not None and clash is not None:
            return _clash_problem(clash, day)
        if day is not None and (zone := _zone_reason(named, day)) is not None:
            return zone
        return "存在しない日付か時刻です"
    if _TIME_RANGE.fullmatch(norm):
        return "時刻の範囲（開始と終了）は 1 つの日時として読めません（開始と終了を別の列に書いてください）"
    if is_month_day(norm):
        return (
            "年が書かれていないため、何年の日付か決められません（2026/2/3 のように年も書くか、"
            "表の上の行に「2026年2月分」「期間：2026/4/1～2027/3/31」のように期間を書いてください）"
        )
    if _ERALESS.fullmatch(norm):
        return "元号（令和・平成など）が書かれていないため、何年か決められません（令和8年2月3日 のように書いてください）"
    if _COMPACT.fullmatch(norm) or re.fullmatch(r"[0-9]{8}", norm):
        return "8 桁の数字が年月日（19000101〜20991231 の実在する日）になっていません"
    return "日付の書き方として読めません"
