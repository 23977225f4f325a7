"""The ``keiri-agent`` command line: one Typer app over every part of the product.

Each command group lives in its own module and registers itself on the shared ``app``.
"""

from __future__ import annotations

from keiri_agent.cli import (  # noqa: F401  (registers the commands)
    analyze,
    audit,
    blocks,
    convert,
    demo,
    doctor,
    extract,
    gc,
    generate,
    helpdesk,
    helpdesk_ask,
    helpdesk_eval,
    plan,
    plan_run,
    plan_runs,
    plan_versions,
    sandbox,
    sandbox_setup,
    schedule,
    serve,
    templates,
    trigger,
    ui,
)
from keiri_agent.cli.common import app

__all__ = ["app"]
