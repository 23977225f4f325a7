"""The Streamlit app of keiri-agent: one app, one page per product part.

``app.py`` is the entry script (``keiri-agent ui`` or ``streamlit run app.py`` at the repository
root); ``views`` holds the pages that are one module each and the navigation (every page is
registered in ``views.PAGES``), ``run`` and ``design`` the 実行 and 設計 pages, a package each
(one module per idea), ``sidebar`` the settings sidebar shown on every page. The page modules are named ``views`` rather than ``pages`` on
purpose: Streamlit treats a ``pages/`` folder beside the entry script as a legacy multipage app.

Importing this package does not import Streamlit.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["APP_PATH"]

APP_PATH = Path(__file__).resolve().with_name("app.py")
