"""The wheel as pip would install it: typed (PEP 561), runnable with ``python -m``, with its data.

Built with the project's own build backend (hatchling, the same code ``pip wheel .`` and
``python -m build`` run), in-process and without network, into a temporary directory.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

# A dev dependency (pyproject.toml); a venv made before it was added reports this test as skipped
# (pytest -ra names the reason) until `pip install -c requirements-dev.lock -e ".[dev]"` again.
WheelBuilder = pytest.importorskip(
    "hatchling.builders.wheel", reason="hatchling (dev dependency) is not installed"
).WheelBuilder

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_py_typed_main_and_the_bundled_examples(tmp_path: Path) -> None:
    built = list(WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"]))
    assert len(built) == 1
    with zipfile.ZipFile(built[0]) as wheel:
        names = set(wheel.namelist())
        assert (
            wheel.read("keiri_agent/py.typed") == (ROOT / "src/keiri_agent/py.typed").read_bytes()
        )
    assert "keiri_agent/__main__.py" in names  # python -m keiri_agent
    assert "keiri_agent/errors.py" in names
    assert any(n.startswith("keiri_agent/block_specs/") and n.endswith(".yaml") for n in names)
    assert "keiri_agent/blocks/table/names/company_forms.csv" in names  # the 法人略語 table
    assert "keiri_agent/blocks/table/names/municipalities.csv" in names  # 市区町村 readings
    assert "keiri_agent/documents/zengin_fields.csv" in names  # the 全銀協 record layouts
    assert any(n.startswith("keiri_agent/_bundled/designs/examples/") for n in names)
    assert not any(n.startswith(("tests/", ".venv/")) for n in names)
