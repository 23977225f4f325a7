"""The learned payer names (名寄せ): which customer a payer name pays for, kept between runs.

A person confirms once that ``ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ`` pays for 山田商事 (取引先コード 1001); every
later run of ``table.match_payments`` reads it here and matches that payer with reason 学習済み.
The store is one CSV file (:data:`STORE_COLUMNS`: 振込依頼人名, 取引先コード, 取引先名, 登録者,
登録日時; UTF-8 with a BOM so Excel opens it), by default
``<KEIRI_WORKSPACE_ROOT>/learned_payer_names.csv`` (``KEIRI_LEARNED_PAYER_NAMES``). It is
exported and imported as CSV with at least 振込依頼人名 and 取引先コード (:meth:`export_csv`,
:meth:`import_csv`; an import may be Shift_JIS from Excel).

A name is kept once per customer, by its key (:func:`..directory.payer_key`: the name as the
names package folds it, ``ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ`` and ``ﾔﾏﾄﾎｰﾙﾃﾞｨﾝｸﾞｽ(ｶ`` are one name; matching
meets more spellings than the key, as it meets a customer's name: :mod:`..directory`);
one payer may pay for several customers (a parent company for two subsidiaries), which a run
then shows as 要確認. Writing takes an exclusive lock on ``<store>.lock`` for the whole
read-add-write, and replaces the file atomically (a temporary file, fsync, rename): two runs
learning at once both keep what they learned, and a reader sees the old file or the new one.
"""

from __future__ import annotations

import csv
import datetime as dt
import fcntl
import io
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from keiri_agent.blocks.table.payments.directory import payer_key
from keiri_agent.documents.encoding import decode_bytes
from keiri_agent.errors import BlockError, input_error, reason_of
from keiri_agent.workspace import atomic_path

__all__ = [
    "REQUIRED_COLUMNS",
    "STORE_COLUMNS",
    "LearnedName",
    "LearnedNames",
    "Stored",
    "read_names_csv",
]

STORE_COLUMNS = ("振込依頼人名", "取引先コード", "取引先名", "登録者", "登録日時")
REQUIRED_COLUMNS = STORE_COLUMNS[:2]
ENCODING = "utf-8-sig"
# A learned-names file larger than this is not a list of payer names (about 200,000 names).
MAX_STORE_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LearnedName:
    payer: str  # 振込依頼人名 as the bank wrote it when it was learned
    code: str  # 取引先コード (the name, when the invoices have no codes)
    name: str = ""  # 取引先名, for a person reading the file
    who: str = ""
    when: str = ""  # ISO 8601, UTC

    @property
    def key(self) -> tuple[str, str]:
        return payer_key(self.payer), self.code


@dataclass(frozen=True, slots=True)
class Stored:
    """What adding names did: the names added, those already known, the store's size."""

    added: tuple[LearnedName, ...]
    known: tuple[LearnedName, ...]
    total: int


class LearnedNames:
    """The store at ``path`` (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[LearnedName]:
        """Every learned name; none when the file does not exist yet."""
        if not self.path.exists():
            return []
        return read_names_csv(self.path)

    def add(
        self, names: Iterable[LearnedName], *, who: str, now: dt.datetime | None = None
    ) -> Stored:
        """Add ``names`` not yet known (by payer and customer), stamped with ``who`` and now."""
        stamp = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
        with self._locked():
            current = self.read()
            keys = {name.key for name in current}
            added: list[LearnedName] = []
            known: list[LearnedName] = []
            for name in names:
                if not payer_key(name.payer) or not name.code.strip():
                    raise input_error(
                        f"振込依頼人名「{name.payer}」と取引先コード「{name.code}」の組は学習できません"
                        "（どちらかが空欄か、名義が記号だけです）。",
                        "振込依頼人名と取引先コードの両方がある行だけを渡してください。",
                        payer=name.payer,
                        code=name.code,
                    )
                if name.key in keys:
                    known.append(name)
                    continue
                keys.add(name.key)
                added.append(LearnedName(name.payer, name.code, name.name, who, stamp))
            if added:
                self._write([*current, *added])
            return Stored(tuple(added), tuple(known), len(current) + len(added))

    def import_csv(self, source: Path, *, who: str) -> Stored:
        """Add the names of a CSV (振込依頼人名, 取引先コード[, 取引先名]) to the store."""
        return self.add(read_names_csv(source), who=who)

    def export_csv(self, target: Path) -> int:
        """Write every learned name to ``target`` (the store's columns); returns the count."""
        names = self.read()
        with atomic_path(target) as temporary:
            temporary.write_bytes(_csv_bytes(names))
        return len(names)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(self.path.name + ".lock")
        with lock.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _write(self, names: list[LearnedName]) -> None:
        with atomic_path(self.path, durable=True) as temporary:
            temporary.write_bytes(_csv_bytes(names))


def read_names_csv(path: Path) -> list[LearnedName]:
    """The names of a learned-names CSV (UTF-8 or Shift_JIS; columns 振込依頼人名 and
    取引先コード required, 取引先名 / 登録者 / 登録日時 optional); BlockError naming the file
    and the line of what cannot be read."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _unreadable(path, f"開けません（{reason_of(exc)}）") from None
    if size > MAX_STORE_BYTES:
        raise _unreadable(path, f"大きすぎます（{size:,} バイト、上限 {MAX_STORE_BYTES:,} バイト）")
    text, _ = decode_bytes(path.read_bytes(), file=path.name)
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return []
    header = [cell.strip() for cell in rows[0]]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise _unreadable(
            path,
            f"1 行目に列 {'・'.join(missing)} がありません（見出し: {'、'.join(header) or 'なし'}）",
        )
    at = {name: header.index(name) for name in STORE_COLUMNS if name in header}
    names: list[LearnedName] = []
    for line, row in enumerate(rows[1:], start=2):
        cells = {name: row[i].strip() if i < len(row) else "" for name, i in at.items()}
        if not any(cells.values()):
            continue
        payer, code = cells["振込依頼人名"], cells["取引先コード"]
        if not payer or not code:
            raise _unreadable(path, f"{line} 行目の振込依頼人名か取引先コードが空欄です")
        names.append(
            LearnedName(
                payer,
                code,
                cells.get("取引先名", ""),
                cells.get("登録者", ""),
                cells.get("登録日時", ""),
            )
        )
    return names


def _csv_bytes(names: list[LearnedName]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(STORE_COLUMNS)
    for name in names:
        writer.writerow([name.payer, name.code, name.name, name.who, name.when])
    return out.getvalue().encode(ENCODING)


def _unreadable(path: Path, problem: str) -> BlockError:
    return input_error(
        f"学習済みの名義のファイル「{path.name}」: {problem}。",
        f"列 {'・'.join(STORE_COLUMNS)}（振込依頼人名と取引先コードは必須）の CSV にしてください。"
        "直せないときはファイルの名前を変えて退避すると、学習済みの名義なしで実行できます。",
        file=str(path.name),
    )
