"""ARCHITECTURE.md and the package docstring stay true to the code (issue 39).

Every file or folder ARCHITECTURE.md names exists, and so does every module-qualified name it
cites (``_graph.scope.Scope.read``, ``events.RunStatus``); the layer order drawn by
``keiri_agent``'s docstring, by ARCHITECTURE.md and by the import-linter contract in
pyproject.toml is one order.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import keiri_agent

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "keiri_agent"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
PLAN_PHASES = frozenset({"_dsl", "_graph", "_validate", "_dryrun", "_run"})
FILE_SUFFIX = re.compile(r"\.(py|md|toml|yaml|json)$")
NOT_A_NAME = re.compile(r"[<>*{}…|]")  # patterns and placeholders (`runs/<plan>/...`), not names


def _cited() -> list[tuple[str, str | None]]:
    """Each backticked token of ARCHITECTURE.md with its code-map row's package (or None)."""
    out: list[tuple[str, str | None]] = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\| `([^`]+)/` \|", line)
        package = row.group(1) if row else None
        if package is not None and package.startswith("_"):
            package = f"plan/{package}"
        out.extend((token, package) for token in re.findall(r"`([^`\s]+)`", line))
    return out


def _path_exists(token: str, package: str | None) -> bool:
    """``token`` as a file or folder under the repository, the package, ``plan/`` or the
    code-map row's package; ``dir/module.attr`` names an attribute of that module."""
    path = token.rstrip("/")
    head, _, tail = path.rpartition("/")
    if "." in tail and not FILE_SUFFIX.search(tail):
        path = f"{head}/{tail.split('.', 1)[0]}"
    bases = [ROOT, SRC, SRC / "plan"] + ([SRC / package] if package else [])
    return any((base / path).exists() or (base / f"{path}.py").exists() for base in bases)


def _resolve(dotted: str) -> Any:
    """The object a ``module.attr`` name of ARCHITECTURE.md stands for (raises if none)."""
    parts = dotted.split(".")
    prefix = "keiri_agent.plan." if parts[0] in PLAN_PHASES else "keiri_agent."
    for cut in range(len(parts), 0, -1):
        try:
            found: ModuleType | Any = importlib.import_module(prefix + ".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


def _is_block_id(token: str) -> bool:
    return any(SRC.glob(f"block_specs/*/{token}.yaml"))


def test_every_path_architecture_names_exists() -> None:
    missing = [
        token
        for token, package in _cited()
        if not NOT_A_NAME.search(token)
        and not token.startswith(("/", "KEIRI_", "http", "${", ".", "-"))
        and ("/" in token or token.endswith((".py", ".md", ".toml")))
        and not _path_exists(token, package)
    ]
    assert missing == []


def test_every_module_qualified_name_architecture_cites_exists() -> None:
    tops = {p.stem for p in SRC.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    names = {
        token
        for token, _ in _cited()
        if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)+", token)
        and token.split(".")[0] in tops | PLAN_PHASES
        and not FILE_SUFFIX.search(token)
        and not _is_block_id(token)
    }
    assert len(names) > 10  # the check reads the names it should
    unresolved = []
    for name in sorted(names):
        try:
            _resolve(name)
        except (ImportError, AttributeError):
            unresolved.append(name)
    assert unresolved == []


def test_the_code_map_names_every_module_of_a_plan_phase_and_no_other() -> None:
    """A ``module`` (what it holds) entry in a phase's row is a module of that phase, or a
    name one of them defines; and every module of the phase has its entry."""
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\| `(_\w+)/` \|", line)
        if row is None:
            continue
        phase = row.group(1)
        modules = {p.stem for p in (SRC / "plan" / phase).glob("*.py")} - {"__init__"}
        loaded = [importlib.import_module(f"keiri_agent.plan.{phase}.{m}") for m in modules]
        entries = set(re.findall(r"`([A-Za-z_]\w*)` \(", line))
        unknown = {
            e for e in entries if e not in modules and not any(hasattr(m, e) for m in loaded)
        }
        assert (phase, unknown) == (phase, set())
        named = set(re.findall(r"`([A-Za-z_]\w*)`", line))
        assert (phase, modules - named) == (phase, set())


def test_the_package_docstring_names_only_files_that_exist() -> None:
    doc = keiri_agent.__doc__ or ""
    named = re.findall(r"[\w/.-]+\.(?:md|toml|py)\b", doc)
    assert named
    assert [name for name in named if not (ROOT / name).exists()] == []


def _layers(sentence: str) -> list[frozenset[str]]:
    """``a, b / c, then d and e side by side`` → [{a}, {b, c}, {d, e}]."""
    sentence = re.sub(r"\s+", " ", sentence.replace("`", ""))
    sentence = re.sub(r",? then (\w+) and (\w+) side by side.*", r", \1 / \2", sentence)
    return [
        frozenset(name.strip() for name in layer.split("/"))
        for layer in sentence.split(",")
        if layer.strip()
    ]


def test_the_layer_order_is_one_order_in_the_docstring_the_map_and_the_contract() -> None:
    doc = keiri_agent.__doc__ or ""
    in_doc = _layers(doc.split("or below):", 1)[1].split(". ", 1)[0])
    text = ARCHITECTURE.read_text(encoding="utf-8")
    drawn = text.split("**Layers point one way.** From the bottom up:", 1)[1]
    in_map = _layers(drawn.split("(neither imports the other)", 1)[0])
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c
        for c in pyproject["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and "containers" not in c
    )
    in_contract = [
        frozenset(name.strip().removeprefix("keiri_agent.") for name in re.split("[|:]", layer))
        for layer in reversed(contract["layers"])
    ]
    assert in_doc == in_contract
    assert in_map == in_contract


def _top_level() -> set[str]:
    """The modules and packages right under src/keiri_agent (``__init__`` aside)."""
    return {p.stem for p in SRC.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} - {
        "__init__"
    }


def test_the_code_map_has_a_row_for_every_module_and_package_of_the_package() -> None:
    rows = set(re.findall(r"^\| `([\w.]+?)(?:\.py|/)` \|", ARCHITECTURE.read_text("utf-8"), re.M))
    assert sorted(_top_level() - rows) == []


def test_every_module_and_package_of_the_package_has_its_layer() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c
        for c in pyproject["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and "containers" not in c
    )
    placed = {
        name.strip().removeprefix("keiri_agent.")
        for layer in contract["layers"]
        for name in re.split("[|:]", layer)
    }
    # __main__ (`python -m keiri_agent`) is the entry point: nothing imports it.
    assert sorted(_top_level() - placed - {"__main__"}) == []
