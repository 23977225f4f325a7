"""Which saved version of each subflow a run of a saved version calls, decided once at its door.

A run that starts by itself (a schedule, a trigger, ``schedule run-now``: the server's task of a
``version``) runs a saved version of its plan, and saved versions of its subflows, never the
working copies. The subflows are held to the standing of the plan version the run runs:

- where approval is required, or the plan version is approved (``latest-approved`` always is),
  each subflow is its newest approved version;
- where approval is not required and the plan version is not approved (a schedule pinned to the
  hash of a version nobody reviewed), each subflow is its newest saved version: a run is not
  refused for the approval of a subflow when its own plan needed none.

A call names a file (``designs/<call>.yaml``), and a plan's versions are kept under its id, each
with the file it was saved from (``Version.file``, absolute: ``plan save``, ``plan generate``,
the 設計 page, the API; the 設計 page and ``plan generate`` without ``--out`` write a new
``<id>_<UTC minute>.yaml``, which no call names: a call of ``<id>`` runs them when no version
records ``designs/<id>.yaml`` and that file, if there is one, says that ``id``, below): a
call's versions are those of the id its file was saved as, newest save first -- ``lib/double``
calling a file saved as ``id: double`` runs ``double``'s version. What the working copy says
now is not read: a file renamed, deleted or edited to another ``id`` without being saved calls
the versions it was saved as, as approved. A version's file is matched whole when it was kept
absolute, by its last parts when it was kept as typed (relative to wherever it was saved
from). Only a file no version records (versions kept before a save kept its file) is read for
its ``id``, and without one (or an ``id`` in it) the call's own name is the id looked under. A call with no version to
run refuses the start (``versions.no_approved_error``), naming the call and the id.

Only the histories that may record the call's file are read to decide it: those whose journal,
as it lies on disk, contains the file's name (``VersionStore.plans_mentioning``; a few bytes
compared per plan, not every history checked and parsed on each call). Each of those is read as
every history is, checked: one that is tampered with or cannot be read refuses the start, naming
that plan and what to do (it may be the one that decides the call). A history that does not
contain the name records no save of that file, so a broken history of a plan saved from other
files stops no run -- its own runs still refuse. The versions of the plan decided on are those
already read (:func:`call_versions`): a call reads each history once. Limits of the filter: a history edited so that
it no longer contains the name is not read for this call (the id the working copy says is then
read, and refuses when that is the edited one), and a save through a link named otherwise than
the file is not found by its name.

:class:`SavedSubflows` resolves each call once, keeping the version as it stood then (its reviews
included). The validation at the task's door resolves every call the plan makes, at any depth;
the run that follows takes a new loader (``SubflowLoader.again``) holding the same object, so it
calls exactly the versions its door checked, and ``plan_start`` says them with their approvals
as they stood at the door -- an approval given or withdrawn in between changes neither what runs
nor whether it runs.

What the door resolved is written down (:meth:`SavedSubflows.write`, ``SAVED_FILE``): in the
task's folder as soon as its door has resolved every call (the schedule's fire row copies it:
:func:`kept_versions`), and beside the run's log with the subflow texts it kept. Every
later start of the same run -- a retry of a task cut before its run began, a resume after a
pause or a crash, a rerun -- reopens that record (:meth:`SavedSubflows.reopen`) instead of
resolving anew: it runs the versions the first door resolved, never newer ones approved since.
Their standing is looked at again then, by the rule the door held the run to: where it required
approvals (approval required, or an approved plan version), a version whose approval was
withdrawn meanwhile refuses the continuation (``versions.unapproved_error``: the version, its
rejection and who can approve it); the run is never switched to another version half way.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.errors import BlockError
from keiri_agent.plan._dsl.loader import PLAN_SUFFIXES, PlanSource, load_source, resolve_plan_file
from keiri_agent.users import load_users
from keiri_agent.versions import (
    RunVersion,
    Version,
    VersionStore,
    approval_required,
    check_run,
    no_approved_error,
    unapproved_error,
    version_id,
)

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = ["SAVED_FILE", "SavedSubflows", "call_plan_id", "call_versions", "kept_versions"]

SAVED_FILE = "#saved_versions.json"  # what a door resolved (a task's folder, a run's subflows)


def kept_versions(folder: Path) -> dict[str, str] | None:
    """Plan id -> version hash of what a door resolved and kept in ``folder``, the plan first
    (what a schedule's fire row records of its run); None when nothing is kept there."""
    data = _kept(folder)
    if data is None:
        return None
    plan_id, vid = data["plan"]
    return {plan_id: vid, **{p: v for p, v in data["calls"].values()}}


def _kept(folder: Path | None) -> dict[str, Any] | None:
    """What :meth:`SavedSubflows.write` left in ``folder`` (None: nothing there)."""
    path = folder / SAVED_FILE if folder is not None else None
    if path is None or not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def call_plan_id(call: str, settings: Settings) -> str:
    """The plan id whose versions a call of ``call`` runs (:func:`call_versions`)."""
    return call_versions(call, settings)[0]


def call_versions(call: str, settings: Settings) -> tuple[str, list[Version]]:
    """The plan id whose versions a call of ``call`` runs, and those versions (each history
    read once): the id of the newest version saved from the file the call names
    (``designs/<call>.yaml``); the working copy's ``id`` only when no version records that
    file (the module docstring)."""
    designs = Path(settings.keiri_designs_dir).resolve()
    named = [Path(f"{call}{suffix}") for suffix in PLAN_SUFFIXES]
    store = VersionStore.of(settings)
    histories = {
        plan_id: _history(store, plan_id, call)
        for plan_id in store.plans_mentioning([n.name for n in named])
    }
    saved = [
        version
        for versions in histories.values()
        for version in versions
        if version.file is not None and any(_saved_as(version.file, designs, n) for n in named)
    ]
    plan_id = max(saved, key=lambda v: v.saved_at).plan_id if saved else _written_id(call, designs)
    found = histories.get(plan_id)
    return plan_id, found if found is not None else store.versions(plan_id)


def _history(store: VersionStore, plan_id: str, call: str) -> list[Version]:
    """The versions of ``plan_id``, a history that may record the file ``call`` names: one
    that cannot be read (the store's ``INTEGRITY_FAILED``) refuses the call, naming it (the
    history may be the one that decides it)."""
    try:
        return store.versions(plan_id)
    except BlockError as error:
        raise BlockError(
            f"サブフロー {call} がどの Plan の版を実行するか決められません。"
            f"Plan {plan_id} の版の記録を読めません: {error.message}",
            code=error.code,
            hint=f"この記録には designs/{call}.yaml から保存された版があるかもしれないため、"
            "読めるようになるまで自動実行を始めません。"
            f"{error.hint}（keiri-agent plan versions {plan_id} で確かめられます）",
            details={**error.details, "call": call, "plan_id": plan_id},
        ) from None


def _written_id(call: str, designs: Path) -> str:
    """The ``id`` the file ``call`` names says, else ``call``: for a file no kept version
    records (versions saved before a save kept its file)."""
    path = resolve_plan_file(call, designs)
    if path is None:
        return call
    try:
        raw = load_source(path).raw
    except BlockError:  # unreadable: no id can be read in it
        return call
    found = raw.get("id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) and found.strip() else call


def _saved_as(kept: str, designs: Path, called: Path) -> bool:
    """Whether a version's ``file`` as kept names ``designs/called``: whole when absolute; when
    relative (its folder is not known; a ``..`` it begins with left out), when it ends with the
    whole of ``called`` -- a bare ``close.yaml`` does not name ``lib/close.yaml``. (Such a bare
    name kept from inside ``designs/lib`` still names the top ``close.yaml``: only versions saved
    before ``plan save`` and ``plan generate --out`` kept absolute paths have them.)"""
    file = Path(kept)
    if file.is_absolute():
        return file.resolve() == designs / called
    parts = [part for part in Path(os.path.normpath(file)).parts if part != ".."]
    if len(parts) < len(called.parts) or parts[-len(called.parts) :] != list(called.parts):
        return False
    return list((designs / called).parts[-len(parts) :]) == parts


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

    @classmethod
    def reopen(cls, settings: Settings, folder: Path | None) -> SavedSubflows | None:
        """What a door resolved, as :meth:`write` left it in ``folder`` (None: nothing there,
        a run of a file), the versions' standing looked at now: a version the door held to
        approval whose approval was withdrawn since is refused (``unapproved_error``)."""
        data = _kept(folder)
        if data is None:
            return None
        approved_only = bool(data["approved_only"]) or approval_required(settings)
        store = VersionStore.of(settings)

        def standing(call: str | None, plan_id: str, vid: str) -> Version:
            version = store.get(plan_id, vid)
            if version is None or (approved_only and version.status != "approved"):
                raise _continuation_refused(settings, plan_id, vid, version, call)
            return version

        plan_id, vid = data["plan"]
        head = standing(None, plan_id, vid)
        approval = head.approval
        plan = RunVersion(plan_id, vid, head.number, approval.to_dict() if approval else None)
        found = {}
        for call, (sub_id, sub_vid) in data["calls"].items():
            version = standing(call, sub_id, sub_vid)
            found[call] = (version, store.text(version))
        return cls(settings, plan, bool(data["approved_only"]), found)

    def write(self, folder: Path) -> Path:
        """Write down what this door resolved so far under ``folder`` (:meth:`reopen`)."""
        from keiri_agent.workspace import atomic_path

        with self._lock:
            calls = {call: [v.plan_id, v.id] for call, (v, _) in self._found.items()}
        data = {
            "plan": [self.plan.plan_id, self.plan.version],
            "approved_only": self.approved_only,
            "calls": calls,
        }
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / SAVED_FILE
        with atomic_path(target, durable=self.settings.keiri_run_log_fsync) as tmp:
            tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        return target

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
        plan_id, versions = call_versions(call, self.settings)
        store = VersionStore.of(self.settings)
        runnable = (
            [v for v in versions if v.status == "approved"] if self.approved_only else versions
        )
        if not runnable:
            raise no_approved_error(
                plan_id, versions, self.settings, call=call, approved=self.approved_only
            )
        return runnable[-1], store.text(runnable[-1])


def _continuation_refused(
    settings: Settings, plan_id: str, vid: str, version: Version | None, call: str | None
) -> BlockError:
    """The refusal of a continuation whose version lost the standing its door held it to."""
    error = unapproved_error(plan_id, vid, version, load_users(settings), settings)
    where = f"（サブフロー {call}）" if call is not None else ""
    return BlockError(
        f"実行を続けられません{where}。{error.message}",
        code=error.code,
        hint=f"{error.hint}この実行は始めたときの版でだけ続けます（途中で別の版にはしません）。"
        "承認し直せば続けられます。別の版で実行するときは、最初から実行し直してください。",
        details={**error.details, "call": call, "subflow": call is not None},
    )
