"""The exception tree drawn in ``errors.py`` is the tree the package really has.

Every module of ``keiri_agent`` is imported (in a child interpreter, so that importing the
Streamlit pages and the CLI leaves this test process as it was; a module that fails to import
fails the test, none is skipped); every exception class found is checked against the docstring:

- a public class whose name ends in ``Error`` derives from ``KeiriError``;
- every ``KeiriError`` subclass is in the tree with its parent and module, and every class in
  the tree exists with that parent and module;
- a public exception class outside ``KeiriError`` (a signal) is named in the docstring.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import yaml

import keiri_agent.errors as errors_module
from keiri_agent.agents.convert.models import UnsupportedFormatError, UnsupportedVizParamError
from keiri_agent.errors import BlockError, KeiriError
from keiri_agent.plan._dsl.loader import YamlLimitError

# Importing all 300 modules (pandas, LangChain, Streamlit, ...) takes minutes on a loaded machine.
pytestmark = pytest.mark.timeout(900)

_SCAN = r"""
import importlib, inspect, json, pkgutil, sys
import keiri_agent
from keiri_agent.errors import KeiriError

failed = []
def onerror(name):
    failed.append([name, repr(sys.exc_info()[1])])

modules = []
for info in pkgutil.walk_packages(keiri_agent.__path__, "keiri_agent.", onerror=onerror):
    try:
        modules.append(importlib.import_module(info.name))
    except BaseException as exc:
        failed.append([info.name, repr(exc)])

found = {}
def keep(cls):
    if cls.__module__.startswith("keiri_agent") and issubclass(cls, BaseException):
        found[cls.__module__ + "." + cls.__qualname__] = cls

for module in modules:
    for obj in vars(module).values():
        if inspect.isclass(obj) and obj.__module__ == module.__name__:
            keep(obj)
stack = [KeiriError]
while stack:  # classes made inside functions are found through their base
    cls = stack.pop()
    keep(cls)
    stack.extend(cls.__subclasses__())

rows = []
for cls in found.values():
    parents = [b for b in cls.__bases__ if issubclass(b, KeiriError)]
    rows.append({
        "name": cls.__qualname__,
        "module": cls.__module__,
        "keiri": issubclass(cls, KeiriError),
        "parent": parents[0].__name__ if parents else None,
    })
print(json.dumps({"modules": len(modules), "failed": failed, "classes": rows}))
"""

_ENTRY = re.compile(
    r"^    (?:(?P<indent>[ │]*)[├└]── )?(?P<name>[A-Z]\w*)(?: \((?P<module>[\w.]+)\))?"
)


@pytest.fixture(scope="module")
def scan() -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _SCAN], capture_output=True, text=True, timeout=840, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _drawn_tree() -> dict[str, tuple[str | None, str]]:
    """name -> (parent name, module) as the docstring draws it."""
    doc = errors_module.__doc__ or ""
    block = doc.split("Exception tree::\n\n", 1)[1].split("\n\n", 1)[0]
    tree: dict[str, tuple[str | None, str]] = {}
    parents: list[tuple[int, str]] = []  # (column of the name, name) of the open branches
    for line in block.splitlines():
        match = _ENTRY.match(line)
        is_root = not tree
        if match is None or (match.group("indent") is None and not is_root):
            continue  # a description carried over to the next line
        column = match.start("name")
        while parents and parents[-1][0] >= column:
            parents.pop()
        name = match.group("name")
        assert name not in tree, f"{name} is drawn twice"
        module = "keiri_agent." + (match.group("module") or "errors")
        tree[name] = (parents[-1][1] if parents else None, module)
        parents.append((column, name))
    return tree


def test_every_module_of_the_package_imports(scan: dict[str, object]) -> None:
    assert scan["failed"] == []
    assert int(str(scan["modules"])) > 200  # the whole package, not a stub of it


def test_public_error_classes_derive_from_keiri_error(scan: dict[str, object]) -> None:
    rows = list(scan["classes"])  # type: ignore[call-overload]
    outside = [
        f"{r['module']}.{r['name']}"
        for r in rows
        if r["name"].endswith("Error") and not r["name"].startswith("_") and not r["keiri"]
    ]
    assert outside == []


def test_the_docstring_tree_is_the_real_tree_both_ways(scan: dict[str, object]) -> None:
    rows = list(scan["classes"])  # type: ignore[call-overload]
    real = {r["name"]: (r["parent"], r["module"]) for r in rows if r["keiri"]}
    assert len(real) == len([r for r in rows if r["keiri"]]), "two KeiriError classes, one name"
    drawn = _drawn_tree()
    missing = {k: v for k, v in real.items() if drawn.get(k) != v}
    stale = {k: v for k, v in drawn.items() if real.get(k) != v}
    assert missing == {}, f"add these to the tree in errors.py (parent, module): {missing}"
    assert stale == {}, f"the tree in errors.py draws these wrongly or they are gone: {stale}"


def test_signals_outside_the_tree_are_named_in_the_docstring(scan: dict[str, object]) -> None:
    rows = list(scan["classes"])  # type: ignore[call-overload]
    doc = errors_module.__doc__ or ""
    signals = [r["name"] for r in rows if not r["keiri"] and not r["name"].startswith("_")]
    assert signals, "InputRequired and NotPersistable stay outside the tree"
    assert [name for name in signals if name not in doc] == []


def test_fallback_triggers_stay_value_errors_that_block_error_handlers_do_not_take() -> None:
    # The conversion graph forwards ValueErrors to CodeAct; its BlockError handler reports a
    # failure. The triggers must keep going to the first and never to the second.
    for error in (UnsupportedFormatError("xml"), UnsupportedVizParamError("pie")):
        assert isinstance(error, KeiriError)
        assert isinstance(error, ValueError)
        assert not isinstance(error, BlockError)
        assert error.to_dict()["hint"]
        with pytest.raises(ValueError, match="対応していません"):
            raise error


def test_a_yaml_limit_is_still_caught_as_a_yaml_error() -> None:
    # Readers of YAML (plan files, block specs) catch yaml.YAMLError and report it located.
    with pytest.raises(yaml.YAMLError) as caught:
        raise YamlLimitError("エイリアスが多すぎます")
    assert isinstance(caught.value, KeiriError)
    assert str(caught.value) == "エイリアスが多すぎます"
