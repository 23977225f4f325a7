"""An option that means the same in several commands is declared once and reads the same in
every ``--help``: ``--json``, ``--index``, ``--tool``, ``--port``, a schedule's or trigger's
``--version``, a search's ``--k``, and the ``PLAN_ID`` of the commands that take one."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
import typer.main

from keiri_agent.cli import app

SHARED = ("--json", "--index", "--tool", "--port", "--version", "--k", "PLAN_ID")
# Where an option of the same name says more because it does more (the reason is the text).
OWN_TEXT = {
    ("analyze", "--json"),  # the interactive mode prints one JSON line a turn
    ("", "--version"),  # keiri-agent --version: the program's version, not a plan's
    ("helpdesk eval", "--k"),  # how deep an answer counts as found
    ("plan generate", "--k"),  # how many blocks the model is shown
}


def help_texts() -> dict[str, dict[str, str]]:
    """Option → {command path: help text} over every command of the CLI."""
    found: dict[str, dict[str, str]] = defaultdict(dict)

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        for param in command.params:
            names = [*getattr(param, "opts", ()), getattr(param, "metavar", None)]
            for option in names:
                if option in SHARED and (" ".join(path), option) not in OWN_TEXT:
                    found[option][" ".join(path)] = param.help

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize("option", SHARED)
def test_a_shared_option_has_one_help_text(option: str) -> None:
    texts = help_texts()[option]
    assert len(texts) >= 2, texts  # it is shared
    assert len(set(texts.values())) == 1, texts
