"""Statement lines with the bank's own words beside the payer: the person's name is masked, the
bank's words, the company payers, the dates and the amounts stay (``keiri_agent.bank_words``).

The lines come from ``tests/support/bank_memo.py`` (common surnames and given names in
half-width kana, companies with a 法人略語, ﾌﾘｺﾐ / ﾃﾞﾝｼﾝ / ｶﾞｲﾀﾒ / ATM ... before the name, glued
to it or after it, ﾃｽｳﾘﾖｳ after it). Then one test per shape the generator found wrong.
"""

from __future__ import annotations

import pytest

from keiri_agent.privacy import find_personal
from tests.support.bank_memo import memo_lines

LINES_PER_SEED = 300


def _covered(spans: list[tuple[int, int]], start: int, end: int, text: str) -> bool:
    """Whether every letter of text[start:end] (not its spaces) lies in a span."""
    return all(
        any(s <= at < e for s, e in spans) for at in range(start, end) if not text[at].isspace()
    )


def _touched(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


@pytest.mark.parametrize("seed", [3701, 3702])
def test_no_payer_name_survives_beside_a_bank_word_and_nothing_else_is_masked(seed: int) -> None:
    leaked: list[str] = []
    over: list[str] = []
    for line in memo_lines(seed, LINES_PER_SEED):
        spans = [(s.start, s.end) for s in find_personal(line.text)]
        masked = "".join(
            "■" if any(s <= i < e for s, e in spans) else ch for i, ch in enumerate(line.text)
        )
        if line.person and not _covered(spans, *line.name, line.text):
            leaked.append(f"{line.place}: {line.text!r} → {masked!r}")
        kept = [*line.words, *line.numbers] + ([] if line.person else [line.name])
        if any(_touched(spans, *where) for where in kept):
            over.append(f"{line.place}: {line.text!r} → {masked!r}")
    assert leaked == [], f"{len(leaked)} of {LINES_PER_SEED} lines leak a name:\n" + "\n".join(
        leaked[:20]
    )
    assert over == [], f"{len(over)} of {LINES_PER_SEED} lines mask too much:\n" + "\n".join(
        over[:20]
    )


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ", "ｲﾉｳｴﾏﾕﾐ"),  # glued to the bank's word
        ("ﾌﾘｺﾐ ｲﾉｳｴ ﾏﾕﾐ", "ｲﾉｳｴ ﾏﾕﾐ"),  # the word stays, the name goes
        ("2025/04/01 ﾌﾘｺﾐ ｽｽﾞｷ ｲﾁﾛｳ 10,000", "ｽｽﾞｷ ｲﾁﾛｳ"),  # ｽｽﾞｷ was left as written
        ("ATMｻﾄｳ ﾊﾅｺ", "ｻﾄｳ ﾊﾅｺ"),
        ("ｷﾕｳﾖ ﾀｶﾊｼ ｹﾝｲﾁ ﾃｽｳﾘﾖｳ", "ﾀｶﾊｼ ｹﾝｲﾁ"),
        ("2025/04/01,振込 ｺﾝﾄﾞｳ ﾘﾖｳﾀ,30000", "ｺﾝﾄﾞｳ ﾘﾖｳﾀ"),  # the dictionary knows neither word
        ("ｼﾖｳﾖ ｺﾞﾄｳ ﾂﾖｼ", "ｺﾞﾄｳ ﾂﾖｼ"),
    ],
)
def test_a_name_beside_a_bank_word_is_masked_alone(line: str, name: str) -> None:
    spans = [line[s.start : s.end] for s in find_personal(line)]
    assert spans == [name]


def test_a_company_after_a_bank_word_is_no_person() -> None:
    assert find_personal("ﾃﾞﾝｼﾝｶ)ｽｽﾞｷｹﾝｾﾂ") == []
    assert find_personal("ﾌﾘｺﾐ ﾀﾅｶﾌﾞﾂｻﾝ(ｶ ﾃｽｳﾘﾖｳ") == []
