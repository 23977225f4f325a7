"""Saving generated plans: ``designs/<plan_id>_<yyyymmddHHMM>.yaml`` (seed 004 §10), each save
also kept as a version of the plan (``keiri_agent.versions``: its hash, author and message).

The stamp is UTC, like every stored time; :func:`saved_at` reads it back for showing in
``KEIRI_TIMEZONE`` (``keiri_agent.localtime``). A plan is written to a temporary file beside its destination and renamed into place, so a crash
never leaves half a plan; an existing file is never overwritten (``-2``, ``-3`` ... are added).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from keiri_agent.design.repair import dump_plan
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.localtime import parse_stamp
from keiri_agent.plan import PLAN_ID_RE
from keiri_agent.versions import SaveNote, Version, VersionStore
from keiri_agent.workspace import confine

__all__ = ["MAX_SAME_MINUTE", "STAMP_FORMAT", "plan_file_name", "save_plan", "saved_at"]

MAX_SAME_MINUTE = 100
STAMP_FORMAT = "%Y%m%d%H%M"
_SAVED_STEM = re.compile(r"_(?P<stamp>\d{12})(?:-\d+)?$")  # <plan_id>_<stamp>[-N]


def plan_file_name(plan_id: str, now: datetime | None = None) -> str:
    """``<plan_id>_<yyyymmddHHMM>.yaml`` (``plan_id`` may contain ``/`` subfolders), UTC."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime(STAMP_FORMAT)
    return f"{plan_id}_{stamp}.yaml"


def saved_at(path: Path | str) -> datetime | None:
    """When a plan saved here was saved (UTC, to the minute); None for other file names.
    Plans saved before the stamp was UTC were named in the server's local time."""
    match = _SAVED_STEM.search(Path(path).stem)
    return parse_stamp(match["stamp"], STAMP_FORMAT) if match else None


def save_plan(
    plan: Mapping[str, Any],
    designs_dir: Path | str,
    *,
    versions: VersionStore,
    note: SaveNote,
    now: datetime | None = None,
) -> tuple[Path, Version]:
    """Write ``plan`` under ``designs_dir`` and keep it as a version, saved as ``note`` says
    (its working copy: the file written); its path and the version."""
    path = _write(plan, designs_dir, now)
    text = path.read_text(encoding="utf-8")
    version, _created = versions.save(str(plan["id"]), text, replace(note, file=str(path)))
    return path, version


def _write(plan: Mapping[str, Any], designs_dir: Path | str, now: datetime | None) -> Path:
    plan_id = plan.get("id")
    if not isinstance(plan_id, str) or not PLAN_ID_RE.match(plan_id):
        raise input_error(
            f"Plan の id {plan_id!r} では保存できません。",
            "id を英数字・_・- と /（フォルダ区切り）で付けてください（例: keiri/invoice_check）。",
        )
    root = Path(designs_dir)
    first = confine(root, plan_file_name(plan_id, now))
    first.parent.mkdir(parents=True, exist_ok=True)
    text = dump_plan(plan)
    for n in range(1, MAX_SAME_MINUTE + 1):
        target = first if n == 1 else first.with_name(f"{first.stem}-{n}.yaml")
        handle, temp = tempfile.mkstemp(dir=target.parent, prefix=".saving-", suffix=".yaml")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.link(temp, target)  # fails if target exists: never overwrite
        except FileExistsError:
            continue
        finally:
            Path(temp).unlink(missing_ok=True)
        return target
    raise BlockError(
        f"{first.parent} に同じ分の Plan が {MAX_SAME_MINUTE} 件あり、保存できません。",
        code=ErrorCode.PERMISSION_DENIED,
        hint="古い生成結果を整理してから保存してください。",
        details={"directory": str(first.parent)},
    )
