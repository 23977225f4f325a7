"""Data that came out of the sandbox, made safe to keep, serialize and show.

Everything the sandboxed code can influence (its ``result`` variable, its exception's type and
text, its stdout and stderr, the names of the files it wrote) is untrusted: it may be huge,
nested thousands of levels deep, of the wrong type, or full of terminal escape sequences and
lone surrogates (file names that are not valid UTF-8). The helpers here turn such data into
values with known bounds, each loss announced by a Japanese warning, never by an exception:

- ``bound_json``: any value → a JSON value of bounded depth, item count and text size.
- ``clean_text``: any string → valid Unicode (lone surrogates replaced) of bounded length.
- ``parse_report``: the worker's raw report bytes (JSON lines) → one dict, whatever they hold.
- ``terminal_text``: text → the same text with control characters made visible (``\\x1b``),
  for printing to a person's terminal.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_REPORT_BYTES",
    "MAX_RESULT_CHARS",
    "MAX_RESULT_DEPTH",
    "MAX_RESULT_STRING_CHARS",
    "MAX_RESULT_VALUES",
    "bound_json",
    "clean_text",
    "parse_report",
    "terminal_text",
]

MAX_RESULT_DEPTH = 64  # containers nested deeper are replaced by a marker string
MAX_RESULT_VALUES = 250_000  # values kept in one result (shared references count each time)
MAX_RESULT_STRING_CHARS = 1_000_000  # characters kept per string
MAX_RESULT_CHARS = 4_000_000  # characters of text (keys and strings) kept in one result
MAX_REPORT_BYTES = 8 * 1024 * 1024  # the worker's report is read only up to this size

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls but tab and newline, DEL, C1 controls (U+009B is a CSI on some terminals), lone
# surrogates, line/paragraph separators and the bidirectional overrides ("Trojan source").
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # fmt: skip
_TERMINAL_UNSAFE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # fmt: skip
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def clean_text(text: str, limit: int) -> tuple[str, bool]:
    """``text`` with lone surrogates replaced by U+FFFD and cut to ``limit`` characters.

    Returns the text and whether anything was lost (replaced or cut).
    """
    cleaned = _SURROGATE.sub("\ufffd", text)
    changed = cleaned != text
    if len(cleaned) > limit:
        suffix = f"…（全 {len(cleaned):,} 文字）"
        cleaned = cleaned[: max(limit - len(suffix), 0)] + suffix
        changed = True
    return cleaned, changed


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_text(text: str, *, single_line: bool = False) -> str:
    """``text`` safe to print to a terminal: control characters shown as ``\\x1b``, ``\\r``...

    Newlines and tabs are kept unless ``single_line`` (file names, error types and messages
    shown on one line). Lone surrogates (bytes of a name that was not UTF-8) become ``\\udcff``.
    """
    pattern = _TERMINAL_UNSAFE_LINE if single_line else _TERMINAL_UNSAFE
    return pattern.sub(_escape_char, text)


class _Budget:
    def __init__(self) -> None:
        self.chars = MAX_RESULT_CHARS
        self.values = MAX_RESULT_VALUES
        self.losses: set[str] = set()

    def text(self, value: str) -> str:
        limit = min(MAX_RESULT_STRING_CHARS, max(self.chars, 0))
        cleaned, changed = clean_text(value, limit)
        if changed:
            self.losses.add("text")
        self.chars -= len(cleaned)
        return cleaned

    def spend(self) -> bool:
        """Count one more value; False (and a loss) once the result is too large."""
        self.values -= 1
        if self.values < 0 or self.chars <= 0:
            self.losses.add("size")
            return False
        return True


def _key(key: object, budget: _Budget) -> str:
    if isinstance(key, str):
        return budget.text(key)
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)
    budget.losses.add("type")
    return f"<{type(key).__name__}>"


def _bound(value: Any, depth: int, budget: _Budget) -> Any:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return None  # NaN and infinities have no JSON form: null, as pandas' to_json writes
    if isinstance(value, str):
        return budget.text(value)
    if isinstance(value, Mapping | list | tuple):
        if depth >= MAX_RESULT_DEPTH:
            budget.losses.add("depth")
            return f"…（{MAX_RESULT_DEPTH} 段より深い部分は省略）"
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if not budget.spend():
                    break
                out[_key(key, budget)] = _bound(item, depth + 1, budget)
            return out
        items: list[Any] = []
        for item in value:
            if not budget.spend():
                break
            items.append(_bound(item, depth + 1, budget))
        return items
    budget.losses.add("type")
    return budget.text(f"<{type(value).__name__}>")


_LOSS_MESSAGES = {
    "depth": f"result の入れ子が {MAX_RESULT_DEPTH} 段を超えたため、深い部分を省略しました。",
    "size": "result が大きすぎるため、後半を省略しました"
    f"（値は合計 {MAX_RESULT_VALUES:,} 個、文字は合計 {MAX_RESULT_CHARS:,} 文字まで）。",
    "text": "result の文字列の一部を置き換えるか切り詰めました"
    f"（不正な文字は U+FFFD に、1 つの文字列は {MAX_RESULT_STRING_CHARS:,} 文字まで）。",
    "type": "result に JSON で表せない値があったため、型名に置き換えました。",
}


def bound_json(value: Any) -> tuple[Any, list[str]]:
    """``value`` as a JSON value within the MAX_RESULT_* bounds, and a warning per kind of loss.

    Never raises and never recurses deeper than ``MAX_RESULT_DEPTH``, whatever ``value`` is
    (a 100 000-level list, a cycle, a non-JSON object). Dict keys become strings; NaN and the
    infinities become null.
    """
    budget = _Budget()
    bounded = _bound(value, 0, budget)
    return bounded, [_LOSS_MESSAGES[kind] for kind in sorted(budget.losses)]


def parse_report(raw: bytes | str) -> tuple[dict[str, Any], list[str]]:
    """The worker's report (one JSON object per line, later keys win) and warnings.

    Lines that are not JSON objects, or nested too deeply for the parser, are skipped with a
    warning; bytes beyond ``MAX_REPORT_BYTES`` are not read. Never raises.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    warnings: list[str] = []
    if len(data) > MAX_REPORT_BYTES:
        data = data[:MAX_REPORT_BYTES]
        warnings.append(
            f"実行結果の報告が {MAX_REPORT_BYTES:,} バイトを超えたため、後半を読みませんでした。"
        )
    report: dict[str, Any] = {}
    unreadable = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            part = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError, MemoryError):
            unreadable += 1
            continue
        if isinstance(part, dict):
            report.update(part)
        else:
            unreadable += 1
    if unreadable:
        warnings.append(f"実行結果の報告のうち {unreadable} 行を読み取れなかったため無視しました。")
    return report, warnings
