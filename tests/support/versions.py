"""For the plan-version tests: settings with a designs folder, a workspace and no fsync under
``tmp_path`` (approval required unless the test says otherwise), and a small month-end plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keiri_agent.config import Settings

__all__ = ["CLOSE_PLAN", "CLOSE_PLAN_ID", "versions_settings"]

CLOSE_PLAN_ID = "keiri/close"
CLOSE_PLAN = """\
apiVersion: v1
id: keiri/close
# 月次決算: 売掛金の消込（担当: 経理部 佐藤）
graph:
  - {id: total, block: test.add, in: {a: 1, b: 2}}
"""


def versions_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "keiri_designs_dir": tmp_path / "designs",
        "keiri_workspace_root": tmp_path / "ws",
        "keiri_run_log_fsync": False,
        "keiri_require_approval": "on",
        **overrides,
    }
    return Settings(_env_file=None, **values)
