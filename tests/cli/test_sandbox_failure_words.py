"""Property: a script that stops with an exception is said in Japanese by ``sandbox run``.

Scripts back offices write on their ledgers stop in the same few ways: a total divided by a
month with no sales, a column the export names differently, ``int("1,200円")``, a 全角 number, a
date that does not exist, a CSV line with one field too many, a file under another name, a CP932
file read as UTF-8, a merge on a key that repeats. The generator writes such programs over
Japanese column names and cell values, runs each in this process to get the exception Python
really raises (class name and English message, what the sandbox worker reports), and
``sandbox run`` shows it with the executor answering that failure. Nothing of Python's English
may reach the screen (``division by zero``, ``could not convert string to float``), the line
must not start with a class name (``失敗: ZeroDivisionError: ...``), and the values the message
quotes (the column, the cell) are shown. A few programs run in the real sandbox as well.
"""

from __future__ import annotations

import json
import random
import re
import traceback
from datetime import UTC, datetime
from pathlib import Path
from string import Template

import pytest
from click.testing import Result

from keiri_agent.agents.analysis import progress as analysis_progress
from keiri_agent.agents.convert import progress as convert_progress
from keiri_agent.cli import app
from keiri_agent.cli.common import EXIT_FAILED
from keiri_agent.events import CodeExec
from keiri_agent.sandbox.outcome import ExecutionFailure, ExecutionOutcome
from tests.cli.test_no_library_english import library_english, runner

COLUMNS = ("売上高", "勘定科目", "取引先名", "税込金額", "部門コード", "摘要")
CELLS = ("1,200円", "△500", "１２００", "¥3,000", "(1,200)", "－", "12,000-", "約3千")
SETUP = "import pandas as pd, numpy as np, json, math, datetime, decimal, io\n"

# Each shape: a program that stops with an exception, $column and $cell filled in.
SHAPES: dict[str, str] = {
    "a month with no sales": "件数 = {'4月': 0}\n率 = 100 / 件数['4月']\n",
    "a column the export names otherwise": (
        "df = pd.DataFrame({'金額': [1]})\ndf['$column'].sum()\n"
    ),
    "a dict key": "d = {'金額': 1}\nd['$column']\n",
    "a name never set": "合計 = $column + 1\n",
    "text plus a number": "'$cell' + 5\n",
    "a number plus text": "5 + '$cell'\n",
    "a blank cell added": "x = None\nx + 1\n",
    "int of a formatted amount": "int('$cell')\n",
    "float of a formatted amount": "float('$cell')\n",
    "to_numeric of a column": "pd.to_numeric(pd.Series(['100', '$cell']))\n",
    "a date that does not exist": "datetime.date(2026, 2, 30)\n",
    "a wareki date to_datetime": "pd.to_datetime(pd.Series(['令和8年2月3日']))\n",
    "a row past the end": "行 = [1, 2]\n行[5]\n",
    "iloc past the end": "pd.DataFrame({'$column': [1]}).iloc[10]\n",
    "a method of a number": "x = 1200\nx.strip()\n",
    "a column as an attribute": "df = pd.DataFrame({'金額': [1]})\ndf.$column\n",
    "a file under another name": "open('$column.csv')\n",
    "CP932 bytes as UTF-8": "'$column'.encode('cp932').decode('utf-8')\n",
    "broken JSON": "json.loads('{$column: 1')\n",
    "Decimal of a formatted amount": "decimal.Decimal('$cell')\n",
    "a CSV line too long": "pd.read_csv(io.StringIO('$column,b\\n1,2\\n3,4,5,6\\n'))\n",
    "an empty CSV": "pd.read_csv(io.StringIO(''))\n",
    "a merge on a repeated key": (
        "a = pd.DataFrame({'$column': [1, 1]})\nb = pd.DataFrame({'$column': [1]})\n"
        "a.merge(b, on='$column', validate='one_to_one')\n"
    ),
    "blanks made integers": "pd.Series([1.0, None]).astype('int64')\n",
    "a date out of range": "pd.Timestamp('1500-01-01').as_unit('ns')\n",
    "a format field missing": "'{$column}円'.format(金額=1)\n",
    "round of text": "round('$cell')\n",
    "sum of texts": "sum(['$cell', '2'])\n",
    "arrays of other lengths": "np.array([1, 2]) + np.array([1, 2, 3])\n",
    "a huge exponent": "math.exp(1000)\n",
    "no next value": "next(iter([]))\n",
    "a recursion without end": "def f(n):\n    return f(n + 1)\nf(0)\n",
    "an assert without a message": "assert 1 == 2\n",
    "an assert with a Japanese message": "assert False, '$columnの合計が合いません'\n",
    "the script's own Japanese error": "raise ValueError('$columnが負です')\n",
    "the script's own English error": "raise RuntimeError('closing failed')\n",
    "a class of the script's own": (
        "class 締め日エラー(Exception):\n    pass\nraise 締め日エラー('period is closed')\n"
    ),
    "sys.exit with a code": "import sys\nsys.exit(3)\n",
    "an ambiguous truth of a column": "if pd.Series([1, 2]):\n    pass\n",
    "a string index on a list": "行 = [1, 2]\n行['$column']\n",
}


def _raised(code: str) -> ExecutionFailure:
    """The exception ``code`` really raises, as the worker reports it (type, message, line)."""
    try:
        exec(compile(SETUP + code, "<script>", "exec"), {})  # our own test programs
    except BaseException as exc:  # SystemExit too: the worker reports it
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<script>"]
        line = frames[-1].lineno - SETUP.count("\n") if frames and frames[-1].lineno else None
        shown = SETUP.splitlines() + code.splitlines()
        where = [f"{line} 行目: {shown[frames[-1].lineno - 1].strip()}"] if line else []
        return ExecutionFailure(type=type(exc).__name__, message=str(exc), traceback=where)
    raise AssertionError(f"the program did not fail: {code!r}")


def _cases() -> list[tuple[str, str]]:
    rng = random.Random(3612)
    cases = []
    for name, shape in SHAPES.items():
        for _ in range(3):
            code = Template(shape).substitute(column=rng.choice(COLUMNS), cell=rng.choice(CELLS))
            cases.append((name, code))
    return cases


CASES = _cases()


class _Answers:
    """The sandbox executor, answering ``failure`` (the CLI's rendering is what is tested)."""

    failure: ExecutionFailure

    def run(self, *args: object, **kwargs: object) -> ExecutionOutcome:
        return ExecutionOutcome(success=False, error=self.failure, profile="analysis")

    def close(self) -> None:
        return None


def _without_code(shown: str, code: str) -> str:
    for line in sorted(code.splitlines(), key=len, reverse=True):
        if line.strip():
            shown = shown.replace(line.strip(), " ")
    return shown


def test_the_generator_raises_many_kinds() -> None:
    kinds = {_raised(code).type for _, code in CASES}
    assert len(CASES) >= 120
    assert len(kinds) >= 20, kinds


def _flat(text: str) -> str:
    """``text`` without white space: the console wraps long lines at its width, which is fixed
    by whichever test made the console first."""
    return "".join(text.split())


def _sandbox_run(tmp_path: Path, code: str, *more: str) -> Result:
    """``keiri-agent sandbox run`` on ``code`` (a console wide enough for any line)."""
    program = tmp_path / "script.py"
    program.write_text(code, encoding="utf-8")
    args = ["sandbox", "run", str(program), "--workdir", str(tmp_path / "work"), *more]
    return runner.invoke(app, args, env={"COLUMNS": "400"})


def test_a_failed_script_is_said_in_japanese(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = _Answers()
    monkeypatch.setattr("keiri_agent.sandbox.SandboxExecutor", lambda: answers)
    wrong: dict[str, list[str]] = {}
    for name, code in CASES:
        answers.failure = failure = _raised(code)
        result = _sandbox_run(tmp_path, "pass\n")  # the executor answers the failure
        assert result.exit_code == EXIT_FAILED, result.stderr
        shown = result.stdout + result.stderr
        found = library_english(_without_code(shown, code))
        first = result.stderr.splitlines()[0]
        if re.match(r"失敗: [A-Za-z_][\w.]*: ", first):
            found.append(f"class name first: {first}")
        # the first value the message quotes (a class's repr names no value)
        quoted = re.findall(r"'([^']+)'", re.sub(r"<class '[^']*'>", "", failure.message))[:1]
        if quoted and quoted[0] not in "".join(shown.split()):
            found.append(f"quoted value not shown: {quoted[0]}")
        if found:
            wrong[f"{name}: {code!r} ({failure.type}: {failure.message})"] = found
    assert wrong == {}, f"{len(wrong)} of {len(CASES)} scripts: " + "\n".join(
        f"{where}: {found}" for where, found in wrong.items()
    )


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("x = 1 / 0\n", "失敗: 0 で割っています（ZeroDivisionError）"),
        (
            "d = {'金額': 1}\nd['売上高']\n",
            "失敗: 表や辞書にない列名・キーを使っています: 「売上高」",
        ),
        ("raise ValueError('税込金額が負です')\n", "失敗: 税込金額が負です"),
    ],
)
def test_the_sandbox_says_a_script_failure_in_japanese(
    code: str, said: str, tmp_path: Path
) -> None:
    result = _sandbox_run(tmp_path, code)
    assert result.exit_code == EXIT_FAILED
    assert _flat(said) in _flat(result.stderr)
    assert library_english(_without_code(result.stderr, code)) == []
    # Python's own words stay in --json: the worker reports what Python raises here too
    as_json = json.loads(_sandbox_run(tmp_path, code, "--json").stdout)
    raised = _raised(code)
    assert (as_json["error"]["type"], as_json["error"]["message"]) == (raised.type, raised.message)


def test_a_policy_violation_is_said_once_without_its_class_name(tmp_path: Path) -> None:
    result = _sandbox_run(tmp_path, "import 経理ツール\n")
    assert result.exit_code == EXIT_FAILED
    assert _flat("中断: 安全ポリシーに達しました") in _flat(result.stderr)
    assert "PolicyViolation" not in result.stderr
    said = _flat("モジュール '経理ツール' の import は許可されていません")
    assert _flat(result.stderr).count(said) == 1


def test_the_progress_line_of_a_failed_analysis_step_is_japanese() -> None:
    """``analyze`` and the データ分析 page quote the failed step's error (what the model was
    shown: ``Type: message`` and the code's lines) in their progress line."""
    wrong = {}
    for name, code in CASES:
        failure = _raised(code)
        stderr = "\n".join([f"{failure.type}: {failure.message}", *failure.traceback])
        event = CodeExec(
            id=1, run_id="run", timestamp=datetime.now(UTC), stderr=stderr, success=False
        )
        for describe in (analysis_progress.describe_event, convert_progress.describe_event):
            line = describe(event) or ""
            found = library_english(_without_code(line, code))
            if re.search(r"[（(][A-Za-z_][\w.]*: ", line):
                found.append(f"class name first: {line}")
            if found:
                wrong[f"{name}: {failure.type}: {failure.message}"] = found
    assert wrong == {}, f"{len(wrong)} of {len(CASES)} scripts: {wrong}"
