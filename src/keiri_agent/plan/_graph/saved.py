"""Which saved version of each subflow a run of a saved version calls, decided once at its door.

A run that starts by itself (a schedule, a trigger, ``schedule run-now``: the server's task of a
``version``) runs a saved version of its plan, and saved versions of its subflows, never the
working copies. The subflows are held to the standing of the plan version the run runs:

- where approval is required, or the plan version is approved (``latest-approved`` always is),
  each subflow is its newest approved version;
- where approval is not required and the plan version is not approved (a schedule pinned to the
  hash of a version nobody reviewed), each subflow is its newest saved version: a run is not
  refused for the approval of a subflow when its own plan needed none.

A call names a file (``designs/<call>.yaml``), the file names its plan (its ``id``), and a plan's
versions are kept under its id (``plan save``, ``plan versions``, ``plan approve``): a call's
versions are those of the id written in the file it names -- ``lib/double`` calling a file whose
``id`` is ``double`` runs ``double``'s version. Without such a file (or an ``id`` to read in it)
the call's own name is the id looked under. A call with no version to run refuses the start
(``versions.no_approved_error``), naming the call and the id.

:class:`SavedSubflows` resolves each call once, keeping the version as it stood then (its reviews
included). The validation at the task's door resolves every call the plan makes, at any depth;
the run that follows takes a new loader (``SubflowLoader.again``) holding the same object, so it
calls exactly the versions its door checked, and ``plan_start`` says them with their approvals
as they stood at the door -- an approval given or withdrawn in between changes neither what runs
nor whether it runs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.loader import PlanSource, load_source, resolve_plan_file
from keiri_agent.versions import (
    RunVersion,
    Version,
    VersionStore,
    approval_required,
    check_run,
    no_approved_error,
    version_id,
)

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = ["SavedSubflows", "call_plan_id"]


def call_plan_id(call: str, designs_dir: Path) -> str:
    """The plan id whose versions a call of ``call`` runs: the ``id`` written in the file the
    call names, else ``call`` itself (no such file, or no id to read in it)."""
    path = resolve_plan_file(call, designs_dir)
    if path is None:
        return call
    try:
        raw = load_source(path).raw
    except BlockError:  # unreadable: no id can be read in it
        return call
    found = raw.get("id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) and found.strip() else call


@dataclass
class SavedSubflows:
    """The versions one run of a saved plan version calls, each resolved once (thread-safe)."""

    settings: Settings
    plan: RunVersion  # the plan version the run runs, as it stood at the door
    approved_only: bool  # subflows: newest approved versions (else newest saved)
    _found: dict[str, tuple[Version, str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def door(cls, settings: Settings, source: PlanSource) -> SavedSubflows:
        """The subflow versions of a run of ``source`` (a saved version's text), its plan's
        approval checked now (``versions.check_run``: refused when required and missing)."""
        raw = source.raw
        plan_id = raw.get("id") if isinstance(raw, dict) else None
        (plan,) = check_run(settings, [(str(plan_id), source.text)])
        return cls(settings, plan, approval_required(settings) or plan.approval is not None)

    def version(self, call: str) -> tuple[Version, str]:
        """The version a call of ``call`` runs and its text (checked against its hash),
        resolved the first time it is asked for; the refusal when there is none to run."""
        with self._lock:
            found = self._found.get(call)
            if found is None:
                found = self._found[call] = self._resolve(call)
            return found

    def run_versions(self, text: str, called: list[tuple[str, str]]) -> list[RunVersion] | None:
        """The versions a run of ``text`` and of the subflows ``called`` ((call, text), as
        loaded) runs, with their approvals as they stood when resolved; None when a text is
        not the one resolved here (a rerun of another plan: the run is checked as any run is)."""
        if version_id(text) != self.plan.version:
            return None
        found = [self.plan]
        for call, sub_text in called:
            version, kept = self.version(call)
            if kept != sub_text:
                return None
            approval = version.approval
            found.append(
                RunVersion(
                    version.plan_id,
                    version.id,
                    version.number,
                    approval.to_dict() if approval is not None else None,
                )
            )
        return found

    def _resolve(self, call: str) -> tuple[Version, str]:
        plan_id = call_plan_id(call, Path(self.settings.keiri_designs_dir))
        store = VersionStore.of(self.settings)
        versions = store.versions(plan_id)
        runnable = (
            [v for v in versions if v.status == "approved"] if self.approved_only else versions
        )
        if not runnable:
            raise no_approved_error(
                plan_id, versions, self.settings, call=call, approved=self.approved_only
            )
        return runnable[-1], store.text(runnable[-1])
