"""A job's learnt values are found again in any text, however many there are (issue 37: a
plan over 100,000 customers learns every name, phone number and e-mail address)."""

from __future__ import annotations

import time

import pandas as pd

from keiri_agent.privacy import PersonalKind, Vault
from keiri_agent.privacy.known import KnownValues

ROWS = 100_000
MAX_RATIO = 10.0  # generous for a loaded machine: the known values are looked up, not scanned


def test_a_known_value_is_found_whole_and_never_inside_a_longer_number() -> None:
    known = KnownValues()
    known.add("3958211", PersonalKind.ACCOUNT)
    known.add("長谷川 美咲", PersonalKind.PERSON)
    known.add("長谷川", PersonalKind.PERSON)
    text = "口座 3958211、伝票 39582110、長谷川 美咲様と長谷川様、Ｘ3958211"
    found = [(text[s.start : s.end], s.kind) for s in known.find(text)]
    assert found == [
        ("3958211", PersonalKind.ACCOUNT),
        ("長谷川 美咲", PersonalKind.PERSON),  # the longest at a place
        ("長谷川", PersonalKind.PERSON),
    ]
    assert not known.add("長谷川", PersonalKind.PERSON)  # known already
    assert not known.add("林", PersonalKind.PERSON)  # too short to look for


def _mask_seconds(vault: Vault, text: str) -> float:
    """The quickest of three masks of ``text`` (detection is remembered: the known values count)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        vault.mask(text)
        best = min(best, time.perf_counter() - started)
    return best


def test_masking_does_not_slow_down_with_the_number_of_known_values() -> None:
    frame = pd.DataFrame(
        {
            "氏名": [f"佐藤 翔太{n}" for n in range(ROWS)],
            "携帯電話": [f"090-{n // 10000:04d}-{n % 10000:04d}" for n in range(ROWS)],
            "売上金額": [1_000 + n for n in range(ROWS)],
        }
    )
    large, small = Vault(), Vault()
    assert large.learn_table(frame) == 2 * ROWS
    assert small.learn_table(frame.head(5)) == 10
    last = frame.iloc[-1]
    masked = large.mask(f"{last['氏名']}様の連絡先は{last['携帯電話']}、売上 {last['売上金額']} 円")
    assert (
        masked.text == f"〔人名{ROWS}〕様の連絡先は〔電話番号{ROWS}〕、売上 {1_000 + ROWS - 1} 円"
    )
    assert large.mask(f"{frame.iloc[0]['氏名']}様に連絡").text == "〔人名1〕様に連絡"
    # A prompt of a few thousand lines: with 200,000 known values it is masked about as
    # quickly as with 10 (one regular expression of all the values took minutes to build).
    prompt = "\n".join(
        f"{i}: 佐藤 翔太{i}様 090-0000-{i % 10000:04d} 売上 {i} 円" for i in range(3000)
    )
    ratio = _mask_seconds(large, prompt) / _mask_seconds(small, prompt)
    assert ratio < MAX_RATIO, ratio
