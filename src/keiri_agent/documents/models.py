"""Shared results of the file layer (its limits are in ``limits``).

Every reader in ``keiri_agent.documents`` returns these types, so agents, blocks, the CLI and
the UI can show what was read, what was cut and why, the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ExtractedText"]


@dataclass
class ExtractedText:
    """Text extracted from one file, with what a user needs to trust it.

    ``units_read`` counts pages (PDF, PPTX), sheets (XLSX) or 1 (text formats);
    ``units_total`` the same in the whole file when known. ``truncated`` is true when a page,
    sheet-range or character limit cut the text; ``warnings`` are Japanese one-liners.
    """

    file: str
    text: str
    format: str
    units_read: int = 1
    units_total: int | None = None
    unit: str = "file"  # "page" | "sheet" | "slide" | "file"
    truncated: bool = False
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def chars(self) -> int:
        return len(self.text)
