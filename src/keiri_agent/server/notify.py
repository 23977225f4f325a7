"""Telling people that a scheduled or triggered run needs them: ``KEIRI_NOTIFY_WEBHOOK_URL``.

A run started by a schedule or a trigger has no one watching it. When its task comes to wait
for input (``waiting_input``) or fails, or when its start is refused (no approved version, a
full queue), the notifier POSTs a JSON message to the URL of ``KEIRI_NOTIFY_WEBHOOK_URL``
(a chat channel's incoming webhook: ``text`` is what people read; the other fields are for
programs). The POST happens on a thread of its own with a timeout; a failure is logged, never
raised into the task. Unset, nothing is sent.
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.events import RunEvent
from keiri_agent.server.task_model import Task, TaskStatus

__all__ = ["NOTIFY_TIMEOUT_S", "Notifier"]

NOTIFY_TIMEOUT_S = 10.0  # a chat webhook answers in well under this; a hung one is given up
log = logging.getLogger(__name__)
_TOLD = {
    TaskStatus.WAITING_INPUT: "入力を待っています",
    TaskStatus.FAILED: "失敗しました",
}


class Notifier:
    """A task observer that tells the notify URL about the tasks it was asked to watch."""

    def __init__(self, settings: Settings) -> None:
        url = (settings.keiri_notify_webhook_url or "").strip()
        if url and not url.startswith(("http://", "https://")):
            raise BlockError(
                f"KEIRI_NOTIFY_WEBHOOK_URL「{url}」は http(s) の URL ではありません。",
                code=ErrorCode.CONFIGURATION_ERROR,
                hint="チャットの Incoming Webhook の URL（https://...）を指定してください。",
            )
        self.url = url or None
        self._watched: dict[str, str] = {}  # task id -> what started it
        self._lock = threading.Lock()

    def watch(self, task_id: str, label: str) -> None:
        with self._lock:
            self._watched[task_id] = label

    def on_event(self, task: Task, event: RunEvent) -> None:
        return None

    def on_status(self, task: Task) -> None:
        told = _TOLD.get(task.status)
        with self._lock:
            label = self._watched.get(task.id)
            if told is None or label is None:
                return
            if task.status is TaskStatus.FAILED:
                self._watched.pop(task.id, None)
        error = task.error or {}
        text = f"{label}: タスク {task.id} は{told}。"
        if error.get("message"):
            text += f" {error['message']}"
        self.send({"text": text, "task_id": task.id, "status": str(task.status), "source": label})

    def refused(self, label: str, plan_id: str, message: str) -> None:
        """A start that did not happen (the task was never created)."""
        text = f"{label}: Plan {plan_id} を始められませんでした。{message}"
        self.send({"text": text, "task_id": None, "status": "refused", "source": label})

    def send(self, payload: dict[str, Any]) -> None:
        if self.url is None:
            return
        threading.Thread(target=self._post, args=(self.url, payload), daemon=True).start()

    @staticmethod
    def _post(url: str, payload: dict[str, Any]) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(
            url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=NOTIFY_TIMEOUT_S) as answer:
                answer.read()
        except OSError as exc:
            log.warning("通知の送信に失敗しました（%s）: %s", url, exc)
