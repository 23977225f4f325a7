"""Migrating a plan file on disk (``keiri-agent plan migrate``): read, migrate, write atomically.

The migration itself is ``migrate.migrate_text``; this module only adds the file's rules:
nothing is written when nothing changed or something cannot be migrated, an in-place migration
keeps a ``.bak`` copy first, and every write goes through a temporary file and a rename.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from keiri_agent.errors import BlockError, ErrorCode, FileProcessingError
from keiri_agent.plan._dsl.loader import MAX_PLAN_BYTES
from keiri_agent.plan._dsl.migrate import MigrationResult, migrate_text
from keiri_agent.workspace import atomic_path

__all__ = ["migrate_file"]


def migrate_file(
    path: str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    in_place: bool = False,
) -> MigrationResult:
    """Migrate a plan file, writing ``<stem>.migrated.yaml`` next to it (or ``output``, or the
    file itself after copying it to ``<name>.bak``). Nothing is written when nothing changed;
    with problems a BlockError (INPUT_VALIDATION_FAILED) is raised and nothing is written."""
    source = Path(path)
    if output is not None and in_place:
        raise BlockError(
            "出力先の指定と上書き（in_place）は同時に使えません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="どちらか一方だけを指定してください。",
            details={"file": str(source), "output": str(output)},
        )
    data = _read(source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileProcessingError(
            str(source),
            f"{source} は UTF-8 のテキストではありません。",
            hint="Plan ファイルを UTF-8 で保存し直してください。",
            details={"position": exc.start},
        ) from exc
    new_text, result = migrate_text(text)
    if result.problems:
        listed = "；".join(result.problems)
        raise BlockError(
            f"{source} を移行できません（{len(result.problems)} 件）: {listed}",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint="挙げた箇所を直すか ui.interactive_input に手で書き換えてから、"
            "もう一度実行してください（ファイルは書き込んでいません）。",
            details={"file": str(source), "problems": list(result.problems)},
        )
    if not result.changes:
        return result
    if in_place:
        result.backup = _free_backup(source)
        _write_atomic(result.backup, data, mode_from=source)
        target = source
    else:
        target = (
            Path(output) if output is not None else source.with_name(f"{source.stem}.migrated.yaml")
        )
    _write_atomic(target, new_text.encode("utf-8"), mode_from=source)
    result.written = target
    return result


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_PLAN_BYTES:
            raise FileProcessingError(
                str(path),
                f"{path} は Plan ファイルとして大きすぎます（上限 {MAX_PLAN_BYTES} バイト）。",
                code=ErrorCode.FILE_TOO_LARGE,
                hint="Plan ファイルを指定しているか確認してください。",
            )
        return path.read_bytes()
    except OSError as exc:
        raise FileProcessingError(
            str(path),
            f"{path} を読み込めません: {exc.strerror or exc}",
            hint="ファイルのパスと読み取り権限を確認してください。",
        ) from exc


def _free_backup(path: Path) -> Path:
    """``<name>.bak``, or ``<name>.bak.2``... so an earlier backup is never overwritten."""
    candidate, n = path.with_name(path.name + ".bak"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.bak.{n}")
    return candidate


def _write_atomic(target: Path, data: bytes, *, mode_from: Path) -> None:
    """Write via a temporary file in the same directory and ``os.replace``: readers see the
    old file or the new one, never half of it."""
    try:
        with atomic_path(target) as tmp:
            with tmp.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            shutil.copymode(mode_from, tmp)  # mkstemp's 0600 would hide the plan from others
    except OSError as exc:
        denied = isinstance(exc, PermissionError)
        raise BlockError(
            f"移行結果を {target} に書き込めません: {exc.strerror or exc}",
            code=ErrorCode.PERMISSION_DENIED if denied else ErrorCode.INTERNAL_ERROR,
            hint="出力先のフォルダが存在し、書き込めることを確認してください。",
            details={"file": str(target)},
        ) from exc
