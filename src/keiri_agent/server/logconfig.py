"""uvicorn's logging configuration for ``keiri-agent serve``, with task tokens redacted.

Download links and the SSE URL carry a per-task token in the query (``?token=...``, see
``auth``): it opens one task. uvicorn's access log writes every request line, so the token
would sit in the log in clear text. :class:`RedactTokens` is a logging filter on the access
handler that replaces the value of every ``token`` parameter with ``***`` before the line is
written; everything else of uvicorn's default configuration is kept.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

from uvicorn.config import LOGGING_CONFIG

from keiri_agent.server.auth import TOKEN_PARAM

__all__ = ["REDACTED", "RedactTokens", "log_config", "redact"]

REDACTED = "***"
_TOKEN_RE = re.compile(rf"([?&]{TOKEN_PARAM}=)[^&#\s]*", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with the value of every ``token=`` query parameter replaced by ``***``."""
    return _TOKEN_RE.sub(rf"\g<1>{REDACTED}", text)


class RedactTokens(logging.Filter):
    """Removes task tokens from a log record's message and arguments (never drops a record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's default logging configuration plus the token filter on every handler."""
    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_tokens"] = {"()": f"{__name__}.RedactTokens"}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact_tokens")
    return config
