"""Node outputs kept exactly in the run log, so a run can be resumed or rerun from any node.

Small JSON-exact outputs go inline into the ``node_complete`` event (``stored``); anything
larger, or holding bytes, DataFrames or paths, or personal data (which the log masks: see
``keiri_agent.privacy``), is written beside the log under ``<log stem>.files/`` and referenced
by ``outputs_file``. Values that cannot be stored
faithfully make the node "not persisted": a resume runs it again instead of guessing.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path, PurePath
from typing import Any

from keiri_agent.errors import BlockError, ErrorCode, reason_of
from keiri_agent.events.models import is_table
from keiri_agent.workspace import atomic_path, fsync_path

__all__ = ["INLINE_LIMIT_BYTES", "NotPersistable", "OutputStore"]

INLINE_LIMIT_BYTES = 4096  # bigger outputs go to a file so log lines stay readable
_SAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
# json.dumps(value, ensure_ascii=False) without building an encoder per call (same text).
_to_json = json.JSONEncoder(ensure_ascii=False).encode


class NotPersistable(Exception):  # noqa: N818 - an answer, not a failure
    """The outputs hold a value this store cannot write back exactly."""


def _is_plain(value: Any) -> bool:
    """JSON round-trips the value unchanged (no tuples, non-str keys, NaN...)."""
    if value is None or isinstance(value, bool | str | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False


class OutputStore:
    """Writes and reads node outputs beside one run log."""

    def __init__(self, log_path: Path, *, fsync: bool = False) -> None:
        """``fsync``: every file is on disk before the call that wrote it returns (so before
        the ``node_complete`` that names it is logged)."""
        self.base = log_path.parent
        self.dir = log_path.parent / f"{log_path.stem}.files"
        self.fsync = fsync

    def encode(
        self, node_path: str, outputs: Mapping[str, Any], *, inline: bool = True
    ) -> tuple[dict[str, Any] | None, str | None]:
        """``(stored, outputs_file)`` for a node_complete event; NotPersistable if impossible.

        ``inline=False``: to the file even when small (outputs the log would not keep as they
        are: the log masks personal data, a resume needs the values)."""
        if inline and _is_plain(dict(outputs)):
            text = _to_json(outputs)
            if len(text.encode("utf-8")) <= INLINE_LIMIT_BYTES:
                return dict(outputs), None
        folder = self.dir / _SAFE.sub("_", node_path.replace("/", "__"))
        return None, self._write(folder, "outputs.json", outputs)

    def encode_vars(self, values: Mapping[str, Any]) -> str:
        """Write a run's vars exactly (``<log stem>.files/vars.json`` and, for DataFrames,
        ``#vars/``, a name no node's folder has); the file relative to the log's directory.
        NotPersistable if impossible."""
        return self._write(self.dir / "#vars", "vars.json", values, parent=self.dir)

    def _write(
        self, folder: Path, name: str, values: Mapping[str, Any], parent: Path | None = None
    ) -> str:
        folder.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []  # files of tables, fsynced with the rest
        encoded = {k: self._encode(v, folder, k, written) for k, v in values.items()}
        target = (parent or folder) / name
        with atomic_path(target) as tmp:
            tmp.write_text(json.dumps(encoded, ensure_ascii=False), encoding="utf-8")
            if self.fsync:
                fsync_path(tmp)
        if self.fsync:
            for file in {*folder.glob("*.parquet"), *written}:
                fsync_path(file)
            fsync_path(folder, directory=True)
            fsync_path(target.parent, directory=True)
        return str(target.relative_to(self.base))

    def _encode(self, value: Any, folder: Path, name: str, written: list[Path]) -> Any:
        if value is None or isinstance(value, bool | str | int):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, list | tuple):
            items = [self._encode(v, folder, f"{name}.{i}", written) for i, v in enumerate(value)]
            return items if isinstance(value, list) else {"$tuple": items}
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise NotPersistable(f"{name}: 文字列以外のキー")
            return {
                "$dict": {
                    k: self._encode(v, folder, f"{name}.{k}", written) for k, v in value.items()
                }
            }
        if isinstance(value, bytes | bytearray):
            return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, PurePath):
            return {"$path": str(value)}
        if isinstance(value, datetime):
            return {"$datetime": value.isoformat()}
        if isinstance(value, date):
            return {"$date": value.isoformat()}
        if is_table(value):
            from keiri_agent.documents.table_value import save_table

            try:
                meta, files = save_table(value, folder, _SAFE.sub("_", name), self.base)
            except (OSError, ValueError, TypeError) as exc:
                raise NotPersistable(f"{name}: 表を保存できません（{reason_of(exc)}）") from exc
            written.extend(files)
            return {"$table": meta}
        if type(value).__name__ == "DataFrame" and type(value).__module__.startswith("pandas"):
            file = folder / f"{_SAFE.sub('_', name)}.parquet"
            try:
                value.to_parquet(file)
            except Exception as exc:  # mixed-type object columns, for instance
                raise NotPersistable(
                    f"{name}: DataFrame を保存できません（{reason_of(exc)}）"
                ) from exc
            return {"$dataframe": str(file.relative_to(self.base))}
        raise NotPersistable(f"{name}: {type(value).__name__} は保存できません")

    def decode_file(self, relative: str) -> dict[str, Any]:
        path = (self.base / relative).resolve()
        if not path.is_relative_to(self.base.resolve()):
            raise _corrupt(path, "ログの外を指しています")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise _corrupt(path, str(exc)) from exc
        if not isinstance(data, dict):
            raise _corrupt(path, "オブジェクトではありません")
        return {k: self._decode(v) for k, v in data.items()}

    def _decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) != 1:
            raise _corrupt(self.dir, "値の形式が不正です")
        ((tag, inner),) = value.items()
        if tag == "$dict":
            return {k: self._decode(v) for k, v in inner.items()}
        if tag == "$tuple":
            return tuple(self._decode(v) for v in inner)
        if tag == "$bytes":
            return base64.b64decode(inner)
        if tag == "$path":
            return Path(inner)
        if tag == "$datetime":
            return datetime.fromisoformat(inner)
        if tag == "$date":
            return date.fromisoformat(inner)
        if tag == "$float":
            return float(inner)
        if tag == "$table":
            from keiri_agent.documents.table_value import load_table

            try:
                return load_table(inner, self.base)
            except (OSError, ValueError, KeyError) as exc:
                raise _corrupt(self.base / str(inner.get("data", "")), str(exc)) from exc
        if tag == "$dataframe":
            import pandas as pd

            return pd.read_parquet(self.base / inner)
        raise _corrupt(self.dir, f"不明な値の形式 {list(value)[:3]}")


def _corrupt(path: Path, reason: str) -> BlockError:
    return BlockError(
        f"保存済みのノード出力 {path} を読み込めません: {reason}",
        code=ErrorCode.DEPENDENCY_NOT_FOUND,
        hint="ログと出力ファイルが揃っているか確認してください。揃わない場合は最初から実行し直してください。",
        details={"path": str(path)},
    )
