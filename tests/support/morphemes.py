"""SudachiPy's morphemes as the test generators read them: ``morphemes(text)`` splits ``text``
in mode C with the bundled dictionary. SudachiPy ships no type information, so
:class:`Morpheme` names the part of its interface that they use."""

from __future__ import annotations

from typing import Protocol

from keiri_agent.sudachi import open_dictionary

__all__ = ["Morpheme", "morphemes"]


class Morpheme(Protocol):
    """The methods of ``sudachipy.Morpheme`` that the generators call."""

    def surface(self) -> str: ...
    def part_of_speech(self) -> tuple[str, ...]: ...
    def dictionary_form(self) -> str: ...
    def begin(self) -> int: ...
    def end(self) -> int: ...


def morphemes(text: str) -> list[Morpheme]:
    """The morphemes of ``text`` in SudachiPy's mode C (the longest units)."""
    from sudachipy import SplitMode

    return list(open_dictionary().tokenizer(mode=SplitMode.C).tokenize(text))
