"""file.read_table on a file its encoding cannot read: the user is told the line and byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.errors import BlockError
from tests.blocks.conftest import ContextFactory, run_like_runner
from tests.documents.test_encoding import BAD_BYTE_WHERE, BOM_CSV_WITH_BAD_BYTE


@pytest.mark.parametrize("encoding", ["utf-8", None])
def test_a_bad_byte_in_a_bom_csv_is_named_where_an_editor_shows_it(
    registry: BlockRegistry, make_ctx: ContextFactory, tmp_path: Path, encoding: str | None
) -> None:
    block: Block = registry.load("file.read_table")
    path = tmp_path / "入金.csv"
    path.write_bytes(BOM_CSV_WITH_BAD_BYTE)
    inputs = {"path": str(path)} | ({} if encoding is None else {"encoding": encoding})

    with pytest.raises(BlockError) as info:
        run_like_runner(block, inputs, make_ctx())

    assert info.value.code == "FILE_UNREADABLE"
    assert "入金.csv" in info.value.message
    assert BAD_BYTE_WHERE in info.value.message
