"""What the command line says is Japanese and whole: the CLI's help, ``--help`` of every command
at 80 columns, a command-line mistake, and the message and hint of every error raised with a
code anywhere in the package.

Help: no "…", no line wider than the terminal, no English chrome of Click, Typer or Rich
("Usage", "Options", "Show this message and exit.", "[required]"), no English sentence, no
seed jargon, and every description and option text shown in full. Errors: the source is read
(``ast``) for every text that becomes the message or hint of an error with a code (a
``BlockError`` or subclass, a finding with ``IssueCode``/``ErrorCode``, ``message=`` and
``hint=`` keywords, variables named ``message``/``hint``); each must read as Japanese, with
English only in names a user types (commands, options, settings, file names, ids).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.main import get_command
from typer.testing import CliRunner

import keiri_agent
from keiri_agent.cli import app

runner = CliRunner()
WIDTH = 80
SRC = Path(keiri_agent.__file__).resolve().parent
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
# What a user types or reads as a name: `quoted`, ${refs}, URLs, words with digits or
# punctuation (options, settings, paths, ids), capitalised words (product and format names).
NAMES = re.compile(
    r"`[^`]*`|\$\{[^}]*\}|https?://\S+|\S*[_./=<>|@\\$\d\[\]{}:'\"-]\S*|\b[A-Z][A-Za-z]*\b"
)
# Three English words in a row, once names are taken out: a sentence nobody translated.
SENTENCE = re.compile(r"\b[a-z]{2,}(?: [a-z]{2,}){2,}\b")
CHROME = re.compile(
    r"\b(Usage|Options|Arguments|Commands|Error|Try|Show this message|required|default)\b"
    r"|\[default|\[required\]"
)
JARGON = re.compile(r"\bseed\b|§", re.IGNORECASE)


def _english(text: str) -> list[str]:
    """The English sentences of ``text`` (names a user types are not English here)."""
    return SENTENCE.findall(NAMES.sub(" ", text))


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _command_paths() -> Iterator[list[str]]:
    def walk(command: Any, path: list[str]) -> Iterator[list[str]]:
        yield path
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not sub.hidden:
                yield from walk(sub, [*path, name])

    yield from walk(get_command(app), [])


@cache
def _command(path: tuple[str, ...]) -> Any:
    command: Any = get_command(app)
    for name in path:
        command = command.commands[name]
    return command


def _paragraphs(text: str | None) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", (text or "").replace("\b", "")) if p.strip()]


def _texts(command: Any) -> list[str]:
    """Every text the help of ``command`` must show whole: its description, its parameters'
    texts, and the first paragraph of each of its commands."""
    texts = _paragraphs(command.help)
    texts += [p for param in command.params for p in _paragraphs(getattr(param, "help", ""))]
    for sub in getattr(command, "commands", {}).values():
        texts += [] if sub.hidden else _paragraphs(sub.help)[:1]
    return texts


PATHS = [" ".join(path) for path in _command_paths()]


def test_every_command_is_scanned() -> None:
    assert len(PATHS) > 30
    assert {"", "plan run", "plan generate", "helpdesk ask", "blocks list"} <= set(PATHS)


@pytest.mark.parametrize("path", PATHS, ids=lambda path: path or "keiri-agent")
def test_help_at_80_columns_is_japanese_and_whole(path: str) -> None:
    words = path.split()
    result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    shown = result.stdout
    assert "…" not in shown
    wide = [line for line in shown.splitlines() if cell_len(line) > WIDTH]
    assert wide == [], "lines wider than the terminal"
    lines = [line.strip() for line in shown.splitlines() if line.strip()]
    badly_broken = [line for line in lines if line[0] in "、。）」』" or line[-1] in "（「『"]
    assert badly_broken == [], "a line begins with a closing mark or ends with an opening one"
    untyped = [line for line in lines if re.match(r"^-[-\w]+(?:, -\w+)? 値(?:\s|$)", line)]
    assert untyped == [], "an option whose value is not named (整数, パス, 文字列…)"
    assert shown.startswith(f"使い方: keiri-agent {path}".replace("  ", " ").rstrip())
    assert CHROME.findall(NAMES.sub(" ", shown)) == []
    assert _english(shown) == []
    assert JARGON.findall(shown) == []
    flat = _squeezed(shown)
    missing = [text for text in _texts(_command(tuple(words))) if _squeezed(text) not in flat]
    assert missing == [], "texts not shown whole"


def test_the_cli_without_arguments_shows_its_help_in_japanese() -> None:
    result = runner.invoke(app, [], env={"COLUMNS": str(WIDTH)})
    shown = result.stdout + result.stderr
    assert "使い方: keiri-agent" in shown
    assert "コマンド:" in shown
    assert CHROME.findall(NAMES.sub(" ", shown)) == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["plan", "run", "--runs"], "オプション --runs はありません"),
        (["plan", "runz"], "コマンド runz はありません（近いもの: run"),
        (["plan", "run"], "FILE を指定してください"),
        (["plan", "runs", "--limit", "many"], "--limit の値が正しくありません"),
    ],
)
def test_a_command_line_mistake_is_told_in_japanese(args: list[str], expected: str) -> None:
    result = runner.invoke(app, args, env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert expected in lines[0]
    assert lines[1].startswith("ヒント: 使い方は `keiri-agent")
    assert len(lines) == 2  # Click's own English only in --json's details.original
    assert _english(result.stderr) == []


# --- every error's message and hint, read from the source ---------------------------------


def _trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in SRC.rglob("*.py")}


def _message_positions(trees: dict[Path, ast.Module]) -> dict[str, int]:
    """Each error class (BlockError and its subclasses) and where its message argument is."""
    classes: dict[str, tuple[set[str], int | None]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            init = next(
                (f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"),
                None,
            )
            position = None
            if init is not None:
                names = [a.arg for a in [*init.args.posonlyargs, *init.args.args]][1:]
                position = names.index("message") if "message" in names else -1
            bases = {str(getattr(b, "id", getattr(b, "attr", ""))) for b in node.bases}
            classes[node.name] = (bases, position)
    errors = {"BlockError": 0}
    grown = True
    while grown:
        grown = False
        for name, (bases, position) in classes.items():
            parent = next((b for b in sorted(bases) if b in errors), None)
            if name not in errors and parent is not None:
                errors[name] = errors[parent] if position is None else position
                grown = True
    return errors


def _strings(node: ast.AST) -> list[str]:
    """The literal text of an expression: a string, an f-string's fixed parts, a choice."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        fixed = (v.value if isinstance(v, ast.Constant) else " {} " for v in node.values)
        return ["".join(map(str, fixed))]
    if isinstance(node, ast.BinOp):
        return _strings(node.left) + _strings(node.right)
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


def _is_code(node: ast.AST) -> bool:
    owner = getattr(node, "value", None)
    return isinstance(node, ast.Attribute) and getattr(owner, "id", "") in (
        "ErrorCode",
        "IssueCode",
    )


def _error_texts() -> list[tuple[str, str]]:
    """(``file:line``, text) of every message and hint an error with a code is given."""
    trees = _trees()
    positions = _message_positions(trees)
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            parts: list[ast.AST] = []
            if isinstance(node, ast.Call):
                name = str(getattr(node.func, "id", getattr(node.func, "attr", "")))
                position = positions.get(name, -1)
                if 0 <= position < len(node.args):
                    parts.append(node.args[position])
                parts += [k.value for k in node.keywords if k.arg in ("message", "hint")]
                if any(_is_code(a) for a in [*node.args, *(k.value for k in node.keywords)]):
                    parts += node.args
            elif isinstance(node, ast.Tuple) and any(_is_code(e) for e in node.elts):
                parts += node.elts
            elif isinstance(node, ast.Assign) and any(
                getattr(t, "id", "") in ("message", "hint") for t in node.targets
            ):
                parts.append(node.value)
            where = f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}"
            found += [(where, text) for part in parts for text in _strings(part)]
    return found


def test_the_scan_finds_the_errors() -> None:
    texts = [text for _, text in _error_texts()]
    assert len(texts) > 500
    assert any("を読み取れません" in text for text in texts)  # FileProcessingError(file, …)
    assert any("作業ディレクトリがありません" in text for text in texts)  # IsolationError(layer, …)


def test_every_error_message_and_hint_reads_as_japanese() -> None:
    english = []
    for where, text in _error_texts():
        prose = NAMES.sub(" ", text)
        words = re.findall(r"[a-z]{2,}", prose)
        if (not JAPANESE.search(text) and len(words) > 1) or _english(text):
            english.append(f"{where}: {text!r}")
    assert english == []


def test_a_missing_key_names_the_use_in_japanese_and_a_local_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KEIRI_LLM_MODEL", "KEIRI_LLM_MODEL_REASON"):
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "売上.csv"
    data.write_text("月,売上\n2024-04,120000\n", encoding="utf-8")
    result = runner.invoke(app, ["analyze", str(data), "合計は？"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "（用途: データ分析: 判断）" in result.stderr
    assert "OPENAI_BASE_URL" in result.stderr  # a model on this machine needs no key
    assert "reason" not in result.stderr


def test_a_dry_run_names_the_steps_and_blocks_as_people_read_them() -> None:
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.examples import example_plan
    from keiri_agent.plan import Plan, load_source, plan_names

    source = example_plan("monthly_sales_report")
    result = runner.invoke(app, ["plan", "dry-run", str(source)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    plan = Plan.model_validate(load_source(source).raw)
    names = plan_names(plan, default_registry())
    for node in plan.graph:
        assert names.node(node.id) in result.stdout
        assert f" {node.id} " not in result.stdout  # ids are for --json
    assert "表の集計" in result.stdout
    assert "table.aggregate" not in result.stdout
