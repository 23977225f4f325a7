"""The app's pages. Adding a page is one line in ``PAGES`` (plus its module with ``render()``).

Each page module exposes ``render() -> None`` and keeps its Session State under its own
prefix (see ``keiri_agent.ui.session_state``), so AppTest can drive one page at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from keiri_agent.ui.views import analysis, convert, helpdesk

__all__ = ["PAGES", "PageSpec"]


@dataclass(frozen=True)
class PageSpec:
    """One entry of the navigation."""

    render: Callable[[], None]
    title: str
    icon: str
    url_path: str


PAGES: tuple[PageSpec, ...] = (
    PageSpec(analysis.render, "データ分析", ":material/analytics:", "analysis"),
    PageSpec(helpdesk.render, "ヘルプデスク", ":material/support_agent:", "helpdesk"),
    PageSpec(convert.render, "変換", ":material/transform:", "convert"),
    # Later issues add 設計 and 実行 here, one line each.
)
