"""Property: every command, given a mistake an accountant makes, says so in Japanese, with a hint.

``test_bad_inputs`` gives each parameter a wrong *file*; what it lacks, this generator adds: the
parameters that read a *folder* (``--index``, ``--runs-dir``, ``--workdir``, the manuals of
``helpdesk ingest``) given a missing folder, a file or an empty folder; files that read as
nothing (empty, only blanks and comments) or in another encoding (UTF-16, CP932, a BOM); an empty
folder where a file is wanted; ids that are not there (a run, a block, a template, a node to
rerun from) or a node named by its label; an answers file that answers nothing or a node that
does not wait; a plan whose input file is missing, checked by a dry run; an output given as a
folder. Every name holds Japanese and spaces, drawn (seeded) from what a back office names things.

A case is wrong when the command exits 0 for what will fail; when the screen holds a traceback,
a library's English, or INTERNAL_ERROR (a bug said as a bug, not the user's mistake); when a
failure has no hint; or when a failure over a path does not name the path given.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.cli import app
from tests.cli.test_bad_inputs import (
    SALES,
    WAITING,
    assert_none_wrong,
    ending_problems,
    isolated,
    wrong_in,
)
from tests.cli.test_no_library_english import _leaves, runner

SEED = 16


@dataclass(frozen=True)
class Place:
    """A thing laid out in a case's folder: a file with ``data`` (bytes), a folder of files
    (``data`` a dict of name -> bytes), or nothing (``data`` None)."""

    name: str
    data: bytes | dict[str, bytes] | None


OWNED_ELSEWHERE = {"schedule", "trigger", "plan save", "plan versions", "plan diff"}
OWNED_ELSEWHERE |= {"plan approve", "plan reject", "serve", "ui", "sandbox setup"}
# Where a back office keeps things, and what it calls them (a case draws one of each).
FOLDERS = ["4月 締め", "経理部 共有/2024年度 決算", "令和6年 3月分", "月次 資料 (本社)"]
STEMS = ["売上 一覧", "支払 予定 表", "経費 精算 4月", "取引先 マスタ 最新", "月次 手順"]
PLAN = """\
apiVersion: v1
id: monthly_sales
vars:
  data: {data}
graph:
  - id: sales
    block: file.read_table
    in: {{path: "${{vars.data}}"}}
"""
MANUAL = "# 経費精算 規程\n\n経費精算の締め日は毎月25日です。領収書を添付してください。\n"
COMMON = Place("共通 資料/売上 一覧.csv", SALES.encode())  # what a good plan reads
GOOD_TEXT = {
    "plan": PLAN.format(data=COMMON.name),
    "waiting": WAITING,
    "vars": "締め日: 2024-04-30\n",
    "answers": "confirm: {approved: true}\n",
    "questions": "question,file\n経費の締め日は？,経費 規程.md\n",
    "qa": "Q,A\n経費の締め日は？,毎月25日です\n",
    "data": SALES,
    "program": "print('合計', 187000)\n",
    "manual": MANUAL,
    "continue": "",  # a convert session folder, never read here
}

# --- what a parameter expects, by its option or argument name --------------------------------
# "file:<what>": a file it reads; "folder": a folder it reads; "either": a manual file or a
# folder of them; "out": where it writes.
EXPECTS = {
    ("plan", "file"): "file:plan",
    ("plan", "--plan"): "file:plan",
    ("plan", "--vars"): "file:vars",
    ("plan", "--answers"): "file:answers",
    ("plan generate", "--answers"): "file:generate answers",
    ("sandbox run", "file"): "file:program",
    ("sandbox run", "--workdir"): "workfolder",
    ("extract", "files"): "file:data",
    ("helpdesk eval", "--questions"): "file:questions",
    ("helpdesk ingest", "--qa"): "file:qa",
    ("helpdesk ingest", "paths"): "either",
    ("helpdesk ingest", "--manual"): "either",
    ("helpdesk ingest", "--index"): "out",
    ("helpdesk", "--index"): "folder",
    ("audit", "--runs-dir"): "folder",
    ("analyze", "--workspace-root"): "out",
    ("demo", "--runs-dir"): "out",
    ("convert", "--continue"): "folder",
}
# A parameter named by id, and what ids it is given by mistake.
IDS = {"run_id", "run", "block", "template", "--from"}


def _expects(command: str, param: Any) -> str:
    name = (param.opts[0] if param.param_type_name == "option" else param.name).lower()
    words = command.split()
    for prefix in (command, *(" ".join(words[:n]) for n in range(len(words) - 1, 0, -1))):
        if (prefix, name) in EXPECTS:
            return EXPECTS[prefix, name]
    return "out" if name in ("--out", "--output") else ""


@dataclass(frozen=True)
class Case:
    command: str
    kind: str
    args: tuple[str, ...]
    places: tuple[Place, ...]
    must_fail: bool
    names: str = ""  # a path a failure must name (its last part)

    def __str__(self) -> str:
        return f"{self.kind}: keiri-agent {' '.join(self.args)}"


def _text_mistakes(what: str, good: str) -> dict[str, tuple[bytes | dict[str, bytes] | None, bool]]:
    """A file's mistakes: kind -> (what is there, whether the command must fail)."""
    empty_answers = what in ("answers", "generate answers")
    japanese = good if any(ord(c) > 0x3000 for c in good) else "# 4月分\n" + good
    return {
        "missing": (None, True),
        "a folder of files": ({"売上 一覧.csv": SALES.encode()}, True),
        "an empty folder": ({}, True),
        "an empty file": (b"", what not in ("vars", "program") or empty_answers),
        "only blanks and comments": (
            "# 後で書く\n\n   \n".encode(),
            what not in ("vars", "program", "data"),  # extract reads any text there is
        ),
        "UTF-16": (japanese.encode("utf-16"), False),  # read it, or say which encoding
        "UTF-8 with a BOM": (b"\xef\xbb\xbf" + japanese.encode(), False),
        "CP932": (japanese.encode("cp932"), False),
    }


FOLDER_MISTAKES: dict[str, tuple[bytes | dict[str, bytes] | None, bool]] = {
    "a missing folder": (None, True),
    "a file for a folder": (SALES.encode(), True),
    "an empty folder": ({}, True),
}
MANUAL_MISTAKES: dict[str, tuple[bytes | dict[str, bytes] | None, bool]] = {
    "a missing folder": (None, True),
    "an empty folder": ({}, True),
    "a folder of no manuals": ({"写真 1.jpg": b"\xff\xd8\xff\xe0junk", "メモ.bin": b"\0\1"}, True),
    "an empty manual": (b"", True),
}
WORKFOLDER_MISTAKES: dict[str, tuple[bytes | dict[str, bytes] | None, bool]] = {
    "a missing folder": (None, False),  # made
    "a file for a folder": (SALES.encode(), True),
    "an empty folder": ({}, False),
}
OUT_MISTAKES: dict[str, tuple[bytes | dict[str, bytes] | None, bool]] = {
    "a folder": ({"既存 ファイル.txt": b"x"}, False),
    "in a folder that is not there": (None, False),
}


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def folder(self) -> str:
        return self.rng.choice(FOLDERS)

    def name(self, suffix: str) -> str:
        return f"{self.rng.choice(STEMS)}{suffix}"

    def good(self, command: str, param: Any, folder: str) -> tuple[str, list[Place]]:
        """A good value for ``param`` and what it needs laid out."""
        expects = _expects(command, param)
        if expects.startswith("file:"):
            what = expects.removeprefix("file:")
            if what == "generate answers":
                return f"{folder}/{self.name('.yaml')}", []  # no good one without a model
            suffix = {"data": ".csv", "questions": ".csv", "qa": ".csv", "program": ".py"}
            path = f"{folder}/{self.name(suffix.get(what, '.yaml'))}"
            if what == "plan":
                data_path = f"{folder}/{self.name('.csv')}"
                text = PLAN.format(data=data_path)
                return path, [Place(path, text.encode()), Place(data_path, SALES.encode())]
            return path, [Place(path, GOOD_TEXT[what].encode())]
        if expects == "folder":
            path = f"{folder}/{self.name('')}"
            return path, [Place(path, {"売上 一覧.csv": SALES.encode()})]
        if expects == "either":
            path = f"{folder}/{self.name('.md')}"
            return path, [Place(path, MANUAL.encode())]
        if expects == "out":
            return f"{folder}/出力 先/{self.name('.md')}", []
        key = param.opts[0] if param.param_type_name == "option" else param.name
        text = {
            "text": "売上",
            "block": "file.read_table",
            "question": "経費精算の締め日はいつですか",
            "query": "経費精算",
            "template": "bank_statement",
            "--instruction": "売上を得意先ごとに集計する",
            "--from": "confirm" if command == "plan rerun" else "2024-04-01",
            "--to": "2024-04-30",
            "request": "売上 一覧.csv を JSON にして",
            "run_id": "{run}",
            "run": "{run}",
        }
        return text.get(key, "売上"), []

    def filled(
        self, command: str, cmd: Any, leave: Any, folder: str
    ) -> tuple[list[str], list[Place]]:
        args: list[str] = []
        places: list[Place] = []
        for param in cmd.params:
            named = param.param_type_name == "argument" and param.name in IDS  # a run to check
            if not (param.required or named) or param is leave:
                continue
            value, needs = self.good(command, param, folder)
            places += needs
            args += [value] if param.param_type_name == "argument" else [param.opts[0], value]
        return args, places

    def with_value(
        self, command: str, cmd: Any, param: Any, value: str, folder: str
    ) -> tuple[list[str], list[Place]]:
        args, places = self.filled(command, cmd, param, folder)
        if param.param_type_name == "option":
            return [*args, param.opts[0], value], places
        arguments = [p for p in cmd.params if p.param_type_name == "argument" and p.required]
        index = arguments.index(param) if param in arguments else len(arguments)
        return [*args[:index], value, *args[index:]], places

    def path_cases(self, path: list[str], cmd: Any, param: Any) -> Iterator[Case]:
        command = " ".join(path)
        expects = _expects(command, param)
        if expects.startswith("file:"):
            what = expects.removeprefix("file:")
            mistakes = _text_mistakes(what, GOOD_TEXT.get(what, "project: 月次\n"))
            suffix = ".py" if what == "program" else ".csv" if what in ("data", "qa") else ".yaml"
        elif expects == "folder":
            mistakes, suffix = FOLDER_MISTAKES, ""
        elif expects == "workfolder":
            mistakes, suffix = WORKFOLDER_MISTAKES, ""
        elif expects == "either":
            mistakes, suffix = MANUAL_MISTAKES, ""
        elif expects == "out":
            mistakes, suffix = OUT_MISTAKES, ".md"
        else:
            return
        for kind, (data, must_fail) in mistakes.items():
            folder = self.folder()
            given = (
                f"{folder}/{self.name(suffix if data is None or isinstance(data, bytes) else '')}"
            )
            if kind == "in a folder that is not there":
                given = f"{folder}/ない フォルダ/{self.name(suffix)}"
            if kind == "an empty manual":
                given = f"{folder}/{self.name('.md')}"
            args, places = self.with_value(command, cmd, param, given, folder)
            places = [p for p in places if p.name != given]
            if data is not None:
                places.append(Place(given, data))
            if command == "audit export" and kind == "an empty folder":
                must_fail = False  # a period with no runs
            if command == "plan run" and expects == "file:answers":
                args[0] = "{waiting}"  # answers matter to a plan that waits
            names = Path(given).name if must_fail and expects != "out" else ""
            yield Case(
                command, f"{param.name}: {kind}", (*path, *args), tuple(places), must_fail, names
            )

    def id_cases(self, path: list[str], cmd: Any, param: Any) -> Iterator[Case]:
        command = " ".join(path)
        key = param.opts[0] if param.param_type_name == "option" else param.name
        if key == "--from" and command != "plan rerun":
            return
        wrong = {
            "run_id": {"an id that is not there": "20240430-月次 締め", "a mistyped id": "{run}x"},
            "run": {"an id that is not there": "20240430-月次 締め", "a mistyped id": "{run}x"},
            "block": {"a block that is not there": "file.read_excel 表", "a label": "表の読み込み"},
            "template": {"a template that is not there": "請求書 テンプレート"},
            "--from": {"a node that is not there": "確定 処理", "a label": "確認"},
        }[key]
        for kind, value in wrong.items():
            folder = self.folder()
            args, places = self.with_value(command, cmd, param, value, folder)
            yield Case(command, f"{key}: {kind}", (*path, *args), tuple(places), True)

    def answers_cases(self, path: list[str], cmd: Any) -> Iterator[Case]:
        """Answers that answer nothing the run waits for."""
        command = " ".join(path)
        param = next(p for p in cmd.params if "--answers" in p.opts)
        for kind, text in {
            "answers for a node that does not wait": "確定: {approved: true}\n",
            "answers that are a list": "- approved: true\n",
            "an answer that is no answer": "confirm: {approved: 多分}\n",
        }.items():
            folder = self.folder()
            given = f"{folder}/{self.name('.yaml')}"
            args, places = self.with_value(command, cmd, param, given, folder)
            if command == "plan run":
                args[0] = "{waiting}"
            places.append(Place(given, text.encode()))
            yield Case(command, f"--answers: {kind}", (*path, *args), tuple(places), True, "")

    def dry_run_cases(self, path: list[str]) -> Iterator[Case]:
        """A plan whose input file is missing, a folder or empty: a dry run says so."""
        for kind, data in {
            "missing": None,
            "a folder": {"売上 一覧.csv": SALES.encode()},
            "an empty folder": {},
        }.items():
            folder = self.folder()
            plan = f"{folder}/{self.name('.yaml')}"
            given = f"{folder}/{self.name('.csv')}"
            places = [Place(plan, PLAN.format(data=given).encode())]
            if data is not None:
                places.append(Place(given, data))
            args = (*path, plan)
            yield Case(
                " ".join(path),
                f"the plan's input: {kind}",
                args,
                tuple(places),
                True,
                Path(given).name,
            )

    def cases(self) -> list[Case]:
        found: list[Case] = []
        for path, cmd in _leaves():
            command = " ".join(path)
            if command in OWNED_ELSEWHERE or path[0] in OWNED_ELSEWHERE:
                continue
            own: list[Case] = []
            for param in cmd.params:
                key = param.opts[0] if param.param_type_name == "option" else param.name
                if "Path" in str(param.type_descriptor.annotation):
                    own += self.path_cases(path, cmd, param)
                elif key in IDS:
                    own += self.id_cases(path, cmd, param)
            if command in ("plan run", "plan resume", "plan rerun"):
                own += self.answers_cases(path, cmd)
            if command == "plan dry-run":
                own += self.dry_run_cases(path)
            if any("--json" in p.opts for p in cmd.params):
                own += [
                    Case(
                        c.command,
                        f"{c.kind}, json",
                        (*c.args, "--json"),
                        c.places,
                        c.must_fail,
                        c.names,
                    )
                    for c in own
                ]
            found += own
        return found


CASES = Generator(SEED).cases()


def _lay_out(here: Path, places: tuple[Place, ...]) -> None:
    for place in (COMMON, *places):
        target = here / place.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(place.data, bytes):
            target.write_bytes(place.data)
        elif isinstance(place.data, dict):
            target.mkdir(parents=True, exist_ok=True)
            for name, data in place.data.items():
                (target / name).write_bytes(data)


def _waiting_run(here: Path) -> str:
    plan = here / "承認 待ち" / "承認 待ち.yaml"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(WAITING, encoding="utf-8")
    done = runner.invoke(app, ["plan", "run", str(plan), "--json"])
    return str(json.loads(done.stdout)["run_id"])


def _errors_in(document: Any) -> Iterator[dict[str, Any]]:
    """The errors a JSON document holds (``error``, a validation's ``errors``, per-file entries)."""
    if isinstance(document, list):
        for item in document:
            yield from _errors_in(item)
    elif isinstance(document, dict):
        if isinstance(document.get("message"), str) and "code" in document:
            yield document
        for key in ("error", "errors", "findings", "issues", "files"):
            yield from _errors_in(document.get(key))


def _error_of(stdout: str, stderr: str, *, as_json: bool) -> tuple[str, str, str, list[str]]:
    """(codes, messages, hints, form problems) of a failure's output."""
    if as_json:
        try:
            document = json.loads(stdout)
        except ValueError:
            return "", stdout + stderr, "", ["stdout is not one JSON document"]
        errors = list(_errors_in(document))
        codes = " ".join(str(e.get("code")) for e in errors)
        messages = "\n".join(str(e.get("message")) for e in errors)
        hints = "".join(str(e.get("hint") or "") for e in errors)
        return codes, messages or stderr, hints, []
    shown = stdout + stderr
    code = "INTERNAL_ERROR" if "エラー（内部の誤り）: " in shown else ""
    hint = "".join(line for line in shown.splitlines() if "ヒント" in line)
    return code, shown, hint, []


def wrong_of(case: Case, here: Path) -> list[str]:
    here.mkdir(parents=True)
    os.chdir(here)
    _lay_out(here, case.places)
    args = list(case.args)
    if any("{run}" in a for a in args) or "{waiting}" in args:
        run = _waiting_run(here)
        args = [a.replace("{run}", run) for a in args]
        args = [str(here / "承認 待ち" / "承認 待ち.yaml") if a == "{waiting}" else a for a in args]
    result = runner.invoke(app, args, env={"COLUMNS": "100"})
    as_json = "--json" in args
    code, message, hint, found = _error_of(result.stdout, result.stderr, as_json=as_json)
    found += wrong_in(result.stdout + result.stderr if not as_json else message + "\n" + hint)
    found += ending_problems(result, must_fail=case.must_fail)
    if "INTERNAL_ERROR" in code:
        found.append("INTERNAL_ERROR")
    if result.exit_code != 0 and not hint.strip():
        found.append("no hint")
    if result.exit_code != 0 and case.names and case.names not in message:
        found.append(f"{case.names} not named")
    return found


def test_the_generator_covers_what_test_bad_inputs_lacks() -> None:
    kinds = {case.kind.split(": ")[-1].removesuffix(", json") for case in CASES}
    assert kinds >= {"an empty folder", "UTF-16", "a mistyped id", "a label", "a file for a folder"}
    assert {case.command for case in CASES} >= {"plan dry-run", "helpdesk ingest", "blocks show"}
    assert sum(case.kind.endswith(", json") for case in CASES) > 100
    assert len(CASES) > 300


@pytest.mark.parametrize(
    "command", sorted({case.command for case in CASES}), ids=lambda command: command
)
def test_a_mistake_is_answered_in_japanese_with_a_hint(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_HELPDESK_INDEX", str(tmp_path / "ない 索引"))  # not made here
    cases = [case for case in CASES if case.command == command]
    assert_none_wrong(cases, wrong_of, isolated(tmp_path, monkeypatch))
