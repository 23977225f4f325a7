"""The app's pages. Adding a page is one line in ``PAGES`` (plus its module with ``render()``).

The first page, ホーム, is the app's root URL (Streamlit serves the default page at ``/``, and
would answer "Page not found" for that page's own path): every other page keeps its address
(``/design``, ``/run``...). The navigation's page objects of the current run are kept in
``LINKS`` (url path → page) for pages that link to others.

Each page module exposes ``render() -> None`` and keeps its Session State under its own
prefix (see ``keiri_agent.ui.session_state``), so AppTest can drive one page at a time.
A page's module is imported when the page is first shown, so the app opens without loading
every agent (the analysis agent alone pulls in LangChain and LangGraph).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["LINKS", "PAGES", "PageSpec"]


@dataclass(frozen=True)
class PageSpec:
    """One entry of the navigation: the page module (under ``keiri_agent.ui.views``) and how
    the navigation shows it."""

    module: str
    title: str
    icon: str
    url_path: str

    def render(self) -> None:
        """Import the page's module (once) and draw the page."""
        importlib.import_module(f"{__name__}.{self.module}").render()


PAGES: tuple[PageSpec, ...] = (
    PageSpec("home", "ホーム", ":material/home:", "home"),
    PageSpec("design", "設計", ":material/design_services:", "design"),
    PageSpec("run", "実行", ":material/play_circle:", "run"),
    PageSpec("schedule", "予定", ":material/event_repeat:", "schedule"),
    PageSpec("analysis", "データ分析", ":material/analytics:", "analysis"),
    PageSpec("helpdesk", "ヘルプデスク", ":material/support_agent:", "helpdesk"),
    PageSpec("convert", "変換", ":material/transform:", "convert"),
)

# url path → the navigation's page object of this script run (set by the app's main()).
LINKS: dict[str, Any] = {}
