"""Checking a model's reply and sending it back once: the one mechanism the agents use to keep
their output honest (the analysis report, the help-desk answer).

``revise_once(reply, problems, revise)`` asks ``problems`` what is wrong with ``reply``; when
something is, ``revise`` is called once with the reply and the problems (it sends them back to
the model) and the revised reply is checked again. What is still wrong after that one round is
returned for the caller to flag; a second round would cost another call for a model that has
already shown it does not follow the instruction.

``is_japanese_text`` is the check behind "text a user reads is Japanese": the share of Japanese
characters (kana, CJK ideographs, half-width katakana) among the letters of a text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["MIN_JAPANESE_RATIO", "is_japanese_text", "japanese_ratio", "revise_once"]

MIN_JAPANESE_RATIO = 0.3  # share of Japanese characters among the letters of a Japanese text

T = TypeVar("T")


def _japanese(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x9FFF  # CJK ideographs
        or 0xFF66 <= code <= 0xFF9F  # half-width katakana
    )


def japanese_ratio(text: str) -> float | None:
    """The share of Japanese characters among the letters of ``text``; None without letters."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return None
    return sum(_japanese(ch) for ch in letters) / len(letters)


def is_japanese_text(text: str, min_ratio: float = MIN_JAPANESE_RATIO) -> bool:
    """Whether ``text`` reads as Japanese; a text without letters (numbers only) counts as
    Japanese, since there is nothing to rewrite."""
    ratio = japanese_ratio(text)
    return ratio is None or ratio >= min_ratio


def revise_once(
    reply: T,
    problems: Callable[[T], Sequence[str]],
    revise: Callable[[T, Sequence[str]], T],
) -> tuple[T, list[str], bool]:
    """``(final reply, problems it still has, whether it was sent back)``."""
    found = list(problems(reply))
    if not found:
        return reply, [], False
    revised = revise(reply, found)
    return revised, list(problems(revised)), True
