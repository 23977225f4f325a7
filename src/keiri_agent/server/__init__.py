"""The API server (seed 003 §3, §7): tasks for every agent, SSE progress, downloads, a page.

``create_app()`` builds the FastAPI app (``app``), ``TaskRegistry`` runs the tasks
(``tasks``, ``runners``), ``sse`` streams their events with replay on reconnect, ``auth`` holds
the optional API key, and ``static/`` the progress page. ``keiri-agent serve`` runs it with
uvicorn.

Names are loaded on first use: the Streamlit app reads the users file (``users``) without
loading FastAPI and the task machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.server.app import create_app
    from keiri_agent.server.tasks import Task, TaskRegistry, TaskStatus

__all__ = ["Task", "TaskRegistry", "TaskStatus", "create_app"]

_LOCATIONS = {"create_app": "app", "Task": "tasks", "TaskRegistry": "tasks", "TaskStatus": "tasks"}


__getattr__, __dir__ = lazy_exports(globals(), {n: f".{m}" for n, m in _LOCATIONS.items()})
