"""JSON Lines as the agents read them: one JSON object a line, blank lines skipped.

The converter's ``.jsonl`` input and the help desk's question files follow the same rules; only
the words of their errors differ, so the caller says how each bad line is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["json_objects"]


def json_objects(
    text: str,
    *,
    not_json: Callable[[int, json.JSONDecodeError], Exception],
    not_object: Callable[[int], Exception],
) -> list[tuple[int, dict[str, Any]]]:
    """Each non-blank line of ``text`` with its 1-based number, parsed as a JSON object.

    The first line that is not JSON raises ``not_json(number, error)``; the first that is JSON
    but not an object (``{...}``) raises ``not_object(number)``.
    """
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise not_json(number, exc) from exc
        if not isinstance(item, dict):
            raise not_object(number)
        records.append((number, item))
    return records
