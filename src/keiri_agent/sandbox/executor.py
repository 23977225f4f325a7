"""``SandboxExecutor``: the one way keiri-agent runs code that an LLM wrote.

``run(code, workdir=..., profile="analysis" | "codeact", inputs={name: DataFrame})`` checks the
code against the profile's AST policy (a violation is refused before any process starts), takes
the workdir's lock (one action at a time per workdir: ``workdir_lock``), writes the DataFrames
as Arrow files into the workdir's jail's private directory and hands the action to the warm
fork server inside that jail (``jailserver``, ``jail``), which forks a supervisor and a confined
worker for it. The supervisor's outcome document is read back with
``outcome.outcome_from_supervisor`` (never raises, nothing is unpickled).

One jail per workdir (per session or task), started on the first action there and kept warm;
at most ``max_jails`` idle jails are kept, the least recently used is closed first. The executor
is thread-safe: actions in different workdirs run at once, each in its own jail and cgroups.
``close()`` (or interpreter exit) stops every jail and kills whatever runs in it; ``stop(workdir)``
only that workdir's (``cancel.run_cancellable``: a cancelled action).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from keiri_agent.errors import BlockError, input_error
from keiri_agent.sandbox.jail import find_bwrap
from keiri_agent.sandbox.jailserver import JailServer
from keiri_agent.sandbox.layers import PROPERTY_NAMES, LayerStatus
from keiri_agent.sandbox.outcome import (
    ExecutionFailure,
    ExecutionOutcome,
    LayerReport,
    outcome_from_supervisor,
)
from keiri_agent.sandbox.policy import PolicyError, enforce_policy
from keiri_agent.sandbox.profiles import SandboxProfile, get_profile
from keiri_agent.sandbox.timeline import Marks, mark, parse_marks, phases_ms
from keiri_agent.sandbox.workdir_lock import workdir_lock

__all__ = ["DEFAULT_MAX_JAILS", "SandboxExecutor", "default_executor", "run"]

RESULT_MARGIN_S = 30.0  # beyond the wall limit, time for the supervisor to clean up
DEFAULT_MAX_JAILS = 4  # idle jails kept warm; each holds a fork server (~150 MB)


def _host_layers() -> list[LayerReport]:
    statuses = [
        LayerStatus(
            "namespaces",
            True,
            "bubblewrap のジェイル: ユーザー・マウント・PID・IPC・UTS・ネットワーク・cgroup 名前空間",
        ),
        LayerStatus(
            "readonly_binds",
            True,
            "見えるのはインタープリター・パッケージ・システムライブラリ（読み取り専用）と作業ディレクトリだけ",
        ),
        LayerStatus(
            "no_root_file_ops",
            True,
            "ホストは作業ディレクトリを chown・走査しない。書き込まれたファイルはディレクトリ記述子"
            "基準・O_NOFOLLOW でコピー",
        ),
        LayerStatus("lock", True, "作業ディレクトリごとに同時に 1 アクション（ロック）"),
    ]
    return [LayerReport(name=s.name, active=s.active, detail=s.detail) for s in statuses]


class SandboxExecutor:
    """Runs code in fresh confined processes forked from one warm jail per workdir."""

    def __init__(self, *, python: str | None = None, max_jails: int = DEFAULT_MAX_JAILS) -> None:
        self.python = python or sys.executable
        self.max_jails = max_jails
        self._jails: OrderedDict[Path, JailServer] = OrderedDict()
        self._busy: dict[Path, int] = {}
        self._lock = threading.Lock()
        self._next_id = 0
        self._last: JailServer | None = None

    def _acquire(self, workdir: Path) -> tuple[JailServer, int]:
        """The live jail of ``workdir`` (started if needed) and a fresh action id."""
        with self._lock:
            jail = self._jails.get(workdir)
            if jail is not None and not jail.matches(workdir):
                jail.close()  # the directory was replaced: the jail shows the old one
                jail = None
            if jail is None:
                jail = JailServer(self.python, workdir)
                self._jails[workdir] = jail
            self._jails.move_to_end(workdir)
            self._busy[workdir] = self._busy.get(workdir, 0) + 1
            self._next_id += 1
            self._last = jail
            return jail, self._next_id

    def _release(self, workdir: Path) -> None:
        with self._lock:
            self._busy[workdir] -= 1
            if not self._busy[workdir]:
                del self._busy[workdir]
            idle = [path for path in self._jails if path not in self._busy]
            while len(self._jails) > self.max_jails and idle:
                self._jails.pop(idle.pop(0)).close()

    @property
    def server_pid(self) -> int | None:
        """The host pid of the most recently used jail's fork server (diagnostics, tests)."""
        jail = self._last
        return jail.server_pid if jail is not None else None

    def action_pids(self) -> list[int]:
        """Host pids of every process running an action now, in every jail (diagnostics)."""
        with self._lock:
            jails = list(self._jails.values())
        return [pid for jail in jails for pid in jail.action_pids()]

    def spare_pids(self) -> list[int]:
        """Host pids of the spare actions (forked ahead of their request), in every jail."""
        with self._lock:
            jails = list(self._jails.values())
        return [pid for jail in jails for pid in jail.spare_pids()]

    def jail_pids(self) -> list[int]:
        """Host pids of every running jail's bwrap process."""
        with self._lock:
            return [jail.process.pid for jail in self._jails.values() if jail.alive]

    def warm(self, workdir: Path | str | None = None) -> dict[str, Any]:
        """Start the jail of ``workdir`` now (otherwise its first action does); returns its info.

        Without a workdir, only checks that the jail can be built here (bubblewrap installed).
        """
        if workdir is None:
            return {"bwrap": find_bwrap()}
        root = Path(workdir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        jail, _ = self._acquire(root)
        self._release(root)
        return dict(jail.info)

    def run(
        self,
        code: str,
        *,
        workdir: Path | str,
        profile: str | SandboxProfile = "analysis",
        inputs: Mapping[str, Any] | None = None,
    ) -> ExecutionOutcome:
        chosen = get_profile(profile)
        marks: Marks = []
        mark(marks, "start")
        try:
            enforce_policy(code, chosen)
        except PolicyError as exc:
            return _refused(exc, chosen)
        except BlockError as exc:  # a syntax error: the code cannot run at all
            return ExecutionOutcome(
                success=False,
                error=ExecutionFailure(
                    type="SyntaxError",
                    message=exc.message,
                    traceback=[],
                    line=exc.details.get("line"),
                ),
                profile=chosen.name,
            )
        _check_inputs(inputs or {})
        mark(marks, "policy")
        root = Path(workdir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        with workdir_lock(root):
            jail, action_id = self._acquire(root)
            mark(marks, "jail")
            try:
                request = {
                    "id": action_id,
                    "code": code,
                    "workdir": str(root),
                    "profile": _profile_dict(chosen),
                    "inputs": _write_inputs(jail, action_id, inputs or {}),
                }
                mark(marks, "inputs")
                raw = jail.submit(request, timeout=chosen.wall_seconds + RESULT_MARGIN_S)
                mark(marks, "answer")
            finally:
                self._release(root)
        outcome = outcome_from_supervisor(raw)
        mark(marks, "parsed")
        if isinstance(raw, dict):
            marks += parse_marks(raw.get("marks"))
        warnings = list(outcome.warnings)
        if jail.info.get("threads", 1) > 1:
            warnings.append(
                "サンドボックスの待機プロセスが複数スレッドで動いています（fork が不安定になる恐れ）。"
            )
        layers = sorted([*_host_layers(), *outcome.layers], key=_layer_order)
        return outcome.model_copy(
            update={"layers": layers, "warnings": warnings, "phases_ms": phases_ms(marks)}
        )

    def stop(self, workdir: Path | str) -> None:
        """Stop the jail of ``workdir`` and kill whatever runs in it (a cancelled action); the
        actions of other workdirs go on, and the next action here starts a fresh jail."""
        with self._lock:
            jail = self._jails.pop(Path(workdir).resolve(), None)
        if jail is not None:
            jail.close()

    def close(self) -> None:
        with self._lock:
            jails = list(self._jails.values())
            self._jails.clear()
        for jail in jails:
            jail.close()


def _profile_dict(profile: SandboxProfile) -> dict[str, Any]:
    """The profile as the jail's supervisor reads it back: every bound but the import list,
    which the policy has already applied here (``supervisor`` sets it empty)."""
    bounds = asdict(profile)
    del bounds["allowed_imports"]
    return bounds


def _layer_order(layer: LayerReport) -> int:
    return PROPERTY_NAMES.index(layer.name) if layer.name in PROPERTY_NAMES else len(PROPERTY_NAMES)


def _check_inputs(inputs: Mapping[str, Any]) -> None:
    import pandas as pd

    for name, frame in inputs.items():
        if not name.isidentifier():
            raise input_error(
                f"入力名 '{name}' は Python の変数名として使えません。",
                "英字で始まる英数字とアンダースコアの名前（例: sales, df2）にしてください。",
                input=name,
            )
        if not isinstance(frame, pd.DataFrame):
            raise input_error(
                f"入力 '{name}' は DataFrame ではありません（{type(frame).__name__}）。",
                "ファイルは keiri_agent.documents.read_table で DataFrame にしてから渡してください。",
                input=name,
            )


def _write_inputs(jail: JailServer, action_id: int, inputs: Mapping[str, Any]) -> dict[str, str]:
    """Arrow files in the jail's private directory (never in the workdir); jail paths by name."""
    import pyarrow as pa
    import pyarrow.feather as feather

    paths: dict[str, str] = {}
    for name, frame in inputs.items():
        host, inside = jail.input_path(f"{action_id}-{name}.arrow")
        table = pa.Table.from_pandas(frame, preserve_index=True)
        feather.write_feather(table, host, compression="uncompressed")
        os.chmod(host, 0o600)
        paths[name] = inside
    return paths


def _refused(exc: PolicyError, profile: SandboxProfile) -> ExecutionOutcome:
    violations = exc.details.get("violations", [])
    lines = [f"{v.get('line')} 行目: {v.get('message')}" for v in violations]
    return ExecutionOutcome(
        success=False,
        error=ExecutionFailure(
            type="PolicyViolation",
            message=exc.message,
            traceback=lines,
            line=violations[0].get("line") if violations else None,
        ),
        killed_by="policy",
        profile=profile.name,
        warnings=[exc.hint] if exc.hint else [],
    )


_default: SandboxExecutor | None = None
_default_lock = threading.Lock()


def default_executor() -> SandboxExecutor:
    """The process-wide executor (one warm server per process)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SandboxExecutor()
            atexit.register(_default.close)
        return _default


def run(
    code: str,
    *,
    workdir: Path | str,
    profile: str | SandboxProfile = "analysis",
    inputs: Mapping[str, Any] | None = None,
) -> ExecutionOutcome:
    """Run ``code`` with the process-wide executor (see ``SandboxExecutor.run``)."""
    return default_executor().run(code, workdir=workdir, profile=profile, inputs=inputs)
