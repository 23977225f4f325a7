"""A file port is declared once, in its spec: the ``accept`` of every input that reads a file
names the types the block reads, and from that one place come the block's "no file given"
error, docs/blocks.md, ``blocks show`` and the designer's file requirement. Parametrised over
the registry's ports, so a new block's file port is covered without a new test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.blocks.catalog import render_markdown
from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.spec import BlockSpec, load_spec_file, port_is_required
from keiri_agent.blocks.ui.field_types import accepted_extensions
from keiri_agent.cli import app
from keiri_agent.design.requirements import build_requirements
from keiri_agent.documents import SUPPORTED_EXTENSIONS
from keiri_agent.errors import BlockError, ErrorCode
from tests.blocks.conftest import ContextFactory, run_like_runner

REGISTRY = default_registry()
# Read ports that take a folder, or a place of any kind (a file of any type, a folder, an S3
# prefix): they have no file types to accept.
NOT_FILE_PORTS = {
    ("file.list_folder", "folder"),
    ("ai.helpdesk_answer", "index_dir"),
    ("data.convert", "source"),
}
READ_PORTS = [
    (spec, name)
    for spec in REGISTRY.list()
    for name, port in spec.inputs.items()
    if port.get("path") == "read" and (spec.id, name) not in NOT_FILE_PORTS
]
REQUIRED_FILE_PORTS = [
    (spec, name) for spec, name in READ_PORTS if port_is_required(spec.inputs[name])
]


def _id(case: tuple[BlockSpec, str]) -> str:
    return f"{case[0].id}.{case[1]}"


def _types(spec: BlockSpec, name: str) -> list[str]:
    """The extensions the port's accept lists (empty when it has none)."""
    return accepted_extensions(str(spec.inputs[name].get("accept") or ""))


def test_every_port_that_reads_a_file_names_the_types_it_reads() -> None:
    assert len(READ_PORTS) >= 9  # the bundled ones: a filter that found nothing proves nothing
    assert [_id(c) for c in READ_PORTS if not _types(*c)] == []


@pytest.mark.parametrize(("spec", "name"), REQUIRED_FILE_PORTS, ids=map(_id, REQUIRED_FILE_PORTS))
@pytest.mark.parametrize("value", [None, "", "  "], ids=["absent", "empty", "blank"])
def test_a_missing_file_is_refused_naming_the_port_and_its_types(
    spec: BlockSpec, name: str, value: Any
) -> None:
    inputs = {} if value is None else {name: value}
    with pytest.raises(BlockError) as info:
        REGISTRY.load(spec.ref).check_inputs(inputs)
    error = info.value
    assert error.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert error.message == f"{spec.port_label(name)}（{name}）が指定されていません。"
    assert error.hint.startswith(f"{name} に ")
    assert " / ".join(_types(spec, name)) in error.hint
    assert error.details["field"] == name


def test_the_required_file_ports_are_the_reading_blocks() -> None:
    assert {_id(c) for c in REQUIRED_FILE_PORTS} >= {
        "file.read_table.path",
        "excel.read_data.path",
        "excel.write.workbook",
        "file.read_bank_statement.path",
        "file.parse_zip_2tier.zip_bytes",
        "file.extract_text.paths",
    }


def test_extract_text_accepts_what_the_file_layer_reads() -> None:
    # one list of types: the port's accept is what documents.extract_text supports
    assert sorted(_types(REGISTRY.get("file.extract_text"), "paths")) == sorted(
        SUPPORTED_EXTENSIONS
    )


@pytest.mark.parametrize(("spec", "name"), READ_PORTS, ids=map(_id, READ_PORTS))
def test_docs_and_blocks_show_name_the_types_a_file_port_reads(spec: BlockSpec, name: str) -> None:
    types = " / ".join(_types(spec, name))
    row = next(
        line for line in render_markdown([spec]).splitlines() if line.startswith(f"| `{name}` |")
    )
    assert f"パス（読み込み: {types}）" in row

    shown = CliRunner().invoke(app, ["blocks", "show", spec.id, "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["inputs"][name]["accept"] == spec.inputs[name]["accept"]


@pytest.mark.parametrize(("spec", "name"), READ_PORTS, ids=map(_id, READ_PORTS))
def test_the_designer_asks_for_a_file_of_the_ports_types(spec: BlockSpec, name: str) -> None:
    plan = {
        "apiVersion": "v1",
        "id": "t/file_port",
        "graph": [{"id": "n", "block": spec.id, "in": {name: "${vars.given}"}}],
    }
    found = {r.id: r for r in build_requirements(plan, registry=REGISTRY)}
    assert (found["given"].type, found["given"].accept) == ("file", spec.inputs[name]["accept"])


def test_a_spec_with_an_unreadable_accept_is_refused_in_japanese(tmp_path: Path) -> None:
    raw = REGISTRY.get("file.read_table").model_dump(exclude={"source"})
    raw["inputs"]["path"]["accept"] = "text/*"  # a MIME type: no extension to check a path by
    path = tmp_path / "file.read_table.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    with pytest.raises(BlockError) as info:
        load_spec_file(path)
    error = info.value
    assert error.code == ErrorCode.CONFIGURATION_ERROR
    assert str(path) in error.message
    assert (
        "ポート 'path' の accept は \".csv,.xlsx\" のように拡張子をカンマ区切りで" in error.message
    )
    assert "Value error" not in error.message  # Pydantic's English stays out


# A file of a type the port does not accept, per extension: what it holds.
WRONG_FILES = {
    ".pdf": b"%PDF-1.4\n%%EOF\n",
    ".rtf": b"{\\rtf1\\ansi \\u35531?\\u27714?}",
}
# Ports whose block does more than read the file before it reads it (ai.analyze_data starts an
# analysis session and its models first; it reads through documents.read_table, as
# file.read_table does).
NOT_RUN_HERE = {("ai.analyze_data", "files")}
RUN_PORTS = [c for c in READ_PORTS if (c[0].id, c[1]) not in NOT_RUN_HERE]


@pytest.mark.parametrize(("spec", "name"), RUN_PORTS, ids=map(_id, RUN_PORTS))
def test_a_file_of_another_type_is_refused_by_the_block_in_japanese(
    spec: BlockSpec, name: str, make_ctx: ContextFactory, tmp_path: Path
) -> None:
    ext = next(e for e in WRONG_FILES if e not in _types(spec, name))
    wrong = tmp_path / f"資料{ext}"
    wrong.write_bytes(WRONG_FILES[ext])
    # the other required inputs as the spec's examples give them
    inputs = {n: p["examples"][0] for n, p in spec.inputs.items() if port_is_required(p)}
    inputs[name] = str(wrong)
    ctx = make_ctx()
    with pytest.raises(BlockError) as info:
        run_like_runner(REGISTRY.load(spec.ref), inputs, ctx)
    error = info.value
    assert error.code in (ErrorCode.UNSUPPORTED_FORMAT, ErrorCode.FILE_UNREADABLE), error
    assert wrong.name in error.message
    assert error.hint
    written = [p for p in ctx.workspace.rglob("*") if p.is_file()]
    assert written == []  # nothing half-written


def test_accept_belongs_to_a_port_that_reads_a_file() -> None:
    raw = REGISTRY.get("report.markdown").model_dump(exclude={"source"})
    raw["inputs"]["output_path"]["accept"] = ".md"  # a file the block writes: nothing to upload
    with pytest.raises(ValueError, match=r"accept は、読むファイルのパスを受け取る入力"):
        BlockSpec.model_validate(raw)
