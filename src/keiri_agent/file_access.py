"""Where the paths a task is given may lead: one rule for every path that reaches a block.

A :class:`FileAccess` says which folders a run may read and write. The CLI and the app's local
runs use the unrestricted one (``FileAccess()``): a path means what it means on the machine, as
it always did. The API server gives every task a confined one (:meth:`FileAccess.confined`):

* **reads** -- the task's own folders (its uploads and outputs) and the folders the operator
  names as shared data for all users. A relative name is looked up in the search folders in
  order (uploads, outputs, then each shared folder); an absolute path must lie inside one of the
  readable folders, first by its text (so an outside path is refused before the file system is
  asked anything, and the answer never tells whether it exists), then by its real location
  (symbolic links are followed, one leading out is refused).
* **writes** -- only under the task's own writable folders (its outputs and its plan runs).
  A relative name is put under the folder the block writes to (the node's work folder).

Spellings that could mean something else are refused before anything is looked up: NUL, any
``..`` component, ``~`` (a home folder), with backslashes taken as separators (``..\\x`` is
``../x``). Percent-encodings are not decoded: ``%2e%2e`` is a name like any other, looked up
inside the allowed folders. Refusals are :class:`PathEscapeError` (``PERMISSION_DENIED``) naming
the input and repeating the path as it was given, never the server's own folders.

S3 sources (``s3://bucket/key``) are read with the server's own credentials, so a confined
access reads only the buckets and bucket prefixes the operator names
(``KEIRI_S3_ALLOWED_BUCKETS``; none by default): :meth:`FileAccess.read_s3` decides by the
URL's text alone, before anything is asked of S3, so a refusal says nothing about whether the
bucket exists.

Files the whole team shares and a run may change (the learned payer names of 入金消込: one
file per server, read by every user's matching) are not a task's to write: a confined access
changes them only with a ``team_editor`` -- the server sets one for approvers and admins (and
for a server without keys, one person's) -- and :meth:`FileAccess.edit_team_file` refuses the
others; the editor's name is what the file records as who changed it.

Blocks reach this through ``BlockContext.access`` (``blocks.inputs``), the conversion pipeline
through its ``access`` argument, the server's door through ``server.inputs``: the same object
decides everywhere. Like :func:`keiri_agent.workspace.confine`, the check holds at the moment it
is made; generated code runs in the sandbox, which is its own boundary.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path

from keiri_agent.errors import BlockError, ErrorCode, PathEscapeError, input_error

__all__ = ["ALLOWED_PLACES", "MAX_SHOWN_CHARS", "FileAccess", "Folder"]

# How the allowed folders are named to a user: never by their paths on the server.
ALLOWED_PLACES = "このタスクのアップロード・出力、または共有データフォルダ"
MAX_SHOWN_CHARS = 200  # of a path repeated in a message (the user's own text)

_READ_HINT = (
    f"{ALLOWED_PLACES}の中のファイルを指定してください。アップロードしたファイルはその名前で、"
    "共有データフォルダのファイルはそのフォルダからの相対パスで指定できます"
    "（絶対パス・'..'・'~' は、許可された場所の外を指すものは使えません）。"
)
_WRITE_HINT = (
    "出力先はファイル名か、作業フォルダからの相対パス（'..' を含まないもの）で指定してください。"
    "書き込めるのはこのタスクの出力フォルダの中だけです。"
)


_S3_HINT = (
    "サーバーのタスクが読める S3 の場所は、管理者が KEIRI_S3_ALLOWED_BUCKETS"
    "（バケット名か s3://バケット名/フォルダー）で決めます。許可された場所の URL を指定するか、"
    "ファイルをアップロードしてください。"
)


def _shown(text: str) -> str:
    return text[:MAX_SHOWN_CHARS]


def _refusal(field: str, text: str, reason: str, why: str, hint: str) -> PathEscapeError:
    return PathEscapeError(
        f"{field} のパス「{_shown(text)}」は使えません（{why}）。",
        hint=hint,
        details={"field": field, "path": _shown(text), "reason": reason},
    )


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


@dataclass(frozen=True)
class Folder:
    """A folder as written (absolute) and where it really is (symlinks followed)."""

    given: str
    real: str

    @classmethod
    def of(cls, folder: Path | str) -> Folder:
        given = os.path.abspath(folder)
        return cls(given, os.path.realpath(given))


@dataclass(frozen=True)
class FileAccess:
    """Which folders a run may read and write; ``FileAccess()`` allows everything.

    ``search``: where relative names are looked up for reading, in order. ``readable`` and
    ``writable``: the folders absolute paths must lie in (None: anywhere). ``s3``: the S3
    places (``bucket`` or ``bucket/prefix``) a run may read (None: any). ``team_editor``: who
    a confined run changes the team's shared files as (None: it may not). ``observer``: told
    of every path :meth:`read` allows, with the input that named it (a plan run records the
    files it reads, with their hashes, for audits).
    """

    search: tuple[Folder, ...] = ()
    readable: tuple[Folder, ...] | None = None
    writable: tuple[Folder, ...] | None = None
    s3: tuple[str, ...] | None = None
    team_editor: str | None = None
    observer: Callable[[Path, str], None] | None = dataclass_field(default=None, compare=False)

    def observed(self, observer: Callable[[Path, str], None] | None) -> FileAccess:
        """This access, telling ``observer`` of every path it lets a block read (None: no one,
        for an access sent to another process)."""
        return replace(self, observer=observer)

    @classmethod
    def confined(
        cls,
        *,
        search: Iterable[Path],
        readable: Iterable[Path] = (),
        writable: Iterable[Path] = (),
        s3: Iterable[str] = (),
    ) -> FileAccess:
        """Reads only in ``search`` and ``readable`` (relative names: ``search`` in order) and
        the S3 places ``s3``, writes only in ``writable`` (which is readable too: a run reads
        its own outputs)."""
        found = tuple(Folder.of(p) for p in search)
        out = tuple(Folder.of(p) for p in writable)
        return cls(found, (*found, *(Folder.of(p) for p in readable), *out), out, tuple(s3))

    @property
    def restricted(self) -> bool:
        return self.readable is not None

    def with_own(self, folder: Path) -> FileAccess:
        """This access plus ``folder`` to read and write (a run's own work folder)."""
        if self.readable is None or self.writable is None:
            return self
        root = Folder.of(folder)
        return replace(self, readable=(*self.readable, root), writable=(*self.writable, root))

    # --- reading ------------------------------------------------------------------------------

    def read(self, value: str | os.PathLike[str], field: str) -> Path:
        """The file or folder a block may read for the path ``value`` of input ``field``.

        Unrestricted: the path as given (``~`` expanded). Confined: the real path inside an
        allowed folder; PathEscapeError when it is not, BlockError when a relative name is in
        none of the search folders.
        """
        found = self._find(value, field)
        if self.observer is not None:
            self.observer(found, field)
        return found

    def _find(self, value: str | os.PathLike[str], field: str) -> Path:
        text = os.fspath(value)
        if self.readable is None:
            return Path(text).expanduser()
        name = self._spelling(text, field, _READ_HINT)
        if posixpath.isabs(name):
            return self._real(name, text, field, self.readable)
        for root in self.search:
            candidate = posixpath.join(root.given, name)
            if os.path.lexists(candidate):
                return self._real(candidate, text, field, self.readable)
        raise input_error(
            f"{field} のファイル「{_shown(text)}」が見つかりません（{ALLOWED_PLACES}を探しました）。",
            "名前の綴りを確認するか、ファイルをアップロードしてください。" + _READ_HINT,
            field=field,
            path=_shown(text),
            reason="not_found",
        )

    def read_s3(self, url: str, field: str) -> str:
        """``url`` (``s3://bucket/key``) when a run may read it: with ``s3`` unset, any; else
        only a URL inside one of those places (``bucket`` or ``bucket/prefix``, matched by
        whole key parts). PathEscapeError otherwise, decided by the text alone."""
        if self.s3 is None:
            return url
        text = url.strip()
        if "\x00" in text:
            raise _refusal(
                field, text.replace("\x00", "\\0"), "nul", "NUL 文字が含まれています", _S3_HINT
            )
        place = text[len("s3://") :].rstrip("/") if text.lower().startswith("s3://") else ""
        if {".", ".."} & set(place.split("/")[1:]):
            raise _refusal(field, text, "parent_reference", "'.' や '..' は使えません", _S3_HINT)
        if not place or not _inside(place, self.s3):
            raise _refusal(
                field, text, "s3_not_allowed", "許可されていない S3 の場所です", _S3_HINT
            )
        return text

    def edit_team_file(self, what: str, field: str) -> str | None:
        """Who changes the team's shared file ``what`` (its name for a user) for input
        ``field``: None unrestricted (the operator's own CLI or app: the block says who), the
        ``team_editor`` of a confined run; BlockError PERMISSION_DENIED when it has none."""
        if not self.restricted or self.team_editor is not None:
            return self.team_editor
        raise BlockError(
            f"{what}は経理チーム全員の処理に使われるため、このタスクからは変更できません"
            f"（{field}）。",
            code=ErrorCode.PERMISSION_DENIED,
            hint="変更できるのは承認者（approver）か管理者（admin）の利用者のタスクだけです。"
            "承認者に同じ確認を依頼するか、今回は覚えずに実行してください。",
            details={"field": field, "reason": "team_file"},
        )

    # --- writing ------------------------------------------------------------------------------

    def write(self, value: str | os.PathLike[str], field: str, *, base: Path) -> Path:
        """Where a block writes the output ``value`` of input ``field``: a relative name under
        ``base`` (the node's work folder), an absolute path as is; confined, it must lie in a
        writable folder (PathEscapeError otherwise)."""
        text = os.fspath(value)
        if self.writable is None:
            given = Path(text).expanduser()
            return given if given.is_absolute() else base / given
        name = self._spelling(text, field, _WRITE_HINT)
        target = name if posixpath.isabs(name) else posixpath.join(os.path.abspath(base), name)
        self._real(target, text, field, self.writable, hint=_WRITE_HINT)
        return Path(target)

    # --- the checks ---------------------------------------------------------------------------

    def _spelling(self, text: str, field: str, hint: str) -> str:
        """``text`` as a normalised POSIX path, or the refusal of a spelling that could lead
        elsewhere (NUL, ``..``, ``~``; backslashes are separators) or of an empty one (it
        would mean the first allowed folder itself)."""
        if not text.strip():
            raise input_error(f"{field} のパスが空です。", hint, field=field)
        if "\x00" in text:
            raise _refusal(
                field, text.replace("\x00", "\\0"), "nul", "NUL 文字が含まれています", hint
            )
        slashed = text.strip().replace("\\", "/")
        parts = slashed.split("/")
        if ".." in parts:
            raise _refusal(field, text, "parent_reference", "'..' は使えません", hint)
        if parts[0].startswith("~") and not parts[0].startswith("~$"):
            raise _refusal(field, text, "home", "'~'（ホームフォルダ）は使えません", hint)
        return posixpath.normpath(slashed)

    def _real(
        self,
        path: str,
        text: str,
        field: str,
        roots: tuple[Folder, ...],
        *,
        hint: str = _READ_HINT,
    ) -> Path:
        """The real location of ``path`` when it lies in one of ``roots``; else refused."""
        normal = posixpath.normpath(path)
        # By the text alone first: nothing outside is looked at, so the refusal is the same
        # whether the outside file exists or not.
        if not _inside(normal, [r.given for r in roots] + [r.real for r in roots]):
            raise _refusal(field, text, "outside", f"{ALLOWED_PLACES}の外です", hint)
        # os.path.realpath follows symlinks in every component, a dangling one included.
        real = os.path.realpath(normal)
        if not _inside(real, [r.real for r in roots]):
            raise _refusal(
                field, text, "symlink_escape", f"{ALLOWED_PLACES}の外を指すリンクです", hint
            )
        return Path(real)
