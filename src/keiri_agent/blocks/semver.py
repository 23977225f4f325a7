"""Semantic versions (https://semver.org) for block specs: parsing, ordering, ``id@version``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

__all__ = ["SemVer", "split_block_ref"]

_SEMVER_RE = re.compile(
    r"^(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*)"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@total_ordering
@dataclass(frozen=True)
class SemVer:
    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: str = ""

    @classmethod
    def parse(cls, text: str) -> SemVer:
        """Parse ``MAJOR.MINOR.PATCH[-pre][+build]``; ValueError (with the text) otherwise."""
        match = _SEMVER_RE.match(str(text).strip())
        if match is None:
            raise ValueError(f"'{text}' は SemVer（例: 1.2.0）ではありません")
        pre = tuple(match["pre"].split(".")) if match["pre"] else ()
        return cls(
            int(match["major"]), int(match["minor"]), int(match["patch"]), pre, match["build"] or ""
        )

    @classmethod
    def is_valid(cls, text: str) -> bool:
        return _SEMVER_RE.match(str(text).strip()) is not None

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
        # A release sorts after its prereleases; numeric identifiers sort before alphanumeric ones.
        pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() < other._key()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + self.build
        return text

    def matches(self, pin: str) -> bool:
        """Whether this version satisfies a pin: ``1`` (major), ``1.2`` (minor) or ``1.2.3``."""
        parts = pin.split(".")
        if len(parts) == 3:
            return self == SemVer.parse(pin)
        numbers = [int(p) for p in parts]
        return [self.major, self.minor][: len(numbers)] == numbers


def split_block_ref(ref: str) -> tuple[str, str | None]:
    """``"excel.write@1.2.0"`` → ``("excel.write", "1.2.0")``; ``"excel.write"`` → ``(…, None)``."""
    block_id, sep, version = ref.partition("@")
    return block_id.strip(), (version.strip() if sep else None)
