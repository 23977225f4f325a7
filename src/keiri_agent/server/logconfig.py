"""The server's logs: plain lines or one JSON object per line, with request and task ids.

``KEIRI_LOG_FORMAT=json`` (or ``keiri-agent serve --log-format json``) writes every record --
uvicorn's access and error logs, the server's own, the plan engine's -- as one JSON object per
line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, ``request_id`` (the
request being answered; also the ``X-Request-ID`` response header), ``task_id`` (the task the
record is about) and, for errors, ``traceback``. ``text`` keeps uvicorn's plain lines with the
ids appended. The ids come from context variables (:func:`request_context`,
:func:`task_context`) or from a record's ``extra``.

Download links and the SSE URL carry a per-task token in the query (``?token=...``, see
``auth``): it opens one task. The value of every ``token`` parameter, however it is spelled or
encoded (``redaction``), becomes ``***``: :class:`RedactTokens` cleans a record's message and
arguments for every handler, and each formatter cleans the line it writes (tracebacks and
arguments that are not strings included). API keys are never logged. Personal data is masked
in the same filter (``privacy.mask_log_line``): identifiers by their form everywhere, and inside
a task every value its LLM masking learnt (names included) becomes its kind (``〔人名〕``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import traceback
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from uvicorn.config import LOGGING_CONFIG
from uvicorn.logging import AccessFormatter, DefaultFormatter

from keiri_agent.privacy import mask_log_line
from keiri_agent.server.redaction import redact

__all__ = [
    "JsonFormatter",
    "RedactTokens",
    "TextAccessFormatter",
    "TextFormatter",
    "capture_warnings",
    "current_request_id",
    "log_config",
    "request_context",
    "task_context",
]

_request_id: ContextVar[str | None] = ContextVar("keiri_request_id", default=None)
_task_id: ContextVar[str | None] = ContextVar("keiri_task_id", default=None)


def current_request_id() -> str | None:
    return _request_id.get()


@contextlib.contextmanager
def _scoped(var: ContextVar[str | None], value: str) -> Iterator[None]:
    """``var`` is ``value`` inside the block (in this thread or task), as it was after it."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def request_context(request_id: str) -> contextlib.AbstractContextManager[None]:
    return _scoped(_request_id, request_id)


def task_context(task_id: str) -> contextlib.AbstractContextManager[None]:
    return _scoped(_task_id, task_id)


class RedactTokens(logging.Filter):
    """Removes task tokens from a record and adds the request and task ids to it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        # Personal data too (by form, and what the task's LLM masking learnt): masked here, in
        # the thread that logs, where the task's job scope is known.
        if isinstance(record.msg, str):
            record.msg = mask_log_line(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(mask_log_line(a) if isinstance(a, str) else a for a in record.args)
        if getattr(record, "request_id", None) is None:
            record.request_id = _request_id.get()
        if getattr(record, "task_id", None) is None:
            record.task_id = _task_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
            "request_id": getattr(record, "request_id", None),
            "task_id": getattr(record, "task_id", None),
        }
        if record.exc_info:
            data["traceback"] = redact("".join(traceback.format_exception(*record.exc_info)))
        elif record.stack_info:
            data["traceback"] = redact(record.stack_info)
        return json.dumps(data, ensure_ascii=False, default=str)


class TextFormatter(DefaultFormatter):
    """uvicorn's plain line with time and logger name, plus the ids when there are any."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        ids = [
            f"{name}={value}"
            for name in ("request_id", "task_id")
            if (value := getattr(record, name, None))
        ]
        return redact(f"{line} [{' '.join(ids)}]" if ids else line)


class TextAccessFormatter(AccessFormatter):
    """uvicorn's access line, with the tokens of the request's query redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def log_config(fmt: Literal["text", "json"] = "text", level: str = "info") -> dict[str, Any]:
    """The logging configuration for uvicorn: uvicorn's handlers, the chosen format, the token
    filter on every handler, and the ``keiri_agent`` loggers at ``level``."""
    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_tokens"] = {"()": f"{__name__}.RedactTokens"}
    if fmt == "json":
        for formatter in config["formatters"].values():
            formatter.clear()
            formatter["()"] = f"{__name__}.JsonFormatter"
    else:
        config["formatters"]["default"]["()"] = f"{__name__}.TextFormatter"
        config["formatters"]["default"]["fmt"] = "%(asctime)s %(levelprefix)s %(name)s: %(message)s"
        config["formatters"]["default"]["use_colors"] = False
        config["formatters"]["access"]["()"] = f"{__name__}.TextAccessFormatter"
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact_tokens")
    config["loggers"]["keiri_agent"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    # Python's warnings (a library's, when a thread's ``catch_warnings`` undid another's filter)
    # as records of their own (:func:`capture_warnings`), not raw lines among the JSON ones.
    config["loggers"]["py.warnings"] = {
        "handlers": ["default"],
        "level": "WARNING",
        "propagate": False,
    }
    return config


def capture_warnings() -> None:
    """Send Python's warnings to the ``py.warnings`` logger of :func:`log_config` (call once the
    logging is set up): every line of the server's log is then a record in its format."""
    logging.captureWarnings(True)
