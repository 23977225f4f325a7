"""The API server (seed 003 §3, §7): tasks for every agent, SSE progress, downloads, a page.

``create_app()`` builds the FastAPI app (``app``), ``TaskRegistry`` runs the tasks
(``tasks``, ``runners``), ``sse`` streams their events with replay on reconnect, ``auth`` holds
the optional API key, and ``static/`` the progress page. ``keiri-agent serve`` runs it with
uvicorn.
"""

from __future__ import annotations

from keiri_agent.server.app import create_app
from keiri_agent.server.tasks import Task, TaskRegistry, TaskStatus

__all__ = ["Task", "TaskRegistry", "TaskStatus", "create_app"]
