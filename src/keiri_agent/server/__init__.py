"""The API server (seed 003 §3, §7): tasks for every agent, SSE progress, downloads, a page.

``create_app()`` builds the FastAPI app (``app``), ``TaskRegistry`` runs the tasks
(``tasks``, ``runners``), ``sse`` streams their events with replay on reconnect, ``auth`` holds
the optional API key, and ``static/`` the progress page. ``keiri-agent serve`` runs it with
uvicorn.

Names are loaded on first use: the Streamlit app reads the users file (``users``) without
loading FastAPI and the task machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keiri_agent.server.app import create_app
    from keiri_agent.server.tasks import Task, TaskRegistry, TaskStatus

__all__ = ["Task", "TaskRegistry", "TaskStatus", "create_app"]

_LOCATIONS = {"create_app": "app", "Task": "tasks", "TaskRegistry": "tasks", "TaskStatus": "tasks"}


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
