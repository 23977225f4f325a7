"""keiri-agent: an LLM workbench for Japanese back-office work (経理).

Layers (lower never import higher): config, errors, events, workspace, llm ← documents,
retrieval, sandbox ← blocks, plan, agents ← design ← server, ui, cli. See docs/ and DESIGN.md.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("keiri-agent")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
