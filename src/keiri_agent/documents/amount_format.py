"""How an amount is shown to people: the one rule for the app, Markdown, Excel and the CLI.

An amount column (whole numbers, a name unlike a code or a calendar part) is shown with
thousands separators (``165,000``); its unit, when the source named one (``千円``, kept in
``Table.units``), goes into the column's header (``金額（千円）``), never into the numbers
(they are as written, never converted). A negative amount is shown as the setting
``KEIRI_NEGATIVE_AMOUNTS`` says, in every place alike:

* ``triangle`` (the default, as Japanese ledgers write it): ``△660``; Excel ``#,##0;"△"#,##0``
* ``minus``: ``-660``; Excel ``#,##0``
* ``parens`` (accounting style): ``(660)``; Excel ``#,##0;(#,##0)``
* ``red``: ``-660`` in red where colour can be shown (Excel ``#,##0;[Red]-#,##0``, the app)

Rows whose first cells name a total (合計, 小計, 営業部 計: ``documents.table_totals``) are the
rows to emphasise; :func:`total_row_flags` finds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from keiri_agent.documents.table_totals import is_total_label
from keiri_agent.documents.table_types import is_id_header
from keiri_agent.documents.table_value import json_cell

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = [
    "DEFAULT_NEGATIVE_STYLE",
    "DIGITS_FORMAT",
    "GENERAL_DIGITS",
    "NEGATIVE_STYLES",
    "AmountFormat",
    "NegativeStyle",
    "header_label",
    "is_amount_column",
    "shows_exponent",
    "total_row_flags",
]

NegativeStyle = Literal["triangle", "minus", "parens", "red"]
NEGATIVE_STYLES: Final[tuple[str, ...]] = get_args(NegativeStyle)
DEFAULT_NEGATIVE_STYLE: Final[NegativeStyle] = "triangle"
# How each style writes a negative amount: as text ({} is the digits) and as the negative
# section of an Excel number format ({} is the positive section; None: Excel's own minus).
_NEGATIVE_FORMS: Final[dict[NegativeStyle, tuple[str, str | None]]] = {
    "triangle": ("△{}", '"△"{}'),
    "minus": ("-{}", None),
    "parens": ("({})", "({})"),
    "red": ("-{}", "[Red]-{}"),
}
TOTAL_LABEL_CELLS: Final = 2  # a total's label stands in one of its first two non-blank cells
# Excel's General format shows a whole number of more digits than this in exponent form.
GENERAL_DIGITS: Final = 11
DIGITS_FORMAT: Final = "0"
# Integer columns named like codes or calendar parts are not amounts: no thousands separator.
_NOT_AMOUNT: Final = re.compile(r"(id|code|no\.?|番号|コード|年|年度|月|日|№)$", re.IGNORECASE)


@dataclass(frozen=True)
class AmountFormat:
    """How amounts are shown: separators always, negatives by ``negative``."""

    negative: NegativeStyle = DEFAULT_NEGATIVE_STYLE

    @classmethod
    def of(cls, settings: Settings | None) -> AmountFormat:
        """The format ``settings`` ask for (``KEIRI_NEGATIVE_AMOUNTS``); the default without."""
        return cls(settings.keiri_negative_amounts) if settings is not None else cls()

    def text(self, value: Any, digits: int | None = None, *, prefix: str = "") -> str:
        """``value`` as people read it: ``1,234,567``; ``digits`` rounds half up; a negative as
        the style says (``△660``); ``prefix`` goes before the digits (``¥`` → ``△¥660``).
        None (a blank cell) is empty; a value that is not a number is its own text."""
        number = _decimal(value)
        if number is None:
            return "" if value is None else str(value)
        if digits is not None:
            number = number.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
            body = f"{abs(number):,.{digits}f}"
        elif number == number.to_integral_value():
            body = f"{int(abs(number)):,}"
        else:
            body = f"{abs(number).normalize():,f}"
        body = prefix + body
        if number >= 0:
            return body
        return _NEGATIVE_FORMS[self.negative][0].format(body)

    def excel(self, digits: int = 0) -> str:
        """The Excel number format of an amount column."""
        base = "#,##0" + ("." + "0" * digits if digits > 0 else "")
        negative = _NEGATIVE_FORMS[self.negative][1]
        return base if negative is None else f"{base};{negative.format(base)}"

    def is_red(self, value: Any) -> bool:
        """Whether ``value`` is shown in red (a negative amount, with the ``red`` style)."""
        number = _decimal(value)
        return self.negative == "red" and number is not None and number < 0


def _decimal(value: Any) -> Decimal | None:
    value = json_cell(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return Decimal(value) if isinstance(value, int) else Decimal(repr(value))
    except InvalidOperation:  # inf, nan
        return None


def is_amount_column(column: str, values: Iterable[Any]) -> bool:
    """Whether a column holds amounts (shown with separators): every value a whole number,
    and a name unlike a code or a calendar part (番号, 年, 月, 行...): an identifier's header
    (取引先ＣＤ, 顧客ＩＤ, 伝票Ｎｏ．, 社員コード（旧）: ``table_types.is_id_header``) shows
    its codes as written, 1001 never 1,001."""
    numbers = [v for v in map(json_cell, values) if v is not None]
    return (
        bool(numbers)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in numbers)
        and not _NOT_AMOUNT.search(column.strip())
        and not is_id_header(column)
    )


def shows_exponent(value: Any) -> bool:
    """Whether Excel's General format shows ``value`` as ``1.23457E+12``: a whole number of
    more than ``GENERAL_DIGITS`` digits (a 法人番号, a JAN code); such a number is written
    with ``DIGITS_FORMAT``, every digit and no separator, by every Excel writer."""
    value = json_cell(value)
    return (
        isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**GENERAL_DIGITS
    )


def header_label(column: str, unit: str | None) -> str:
    """A column's header with its unit (``金額（千円）``) unless the name already says it."""
    return f"{column}（{unit}）" if unit and unit not in column else column


def total_row_flags(
    records: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None
) -> list[bool]:
    """For each record, whether it is a total row (合計, 小計, 営業部 計... in one of its first
    two non-blank cells) to be emphasised."""
    names = (
        list(columns) if columns is not None else list(dict.fromkeys(k for r in records for k in r))
    )
    flags = []
    for record in records:
        cells = [v for v in (record.get(c) for c in names) if v not in (None, "")]
        flags.append(any(is_total_label(v) for v in cells[:TOTAL_LABEL_CELLS]))
    return flags
