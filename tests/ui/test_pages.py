"""Every page of the navigation (``views.PAGES``) names a module that exists and draws the page:
a one-module page under ``ui.views``, a page of several modules as its package's ``page``."""

from __future__ import annotations

import importlib

from keiri_agent.ui.views import PAGES, UI_PACKAGE


def test_every_page_names_a_module_with_render() -> None:
    for spec in PAGES:
        module = importlib.import_module(f"{UI_PACKAGE}.{spec.module}")
        assert callable(getattr(module, "render", None)), spec.module


def test_the_run_and_design_pages_are_packages() -> None:
    modules = {spec.url_path: spec.module for spec in PAGES}
    assert modules["run"] == "run.page"
    assert modules["design"] == "design.page"
    assert all(m.startswith("views.") for p, m in modules.items() if p not in ("run", "design"))
