"""Lazy package surfaces: ``from keiri_agent.design import generate_plan`` without loading the
whole package (and the LLM SDKs behind it) when a command only needs one light module.

A package ``__init__`` keeps its public names in ``__all__`` and its imports under
``TYPE_CHECKING`` (for type checkers and readers), and maps each name to the module that defines
it; :func:`lazy_exports` returns the module-level ``__getattr__`` and ``__dir__`` (PEP 562) that
import that module on first use and cache the value in the package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package whose globals are ``namespace``.

    ``exports`` maps each public name to the module that defines it (absolute, or relative to the
    package with a leading dot).
    """
    package = str(namespace["__name__"])

    def module_getattr(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name, package)
        value = getattr(module, name)
        namespace[name] = value  # later look-ups bypass __getattr__
        return value

    def module_dir() -> list[str]:
        return sorted({*namespace, *exports})

    return module_getattr, module_dir
