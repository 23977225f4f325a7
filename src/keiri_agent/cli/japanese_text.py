"""Japanese text on a terminal: lines broken between phrases (文節), with 禁則, no stray spaces.

Rich breaks lines at spaces, as for English: a Japanese sentence with a number or a name in it
(``1 行 1 レコードの表``) is cut at its first space short of the width, and each line ends with
that space; a sentence with none is one long "word" folded anywhere. :class:`JapaneseText` folds
as Japanese is set. Where a line may end comes from BudouX (Google's phrase segmenter,
Apache-2.0): after the last phrase that fits (``得意先ごとに|金額を|集計します。``), or at a space.
Ours, where BudouX says nothing: the width in terminal cells (East Asian width, Rich's
``cell_len``); never inside a Latin word (an id, a path, ``KEIRI_TIMEZONE``, the ``202|6年`` BudouX
may split) unless the word alone is wider than the line; 禁則 (no line begins with a closing mark
or small kana, 、。）」ー っ, nor ends with an opening one, （「); a phrase wider than the line is
broken between its characters under the same rules; the space a line ends at is dropped.

Measured on the generated CLI texts (``tests.support.cli_texts``, 400 texts × widths 20–80, 2,000
foldings) main → BudouX: line breaks inside a phrase, a number with its unit or a path that fits
on a line 3,853 → 184 (44 % → 1.7 % of the breaks; the rest are phrases BudouX joins across the
generator's arbitrary units, ＣＳＶチェックします。); lines starting with a 禁則 mark 2 → 2 (both
forced: the line before had no room); lines ending with an opening mark 0 → 0; lines wider than
the width 0 → 0. On the 3,200 foldings of ``test_labels_and_wrapping``'s sentences: start marks
45 → 53, all forced (a run of marks wider than what is left), the rest 0 → 0. uniseg (UAX #14)
was worse than main: 4,067 cut units (``12,000|円``), 153 start marks on the sentences.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console, Group, JustifyMethod, OverflowMethod
from rich.containers import Lines
from rich.text import Text

if TYPE_CHECKING:
    import budoux

__all__ = ["JapaneseText", "break_offsets", "paragraph"]

# Marks a line must not begin with (禁則: closing brackets, punctuation, small kana, prolonged).
NO_LINE_START = frozenset(
    "、。，．・：；？！）」』】〕〉》”’ー…‥ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々,.:;!?)]}"
)
NO_LINE_END = frozenset("（「『【〔〈《“‘([{")  # opening marks a line must not end with


def _wide(char: str) -> bool:
    return cell_len(char) > 1


def _phrase_starts(text: str) -> frozenset[int]:
    """Where BudouX begins a phrase (文節) in ``text``, and after each space."""
    starts, offset = set(), 0
    for phrase in _parser().parse(text):
        offset += len(phrase)
        starts.add(offset)
    return frozenset(starts | {i + 1 for i, char in enumerate(text) if char == " "})


@functools.cache
def _parser() -> budoux.Parser:
    import budoux  # imported when a text is first folded, not by every command at start-up

    return budoux.load_default_japanese_parser()


def _may_break_before(text: str, index: int) -> bool:
    """Whether a line may begin at ``text[index]`` (禁則 and Latin words kept whole)."""
    before, char = text[index - 1], text[index]
    last = index - 1  # the last mark the line would end with, spaces aside
    while last > 0 and text[last].isspace():
        last -= 1
    if char.isspace() or char in NO_LINE_START or text[last] in NO_LINE_END:
        return False
    return before.isspace() or _wide(before) or _wide(char)


def break_offsets(text: str, width: int) -> list[int]:
    """Where lines of at most ``width`` cells begin (after the first), for ``Text.divide``:
    the spaces a line ends at stay on it (and are stripped), the next line begins after them.
    A line ends after the last phrase that fits; inside a phrase wider than the line, at the
    last place :func:`_may_break_before` allows; inside a Latin word wider than it, anywhere."""
    phrases = _phrase_starts(text)
    offsets: list[int] = []
    start, used, last_phrase, last_char = 0, 0, 0, 0
    index = 0
    while index < len(text):
        char = text[index]
        if index > start and _may_break_before(text, index):
            last_char = index
            last_phrase = index if index in phrases else last_phrase
        if used + cell_len(char) > width and not char.isspace() and index > start:
            cut = next(at for at in (last_phrase, last_char, index) if at > start)
            while cut < len(text) and text[cut].isspace():
                cut += 1
            offsets.append(cut)
            start = index = cut  # the places to break the next line at are looked for anew
            used = 0
            continue
        used += cell_len(char)
        index += 1
    return offsets


def paragraph(text: str, *, markup: bool = False) -> Group:
    """``text`` (plain, or Rich markup) to print as a paragraph folded as Japanese
    (``console.print`` joins the texts it is given into one plain ``Text``: a group keeps this
    one's own folding)."""
    return Group(JapaneseText.of(text) if markup else JapaneseText(text))


class JapaneseText(Text):
    """A :class:`rich.text.Text` whose lines fold as Japanese is set (:func:`break_offsets`)."""

    @classmethod
    def of(cls, text: Text | str) -> JapaneseText:
        """``text`` (a Text, or a string of Rich markup) as a JapaneseText, styles kept."""
        found = Text.from_markup(text) if isinstance(text, str) else text
        return cls(
            found.plain,
            style=found.style,
            justify=found.justify,
            overflow=found.overflow,
            end=found.end,
            spans=list(found.spans),
        )

    def wrap(
        self,
        console: Console,
        width: int,
        *,
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        tab_size: int = 8,
        no_wrap: bool | None = None,
        **extra: Any,
    ) -> Lines:
        if no_wrap or self.no_wrap:
            return super().wrap(
                console, width, justify=justify, overflow=overflow, tab_size=tab_size, no_wrap=True
            )
        lines = Lines()
        for line in self.split(allow_blank=True):
            for part in line.divide(break_offsets(line.plain, max(width, 2))):
                part.rstrip()
                lines.append(part)
        wrap_overflow = overflow or self.overflow or "fold"
        lines.justify(
            console, width, justify=justify or self.justify or "default", overflow=wrap_overflow
        )
        for line in lines:
            line.truncate(width, overflow=wrap_overflow)
        return lines
