"""``file.parse_zip_2tier``: an evidence ZIP (or folder) as groups of files with their text.

A thin block over :func:`keiri_agent.documents.archives.parse_zip_2tier`: the file layer does
the safety checks, grouping and text extraction, and its ``BlockError``s (ARCHIVE_UNSAFE,
FILE_ENCRYPTED, FILE_TOO_LARGE, FILE_UNREADABLE) reach the user unchanged. The input keeps
the seed's name ``zip_bytes``; plans pass the path the app saved the upload to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import port_path
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.documents.archives import parse_folder_2tier, parse_zip_2tier

__all__ = ["ParseZip2TierBlock"]


class ParseZip2TierBlock(ProcessingBlock):
    """Reads an evidence archive into ``evidence_data`` (``EvidenceSet.to_dict()``)."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _source(self.spec, inputs.get("zip_bytes"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        source = _source(self.spec, inputs.get("zip_bytes"))
        if not isinstance(source, bytes):  # a path: read where the run may read
            source = ctx.access.read(source, "zip_bytes")
        include_text = bool(inputs.get("include_text", True))
        ctx.check_cancelled()
        if isinstance(source, Path) and source.is_dir():
            # A folder is read exactly like the ZIP made from it (same groups, limits, skips).
            evidence = parse_folder_2tier(source, extract=include_text)
        else:
            evidence = parse_zip_2tier(source, extract=include_text)
        ctx.check_cancelled()
        ctx.log(
            f"証跡 {evidence.source}: {len(evidence.files)} ファイル、"
            f"{len(evidence.groups)} グループ、読めなかったファイル {len(evidence.errors)} 件"
        )
        return {"evidence_data": evidence.to_dict(include_text=include_text)}


def _source(spec: BlockSpec, value: Any) -> Path | bytes:
    """The ZIP as bytes or a path as given; an empty or non-path value is an input error."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return Path(port_path(spec, "zip_bytes", value))
