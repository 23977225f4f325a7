"""Japanese text on a terminal: lines folded where Japanese may break, no stray spaces.

Rich breaks lines at spaces, as for English: a Japanese sentence with a number or a name in it
(``1 行 1 レコードの表``) is cut at its first space short of the width, and each line ends with
that space; a sentence with none is one long "word" folded anywhere. :class:`JapaneseText` folds
as Japanese is set: a line may end between two Japanese characters, between Japanese and Latin
text and at a space, never inside a Latin word (an id, a path, ``KEIRI_TIMEZONE``) unless the
word alone is wider than the line, never just before a closing mark (、。）」) nor after an
opening one (（「); the space a line ends at is dropped. :func:`unfolded` removes the spaces a YAML folded block (``>-``) puts
where its author broke a Japanese line (``そろえます （単位``): a space between two wide
characters is never meant in this product's Japanese.
"""

from __future__ import annotations

import re
from typing import Any

from rich.cells import cell_len
from rich.console import Console, Group, JustifyMethod, OverflowMethod
from rich.containers import Lines
from rich.text import Text

__all__ = ["JapaneseText", "break_offsets", "paragraph", "unfolded"]

# Marks a line must not begin with (禁則: closing brackets, punctuation, small kana, prolonged).
NO_LINE_START = frozenset(
    "、。，．・：；？！）」』】〕〉》”’ー…‥ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々"
)
NO_LINE_END = frozenset("（「『【〔〈《“‘")  # opening marks a line must not end with
_WIDE_SPACE_WIDE = re.compile(r"(?<=[^\x00-\u2e7f]) +(?=[^\x00-\u2e7f])")


def unfolded(text: str) -> str:
    """``text`` without the spaces between two wide (CJK, full-width) characters."""
    return _WIDE_SPACE_WIDE.sub("", text)


def _wide(char: str) -> bool:
    return cell_len(char) > 1


def _may_break_before(text: str, index: int) -> bool:
    """Whether a line may begin at ``text[index]``."""
    before, char = text[index - 1], text[index]
    last = index - 1  # the last mark the line would end with, spaces aside
    while last > 0 and text[last].isspace():
        last -= 1
    if char.isspace() or char in NO_LINE_START or text[last] in NO_LINE_END:
        return False
    return before.isspace() or _wide(before) or _wide(char)


def break_offsets(text: str, width: int) -> list[int]:
    """Where lines of at most ``width`` cells begin (after the first), for ``Text.divide``:
    the spaces a line ends at stay on it (and are stripped), the next line begins after them."""
    offsets: list[int] = []
    start, used, last_break = 0, 0, 0
    index = 0
    while index < len(text):
        char = text[index]
        if index > start and _may_break_before(text, index):
            last_break = index
        if used + cell_len(char) > width and not char.isspace() and index > start:
            cut = last_break if last_break > start else index
            while cut < len(text) and text[cut].isspace():
                cut += 1
            offsets.append(cut)
            start, last_break = cut, cut
            used = cell_len(text[start:index])
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
