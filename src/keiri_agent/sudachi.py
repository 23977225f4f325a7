"""The Sudachi dictionary, opened once per process for everyone who reads Japanese with it.

Retrieval tokenizes with it (``retrieval.tokenize``), the personal-data detector reads its
parts of speech for names (``privacy.names``). A dictionary is safe to share between threads;
a Sudachi *tokenizer* is not, so each user builds its own per thread over the one dictionary.
"""

from __future__ import annotations

import threading
from typing import Any

from keiri_agent.errors import ConfigurationError

__all__ = ["open_dictionary"]

_opened: dict[str, Any] = {}
_lock = threading.Lock()


def open_dictionary(name: str = "core") -> Any:
    """The ``sudachidict-<name>`` dictionary (loaded on first use; ConfigurationError when the
    package is missing or broken)."""
    with _lock:
        dictionary = _opened.get(name)
        if dictionary is None:
            try:
                from sudachipy import Dictionary
            except ImportError as exc:  # pragma: no cover - a broken installation
                raise _missing(name, exc) from exc
            try:
                dictionary = Dictionary(dict=name)
            except Exception as exc:
                raise _missing(name, exc) from exc
            _opened[name] = dictionary
        return dictionary


def _missing(dictionary: str, exc: BaseException) -> ConfigurationError:
    return ConfigurationError(
        f"日本語の形態素解析辞書（sudachidict-{dictionary}）を読み込めません: {exc}",
        hint=f"`pip install sudachipy sudachidict-{dictionary}` で辞書を導入してください"
        "（keiri-agent の依存に含まれています）。",
        details={"dictionary": dictionary},
    )
