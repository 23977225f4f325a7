"""docs/first-plan.md runs as written: its commands, in order, in a folder laid out like the
repository's root (the sample data under examples/), with each YAML file saved where the text
says, print what the page shows after them, and make the workbook the page describes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from markdown_it import MarkdownIt
from openpyxl import load_workbook

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "first-plan.md"
COMMAND_TIMEOUT_S = 600  # a loaded machine can take long to import everything
SAVED_AS = re.compile(r"`([^`]+\.ya?ml)`")
PLACEHOLDER = re.compile(r"<[^<>]+>")  # text that differs from run to run: <時間>, <日時>


def _shows(expected: str, line: str) -> bool:
    """``line`` is ``expected``, each ``<…>`` placeholder standing for any text."""
    parts = PLACEHOLDER.split(expected)
    return re.fullmatch(".+".join(map(re.escape, parts)), line) is not None


def _run(script: str, cwd: Path) -> str:
    bin_dir = Path(sys.executable).parent  # where the package's keiri-agent script is
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{script}\n{output}"
    return output


def test_the_first_plan_tutorial_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    tokens = MarkdownIt("commonmark").parse(TUTORIAL.read_text(encoding="utf-8"))
    said, output, ran, saved = "", "", [], []
    for token in tokens:
        if token.type == "inline":
            said = token.content
        if token.type != "fence":
            continue
        if token.info == "yaml":
            name = SAVED_AS.findall(said)
            assert name, f"no file named before the YAML block: {said!r}"
            target = tmp_path / name[-1]
            assert target.parent.is_dir(), f"{target.parent} is not made by an earlier command"
            target.write_text(token.content, encoding="utf-8")
            saved.append(name[-1])
        elif token.info == "bash":
            output = _run(token.content, tmp_path)
            ran.append(token.content)
        elif token.info == "text":  # what the page says the last command shows
            lines = [line.strip() for line in token.content.splitlines() if line.strip()]
            shown = [line.strip() for line in output.splitlines()]
            missing = [line for line in lines if not any(_shows(line, s) for s in shown)]
            assert missing == [], f"after {ran[-1]!r} the page shows lines the output lacks"
    assert saved == ["designs/my-plans/得意先別売上.yaml"]
    assert len(ran) == 5
    written = [Path(line) for line in output.splitlines() if line.endswith("得意先別売上.xlsx")]
    assert len(written) == 1
    assert written[0].is_absolute()
    sheet = load_workbook(written[0], read_only=True)["得意先別"]
    cells = [str(value) for row in sheet.iter_rows(values_only=True) for value in row]
    assert "合計" in cells
    assert "27850400" in cells  # the total of 売上金額, as the page says
