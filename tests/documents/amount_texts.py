"""Amount texts as ledgers write them, well-formed or not, for property tests of every reader
that must read exactly what ``cell_forms.read_amount`` reads: parentheses, ▲/△, a trailing
minus, ¥/円, full-width, thousands commas, leading-zero codes, and broken ones (two minus
signs, an unclosed parenthesis, misplaced commas)."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["amount_texts"]

_FULL_WIDTH = str.maketrans("0123456789,.-+()¥", "０１２３４５６７８９，．－＋（）￥")


# How the sign is written around the digits ({}): every form read_amount reads, then broken ones.
_SIGNS = (
    "{}",
    "-{}",
    "−{}",
    "+{}",
    "▲{}",
    "△{}",
    "({})",
    "{}-",
    "--{}",  # two minus signs
    "(-{})",
    "▲{}-",
    "({}",  # an unclosed parenthesis
    "({})-",
)


@st.composite
def amount_texts(draw: st.DrawFn) -> str:
    """An amount as a ledger may write it, well-formed or not."""
    whole = draw(st.integers(min_value=0, max_value=10**9))
    digits = draw(
        st.sampled_from(
            [
                str(whole),
                f"{whole:,}",
                "0" + str(whole),  # a code
                str(whole)[:1] + "," + str(whole)[1:],  # a misplaced comma
            ]
        )
    )
    digits += draw(st.sampled_from(["", "", ".5", ".25"]))
    digits = draw(st.sampled_from(["", "", "¥", "\\", "$"])) + digits
    digits += draw(st.sampled_from(["", "", "円"]))
    text = draw(st.sampled_from(_SIGNS)).format(digits)
    space = draw(st.sampled_from(["", "", " ", "\u3000"]))
    text = space + text + draw(st.sampled_from(["", space]))
    if draw(st.booleans()):
        text = text.translate(_FULL_WIDTH)
    return text
