"""Property: the line a person reads about a failed code run says what happened in Japanese.

``execlog.error_summary`` makes the ``実行: 失敗（…）`` line of ``analyze``, the CLI's
conversion and the pages (the server's ``reason``) from the failed run's stderr. The generator
writes programs over Japanese column names and cells that stop the way scripts on ledgers stop:
pandas, numpy, decimal and datetime errors, exceptions whose class carries a module path
(``pandas.errors.ParserError``, numpy's ``_ArrayMemoryError``), classes not named ``…Error``
(``InvalidOperation``, ``OutOfBoundsDatetime``, ``StopIteration``, ``KeyboardInterrupt``),
warnings a script turned into errors, chained exceptions ("During handling of the above
exception…"), messages of several lines (a table printed into the message), a script's own
classes. It runs them all in one Python subprocess, which reports for each what the code wrote
to stderr (warnings), Python's own traceback (what ``python script.py`` prints) and the
sandbox worker's report (class, message, the code's lines). Each program's failure is then read
in the shapes a run's stderr has: the analysis agent's (what the code printed, then the error
the model is shown), that shape after a traceback or an English line the code printed itself,
and Python's own traceback.

A summary is wrong when it shows English a person cannot read (the class name in brackets and
the values the message quotes are not English here), starts with a class name, or quotes the
code instead of saying what happened.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from string import Template
from typing import Any

import pytest

from keiri_agent.agents.analysis.graph import _with_error
from keiri_agent.agents.execlog import MAX_ERROR_LINE, error_summary
from tests.cli.test_sandbox_failure_words import CELLS, COLUMNS, SETUP, SHAPES
from tests.support.english import english_of

ROOT = Path(__file__).resolve().parents[2]
SEED = 1414

MORE_SHAPES: dict[str, str] = {
    "a Decimal divided by zero": "decimal.Decimal(1200) / decimal.Decimal(0)\n",
    "a Decimal quantized past its precision": (
        "decimal.Decimal('1e30').quantize(decimal.Decimal('0.01'))\n"
    ),
    "strptime of a formatted date": "datetime.datetime.strptime('$cell', '%Y/%m/%d')\n",
    "a date before 1677 in nanoseconds": "pd.to_datetime(['1500-01-01']).as_unit('ns')\n",
    "a period too long": "pd.Timedelta(days=10**6).as_unit('ns')\n",
    "an interrupt": "raise KeyboardInterrupt\n",
    "next past the end": "行 = iter(['$column'])\nnext(行)\nnext(行)\n",
    "a numpy warning made an error": (
        "import warnings\nwarnings.simplefilter('error')\nnp.float64(1200) / 0\n"
    ),
    "a numpy invalid value made an error": (
        "import warnings\nwarnings.simplefilter('error')\nnp.sqrt(np.float64(-1))\n"
    ),
    "a library warning made an error": (
        "import warnings\nwarnings.simplefilter('error')\n"
        "warnings.warn('closing period is still open', UserWarning)\n"
    ),
    "a deprecation made an error": (
        "import warnings\nwarnings.simplefilter('error')\n"
        "warnings.warn('this argument is deprecated', FutureWarning)\n"
    ),
    "a chained error of the script's own": (
        "try:\n    {'金額': 1}['$column']\nexcept KeyError as e:\n"
        "    raise ValueError('$columnを集計できません') from e\n"
    ),
    "an English error while handling another": (
        "try:\n    1200 / 0\nexcept ZeroDivisionError:\n"
        "    raise RuntimeError('rate could not be computed')\n"
    ),
    "numpy out of memory": "np.zeros((10**6, 10**6))\n",
    "text plus a number in numpy": "np.array(['$cell']) + np.array([1])\n",
    "a singular matrix": "np.linalg.inv(np.zeros((2, 2)))\n",
    "a query on a column that is not there": (
        "pd.DataFrame({'金額': [1]}).query('存在しない列 > 0')\n"
    ),
    "too many indexers": "pd.Series([1]).iloc[0, 1]\n",
    "a table in a Japanese message": (
        "df = pd.DataFrame({'$column': [1, 2], '摘要': ['家賃', '通信費']})\n"
        "raise ValueError(f'合計が合いません:\\n{df}')\n"
    ),
    "a table in an English message": (
        "df = pd.DataFrame({'$column': [1, 2]})\nraise ValueError(f'totals do not match:\\n{df}')\n"
    ),
    "an assert that shows a table": "df = pd.DataFrame({'$column': [1]})\nassert df.empty, df\n",
    "columns that are not there": "pd.DataFrame({'金額': [1]})[['$column', '摘要']]\n",
    "column names of another length": (
        "df = pd.DataFrame({'a': [1, 2]})\ndf.columns = ['$column', '摘要']\n"
    ),
    "an xlsx that is not one": "pd.read_excel(io.BytesIO('$column'.encode()), engine='openpyxl')\n",
    "a broken CSV quote": "import csv\nlist(csv.reader(['\"$column'], strict=True))\n",
    "an error with a note": "e = ValueError('$cell')\ne.add_note('while reading row 3')\nraise e\n",
    "a class of the script's own with an English name": (
        "class ClosedPeriod(Exception):\n    pass\nraise ClosedPeriod('period 2026-03 is closed')\n"
    ),
    "sys.exit with a Japanese message": "import sys\nsys.exit('$columnが見つかりません')\n",
    "an error without a message": "raise ValueError\n",
    "a warning printed, then an error": (
        "import warnings\nwarnings.warn('$column has mixed types', UserWarning)\n"
        "{'金額': 1}['$column']\n"
    ),
}

# Run in a fresh interpreter: each program, with what it writes to stderr, Python's traceback
# and the sandbox worker's report of its exception.
RUNNER = r"""
import contextlib, io, json, sys, traceback, warnings
from keiri_agent.sandbox.worker import USER_CODE_FILENAME, _error_report

results = []
for setup, code in json.load(sys.stdin):
    printed = io.StringIO()
    source = setup + code
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(printed):
            warnings.simplefilter("always")
            exec(compile(source, USER_CODE_FILENAME, "exec"), {"__name__": "__main__"})
    except BaseException as exc:
        report = _error_report(exc, source.splitlines())
        python = "".join(traceback.format_exception(exc))
        results.append({"printed": printed.getvalue(), "python": python, "report": report})
    else:
        results.append(None)
print(json.dumps(results, ensure_ascii=False))
"""
PRINTED_ENGLISH = "Processing 3 files...\n"


def _programs() -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    programs = []
    for name, shape in {**SHAPES, **MORE_SHAPES}.items():
        for _ in range(3):
            code = Template(shape).substitute(column=rng.choice(COLUMNS), cell=rng.choice(CELLS))
            programs.append((name, code))
    return programs


@pytest.fixture(scope="module")
def failures() -> list[tuple[str, str, dict[str, Any]]]:
    programs = _programs()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    ran = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps([[SETUP, code] for _, code in programs], ensure_ascii=False),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    results = json.loads(ran.stdout)
    did_not_fail = [code for (_, code), result in zip(programs, results, strict=True) if not result]
    assert did_not_fail == []
    return [(name, code, result) for (name, code), result in zip(programs, results, strict=True)]


def _stderrs(result: dict[str, Any], other: str, rng: random.Random) -> dict[str, str]:
    """The stderr of the failed run in each shape it has."""
    report = result["report"]
    error = "\n".join([f"{report['type']}: {report['message']}", *report["traceback"]])
    printed = str(result["printed"])
    before = rng.choice((other, PRINTED_ENGLISH))  # the code's own earlier output
    return {
        "analysis": _with_error(printed, [error]),
        "analysis after printed text": _with_error(before + printed, [error]),
        "python": printed + str(result["python"]),
    }


def wrong_in(summary: str, code: str) -> list[str]:
    """What is wrong with ``summary`` of the failure of ``code``."""
    shown = re.sub(r"（[^（）]*）$", "", summary)  # the class name in brackets
    # the values the message quotes, unless a value is itself English
    shown = re.sub(r"「([^「」]*)」", lambda m: m[0] if english_of(m[1]) else " ", shown)
    found = english_of(shown)
    if re.match(r"[A-Za-z_][\w.]*: ", summary):
        found.append("class name first")
    if re.match(r"\d+ 行目: ", summary) or any(
        len(line.strip()) > 8 and line.strip() in summary for line in code.splitlines()
    ):
        found.append("the code quoted")
    if not re.search(r"[\u3040-\u30ff\u3400-\u9fff]", summary):
        found.append("no Japanese")
    if len(summary) > MAX_ERROR_LINE + 1 or "\n" in summary:
        found.append("not one line")
    return found


def test_the_generator_fails_in_many_kinds_and_shapes(
    failures: list[tuple[str, str, dict[str, Any]]],
) -> None:
    kinds = {str(result["report"]["type"]) for _, _, result in failures}
    pythons = [str(result["python"]) for _, _, result in failures]
    assert len(failures) >= 200
    assert len(kinds) >= 35, kinds
    assert sum("During handling of the above exception" in p for p in pythons) >= 3
    assert sum("The above exception was the direct cause" in p for p in pythons) >= 3
    assert any("pandas.errors." in p for p in pythons)
    assert any("_ArrayMemoryError" in p for p in pythons)
    messages = [str(result["report"]["message"]) for _, _, result in failures]
    assert any(len(message.splitlines()) > 2 for message in messages)
    assert any("Warning" in str(result["printed"]) for _, _, result in failures)


def test_a_failed_run_is_summarised_in_japanese(
    failures: list[tuple[str, str, dict[str, Any]]],
) -> None:
    rng = random.Random(SEED)
    wrong: dict[str, list[str]] = {}
    total = 0
    for n, (name, code, result) in enumerate(failures):
        other = str(failures[(n + 7) % len(failures)][2]["python"])
        for shape, stderr in _stderrs(result, other, rng).items():
            total += 1
            summary = error_summary(stderr)
            found = wrong_in(summary, code)
            if found:
                wrong[f"{n} {name} / {shape}: {summary}"] = found
    assert total >= 600
    assert wrong == {}, f"{len(wrong)} of {total} summaries: " + "\n".join(
        f"{where}: {found}" for where, found in wrong.items()
    )


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        (
            "InvalidOperation: [<class 'decimal.ConversionSyntax'>]\n1 行目: Decimal('1,200円')",
            "Decimal で計算できない値です（InvalidOperation）",
        ),
        (
            'Traceback (most recent call last):\n  File "<user_code>", line 1, in <module>\n'
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.28 TiB for an array",
            "メモリが足りません（_ArrayMemoryError）",
        ),
        (
            'Traceback (most recent call last):\n  File "<user_code>", line 1, in <module>\n'
            "    next(行)\nStopIteration",
            "繰り返しの値がもうありません（StopIteration）",
        ),
        (
            "ValueError: 合計が合いません:\n   売上高 摘要\n0  1  家賃\n3 行目: raise ValueError(…)",
            "合計が合いません: 売上高 摘要 0 1 家賃",
        ),
        (
            "printed\n中断: メモリの上限に達しました（1.20 秒）",
            "中断: メモリの上限に達しました（1.20 秒）",
        ),
        ("Processing 3 files...", "コードの実行中にエラーが起きました"),
    ],
)
def test_the_summary_of_a_failed_run(stderr: str, said: str) -> None:
    assert error_summary(stderr) == said
