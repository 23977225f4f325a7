"""A reviewer can see every change they approve: values that differ but read the same.

A version is what its text says, so a final line break after a block scalar at the end of a
plan (YAML keeps it in the value: ``|`` keeps one, ``|+`` all), a space at the end of a quoted
value, a full-width space, a tab, ``"500"`` against ``500`` and a difference past the cut of a
long template are new versions. The diff a reviewer approves from must then show two different
texts, never ``確認しました。 → 確認しました。``. Generated from a month-end memo plan.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.cli import app
from keiri_agent.versions import SaveNote, VersionStore
from tests.support.versions import versions_settings

PLAN_ID = "keiri/memo"
runner = CliRunner()


def _plan(template: str, tolerance: str, title: str) -> str:
    body = "\n".join(f"        {line}" for line in template.split("\n"))
    return (
        "apiVersion: v1\n"
        "id: keiri/memo\n"
        "vars:\n"
        f"  tolerance: {tolerance}\n"
        "graph:\n"
        "  - id: note\n"
        "    block: report.markdown\n"
        "    in:\n"
        f"      title: {title}\n"
        "      template: |\n"
        f"{body}"
    )


def _pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(what, old text, new text) that differ only in what does not show."""
    words = rng.choice(["確認しました。", "売掛金の消込を確認", "差額 {{ n }} 円"])
    long = "、".join(rng.choice(["請求書", "入金", "差額", "取引先"]) for _ in range(80))
    base = _plan(words, "500", '"月次メモ"')
    return [
        ("final line break", base, base + "\n"),
        ("keep chomping", base.replace("|", "|+") + "\n", base.replace("|", "|+") + "\n\n"),
        ("space in quotes", base, base.replace('"月次メモ"', '"月次メモ "')),
        ("full-width space", base, base.replace('"月次メモ"', '"月次　メモ"')),
        (
            "tab or space",
            _plan(words, "500", '"月次 メモ"'),
            base.replace('"月次メモ"', '"月次\\tメモ"'),
        ),
        ("string or number", base, base.replace("tolerance: 500", 'tolerance: "500"')),
        ("past the cut", _plan(long, "500", "x"), _plan(long[:-3] + "入金。", "500", "x")),
    ]


def _looks(text: str) -> str:
    """What a person sees of a text on a screen: a gap between two characters, not its width
    or kind, and nothing of white space at either end."""
    return re.sub(r"\s+", " ", text.strip())


@pytest.mark.parametrize("seed", range(6))
def test_every_changed_value_is_shown_as_two_different_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    settings = versions_settings(tmp_path, keiri_require_approval="off")
    monkeypatch.setenv("KEIRI_DESIGNS_DIR", str(settings.keiri_designs_dir))
    monkeypatch.setenv("KEIRI_RUN_LOG_FSYNC", "false")
    store = VersionStore.of(settings)
    wrong = []
    for what, old, new in _pairs(random.Random(seed)):
        assert yaml.safe_load(old) != yaml.safe_load(new), what  # the plan says another thing
        first, _ = store.save(PLAN_ID, old, SaveNote(author="sato", source="cli"))
        second, created = store.save(PLAN_ID, new, SaveNote(author="sato", source="cli"))
        assert created, what
        shown = runner.invoke(app, ["plan", "diff", PLAN_ID, first.id[:12], second.id[:12]])
        assert shown.exit_code == 0, shown.output
        lines = shown.stdout.splitlines()[1:]  # after the line naming the two versions
        changes = [line for line in lines if ": " in line and "を変更" not in line]
        sides = [line.partition(": ")[2].split(" → ") for line in changes]
        if not sides or any(len(pair) != 2 or _looks(pair[0]) == _looks(pair[1]) for pair in sides):
            wrong.append((what, changes))
    assert not wrong, wrong
