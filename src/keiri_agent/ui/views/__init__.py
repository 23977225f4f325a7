"""The app's pages. Adding a page is one line in ``PAGES`` (plus its module with ``render()``).

A page that is one module lives here (``views.home``...); a page made of several modules is a
package named for it beside ``views`` (``ui.run``, ``ui.design``), its ``page`` module the one
the navigation runs.

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

__all__ = ["LINKS", "PAGES", "UI_PACKAGE", "PageSpec"]

UI_PACKAGE = __name__.rpartition(".")[0]  # keiri_agent.ui: page modules are named under it


@dataclass(frozen=True)
class PageSpec:
    """One entry of the navigation: the page module (under ``keiri_agent.ui``) and how the
    navigation shows it."""

    module: str
    title: str
    icon: str
    url_path: str

    def render(self) -> None:
        """Import the page's module (once) and draw the page."""
        importlib.import_module(f"{UI_PACKAGE}.{self.module}").render()


PAGES: tuple[PageSpec, ...] = (
    PageSpec("views.home", "ホーム", ":material/home:", "home"),
    PageSpec("design.page", "設計", ":material/design_services:", "design"),
    PageSpec("run.page", "実行", ":material/play_circle:", "run"),
    PageSpec("views.schedule", "予定", ":material/event_repeat:", "schedule"),
    PageSpec("views.analysis", "データ分析", ":material/analytics:", "analysis"),
    PageSpec("views.helpdesk", "ヘルプデスク", ":material/support_agent:", "helpdesk"),
    PageSpec("views.convert", "変換", ":material/transform:", "convert"),
)

# url path → the navigation's page object of this script run (set by the app's main()).
LINKS: dict[str, Any] = {}
