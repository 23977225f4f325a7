"""Every bundled block and port has a Japanese label: what the app, the CLI, the progress page and
docs/blocks.md show in place of ids (``table.aggregate`` is 表の集計, its ``rows`` 集計結果)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from keiri_agent.blocks.registry import BlockRegistry, default_registry
from keiri_agent.blocks.spec import MAX_LABEL_CHARS, BlockSpec
from keiri_agent.errors import BlockError

# A label is the accountant's word: Japanese, maybe with an acronym (Excel, ZIP, AI, CPU, MB).
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def test_every_bundled_block_and_port_has_a_japanese_label() -> None:
    missing = []
    for spec in default_registry().list():
        if not (spec.label and _JAPANESE.search(spec.label)):
            missing.append(spec.id)
        for kind, ports in (("in", spec.inputs), ("out", spec.outputs)):
            for name, port in ports.items():
                label = port.get("label")
                if not (isinstance(label, str) and _JAPANESE.search(label)):
                    missing.append(f"{spec.id} {kind} {name}")
    assert missing == []


def test_labels_of_one_block_tell_its_ports_apart() -> None:
    clashes = []
    for spec in default_registry().list():
        for ports in (spec.inputs, spec.outputs):
            labels = [port["label"] for port in ports.values()]
            if len(labels) != len(set(labels)):
                clashes.append(spec.id)
    assert clashes == []


def test_a_port_label_names_the_port_for_people() -> None:
    spec = default_registry().get("table.aggregate")
    assert spec.shown_name == "表の集計"
    assert spec.port_label("rows") == "集計結果"
    assert spec.port_label("no_such_port") == "no_such_port"


def _write_spec(folder: Path, port: dict[str, object]) -> Path:
    data = {
        "id": "custom.echo",
        "version": "1.0.0",
        "entrypoint": "tests.nowhere:Block",
        "description": "自作ブロック",
        "category": "custom",
        "inputs": {"value": port},
    }
    path = folder / "custom.echo.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_a_custom_block_without_labels_is_named_by_its_description(tmp_path: Path) -> None:
    _write_spec(tmp_path, {"type": "string"})
    spec = BlockRegistry([tmp_path], builtin=False).get("custom.echo")
    assert spec.shown_name == "自作ブロック"  # never its id (blocks/block_names)
    assert spec.port_label("value") == "value"


@pytest.mark.parametrize("label", ["", "  ", 3, "長" * (MAX_LABEL_CHARS + 1)])
def test_a_port_label_that_is_not_a_short_text_is_refused_in_japanese(
    tmp_path: Path, label: object
) -> None:
    _write_spec(tmp_path, {"type": "string", "label": label})
    with pytest.raises(BlockError) as caught:
        BlockRegistry([tmp_path], builtin=False)
    assert "ポート 'value' の label は日本語の名前" in caught.value.message


def test_a_block_label_over_the_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 30 characters"):
        BlockSpec(
            id="custom.echo",
            version="1.0.0",
            label="長" * (MAX_LABEL_CHARS + 1),
            entrypoint="tests.nowhere:Block",
            description="x",
            category="custom",
        )


def test_a_result_mark_that_is_not_true_or_false_is_refused_in_japanese(tmp_path: Path) -> None:
    _write_spec(tmp_path, {"type": "string", "result": "no"})
    with pytest.raises(BlockError) as caught:
        BlockRegistry([tmp_path], builtin=False)
    assert "ポート 'value' の result は true か false" in caught.value.message
