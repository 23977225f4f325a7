"""Change control and audit: what the CLI, the API and the app share about plan versions and
run logs.

- ``changes``: save a validated plan as a version; compare two versions (or a plan file) with
  the plan engine's semantic diff.
- ``verify``: check run logs against their hash chain and run record (``audit verify``).
- ``export``: the runs of a period with version, approver, starter, files and hashes, outcome
  (``audit export``).

The versions themselves and the review rules are ``keiri_agent.versions`` (below the plan
engine, whose runner checks approvals); this package sits beside the server, above the plan
engine, because it reads plans and run logs.
"""

from __future__ import annotations

__all__: list[str] = []
