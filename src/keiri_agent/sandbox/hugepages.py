"""Huge pages for the warm server's heap, so that forking it and ending a fork cost less.

A fork copies one page-table entry per 4 KiB page of anonymous memory and the fork's exit
clears them again: for a warm server holding a few hundred MB of imported libraries that is the
largest part of an action's cost. ``collapse_heap`` asks the kernel to back the server's large
anonymous mappings with 2 MiB transparent huge pages (``MADV_HUGEPAGE`` then ``MADV_COLLAPSE``,
Linux 6.1+), so a fork copies one entry per 2 MiB instead. A write by either side after the fork
still copies only the 4 KiB page written (the kernel splits the huge page first), so the
processes stay as separate as before; only page-table work changes. Where the kernel lacks
``MADV_COLLAPSE`` or transparent huge pages are disabled, nothing changes and the count of
collapsed bytes is 0.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from keiri_agent.sandbox.libc import LIBC

__all__ = ["HUGE_PAGE", "collapse_heap"]

HUGE_PAGE = 2 * 1024 * 1024
MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25

LIBC.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def _anonymous_ranges() -> list[tuple[int, int]]:
    """Writable private anonymous mappings (the heap and the allocators' arenas)."""
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        parts = line.split()
        path = parts[5] if len(parts) > 5 else ""
        if parts[1].startswith("rw") and parts[1].endswith("p") and path in ("", "[heap]"):
            low, high = (int(value, 16) for value in parts[0].split("-"))
            ranges.append((low, high))
    return ranges


def collapse_heap() -> int:
    """Back every whole 2 MiB of the anonymous mappings with huge pages; bytes collapsed."""
    collapsed = 0
    for low, high in _anonymous_ranges():
        start = (low + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
        end = high & ~(HUGE_PAGE - 1)
        if end - start < HUGE_PAGE:
            continue
        if LIBC.madvise(start, end - start, MADV_HUGEPAGE) != 0:
            continue
        if LIBC.madvise(start, end - start, MADV_COLLAPSE) == 0:
            collapsed += end - start
    return collapsed
