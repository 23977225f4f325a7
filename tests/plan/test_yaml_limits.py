"""Hostile YAML (issue 18): alias bombs, deep nesting and huge flows are refused before they
expand, with a located Japanese error, in plans, answers files, --var values and the config.

Each case runs in a child process whose peak RSS (its own VmHWM, see measure.py) must stay under
PEAK_RSS_LIMIT_MB; before the bound, the 700-byte bomb grew `plan validate` to 14 GB.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.plan._dsl.loader import (
    MAX_YAML_ALIAS_NODES,
    MAX_YAML_ALIASES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
)
from tests.plan.measure import run_measured

PEAK_RSS_LIMIT_MB = 250  # `plan validate` of a normal plan peaks near 50 MB
CLI = "import sys; from keiri_agent.cli import app; sys.argv[0] = 'keiri-agent'; app()"


def laughs(levels: int = 9, width: int = 9, *, indent: str = "") -> str:
    """The billion-laughs bomb as block YAML: level n is ``width`` aliases of level n-1."""
    lines = [f"{indent}a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int = 9, width: int = 9) -> str:
    """The same growth through mappings and merge keys (``<<: [*m0, ...]``) instead of lists."""
    lines = ["m0: &m0 {" + ", ".join(f"k{j}: lol" for j in range(width)) + "}"]
    for i in range(1, levels):
        refs = ", ".join(f"k{j}: *m{i - 1}" for j in range(width))
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}], {refs}}}")
    return "\n".join(lines) + "\n"


def test_billion_laughs_plan_is_refused_by_validate_within_memory(tmp_path: Path) -> None:
    plan = tmp_path / "bomb.yaml"
    plan.write_text("id: bomb\ngraph: []\nvars:\n" + laughs(indent="  "), encoding="utf-8")
    assert plan.stat().st_size < 1000

    run = run_measured(CLI, "plan", "validate", str(plan))

    assert run.returncode == 1, run.stderr[-2000:]
    # "<file>:<line>:<column> YAML_LIMIT <message>" and the hint on the next line.
    assert f"{plan}:9:12 YAML_LIMIT" in run.stdout, run.stdout
    assert f"{MAX_YAML_ALIAS_NODES:,} 要素を超えています" in run.stdout
    assert "ヒント: アンカー" in run.stdout
    assert run.peak_rss_mb < PEAK_RSS_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(merge_bomb(), f"{MAX_YAML_ALIAS_NODES:,}", id="merge-keys"),
        # Anchors defined inside other anchored nodes, each level aliasing the previous twice.
        pytest.param(
            "x: &n0 [a, b]\n"
            + "".join(f"y{i}: &n{i} [{{k: *n{i - 1}}}, [*n{i - 1}]]\n" for i in range(1, 40)),
            f"{MAX_YAML_ALIAS_NODES:,}",
            id="nested-anchors",
        ),
        # Many cheap aliases rather than big ones.
        pytest.param(
            "v: &v x\nl: [" + ", ".join(["*v"] * (MAX_YAML_ALIASES + 1)) + "]\n",
            f"{MAX_YAML_ALIASES:,} 回",
            id="alias-count",
        ),
        pytest.param("a: &a [1, *a]\n", "再帰", id="recursive-alias"),
        pytest.param("x: " + "[" * 20_000 + "]" * 20_000 + "\n", f"{MAX_YAML_DEPTH} 段", id="deep"),
        # No alias at all: 2 MB of one-character items used to take 600 MB and 18 s.
        pytest.param(
            "x: [" + ",".join(["0"] * (1024 * 1024 - 4)) + "]\n",
            f"{MAX_YAML_NODES:,}",
            id="huge-flow",
        ),
    ],
)
def test_hostile_plan_yaml_is_a_located_plan_issue(
    tmp_path: Path, text: str, expected: str
) -> None:
    plan = tmp_path / "hostile.yaml"
    plan.write_text(text, encoding="utf-8")

    code = (
        "import json, sys\n"
        "from keiri_agent.blocks.registry import default_registry\n"
        "from keiri_agent.plan import validate_file\n"
        "report = validate_file(sys.argv[1], default_registry(), designs_dir=None, config={})\n"
        "print(json.dumps(report.to_dict(), ensure_ascii=False))\n"
    )
    run = run_measured(code, str(plan))

    assert run.returncode == 0, run.stderr[-2000:]
    (issue,) = json.loads(run.stdout)["errors"]
    assert issue["code"] == "YAML_LIMIT", issue
    assert expected in issue["message"]
    assert issue["line"] is not None
    assert run.peak_rss_mb < PEAK_RSS_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB"


def test_bomb_in_answers_file_stops_the_run_with_a_clear_error(tmp_path: Path) -> None:
    plan = tmp_path / "ask.yaml"
    plan.write_text(
        """
id: ask
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      message: 値を入力してください
      requirements:
        - {id: note, type: text, label: メモ}
""",
        encoding="utf-8",
    )
    answers = tmp_path / "answers.yaml"
    answers.write_text("defs:\n" + laughs(indent="  ") + "ask:\n  note: *a8\n", encoding="utf-8")

    run = run_measured(CLI, "plan", "run", str(plan), "--answers", str(answers), cwd=tmp_path)

    assert run.returncode != 0
    assert "回答ファイル" in run.stderr
    assert f"{MAX_YAML_ALIAS_NODES:,}" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.peak_rss_mb < PEAK_RSS_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB"


def test_bomb_in_config_and_var_is_bounded(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(laughs(), encoding="utf-8")
    flow = (
        "["
        + ", ".join(
            f"&b{i} [" + ", ".join([f"*b{i - 1}" if i else "x"] * 9) + "]" for i in range(9)
        )
        + "]"
    )
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from keiri_agent.errors import BlockError\n"
        "from keiri_agent.plan import load_config\n"
        "from keiri_agent.cli.plan import parse_vars\n"
        "try:\n"
        "    load_config(Path(sys.argv[1]))\n"
        "    config = 'loaded'\n"
        "except BlockError as exc:\n"
        "    config = exc.to_dict()\n"
        "try:\n"
        "    var = parse_vars(['v=' + sys.argv[2]])['v']\n"
        "except BlockError as exc:\n"
        "    var = exc.to_dict()\n"
        "from keiri_agent.plan import load_yaml\n"
        "ordinary = load_yaml('d: &d {on_error: halt, retries: 0}\\np: {<<: *d, retries: 2}')\n"
        "print(json.dumps({'config': config, 'var': var,"
        " 'ordinary': ordinary}))\n"
    )

    run = run_measured(code, str(config), flow)

    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["config"]["code"] == "CONFIGURATION_ERROR"
    assert f"{MAX_YAML_ALIAS_NODES:,}" in result["config"]["message"]
    # A --var list over the limits is refused with the reason, not expanded.
    assert result["var"]["code"] == "INPUT_VALIDATION_FAILED"
    assert "--var v" in result["var"]["message"]
    # Ordinary anchors and merge keys still work.
    assert result["ordinary"]["p"] == {"on_error": "halt", "retries": 2}
    assert run.peak_rss_mb < PEAK_RSS_LIMIT_MB, f"peak RSS {run.peak_rss_mb:.0f} MB"
