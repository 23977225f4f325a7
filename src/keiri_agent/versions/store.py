"""Plan versions on disk: every saved text, by its hash, and a journal of saves and reviews.

A plan's versions live in ``<versions dir>/<plan_id>/`` (``KEIRI_VERSIONS_DIR``, by default
``<designs>/.versions``; ``designs/`` stays the working copy people edit):

- ``<sha256>.yaml``: the text of each version, named by the SHA-256 of that text (line ends
  read as ``\\n``, a leading byte order mark left out: how the file was encoded, not what it
  says): the version's id. Saving the same text again makes no new version; any other change
  (a comment, a space, a blank line) is a new version that needs its own approval.
- ``versions.jsonl``: the journal, one line per save (``version``: author, time, message, where
  it was saved from) and per review (``approve`` / ``reject``: who, when, comment, whether it
  was the author's own). Lines are only ever appended, each carrying its hash-chain value
  (``events.chain``, as run logs do), under an exclusive lock so that writers in other
  processes (the CLI, the app, the API server) keep one chain.
- ``versions.head``: the journal's number of lines and its last chain value
  (``versions.head``), so that lines cut from the end show too.

Reading fails closed: a journal whose chain does not hold, or a version whose text no longer
has its hash, is an ``INTEGRITY_FAILED`` error naming what is wrong, never a silent answer, so
an approval cannot be forged by editing a file without it showing. So is a journal or a text
that is there but cannot be read (its permissions, a folder in its place, a disk error): the
same error, saying why and to check the file's permissions and place, for every reader of a
history (``plan versions``, the server, the app, a run's check, a subflow call). A version's
status is its newest review: approved, rejected, or pending (none yet).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keiri_agent.errors import BlockError, ErrorCode, input_error, reason_of
from keiri_agent.events.chain import GENESIS, Seal, chain_line, split_line, verify_lines
from keiri_agent.localtime import utc_text
from keiri_agent.versions.head import head_problems, read_head, write_head
from keiri_agent.workspace import atomic_path, confine, fsync_path

__all__ = [
    "JOURNAL_FILE",
    "MAX_MESSAGE_CHARS",
    "MIN_PREFIX_CHARS",
    "MOVING_REFS",
    "SHORT_CHARS",
    "STATUS_LABELS",
    "Decision",
    "SaveNote",
    "Source",
    "Status",
    "Version",
    "VersionStore",
    "integrity_error",
    "normalize_text",
    "plan_not_found",
    "version_id",
]

JOURNAL_FILE = "versions.jsonl"
MAX_MESSAGE_CHARS = 2000  # a save message or a review comment: a note, not a document
MIN_PREFIX_CHARS = 4  # the shortest hash prefix a version may be named by
SHORT_CHARS = 12  # how much of a hash is shown (git shows 7; plans are fewer, audits longer)
_TAIL_BYTES = 1 << 16  # enough to hold a journal's last line (entries are short)
_ORDINAL = re.compile(r"^v(\d+)$")
# Names of a version that move when a version is saved or reviewed (the others never do).
MOVING_REFS = frozenset({"latest", "approved"})

Source = Literal["cli", "app", "api", "generate"]
Status = Literal["approved", "rejected", "pending"]
STATUS_LABELS: dict[str, str] = {"approved": "承認済み", "rejected": "却下", "pending": "承認待ち"}


def normalize_text(text: str) -> str:
    """A plan's text as its version is taken: line ends as ``\\n`` and no byte order mark (a
    file saved by Windows Notepad and the same text pasted in a browser are one version)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def version_id(text: str) -> str:
    """The id of the version whose text is ``text``: the SHA-256 of it, in hex."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan_id: str
    version: str = Field(pattern=r"^[0-9a-f]{64}$")
    at: datetime
    by: str = Field(min_length=1)
    sealed: bool = False  # the journal keeps a head (versions.head) since this entry


class _Saved(_Entry):
    kind: Literal["version"]
    message: str = ""
    source: str
    file: str | None = None


class _Reviewed(_Entry):
    kind: Literal["approve", "reject"]
    comment: str = ""
    self_approved: bool = False


@dataclass(frozen=True)
class SaveNote:
    """What a save records beside the text: who saved it, from where, their message, and the
    working copy it was saved as (None: none)."""

    author: str
    source: Source
    message: str = ""
    file: str | None = None


@dataclass(frozen=True)
class Decision:
    """One review of a version."""

    kind: Literal["approve", "reject"]
    by: str
    at: datetime
    comment: str = ""
    self_approved: bool = False  # the author approved their own version (allowed by a setting)

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.kind,
            "by": self.by,
            "at": utc_text(self.at),
            "comment": self.comment,
            "self_approved": self.self_approved,
        }


@dataclass(frozen=True)
class Version:
    """One saved text of a plan, with who saved it and every review since."""

    plan_id: str
    id: str  # the SHA-256 of the text
    number: int  # 1 for the plan's first version, in the order they were saved
    author: str
    saved_at: datetime
    source: str
    message: str = ""
    file: str | None = None  # the working copy it was saved as, when there was one
    decisions: tuple[Decision, ...] = ()

    @property
    def short(self) -> str:
        return self.id[:SHORT_CHARS]

    @property
    def label(self) -> str:
        """``v3 (1a2b3c4d5e6f)``: how a person names this version."""
        return f"v{self.number}（{self.short}）"

    @property
    def status(self) -> Status:
        if not self.decisions:
            return "pending"
        return "approved" if self.decisions[-1].kind == "approve" else "rejected"

    @property
    def approval(self) -> Decision | None:
        """The review that approved this version, while it stands (None: not approved)."""
        return self.decisions[-1] if self.status == "approved" else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan_id": self.plan_id,
            "version": self.id,
            "short": self.short,
            "number": self.number,
            "author": self.author,
            "saved_at": utc_text(self.saved_at),
            "source": self.source,
            "message": self.message,
            "file": self.file,
            "status": self.status,
            "approval": self.approval.to_dict() if self.approval else None,
            "decisions": [d.to_dict() for d in self.decisions],
        }


def integrity_error(what: str, problems: list[str], path: Path, *, hint: str = "") -> BlockError:
    return BlockError(
        f"{what}が改ざんされているか壊れています: " + " ".join(problems[:5]),
        code=ErrorCode.INTEGRITY_FAILED,
        hint=f"{hint}ファイルを書き換えた人と経緯を確認し、バックアップから戻してください"
        "（版の記録は追記だけで、書き換えは検出されます）。",
        details={"file": str(path), "problems": problems},
    )


def _unreadable(what: str, exc: OSError | UnicodeDecodeError, path: Path) -> BlockError:
    """:func:`integrity_error` for a file of the versions that is there but cannot be read."""
    return integrity_error(
        what,
        [f"ファイルを読めません（{reason_of(exc)}）。"],
        path,
        hint="まずファイルの権限と置き場所（ファイルであること）を確認してください。"
        "それでも読めないときは、",
    )


def plan_not_found(plan_id: str, examples: Sequence[str] = ()) -> BlockError:
    """The one error for a plan name that names no plan (``examples``: the sample names that
    would also have been accepted where the plan is looked up)."""
    samples = f"サンプル名（{', '.join(examples)}）か、" if examples else ""
    return BlockError(
        f"Plan「{plan_id}」が見つかりません。",
        code=ErrorCode.DEPENDENCY_NOT_FOUND,
        hint=f"{samples}KEIRI_DESIGNS_DIR からの相対名（拡張子なし、例: keiri/monthly_close）で"
        "指定してください。",
        details={"plan": plan_id},
    )


def _message(text: str, name: str) -> str:
    text = text.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        raise input_error(
            f"{name}が長すぎます（{len(text)} 文字）。",
            f"{MAX_MESSAGE_CHARS} 文字以内にしてください。",
        )
    return text


@dataclass
class _History:
    versions: list[Version] = field(default_factory=list)
    lines: int = 0  # the journal's complete lines

    def by_id(self, vid: str) -> Version | None:
        return next((v for v in self.versions if v.id == vid), None)


class VersionStore:
    """The versions of every plan under ``root`` (see the module docstring)."""

    def __init__(self, root: Path | str, *, durable: bool = True) -> None:
        """``durable``: each text and journal line is on disk (fsync) before a call returns."""
        self.root = Path(root)
        self.durable = durable

    @classmethod
    def of(cls, settings: Any) -> VersionStore:
        """The store the settings name (``KEIRI_VERSIONS_DIR``), durable as the run logs are."""
        return cls(settings.versions_dir(), durable=settings.keiri_run_log_fsync)

    # --- reading -------------------------------------------------------------------------------

    def folder(self, plan_id: str) -> Path:
        return confine(self.root, plan_id)

    def plans(self) -> list[str]:
        """The plan ids that have versions, sorted."""
        if not self.root.is_dir():
            return []
        found = (p.parent.relative_to(self.root) for p in self.root.rglob(JOURNAL_FILE))
        return sorted(path.as_posix() for path in found)

    def plans_mentioning(self, words: Sequence[str]) -> list[str]:
        """The plan ids whose journal, as it lies on disk, contains one of ``words`` (each as a
        JSON string spells it), sorted; a journal that cannot be read is among them. A filter
        before :meth:`versions` reads (and checks) a journal: a journal without any of the words
        records none of them -- unless it was edited, which only its own check shows."""
        needles = {
            json.dumps(word, ensure_ascii=ascii)[1:-1].encode("utf-8")
            for word in words
            for ascii in (False, True)
        }
        found = []
        for plan_id in self.plans():
            try:
                raw = (self.folder(plan_id) / JOURNAL_FILE).read_bytes()
            except OSError:
                raw = None
            if raw is None or any(needle in raw for needle in needles):
                found.append(plan_id)
        return found

    def versions(self, plan_id: str) -> list[Version]:
        """Every version of ``plan_id``, oldest first (empty when it has none: no journal; one
        that is there but cannot be read is an ``INTEGRITY_FAILED`` error)."""
        journal = self.folder(plan_id) / JOURNAL_FILE
        handle = self._open(journal, "rb", fcntl.LOCK_SH)  # not between a line and its head
        if handle is None:
            return []
        with handle:
            return self._read(journal, handle).versions

    def get(self, plan_id: str, vid: str) -> Version | None:
        """The version with the full id ``vid`` (None: this text was never saved)."""
        return next((v for v in self.versions(plan_id) if v.id == vid), None)

    def find(self, plan_id: str, ref: str) -> Version:
        """The version ``ref`` names: a hash or its first characters (at least
        :data:`MIN_PREFIX_CHARS`), ``v3`` (the third saved), ``latest`` or ``approved`` (the
        newest approved one). BlockError naming the versions there are otherwise."""
        versions = self.versions(plan_id)
        ref = ref.strip().lower()
        found: list[Version] = []
        if ref == "latest":
            found = versions[-1:]
        elif ref == "approved":
            found = [v for v in versions if v.status == "approved"][-1:]
        elif (ordinal := _ORDINAL.match(ref)) is not None:
            found = [v for v in versions if v.number == int(ordinal[1])]
        elif len(ref) >= MIN_PREFIX_CHARS and re.fullmatch(r"[0-9a-f]+", ref):
            found = [v for v in versions if v.id.startswith(ref)]
        if len(found) == 1:
            return found[0]
        listing = ", ".join(v.label for v in versions[-10:]) or "なし"
        if len(found) > 1:
            message = f"Plan {plan_id} の版「{ref}」に当てはまる版が {len(found)} 個あります。"
        elif not versions:
            message = f"Plan {plan_id} には登録された版がありません。"
        else:
            message = f"Plan {plan_id} に版「{ref}」はありません。"
        raise input_error(
            message,
            f"版はハッシュの先頭 {MIN_PREFIX_CHARS} 文字以上、v番号（v1、v2 など）、latest、"
            f"approved で指定します。この Plan の版: {listing}"
            f"（一覧: keiri-agent plan versions {plan_id}）。",
            plan_id=plan_id,
            ref=ref,
        )

    def text(self, version: Version) -> str:
        """The text of ``version``, checked against its hash."""
        path = self.folder(version.plan_id) / f"{version.id}.yaml"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            what = f"Plan {version.plan_id} の版 {version.label} の本文"
            raise _unreadable(what, exc, path) from None
        # The text as kept (normalized when it was saved; a version kept before the byte order
        # mark was left out keeps its mark, and its hash with it).
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != version.id:
            raise integrity_error(
                f"Plan {version.plan_id} の版 {version.label} の本文",
                ["内容がハッシュと一致しません。"],
                path,
            )
        return text

    def approved_version(self, plan_id: str) -> Version | None:
        """The newest approved version of ``plan_id`` (None: none is approved)."""
        approved = [v for v in self.versions(plan_id) if v.status == "approved"]
        return approved[-1] if approved else None

    def of_text(self, plan_id: str, text: str) -> tuple[str, Version | None]:
        """The id of ``text`` and its version (None: never saved). A text with a byte order mark
        is also its version saved before the mark was left out (that version kept the mark and
        its hash), the approved one first when both were saved."""
        vid = version_id(text)
        ids = [vid]
        if text.startswith("\ufeff"):
            kept = text.replace("\r\n", "\n").replace("\r", "\n")
            ids.append(hashlib.sha256(kept.encode("utf-8")).hexdigest())
        found = [v for v in self.versions(plan_id) if v.id in ids]
        found.sort(key=lambda v: (v.status != "approved", ids.index(v.id)))
        return (found[0].id, found[0]) if found else (vid, None)

    def is_approved(self, plan_id: str, vid: str) -> bool:
        """Whether the version with the full id ``vid`` is approved now."""
        version = self.get(plan_id, vid)
        return version is not None and version.status == "approved"

    # --- writing -------------------------------------------------------------------------------

    def save(self, plan_id: str, text: str, note: SaveNote) -> tuple[Version, bool]:
        """Keep ``text`` as a version of ``plan_id``, saved as ``note`` says: ``(version,
        created)``; a text saved before is that same version (``created`` false, nothing
        written)."""
        message = _message(note.message, "メッセージ")
        text = normalize_text(text)
        vid = version_id(text)
        folder = self.folder(plan_id)
        with self._locked(folder / JOURNAL_FILE) as (journal, handle):
            history = self._read(journal, handle)
            known = history.by_id(vid)
            if known is not None:
                return known, False
            target = folder / f"{vid}.yaml"
            with atomic_path(target, durable=self.durable) as tmp:
                tmp.write_text(text, encoding="utf-8")
            entry = _Saved(
                kind="version",
                plan_id=plan_id,
                version=vid,
                at=_now(),
                by=note.author,
                message=message,
                source=note.source,
                file=note.file,
                sealed=True,
            )
            self._append(journal, handle, entry, history.lines)
            return self._read(journal, handle).versions[-1], True

    def decide(
        self,
        plan_id: str,
        vid: str,
        kind: Literal["approve", "reject"],
        *,
        by: str,
        comment: str = "",
        self_approved: bool = False,
    ) -> Version:
        """Record a review of version ``vid`` (whether ``by`` may make it is
        ``versions.review``'s to decide); the version as it stands after it."""
        note = _message(comment, "コメント")
        journal = self.folder(plan_id) / JOURNAL_FILE
        with self._locked(journal) as (path, handle):
            history = self._read(path, handle)
            if history.by_id(vid) is None:
                raise input_error(
                    f"Plan {plan_id} に版 {vid[:SHORT_CHARS]} はありません。",
                    f"一覧: keiri-agent plan versions {plan_id}",
                    plan_id=plan_id,
                    version=vid,
                )
            entry = _Reviewed(
                kind=kind,
                plan_id=plan_id,
                version=vid,
                at=_now(),
                by=by,
                comment=note,
                self_approved=self_approved,
                sealed=True,
            )
            self._append(path, handle, entry, history.lines)
            found = self._read(path, handle).by_id(vid)
        assert found is not None
        return found

    # --- the journal ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, journal: Path) -> Iterator[tuple[Path, Any]]:
        """The journal opened for appending, under an exclusive lock (other processes wait)."""
        journal.parent.mkdir(parents=True, exist_ok=True)
        new = not journal.exists()
        handle = self._open(journal, "a+b", fcntl.LOCK_EX)
        assert handle is not None  # "a+b" makes the journal in the folder made above
        try:
            if new and self.durable:
                fsync_path(journal.parent, directory=True)
            yield journal, handle
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()

    def _open(self, journal: Path, mode: str, lock: int) -> Any | None:
        """The journal opened (``mode``) and locked (``lock``); None when there is none. One
        that is there but cannot be opened or locked -- its permissions, a folder in its place,
        a link to nothing -- is the ``INTEGRITY_FAILED`` error naming it, never "no history"."""
        if journal.is_symlink() and not journal.exists():
            missing = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
            raise self._unreadable(journal, missing)
        try:
            handle = journal.open(mode)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._unreadable(journal, exc) from None
        try:
            fcntl.flock(handle.fileno(), lock)
        except OSError as exc:
            handle.close()
            raise self._unreadable(journal, exc) from None
        return handle

    def _append(self, journal: Path, handle: Any, entry: BaseModel, count: int) -> None:
        """Append ``entry`` after the journal's ``count`` complete lines, then its head."""
        handle.seek(0, os.SEEK_END)
        end = handle.tell()
        handle.seek(max(end - _TAIL_BYTES, 0))
        tail = handle.read()
        if tail and not tail.endswith(b"\n"):
            # A line a crash cut while it was written was never an entry: it goes, so the
            # new entry starts a line of its own (readers already leave such a tail out).
            cut = tail.rfind(b"\n") + 1
            handle.truncate(end - len(tail) + cut)
            tail = tail[:cut]
        lines = tail.splitlines()
        previous = split_line(lines[-1].decode("utf-8", errors="replace"))[1] if lines else None
        if lines and previous is None:
            raise integrity_error(
                self._record(journal), ["最終行にハッシュチェーンの値がありません。"], journal
            )
        text = json.dumps(entry.model_dump(mode="json"), ensure_ascii=False)
        line, value = chain_line(text, previous or GENESIS)
        handle.seek(0, os.SEEK_END)
        handle.write((line + "\n").encode("utf-8"))
        handle.flush()
        if self.durable:
            os.fsync(handle.fileno())
        write_head(journal.parent, Seal(count + 1, value), durable=self.durable)

    def _unreadable(self, journal: Path, exc: OSError) -> BlockError:
        return _unreadable(self._record(journal), exc, journal)

    def _record(self, journal: Path) -> str:
        """How an error names a journal: its plan's version record, and where it lies."""
        try:
            plan_id = journal.parent.relative_to(self.root.resolve()).as_posix()
        except ValueError:  # a plan's folder linked from elsewhere
            plan_id = journal.parent.name
        return f"Plan {plan_id} の版の記録（{journal}）"

    def _read(self, journal: Path, handle: Any) -> _History:
        """The versions a journal records, once its chain is checked (fails closed)."""
        try:
            handle.seek(0)
            raw = handle.read().splitlines(keepends=True)
        except OSError as exc:
            raise self._unreadable(journal, exc) from None
        report = verify_lines(raw, first_id=0)
        problems = [f.describe() for f in report.findings if f.tampered]
        if problems:
            raise integrity_error(self._record(journal), problems, journal)
        history = _History(lines=report.lines)
        reviews: dict[str, list[Decision]] = {}
        sealed = False
        for number, line in enumerate(raw[: report.lines], start=1):
            text, _ = split_line(line.rstrip(b"\n").decode("utf-8"))
            try:
                data = json.loads(text)
                entry: _Saved | _Reviewed = (
                    _Saved.model_validate(data)
                    if data.get("kind") == "version"
                    else _Reviewed.model_validate(data)
                )
            except (ValueError, AttributeError, ValidationError) as exc:
                raise integrity_error(
                    self._record(journal),
                    [f"{number} 行目を読み取れません（{reason_of(exc)}）。"],
                    journal,
                ) from None
            sealed = sealed or entry.sealed
            if isinstance(entry, _Saved):
                history.versions.append(
                    Version(
                        plan_id=entry.plan_id,
                        id=entry.version,
                        number=len(history.versions) + 1,
                        author=entry.by,
                        saved_at=entry.at,
                        source=entry.source,
                        message=entry.message,
                        file=entry.file,
                    )
                )
            else:
                decision = Decision(
                    entry.kind, entry.by, entry.at, entry.comment, entry.self_approved
                )
                reviews.setdefault(entry.version, []).append(decision)
        problems = head_problems(raw[: report.lines], read_head(journal.parent), sealed)
        if problems:
            raise integrity_error(self._record(journal), problems, journal)
        history.versions = [
            replace(v, decisions=tuple(reviews.get(v.id, ()))) for v in history.versions
        ]
        return history
