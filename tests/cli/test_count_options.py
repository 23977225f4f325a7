"""A count a command shows or searches (``--k``, ``--limit``) is at least 1, by one rule
(``cli.common.count_option``): 0 or a negative number is refused as the command line is read,
in Japanese, with and without ``--json``; before, ``helpdesk search --k 0`` or ``--k -2``
searched and showed nothing (``blocks search`` had its own check)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from keiri_agent.cli import app

COUNTS = ("--k", "--limit")
# A count checked against the engine's own range, where its message says the range.
OWN_CHECK = {("plan generate", "--k")}
REFUSED = "の値が正しくありません: 1 以上にしてください"


def _counts() -> dict[tuple[str, str], Any]:
    found = {}

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        for param in command.params:
            for option in getattr(param, "opts", ()):
                if option in COUNTS:
                    found[(" ".join(path), option)] = param

    walk(typer.main.get_command(app), [])
    return found


def test_every_count_option_is_at_least_one() -> None:
    counts = _counts()
    assert {("helpdesk search", "--k"), ("blocks search", "--k")} <= set(counts)
    loose = [
        where
        for where, param in counts.items()
        if where not in OWN_CHECK and getattr(param, "min", None) != 1
    ]
    assert not loose, loose


@pytest.mark.parametrize("value", ["0", "-2"])
@pytest.mark.parametrize(
    "command", [["helpdesk", "search", "締め日"], ["blocks", "search", "入金消込"]]
)
def test_a_search_refuses_a_count_below_one(command: list[str], value: str) -> None:
    shown = CliRunner().invoke(app, [*command, "--k", value])
    assert shown.exit_code == 2
    assert f"--k {REFUSED}" in shown.stderr
    as_json = CliRunner().invoke(app, [*command, "--k", value, "--json"])
    assert as_json.exit_code == 2
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "INPUT_VALIDATION_FAILED"
    assert f"--k {REFUSED}" in error["message"]
