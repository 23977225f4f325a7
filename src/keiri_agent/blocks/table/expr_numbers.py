"""Exact numbers for ``table.compute``: whole columns of decimals and fractions, never floats.

A column of numbers is ``ints / (10**scale * den)`` with a blank mask: a decimal column has no
``den`` (0.1 is 1 at scale 1), a quotient keeps its divisor in ``den`` (1 / 3 stays one third),
so every operation is exact: 0.1 + 0.2 = 0.3, rounddown(100005 * 0.1, 0) = 10000,
[金額] / 3 * 3 = [金額], and ``round`` / ``rounddown`` / ``roundup`` of a quotient decide from
the exact remainder. ``ints`` and ``den`` are ``int64`` while every value fits and Python ints
(object arrays) when one would not, so nothing overflows, at numpy's speed for the amounts
ledgers hold. A value becomes a float only as the table holds it (:meth:`Decimals.output`): the
float nearest to the exact value. Blank rows hold 0 (and ``den`` 1).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

import numpy as np
import pandas as pd

from keiri_agent.blocks.table.column_values import exact_scale

__all__ = [
    "FLOAT_MAX_SCALE",
    "ORDER",
    "ROUNDINGS",
    "Decimals",
    "choose",
    "compare",
    "divide",
    "extreme",
    "plus",
    "repeated",
    "times",
    "with_nones",
]

FLOAT_MAX_SCALE: Final = 17  # decimals a float cell is read with before Decimal(repr) takes over
ROUNDINGS: Final = ("round", "rounddown", "roundup")  # half away from zero, to zero, from zero
# The comparisons of the expression language, as operators on whole arrays.
ORDER: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_INT64_MAX: Final = 2**63 - 1
_INT_IN_FLOAT: Final = 2**53  # float64 holds every integer below this
_EXACT_POWERS: Final = 22  # 10.0**n is exact in float64 up to this n
# Fractions are brought to lower terms (a gcd: slow) only when their numbers grow past this.
_REDUCE_ABOVE: Final = 2**40

Ints = np.ndarray  # int64, or object (Python ints)


@dataclass(frozen=True)
class Decimals:
    """A column of exact numbers: ``ints / (10**scale * den)``, blank where ``blank``."""

    ints: Ints
    scale: int
    blank: np.ndarray  # bool
    den: Ints | None = None  # > 0 (1 on blank rows); None: 1 on every row

    # --- making columns -----------------------------------------------------------------------

    @classmethod
    def constant(cls, value: Decimal, rows: int) -> Decimals:
        """``value`` on every row."""
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # literals are finite
        number = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        number *= 10 ** max(0, exponent)
        ints = repeated(number, rows, np.int64 if abs(number) <= _INT64_MAX else object)
        return cls(ints, max(0, -exponent), repeated(False, rows, bool))

    @classmethod
    def from_ints(cls, ints: np.ndarray, blank: np.ndarray) -> Decimals:
        """Whole numbers (an integer column; ``blank`` rows ignored)."""
        return cls(np.where(blank, 0, ints).astype(np.int64), 0, blank)

    @classmethod
    def from_floats(cls, values: np.ndarray) -> Decimals:
        """Floats (NaN blank), each the decimal it reads as (``Decimal(repr(v))``)."""
        blank = np.isnan(values)
        scale = exact_scale(values, FLOAT_MAX_SCALE)
        if scale is not None:
            ints = np.round(np.where(blank, 0.0, values) * 10.0**scale).astype(np.int64)
            return cls(ints, scale, blank)
        exact = [Decimal(repr(v)) for v in values.tolist()]  # more digits than a scale holds
        scale = max([0, *(-int(d.as_tuple().exponent) for d in exact if d.is_finite())])
        cells = [
            0 if b else int(d.scaleb(scale)) for d, b in zip(exact, blank.tolist(), strict=True)
        ]
        return cls(_narrow(np.array(cells, dtype=object)), scale, blank)

    # --- one column ---------------------------------------------------------------------------

    def at_scale(self, scale: int) -> Decimals:
        """The same values with ``scale`` (>= this one's) decimals."""
        if scale == self.scale:
            return self
        ints = _mul(self.ints, 10 ** (scale - self.scale))
        return Decimals(ints, scale, self.blank, self.den)

    def negated(self) -> Decimals:
        return Decimals(-self.ints, self.scale, self.blank, self.den)

    def absolute(self) -> Decimals:
        return Decimals(np.abs(self.ints), self.scale, self.blank, self.den)

    def rounded(self, digits: int, how: str) -> Decimals:
        """Rounded to ``digits`` decimals (negative: tens, hundreds...) as ``how`` says
        (:data:`ROUNDINGS`: half away from zero, toward zero, away from zero)."""
        if self.den is None and digits >= self.scale:
            return self
        numerator = _mul(np.abs(self.ints), 10 ** max(0, digits - self.scale))
        divisor = self._divisor(10 ** max(0, self.scale - digits))
        kept, rest = _divmod(numerator, divisor)
        if how == "round":
            kept = _plus_flags(kept, rest >= divisor - rest)
        elif how == "roundup":
            kept = _plus_flags(kept, rest > 0)
        signed = np.where(self.ints < 0, -kept, kept)
        if digits < 0:
            return Decimals(_narrow(_mul(signed, 10**-digits)), 0, self.blank)
        return Decimals(_narrow(signed), digits, self.blank)

    def _divisor(self, power: int) -> Ints | int:
        """``power * den``, or ``power`` alone for a decimal column."""
        return power if self.den is None else _mul(self.den, power)

    # --- as the table holds it ----------------------------------------------------------------

    def output(self) -> pd.Series:
        """The column as a table holds numbers: whole numbers as integers (``Int64`` with
        blanks), others as floats (the nearest float to each exact value), blanks as NA."""
        divisor = self._divisor(10**self.scale)
        whole, rest = _divmod(self.ints, divisor)
        ints = self.ints
        if not bool(np.any(rest)):
            whole = _narrow(whole)
            if whole.dtype == object:  # beyond int64: Python ints, as Decimal gave them
                return with_nones(whole, self.blank)
            if self.blank.any():
                return pd.Series(pd.arrays.IntegerArray(whole, self.blank.copy()))
            return pd.Series(whole)
        if isinstance(divisor, int):
            exact = _fits_float(ints) and self.scale <= _EXACT_POWERS
            values = ints.astype(np.float64) / float(divisor) if exact else None
        else:
            exact = _fits_float(ints) and _fits_float(divisor)
            values = ints.astype(np.float64) / divisor.astype(np.float64) if exact else None
        if values is None:  # Python's int / int is correctly rounded at any size
            divisors = [divisor] * len(ints) if isinstance(divisor, int) else divisor.tolist()
            values = np.array(
                [int(i) / int(d) for i, d in zip(ints.tolist(), divisors, strict=True)],
                dtype=np.float64,
            )
        values = np.where(self.blank, np.nan, values)  # IEEE division: one rounding
        large = (rest == 0) & (np.abs(whole) >= _INT_IN_FLOAT)
        if large.any():  # whole numbers a float cannot hold stay integers, as Decimal gave them
            cells = values.astype(object)
            cells[large] = [int(v) for v in whole[large].tolist()]
            return pd.Series(cells, dtype="object")
        return pd.Series(values)


# --- two columns ---------------------------------------------------------------------------------


def _cross(a: Decimals, b: Decimals) -> tuple[Ints, Ints, int, Ints | None]:
    """``a`` and ``b`` over one scale and one denominator: ``(a_ints, b_ints, scale, den)``."""
    scale = max(a.scale, b.scale)
    left, right = a.at_scale(scale).ints, b.at_scale(scale).ints
    if a.den is None and b.den is None:
        return left, right, scale, None
    if a.den is b.den:
        return left, right, scale, a.den
    if b.den is not None:
        left = _mul(left, b.den)
    if a.den is not None:
        right = _mul(right, a.den)
    den = b.den if a.den is None else a.den if b.den is None else _mul(a.den, b.den)
    return left, right, scale, den


def plus(a: Decimals, b: Decimals, *, minus: bool = False) -> Decimals:
    """``a + b`` (or ``a - b``), blank where either is."""
    left, right, scale, den = _cross(a, b)
    if _peak(left) + _peak(right) > _INT64_MAX:
        left, right = _wide(left), _wide(right)
    ints = left - right if minus else left + right
    return _reduced(ints, scale, a.blank | b.blank, den)


def times(a: Decimals, b: Decimals) -> Decimals:
    """``a * b``, blank where either is."""
    den = b.den if a.den is None else a.den if b.den is None else _mul(a.den, b.den)
    return _reduced(_mul(a.ints, b.ints), a.scale + b.scale, a.blank | b.blank, den)


def divide(a: Decimals, b: Decimals) -> tuple[Decimals, np.ndarray]:
    """``(a / b, zero)``: the exact quotient, blank where either is blank or ``b`` is 0, and
    the rows where ``b`` is 0."""
    blank = a.blank | b.blank
    zero = ~blank & (b.ints == 0)
    blank = blank | zero
    # a / b = a.ints * b.den * 10**b.scale / (10**a.scale * a.den * b.ints)
    ints = np.where(blank, 0, a.ints)
    ints = np.where(b.ints < 0, -ints, ints)
    if b.den is not None:
        ints = _mul(ints, b.den)
    ints = _mul(ints, 10**b.scale)
    den = np.where(blank, 1, np.abs(b.ints))
    if a.den is not None:
        den = _mul(den, a.den)
    return _reduced(ints, a.scale, blank, den), zero


def compare(a: Decimals, b: Decimals, op: str) -> np.ndarray:
    """``a <op> b`` row by row (meaningless where either is blank)."""
    left, right, _, _ = _cross(a, b)
    return np.asarray(ORDER[op](left, right), dtype=bool)


def choose(chosen: np.ndarray, a: Decimals, b: Decimals) -> Decimals:
    """``a`` where ``chosen``, else ``b`` (blank as the chosen one is)."""
    scale = max(a.scale, b.scale)
    left, right = a.at_scale(scale), b.at_scale(scale)
    den = None
    if a.den is not None or b.den is not None:
        one = np.ones(len(chosen), dtype=np.int64)
        den = np.where(chosen, one if a.den is None else a.den, one if b.den is None else b.den)
    ints = np.where(chosen, left.ints, right.ints)
    return Decimals(ints, scale, np.where(chosen, a.blank, b.blank), den)


def extreme(columns: Sequence[Decimals], *, largest: bool) -> Decimals:
    """The smallest (or largest) of ``columns`` on each row, blank where any is."""
    best = columns[0]
    blank = best.blank
    for column in columns[1:]:
        best = choose(compare(column, best, ">" if largest else "<"), column, best)
        blank = blank | column.blank
    return Decimals(np.where(blank, 0, best.ints), best.scale, blank, best.den)


# --- integers that may not fit int64 -------------------------------------------------------------


def repeated(value: Any, rows: int, dtype: Any) -> np.ndarray:
    """``value`` on ``rows`` rows without ``rows`` copies of it (a read-only view: operations
    make new arrays, and nothing here writes into an operand's arrays)."""
    return np.broadcast_to(np.array(value, dtype=dtype), (rows,))


def with_nones(values: np.ndarray, blank: np.ndarray) -> pd.Series:
    """An object column of ``values``, None where ``blank``."""
    cells = values.astype(object)
    cells[blank] = None
    return pd.Series(cells, dtype="object")


def _peak(ints: Ints) -> int:
    """The largest magnitude in ``ints`` (0 when empty)."""
    return int(np.max(np.abs(ints))) if ints.size else 0


def _fits_float(ints: Ints) -> bool:
    """Whether every integer converts to float64 exactly."""
    return ints.dtype != object and _peak(ints) < _INT_IN_FLOAT


def _wide(ints: Ints) -> Ints:
    """``ints`` as Python ints (an object array), where no operation overflows."""
    return ints if ints.dtype == object else ints.astype(object)


def _narrow(ints: Ints) -> Ints:
    """``ints`` back in int64 when every value fits."""
    if ints.dtype != object or _peak(ints) > _INT64_MAX:
        return ints
    return ints.astype(np.int64)


def _mul(ints: Ints, other: Ints | int) -> Ints:
    """``ints * other`` (an array or a Python int), in Python ints when int64 would overflow."""
    if isinstance(other, int):
        wide = other > _INT64_MAX or _peak(ints) * other > _INT64_MAX
        scaled: Ints = (_wide(ints) if wide else ints) * other
        return scaled
    if _peak(ints) * _peak(other) > _INT64_MAX:
        ints, other = _wide(ints), _wide(other)
    product: Ints = ints * other
    return product


def _divmod(ints: Ints, divisor: Ints | int) -> tuple[Ints, Ints]:
    """``(ints // divisor, ints % divisor)``, in Python ints when the divisor is beyond int64."""
    if isinstance(divisor, int) and divisor > _INT64_MAX:
        ints = _wide(ints)
    quotient: Ints = ints // divisor
    rest: Ints = ints % divisor
    return quotient, rest


def _plus_flags(ints: Ints, flags: np.ndarray) -> Ints:
    """``ints + flags`` (1 where a flag is set), keeping Python ints Python ints."""
    added: Ints = ints + (flags.astype(object) if ints.dtype == object else flags.astype(np.int64))
    return added


def _reduced(ints: Ints, scale: int, blank: np.ndarray, den: Ints | None) -> Decimals:
    """The column, in lower terms once its numbers grow (no ``den`` when every value is a
    decimal again)."""
    if den is None:
        return Decimals(_narrow(ints), scale, blank)
    if _peak(den) > _REDUCE_ABOVE or _peak(ints) > _REDUCE_ABOVE:
        common = np.gcd(ints, den)
        ints, den = _narrow(ints // common), _narrow(den // common)
    if not bool(np.any(den != 1)):
        return Decimals(_narrow(ints), scale, blank)
    return Decimals(_narrow(ints), scale, blank, den)
