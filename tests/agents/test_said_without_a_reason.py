"""Property: a failed code run whose exception holds no words is still said usefully in Japanese.

Scripts on ledgers often stop with an exception that has nothing a line can quote: a key that is
an empty or blank string (``df[""]``, a header cell left empty; ``KeyError: ''``), or an
``assert`` whose message is the table it checked (``assert df.empty, df``, a Series, the
column types, a numpy array). The generator writes such programs over Japanese column names
and cells, runs them, and reads each failure as ``sandbox run`` says it
(``failure_words.failure_said``) and as the progress lines say it (``execlog.error_summary`` of
the stderr the model is shown). A line is wrong when it shows an empty 「」, a row of the
printed value, pandas' ``dtype`` footer, or does not start with what went wrong.
"""

from __future__ import annotations

import random
from string import Template

from keiri_agent.agents.execlog import error_summary
from keiri_agent.sandbox.failure_words import failure_said, kind_said
from tests.cli.test_sandbox_failure_words import CELLS, COLUMNS, _raised

SEED = 1515
FRAME = "df = pd.DataFrame({'$column': ['$cell', '$other'], '金額': [$amount, -$amount]})\n"
# Each shape: a program that stops with an exception carrying no words of its own.
SHAPES: dict[str, str] = {
    "an empty key": "d = {'$column': 1}\nd['']\n",
    "a blank key": "d = {'$column': 1}\nd['$blank']\n",
    "an empty column name": FRAME + "df['']\n",
    "a blank column name": FRAME + "df['$blank'].sum()\n",
    "a frame as the message": FRAME + "assert df.empty, df\n",
    "the head of a frame": FRAME + "assert (df['金額'] > 0).all(), df.head()\n",
    "a column as the message": FRAME + "assert df['金額'].min() >= 0, df['金額']\n",
    "the rows that break it": FRAME + "bad = df[df['金額'] < 0]\nassert bad.empty, bad\n",
    "the column types": FRAME + "assert df['金額'].dtype == object, df.dtypes\n",
    "an empty frame": FRAME + "hit = df[df['$column'] == '無']\nassert not hit.empty, hit\n",
    "a numpy array": FRAME + "a = df[['金額']].to_numpy()\nassert (a > 0).all(), a\n",
    "a long frame": "df = pd.DataFrame({'$column': range(100)})\nassert df.empty, df\n",
    "a frame raised as a value error": FRAME + "raise ValueError(df)\n",
}


def _cases() -> list[tuple[str, str]]:
    rng = random.Random(SEED)
    cases = []
    for name, shape in SHAPES.items():
        for _ in range(20):
            code = Template(shape).substitute(
                column=rng.choice(COLUMNS),
                cell=rng.choice(CELLS),
                other=rng.choice(CELLS),
                amount=rng.randrange(1, 10**7),
                blank=" " * rng.randint(1, 3) if rng.random() < 0.7 else "\u3000",
            )
            cases.append((name, code))
    return cases


CASES = _cases()


def _rows(message: str) -> list[str]:
    """The lines of the value ``message`` prints, after its first (the header), one space
    between words: what a line must not quote."""
    lines = [" ".join(line.split()) for line in message.splitlines() if line.strip()]
    return lines[1:]


def _wrong(said: str, kind: str, message: str) -> list[str]:
    found = []
    flat = " ".join(said.split())
    if "「」" in said or "「 」" in said:
        found.append("an empty 「」")
    if "dtype" in said:
        found.append("dtype")
    found += [f"row {row!r}" for row in _rows(message) if row and row in flat]
    if not said.startswith(kind_said(kind)):
        found.append("not what went wrong first")
    return found


def test_the_generator_makes_every_shape_fail() -> None:
    failures = [_raised(code) for _, code in CASES]
    assert len(CASES) >= 200
    assert {failure.type for failure in failures} >= {"KeyError", "AssertionError", "ValueError"}
    assert sum(len(_rows(failure.message)) > 0 for failure in failures) > 100


def test_an_exception_without_words_is_said_usefully() -> None:
    wrong: dict[str, list[str]] = {}
    for number, (name, code) in enumerate(CASES):
        failure = _raised(code)
        stderr = "\n".join([f"{failure.type}: {failure.message}", *failure.traceback])
        for how, said in (
            ("sandbox run", failure_said(failure)),
            ("progress", error_summary(stderr)),
        ):
            if found := _wrong(said, failure.type, failure.message):
                wrong[f"{name} #{number} ({how})"] = [*found, said]
    assert wrong == {}, f"{len(wrong)} of {2 * len(CASES)} lines: {wrong}"
