"""Every text a page of the app shows a person, read from AppTest's element tree, and what in
them is not an accountant's Japanese.

:func:`screen_texts` walks the whole tree (sidebar, expanders, tabs, columns, dialogs): titles,
Markdown, captions, alerts, metric labels and values, buttons and download buttons, widgets'
labels, options, placeholders and help, expander, tab and status titles, progress texts, toasts,
JSON (keys and values) and tables (column names and each cell as the grid draws it: a styled
table's display values, a missing cell as the grid's "None", a date-time as its ISO text). Code
is read too, except a program (``python``), which is the generated code a person asked to see.

:func:`leaks` says what in a text is not for the screen: a library's English (``english_of``),
``None`` / ``nan`` / ``True`` / ``False``, a Python dict or list written out, an exception's
English name or a traceback, a raw ISO time, a temporary folder's path, and the ids the caller
names (a plan's node ids and port names).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block, Node

from tests.support.english import cli_words, english_of

__all__ = ["Shown", "leaks", "node_texts", "screen_texts"]

# The proto fields that hold what a person reads (ids, keys, icons, styles are not read).
_READ_FIELDS = frozenset(
    {"body", "label", "help", "placeholder", "options", "text", "caption", "value", "default",
     "message", "delta", "code_text", "title", "display_value", "label_visibility_text"}
)  # fmt: skip
_SKIPPED_TYPES = frozenset({"code"})


@dataclass(frozen=True)
class Shown:
    """One text on the screen and the element that shows it."""

    kind: str
    text: str


def screen_texts(
    app: AppTest, *, skip: Callable[[str], bool] = lambda _label: False
) -> list[Shown]:
    """Every text the app shows now (see the module docstring), but what is inside an expander
    whose title ``skip`` accepts (its title is read)."""
    found: list[Shown] = []
    for exception in app.exception:
        found.append(Shown("exception", f"{exception.message}\n{''.join(exception.stack_trace)}"))
    _walk(app._tree, found, skip)
    return found


def node_texts(node: Node, *, skip: Callable[[str], bool] = lambda _label: False) -> list[Shown]:
    """What one element (a container, an expander, a widget) shows, as :func:`screen_texts`
    reads the whole page."""
    found: list[Shown] = []
    _walk(node, found, skip)
    return found


def _walk(node: Node, found: list[Shown], skip: Callable[[str], bool]) -> None:
    if isinstance(node, Block):
        proto = getattr(node, "proto", None)
        if proto is not None:
            found.extend(Shown(node.type, text) for text in _proto_texts(proto))
        if node.type == "expander" and skip(getattr(node, "label", "")):
            return
        for child in node.children.values():
            _walk(child, found, skip)
        return
    kind = getattr(node, "type", "unknown")
    proto = getattr(node, "proto", None)
    if proto is None or kind == "exception":
        return
    if kind in ("dataframe", "arrow_data_frame", "table"):
        found.extend(Shown("table", text) for text in _table_texts(node))
        proto_texts = [t for t in _proto_texts(proto, skip=("arrow_data", "lazy_data"))]
        found.extend(Shown(kind, text) for text in proto_texts)
        return
    if kind == "html" and re.search(r"<(?:script|style)\b", proto.body):
        return  # the app's chrome (a script and a style sheet): nothing a person reads
    if kind == "json":
        found.extend(Shown("json", text) for text in _json_texts(proto.body))
        return
    if kind in _SKIPPED_TYPES and getattr(proto, "language", "") == "python":
        return
    found.extend(Shown(kind, text) for text in _proto_texts(proto))


def _proto_texts(message: Any, skip: Collection[str] = ()) -> Iterator[str]:
    """The readable strings of a proto message and of the messages it holds."""
    for descriptor, value in message.ListFields():
        name = descriptor.name
        if name in skip:
            continue
        if descriptor.message_type is not None:
            for item in [value] if hasattr(value, "ListFields") else value:
                if hasattr(item, "ListFields"):
                    yield from _proto_texts(item, skip)
            continue
        if name not in _READ_FIELDS:
            continue
        for item in [value] if isinstance(value, str | bytes | int | float) else value:
            if isinstance(item, str) and item.strip():
                yield item


def _json_texts(body: str) -> Iterator[str]:
    try:
        data = json.loads(body)
    except ValueError:
        yield body
        return
    yield from _json_values(data)


def _json_values(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield str(key)
            yield from _json_values(value)
    elif isinstance(data, list):
        for value in data:
            yield from _json_values(value)
    else:
        yield json.dumps(data, ensure_ascii=False).strip('"')


def _table_texts(element: Any) -> Iterator[str]:
    """A table's column names and cells as the grid draws them."""
    styler = element.proto.arrow_data.styler
    if styler.display_values:
        frame = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
        shown = element.value
        yield from (str(c) for c in shown.columns)
        for column in frame.columns:
            yield from (_cell(v) for v in frame[column])
        return
    frame = element.value
    for column in frame.columns:
        yield str(column)
        yield from (_cell(v) for v in frame[column])


def _cell(value: Any) -> str:
    """A cell as Streamlit's grid draws it: a missing value as "None", a bool as a tick box."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return "None"
    if isinstance(value, bool):
        return ""  # a tick box
    if isinstance(value, datetime | date | pd.Timestamp):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("None", re.compile(r"(?<![\w.])None(?![\w.])")),
    ("nan", re.compile(r"(?<![\w.])(?:nan|NaN|NaT|<NA>)(?![\w.])")),
    ("True/False", re.compile(r"(?<![\w.])(?:True|False|true|false|null)(?![\w.])")),
    ("repr", re.compile(r"[{\[]\s*'[^']*'\s*[:,]|\{\s*\"[^\"]*\"\s*:|\b\w+\([a-z_]+=")),
    ("exception", re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning)\b|Traceback")),
    # A time as Python writes it: 2024-04-01T09:00, 2024-04-01 00:00:00, …:00.123456, +00:00
    # (a time the page shows says its zone: 2026-12-07 17:16 JST).
    (
        "ISO time",
        re.compile(
            r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}|[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?!\s*[A-Z]{3})"
            r"|[ T][\d:.]+[+-]\d{2}:\d{2})"
        ),
    ),
    ("temp path", re.compile(r"/tmp/|pytest-of-|/var/folders/|\\Temp\\|/private/var/")),
)
# A program's name for a thing (snake_case), outside `code`; a run id is what support asks for.
_ID = re.compile(r"(?<![\w/.`:@-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/.`-])")
_RUN_ID = re.compile(r"run_\d{14}_[0-9a-f]{8}")


def leaks(
    texts: Collection[Shown], *, ids: Collection[str] = (), allowed: Collection[str] = ()
) -> list[str]:
    """What in ``texts`` is not for an accountant's screen, one line per finding: ``ids`` are
    the plan's node ids and port names (found as whole words), ``allowed`` words the caller
    knows to be names."""
    found = []
    words = cli_words() | frozenset(allowed)
    id_pattern = _words_pattern(ids)
    for shown in texts:
        text = shown.text
        kinds = [name for name, rule in _RULES if rule.search(text)]
        kinds += [f"English: {e}" for e in english_of(text, allowed=words)]
        if id_pattern is not None:
            kinds += [f"id: {m}" for m in id_pattern.findall(text)]
        prose = re.sub(r"`[^`]*`", "", text)
        kinds += [
            f"id: {m}" for m in _ID.findall(prose) if m not in words and not _RUN_ID.fullmatch(m)
        ]
        found += [f"{shown.kind}: {kind}: {text[:160]!r}" for kind in kinds]
    return found


def _words_pattern(words: Collection[str]) -> re.Pattern[str] | None:
    named = sorted({w for w in words if len(w) > 2}, key=len, reverse=True)
    if not named:
        return None
    return re.compile(r"(?<![\w/.-])(?:" + "|".join(map(re.escape, named)) + r")(?![\w/.-])")


def error_details(app: Any, number: int = 0) -> dict[str, str]:
    """The rows of the ``number``-th エラー詳細 the page shows: 項目 → 内容."""
    expanders = [e for e in app.expander if e.label == "エラー詳細"]
    table = expanders[number].dataframe[0].value
    return dict(zip(table["項目"], table["内容"], strict=True))
