"""table.compute's numbers: every operation exact, against Python's Fraction, at any size."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.table.expr_numbers import (
    Decimals,
    compare,
    divide,
    extreme,
    plus,
    times,
)

# amounts as ledgers hold them, and far beyond int64 (Python ints take over)
VALUES = st.one_of(
    st.decimals(min_value=-(10**12), max_value=10**12, places=2),
    st.decimals(min_value=-(10**30), max_value=10**30, places=6),
    st.integers(-(10**25), 10**25).map(Decimal),
)
COLUMNS = st.lists(VALUES, min_size=1, max_size=8)


def column(values: list[Decimal], blanks: list[bool] | None = None) -> Decimals:
    """A column holding ``values`` exactly (int64 when they fit, Python ints otherwise)."""
    scale = max(0, *(-int(v.as_tuple().exponent) for v in values))
    ints = [int(Fraction(v) * 10**scale) for v in values]  # exact (no decimal context)
    fits = all(abs(i) < 2**63 for i in ints)
    blank = np.array(blanks or [False] * len(values))
    ints = [0 if b else i for i, b in zip(ints, blank.tolist(), strict=True)]
    return Decimals(np.array(ints, dtype=np.int64 if fits else object), scale, blank)


def fractions(numbers: Decimals) -> list[Fraction | None]:
    den = numbers.den if numbers.den is not None else np.ones(len(numbers.ints), dtype=np.int64)
    return [
        None if b else Fraction(int(i), 10**numbers.scale * int(d))
        for i, d, b in zip(numbers.ints.tolist(), den.tolist(), numbers.blank.tolist(), strict=True)
    ]


def paired(draw: st.DrawFn) -> tuple[list[Decimal], list[Decimal]]:
    size = draw(st.integers(1, 8))
    one = st.lists(VALUES, min_size=size, max_size=size)
    return draw(one), draw(one)


PAIRS = st.composite(paired)()


@settings(max_examples=150, deadline=None)
@given(PAIRS)
def test_sums_products_and_quotients_are_exact(pair: tuple[list[Decimal], list[Decimal]]) -> None:
    a, b = pair
    left, right = column(a), column(b)
    fa, fb = [Fraction(v) for v in a], [Fraction(v) for v in b]
    assert fractions(plus(left, right)) == [x + y for x, y in zip(fa, fb, strict=True)]
    assert fractions(plus(left, right, minus=True)) == [x - y for x, y in zip(fa, fb, strict=True)]
    assert fractions(times(left, right)) == [x * y for x, y in zip(fa, fb, strict=True)]
    quotient, zero = divide(left, right)
    assert zero.tolist() == [y == 0 for y in fb]
    expected = [None if y == 0 else x / y for x, y in zip(fa, fb, strict=True)]
    assert fractions(quotient) == expected
    # a quotient used again stays exact, and reads back as the nearest float
    back = fractions(times(quotient, right))
    assert back == [None if y == 0 else x for x, y in zip(fa, fb, strict=True)]
    shown = quotient.output().tolist()
    for value, exact in zip(shown, expected, strict=True):
        if exact is None:
            assert pd.isna(value)
        else:  # whole numbers exactly, others as the float nearest to them
            assert value == (exact if exact.denominator == 1 else float(exact))
    for op, test in (("<", Fraction.__lt__), ("==", Fraction.__eq__)):
        assert compare(left, right, op).tolist() == [
            test(x, y) for x, y in zip(fa, fb, strict=True)
        ]
    assert fractions(extreme([left, right], largest=True)) == [
        max(x, y) for x, y in zip(fa, fb, strict=True)
    ]


def rounded(value: Fraction, digits: int, how: str) -> Fraction:
    scaled = abs(value) * Fraction(10) ** digits
    whole = math.floor(scaled)
    if how == "round" and scaled - whole >= Fraction(1, 2):
        whole += 1
    if how == "roundup" and scaled != whole:
        whole += 1
    return (-1 if value < 0 else 1) * whole / Fraction(10) ** digits


@settings(max_examples=150, deadline=None)
@given(PAIRS, st.integers(-4, 6), st.sampled_from(["round", "rounddown", "roundup"]))
def test_rounding_decides_from_the_exact_value(
    pair: tuple[list[Decimal], list[Decimal]], digits: int, how: str
) -> None:
    a, b = pair
    quotient, _ = divide(column(a), column(b))
    exact = fractions(quotient)
    got = fractions(quotient.rounded(digits, how))
    assert got == [None if x is None else rounded(x, digits, how) for x in exact]


@pytest.mark.parametrize(
    ("value", "digits", "how", "expected"),
    [
        ("2.5", 0, "round", "3"),  # half away from zero, as ROUND_HALF_UP
        ("-2.5", 0, "round", "-3"),
        ("-2.9", 0, "rounddown", "-2"),  # toward zero
        ("-2.1", 0, "roundup", "-3"),  # away from zero
        ("10000.5", 0, "rounddown", "10000"),
        ("1234567", -3, "round", "1235000"),
        ("0.125", 2, "round", "0.13"),
    ],
)
def test_rounding_modes_as_accountants_use_them(
    value: str, digits: int, how: str, expected: str
) -> None:
    got = column([Decimal(value)]).rounded(digits, how)
    assert fractions(got) == [Fraction(Decimal(expected))]


def test_blanks_stay_blank_and_zero_divisions_are_found() -> None:
    a = column([Decimal(1), Decimal(2), Decimal(3)], [False, True, False])
    b = column([Decimal(0), Decimal(0), Decimal(4)])
    quotient, zero = divide(a, b)
    assert zero.tolist() == [True, False, False]  # a blank numerator is no zero division
    assert fractions(quotient) == [None, None, Fraction(3, 4)]
    assert quotient.output().tolist()[2] == 0.75
    assert fractions(plus(a, b)) == [Fraction(1), None, Fraction(7)]
