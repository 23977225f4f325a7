"""Property: the CLI names things by their labels and sets Japanese without stray spaces.

A failed run in ``plan runs`` is named as its plan names the node (表の読み込み（sales）), the
doctors name each sandbox property by its words (``sandbox.layers.PROPERTY_LABELS``), and
``blocks show`` folds a block's Japanese as Japanese is set: no line ends with a space, no
space sits between two Japanese characters (a YAML folded block's line break), no line begins
with a closing mark, at any terminal width. The folding is tried on seeded generated sentences
of the shapes block descriptions have (numbers, ids, paths, brackets among Japanese), and on
the CLI's texts (``tests.support.cli_texts``: descriptions, errors with hints, amounts with
units, paths, product names): a line begins between two phrases, not inside a phrase, a number
with its unit or a path that fits on a line (at most 5 % of the breaks; main cut 44 %).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from keiri_agent.blocks.registry import default_registry
from keiri_agent.cli import app
from keiri_agent.cli.japanese_text import NO_LINE_END, NO_LINE_START, break_offsets
from keiri_agent.sandbox.layers import PROPERTY_LABELS, PROPERTY_NAMES, LayerStatus
from tests.support.cli_texts import cli_texts

runner = CliRunner()
WIDE_SPACE_WIDE = re.compile(r"[^\x00-\u2e7f] +[^\x00-\u2e7f]")
MOST_UNITS_CUT = 0.05  # share of the line breaks in generated CLI texts (main: 0.44)
WORDS = [
    "表の読み込み",
    "得意先ごとに",
    "集計します",
    "金額",
    "（税込）",
    "「合計」の行は",
    "1,234",
    "KEIRI_TIMEZONE",
    "info",
    "2026-02-03T10:00:00+09:00",
    "、",
    "。",
    "ファイル",
    "を",
    "の",
    "は",
    "4月 締め/売上 一覧.csv",
    "total_check: warn",
    "ー",
    "「",
    "」",
]


def _sentences(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        words = rng.choices(WORDS, k=rng.randint(3, 40))
        found.append("".join(w + (" " if rng.random() < 0.3 else "") for w in words).strip())
    return found


def _segments(text: str, width: int) -> list[str]:
    """The lines of ``text``, each with the spaces it ends at (which are not shown)."""
    offsets = [0, *break_offsets(text, width), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(offsets)]


@pytest.mark.parametrize("width", [12, 20, 37, 80])
def test_japanese_folds_at_the_width_without_stray_spaces(width: int) -> None:
    for text in _sentences(width, 200):
        segments = _segments(text, width)
        assert "".join(segments) == text  # nothing lost
        lines = [segment.rstrip() for segment in segments]
        for number, line in enumerate(lines):
            latin_word = max((cell_len(w) for w in re.findall(r"[!-~]+", line)), default=0)
            assert cell_len(line) <= max(width, latin_word), (text, line)
            assert not line.startswith(" ")
            if number and line[0] in NO_LINE_START:  # only when the line before has no room
                assert cell_len(segments[number - 1] + line[0]) > width, (text, lines)
            if number < len(lines) - 1 and line and line[-1] in NO_LINE_END:
                assert cell_len(line) <= 2, (text, lines)


def test_the_cli_texts_break_between_phrases_not_inside_them() -> None:
    breaks = cut = 0
    for width in (20, 30, 40, 60, 80):
        for text in cli_texts(width, 200):
            for offset in break_offsets(text.text, width):
                breaks += 1
                cut += text.cuts_a_unit(offset) and cell_len(text.unit_at(offset)) <= width
            lines = [
                text.text[a:b].rstrip()
                for a, b in itertools.pairwise(
                    [0, *break_offsets(text.text, width), len(text.text)]
                )
            ]
            assert all(cell_len(line) <= width for line in lines), (text.text, lines)
    assert cut / breaks <= MOST_UNITS_CUT, (cut, breaks)


@pytest.mark.parametrize("width", ["40", "63", "100"])
def test_blocks_show_sets_japanese_without_stray_spaces(width: str) -> None:
    listed = json.loads(runner.invoke(app, ["blocks", "list", "--json"]).stdout)
    ids = sorted(block["id"] for block in listed)
    registry = default_registry()
    for block in random.Random(int(width)).sample(ids, 12):
        shown = runner.invoke(app, ["blocks", "show", block], env={"COLUMNS": width}).stdout
        typed = Path(str(registry.get(block).source)).read_text(encoding="utf-8")
        for line in shown.splitlines():
            text = line.strip("│┃ ")
            assert not re.search(r"\S $", line), (block, line)  # a line cut at a space
            for found in WIDE_SPACE_WIDE.finditer(text):  # a space its author typed stays
                assert found.group() in typed, (block, line)


def test_plan_runs_names_a_failed_node_by_its_label(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "月次 売上.yaml"
    plan.write_text(
        "apiVersion: v1\nid: monthly\ngraph:\n  - id: sales\n    block: file.read_table\n"
        "    in: {path: ない 売上.csv}\n",
        encoding="utf-8",
    )
    runner.invoke(app, ["plan", "run", str(plan)])
    shown = runner.invoke(app, ["plan", "runs"], env={"COLUMNS": "200"}).stdout
    assert "失敗（ノード 表の読み込み（sales））" in shown
    listed = json.loads(runner.invoke(app, ["plan", "runs", "--json"]).stdout)
    assert listed["runs"][0]["failed_node_name"] == "表の読み込み"


def test_the_doctors_name_each_sandbox_property_by_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    statuses = [LayerStatus(name, name != "seccomp", "詳細") for name in PROPERTY_NAMES]
    monkeypatch.setattr("keiri_agent.sandbox.probe.probe_layers", lambda *_: statuses)
    for command in (["sandbox", "doctor"], ["doctor"]):
        shown = runner.invoke(app, command, env={"COLUMNS": "200"}).stdout
        for name in PROPERTY_NAMES:
            assert PROPERTY_LABELS[name] in shown, (command, name)
            assert not re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", shown), (command, name)
