"""FileAccess, the one rule for every path a task's blocks are given: a confined task reads its
own uploads and outputs and the shared data, writes only under its own folders, and no
spelling of a path (``..``, symlinks, ``%2e``, NUL, absolute, ``~``, backslashes) leads
anywhere else; refusals name the input and never the server's folders. Unrestricted access
(the CLI, the app's local runs) leaves paths as they were."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keiri_agent.config import load_settings
from keiri_agent.errors import BlockError, ConfigurationError, ErrorCode, PathEscapeError
from keiri_agent.file_access import ALLOWED_PLACES, FileAccess

# Path pieces an attacker would try, mixed below into every spelling hypothesis can make.
PIECES = [
    "..",
    ".",
    "~",
    "~root",
    "%2e%2e",
    "%2e",
    "%2f",
    "..%2f",
    "%5c",
    "\\",
    "..\\..",
    "\x00",
    "",
    "a.csv",
    "b.csv",
    "secret.csv",
    "c.csv",
    "uploads",
    "files",
    "shared",
    "tasks",
    "other",
    "mine",
    "link_out",
    "link_in",
    "dangling",
    "new.xlsx",
    "etc",
    "passwd",
]


class Tree:
    """A workspace with two tasks, a shared folder and a secret outside all of them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.mine = root / "workspace" / "tasks" / "mine"
        self.other = root / "workspace" / "tasks" / "other"
        self.shared = root / "shared"
        self.outside = root / "outside"
        for folder in (
            self.mine / "uploads",
            self.mine / "files",
            self.mine / "runs" / "work",
            self.other / "uploads",
            self.shared / "sub",
            self.shared / "%2e%2e",
            self.outside,
        ):
            folder.mkdir(parents=True, exist_ok=True)
        (self.mine / "uploads" / "a.csv").write_text("a", encoding="utf-8")
        (self.mine / "files" / "result.xlsx").write_text("r", encoding="utf-8")
        (self.mine / "task.json").write_text("{}", encoding="utf-8")
        (self.other / "uploads" / "c.csv").write_text("c", encoding="utf-8")
        (self.shared / "b.csv").write_text("b", encoding="utf-8")
        (self.shared / "%2e%2e" / "x.csv").write_text("x", encoding="utf-8")
        (self.outside / "secret.csv").write_text("s", encoding="utf-8")
        for link, target in (
            (self.shared / "link_out", self.outside / "secret.csv"),
            (self.shared / "link_in", self.shared / "b.csv"),
            (self.shared / "tasks", self.other),
            (self.mine / "runs" / "work" / "dangling", self.outside / "new.xlsx"),
        ):
            if not link.is_symlink():
                os.symlink(target, link)
        self.access = FileAccess.confined(
            search=(self.mine / "uploads", self.mine / "files", self.shared),
            writable=(self.mine / "files", self.mine / "runs"),
        )
        self.readable = [self.mine / "uploads", self.mine / "files", self.mine / "runs"]
        self.readable.append(self.shared)
        self.writable = [self.mine / "files", self.mine / "runs"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return Tree(tmp_path_factory.mktemp("access"))


def _within(path: Path, folders: list[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(real.is_relative_to(os.path.realpath(f)) for f in folders)


def _spellings(tree: Tree) -> st.SearchStrategy[str]:
    prefixes = st.sampled_from(
        [
            "",
            "/",
            "./",
            str(tree.root) + "/",
            str(tree.mine) + "/",
            str(tree.mine / "uploads") + "/",
            str(tree.shared) + "/",
            str(tree.other) + "/",
            str(tree.outside) + "/",
            "/etc/",
            "~/",
            "C:\\",
        ]
    )
    pieces = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=6)
    separators = st.sampled_from(["/", "\\", "//"])
    return st.builds(lambda p, parts, sep: p + sep.join(parts), prefixes, pieces, separators)


# --- the property ----------------------------------------------------------------------------


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_no_spelling_reads_or_writes_outside_the_allowed_folders(
    tree: Tree, data: st.DataObject
) -> None:
    text = data.draw(_spellings(tree))
    try:
        found = tree.access.read(text, "path")
    except BlockError as exc:
        _refusal_is_clean(exc, text, tree)
    else:
        assert _within(found, tree.readable), (text, found)
        assert not _within(found, [tree.other, tree.outside])
    try:
        target = tree.access.write(text, "output_path", base=tree.mine / "runs" / "work")
    except BlockError as exc:
        _refusal_is_clean(exc, text, tree)
    else:
        assert _within(target, tree.writable), (text, target)


def _refusal_is_clean(exc: BlockError, text: str, tree: Tree) -> None:
    assert exc.code in (ErrorCode.PERMISSION_DENIED, ErrorCode.INPUT_VALIDATION_FAILED)
    said = exc.message + exc.hint + str(exc.details)
    assert exc.message.startswith(("path ", "output_path ")), exc.message  # names the input
    if str(tree.root) not in text:  # the server's folders appear only if the user typed them
        assert str(tree.root) not in said


# --- the cases by name -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("../other/uploads/c.csv", "parent_reference"),
        ("..\\..\\outside\\secret.csv", "parent_reference"),
        ("uploads/../../other/uploads/c.csv", "parent_reference"),
        ("~/secret.csv", "home"),
        ("~root/.ssh/id_rsa", "home"),
        ("a.csv\x00.png", "nul"),
        ("/etc/passwd", "outside"),
        ("\\etc\\passwd", "outside"),
        ("link_out", "symlink_escape"),
        ("tasks/uploads/c.csv", "symlink_escape"),
    ],
)
def test_spellings_that_lead_out_are_refused_naming_the_input(
    tree: Tree, text: str, reason: str
) -> None:
    with pytest.raises(PathEscapeError) as info:
        tree.access.read(text, "collect.invoice_list")
    error = info.value
    assert error.code == ErrorCode.PERMISSION_DENIED
    assert error.details["reason"] == reason
    assert error.message.startswith("collect.invoice_list のパス「")
    assert ALLOWED_PLACES in error.message + error.hint
    assert str(tree.root) not in error.message + error.hint + str(error.details)


def test_outside_absolute_paths_are_refused_alike_whether_they_exist_or_not(tree: Tree) -> None:
    errors = []
    for name in ("secret.csv", "no-such.csv"):
        with pytest.raises(PathEscapeError) as info:
            tree.access.read(str(tree.outside / name), "path")
        errors.append(info.value)
    assert [e.details["reason"] for e in errors] == ["outside", "outside"]
    assert errors[0].hint == errors[1].hint
    assert errors[0].message.replace("secret", "X") == errors[1].message.replace("no-such", "X")


def test_another_tasks_folder_is_refused_however_it_is_named(tree: Tree) -> None:
    for text in (
        str(tree.other / "uploads" / "c.csv"),
        str(tree.mine / ".." / "other" / "uploads" / "c.csv"),
        str(tree.mine / "task.json"),  # the task's own record is not one of its files
    ):
        with pytest.raises(PathEscapeError):
            tree.access.read(text, "path")


def test_relative_names_are_found_in_uploads_outputs_then_shared_data(tree: Tree) -> None:
    assert tree.access.read("a.csv", "path") == (tree.mine / "uploads" / "a.csv").resolve()
    assert (
        tree.access.read("result.xlsx", "path") == (tree.mine / "files" / "result.xlsx").resolve()
    )
    assert tree.access.read("b.csv", "path") == (tree.shared / "b.csv").resolve()
    assert tree.access.read("./sub", "path") == (tree.shared / "sub").resolve()
    assert tree.access.read("link_in", "path") == (tree.shared / "b.csv").resolve()
    # Percent-encodings are not decoded: "%2e%2e" is a folder name like any other.
    assert tree.access.read("%2e%2e/x.csv", "path") == (tree.shared / "%2e%2e" / "x.csv").resolve()
    with pytest.raises(BlockError) as info:
        tree.access.read("%2e%2e/outside/secret.csv", "path")  # not decoded: a name, not found
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert info.value.details["reason"] == "not_found"


def test_absolute_paths_inside_the_allowed_folders_are_read(tree: Tree) -> None:
    for path in (tree.mine / "uploads" / "a.csv", tree.shared / "b.csv", tree.mine / "runs"):
        assert tree.access.read(str(path), "path") == path.resolve()


def test_writes_go_only_under_the_tasks_own_folders(tree: Tree) -> None:
    base = tree.mine / "runs" / "work"
    assert tree.access.write("out.xlsx", "output_path", base=base) == base / "out.xlsx"
    assert tree.access.write(str(tree.mine / "files" / "x.md"), "output_path", base=base)
    for text, reason in (
        (str(tree.shared / "b.csv"), "outside"),  # shared data is read-only
        (str(tree.outside / "new.xlsx"), "outside"),
        ("../../uploads/a.csv", "parent_reference"),
        ("dangling", "symlink_escape"),  # a link in the work folder that points out
    ):
        with pytest.raises(PathEscapeError) as info:
            tree.access.write(text, "output_path", base=base)
        assert info.value.details["reason"] == reason
    assert not (tree.outside / "new.xlsx").exists()


def test_a_runs_own_work_folder_is_added_to_what_it_may_read_and_write(tree: Tree) -> None:
    work = tree.root / "elsewhere" / "work"
    work.mkdir(parents=True, exist_ok=True)
    own = tree.access.with_own(work)
    assert own.write("x.png", "output_path", base=work) == work / "x.png"
    assert own.read(str(work), "path") == work.resolve()
    with pytest.raises(PathEscapeError):
        tree.access.read(str(work), "path")


def test_empty_paths_are_refused(tree: Tree) -> None:
    for call in (
        lambda: tree.access.read("  ", "path"),
        lambda: tree.access.write("", "output_path", base=tree.mine / "files"),
    ):
        with pytest.raises(BlockError) as info:
            call()
        assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED


def test_unrestricted_access_leaves_paths_as_they_were(tmp_path: Path) -> None:
    anywhere = FileAccess()
    assert not anywhere.restricted
    assert anywhere.read("~/x.csv", "path") == Path("~/x.csv").expanduser()
    assert anywhere.read("../x.csv", "path") == Path("../x.csv")
    assert anywhere.write("out.xlsx", "output_path", base=tmp_path) == tmp_path / "out.xlsx"
    assert anywhere.write("/tmp/x.xlsx", "output_path", base=tmp_path) == Path("/tmp/x.xlsx")
    assert anywhere.with_own(tmp_path) is anywhere


# --- S3 places (KEIRI_S3_ALLOWED_BUCKETS) ----------------------------------------------------


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("s3://keiri-data/2024/売上.csv", True),
        ("s3://keiri-data/", True),
        ("S3://keiri-data", True),
        ("s3://reports/2024", True),
        ("s3://reports/2024/", True),
        ("s3://reports/2024/03/a.csv", True),
        ("s3://reports/", False),
        ("s3://reports/2024-private/a.csv", False),
        ("s3://reports/2024/../private/a.csv", False),
        ("s3://reports/2024/./a.csv", False),
        ("s3://keiri-data-private/a.csv", False),
        ("s3://", False),
        ("s3://keiri-data/a\x00.csv", False),
    ],
)
def test_s3_places(url: str, allowed: bool) -> None:
    access = FileAccess.confined(search=(), s3=("keiri-data", "reports/2024"))
    if allowed:
        assert access.read_s3(url, "source") == url.strip()
    else:
        with pytest.raises(PathEscapeError) as info:
            access.read_s3(url, "source")
        assert info.value.message.startswith("source のパス「s3://") or "\\0" in info.value.message
        assert "KEIRI_S3_ALLOWED_BUCKETS" in (info.value.hint or "")
    assert FileAccess().read_s3(url, "source") == url  # unrestricted: any
    assert FileAccess.confined(search=()).s3 == ()  # a server task by default: none


def test_s3_allowed_buckets_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_S3_ALLOWED_BUCKETS", "keiri-data, s3://reports/2024/  s3://x1/a/b")
    assert load_settings().keiri_s3_allowed_buckets == ("keiri-data", "reports/2024", "x1/a/b")
    monkeypatch.delenv("KEIRI_S3_ALLOWED_BUCKETS")
    assert load_settings().keiri_s3_allowed_buckets == ()
    for bad in ("Bad_Bucket!", "s3://ok-bucket/../other"):
        monkeypatch.setenv("KEIRI_S3_ALLOWED_BUCKETS", bad)
        with pytest.raises(ConfigurationError) as info:
            load_settings()
        assert "KEIRI_S3_ALLOWED_BUCKETS" in str(info.value.to_dict())
