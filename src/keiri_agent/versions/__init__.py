"""Plans as controlled documents: versions, reviews, and the check that runs are approved.

Every save of a plan (``keiri-agent plan save`` and ``plan generate``, the app's 設計 page, the
API) keeps its text as an immutable version named by its SHA-256, with author, time and message
(``store``); approvers approve or reject versions by the four-eyes rules of ``review``, and the
plan runner asks :func:`check_run` before it starts, so that with ``KEIRI_REQUIRE_APPROVAL``
only approved versions run. What changed between two versions is the plan engine's
``keiri_agent.plan.diff_plans``.

The two questions other parts ask (a schedule that runs only approved versions, for one)::

    store = VersionStore.of(settings)
    store.approved_version("keiri/monthly_close")   # the newest approved Version, or None
    store.is_approved("keiri/monthly_close", vid)   # is this version (full hash) approved now?
"""

from __future__ import annotations

# The package's surface is its two modules' public names, listed once in each module.
from keiri_agent.versions import review as _review
from keiri_agent.versions import store as _store
from keiri_agent.versions.review import *  # noqa: F403
from keiri_agent.versions.store import *  # noqa: F403

__all__ = [*_review.__all__, *_store.__all__]
