"""The CLI is the top layer: nothing else in the package imports it (the app reads plan progress
from the same neutral module the CLI does)."""

from __future__ import annotations

import ast
from pathlib import Path

import keiri_agent

PACKAGE = Path(keiri_agent.__file__).parent


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_module_outside_the_cli_imports_it() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            m for m in _imports(path) if m == "keiri_agent.cli" or m.startswith("keiri_agent.cli.")
        )
        for path in PACKAGE.rglob("*.py")
        # ``python -m keiri_agent`` is the command line's other entry point, above every layer.
        if PACKAGE / "cli" not in path.parents and path != PACKAGE / "__main__.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}
