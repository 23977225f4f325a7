"""Negative amounts with the minus after the digits (``1,200-``), as many accounting systems
print and export them: every form of one value reads the same, the form is noted in ``info``,
and dates (``2026-02-``) and codes (``0012-``) are never taken for amounts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.documents.cell_forms import amount_problem, is_code, read_amount
from keiri_agent.documents.tables import read_table
from tests.documents.test_table_footer import WRITERS, csv_bytes

_FULL_WIDTH = str.maketrans("0123456789,", "０１２３４５６７８９，")


def negative_forms(size: int, fraction: str = "") -> list[str]:
    """Every way a ledger writes minus ``size`` (``fraction``: ``""`` or ``".5"``...)."""
    bodies = [f"{size}{fraction}", f"{size:,}{fraction}"]
    bodies.append(bodies[1].translate(_FULL_WIDTH))
    forms = []
    for body in bodies:
        for mark in ("", "¥", "￥", "\\", "¥ "):
            core = f"{mark}{body}"
            forms += [f"-{core}", f"▲{core}", f"△{core}", f"({core})", f"{core}円".join("()")]
            # After the digits: ASCII, full-width and the Unicode minus sign, maybe a space;
            # not after a yen amount, where one cell cannot tell a minus from a receipt's end
            # mark (test_yen_dash).
            if not mark:
                forms += [f"{core}-", f"{core}－", f"{core}\u2212", f"{core} -"]
    return forms


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(1, 10**12) | st.integers(1, 9999),
    fraction=st.sampled_from(["", ".5", ".25"]),
    data=st.data(),
)
def test_every_form_of_a_negative_amount_reads_the_same(
    size: int, fraction: str, data: st.DataObject
) -> None:
    forms = negative_forms(size, fraction)
    picked = data.draw(st.lists(st.sampled_from(forms), min_size=2, max_size=6))
    expected = -float(f"{size}{fraction}") if fraction else -size
    assert {read_amount(form) for form in picked} == {expected}


@pytest.mark.parametrize(
    ("written", "reason"),
    [
        ("2026-02-", "重なっています"),  # a date cut short, not an amount
        ("2026-02-03", "重なっています"),
        ("-1,200-", "重なっています"),  # two minus signs
        ("▲1,200-", "重なっています"),
        ("(1,200-)", "重なっています"),
        ("1,200円-", "数字のすぐ後"),  # the sign after the unit: not a form systems write
        ("0012-", "番号（コード）"),
        ("1,2345-", "桁区切り"),
    ],
)
def test_what_only_looks_like_a_trailing_minus_is_refused_with_why(
    written: str, reason: str
) -> None:
    assert read_amount(written) is None
    assert reason in amount_problem(written)


def test_a_code_with_a_trailing_dash_is_a_code() -> None:
    assert is_code("0012-")
    assert is_code("００１２－")
    assert not is_code("1200-")


LEDGER = [
    ["伝票番号", "計上日", "摘要", "売上金額", "備考"],
    ["0012-", "2026-02-02", "商品A", "12,000", "2026-02-"],
    ["0013-", "2026-02-03", "返品", "1,200-", "2026-02-"],
    ["0014-", "2026-02-04", "値引", "\\3,300-", "2026-03-"],
    ["0015-", "2026-02-05", "商品B", "５００－", "2026-03-"],
    ["0016-", "2026-02-06", "商品C", "7,000", "2026-03-"],
]


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_column_of_trailing_minus_amounts_is_a_column_of_amounts(fmt: str) -> None:
    result = read_table(WRITERS[fmt](LEDGER), name=f"売上.{fmt}")

    assert result.df["売上金額"].tolist() == [12000, -1200, -3300, -500, 7000]
    assert result.info.converted["売上金額"] == "number"
    assert result.info.unreadable == []
    note = next(w for w in result.info.warnings if "売上金額" in w)
    assert "末尾に「-」のある金額 3 個をマイナスとして読みました" in note
    # Codes and cut dates with a trailing dash stay the text the user wrote.
    assert result.df["伝票番号"].tolist() == ["0012-", "0013-", "0014-", "0015-", "0016-"]
    assert result.df["備考"].tolist() == [
        "2026-02-",
        "2026-02-",
        "2026-03-",
        "2026-03-",
        "2026-03-",
    ]
    assert "伝票番号" not in result.info.converted
    assert "備考" not in result.info.converted


def test_a_long_export_of_trailing_minus_amounts_reads_every_cell() -> None:
    """Past the probe of a column's first cells, each cell still reads (one by one)."""
    values = [(-1) ** k * (k * 37 + 1) for k in range(600)]
    rows = [["日付", "金額"]] + [
        ["2026/02/03", f"{abs(v):,}-" if v < 0 else f"{v:,}"] for v in values
    ]
    result = read_table(csv_bytes(rows), name="明細.csv")

    assert result.df["金額"].tolist() == values
    assert result.info.converted["金額"] == "number"
