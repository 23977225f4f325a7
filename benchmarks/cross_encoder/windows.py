"""Line windows of a manual chunk: the passages (≤ MAX_CHARS) a long chunk is split into."""

from __future__ import annotations

MAX_CHARS = (
    350  # passage cap: at ~1.6 chars per e5 token it fits the 256-token pair with a question
)


def line_windows(text: str, max_chars: int = MAX_CHARS) -> list[str]:
    """``text`` itself if short; else every run of whole lines starting at a line and growing
    while it stays within ``max_chars`` (a single longer line is cut at ``max_chars``)."""
    if len(text) <= max_chars:
        return [text]
    lines = text.split("\n")
    out: list[str] = []
    for i in range(len(lines)):
        j, size = i, 0
        while j < len(lines) and size + len(lines[j]) + (j > i) <= max_chars:
            size += len(lines[j]) + (j > i)
            j += 1
        window = "\n".join(lines[i:j]) if j > i else lines[i][:max_chars]
        if window.strip() and (not out or window not in out[-1]):
            out.append(window.strip())
    return out
