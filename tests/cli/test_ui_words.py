"""What Streamlit writes to standard error under ``keiri-agent ui`` reaches the accountant in
Japanese: known messages translated, a traceback, a warning or an unknown message said in a
Japanese sentence (Streamlit's English kept aside for the record file, never shown), nothing
dropped. The texts below are Streamlit 1.x's own (captured from
``streamlit run``); the launcher itself is run in ``tests/ui/test_launch.py``."""

from __future__ import annotations

import os
import re
import threading
import time

from keiri_agent.cli.ui_words import Said, StreamlitWords, japanese, split_messages
from tests.support.english import cli_words, english_of

WAIT_S = 30.0
PORT = "2026-12-06 14:19:29.210 Port 8501 is not available"
UNCAUGHT = """\
2026-12-06 14:30:01.125 ERROR   streamlit.runtime.scriptrunner.exec_code: Uncaught app execution
Traceback (most recent call last):
  File "/app/views/home.py", line 12, in render
    total = int(value)
            ^^^^^^^^^^
ValueError: invalid literal for int() with base 10: '①'"""
UNKNOWN = "2026-12-06 14:30:02.000 WARNING streamlit.web.server: Something new happened"
PY_WARNING = """\
/venv/lib/python3.11/site-packages/pandas/core/frame.py:123: FutureWarning: DataFrame.applymap has been deprecated.
  return self.map(func)"""
USAGE = """\
Usage: streamlit run [OPTIONS] [TARGET] [ARGS]...
Try 'streamlit run --help' for help.

Error: Got unexpected extra argument (x)"""
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def test_messages_are_grouped_by_where_they_start() -> None:
    lines = "\n".join([PORT, UNCAUGHT, UNKNOWN, PY_WARNING, USAGE]).splitlines()

    assert split_messages(lines) == [PORT, UNCAUGHT, UNKNOWN, PY_WARNING, USAGE]


def test_each_message_is_said_in_japanese_and_its_english_kept_aside() -> None:
    said = [japanese(m) for m in (PORT, UNCAUGHT, UNKNOWN, PY_WARNING, USAGE)]

    assert said[0] == Said(
        "ポート 8501 は他のプログラムが使っているため、画面を起動できません。"
        "--port で別の番号を指定するか、そのプログラムを終了してください。",
        True,
    )
    assert said[1] == Said("画面（Streamlit）でエラーが起きました（ValueError）。", True, UNCAUGHT)
    assert said[2] == Said("画面（Streamlit）からメッセージがありました。", False, UNKNOWN)
    assert said[3] == Said(
        "注意: 画面のライブラリが警告を出しました（FutureWarning、"
        "/venv/lib/python3.11/site-packages/pandas/core/frame.py の 123 行目）。",
        False,
        PY_WARNING,
    )
    assert said[4] == Said(
        "streamlit run がコマンドラインを受け付けませんでした。"
        "keiri-agent ui の後ろに書いた Streamlit のオプションを確認してください。",
        True,
        USAGE,
    )
    assert all(JAPANESE.search(s.text) and "\n" not in s.text for s in said)
    assert [english_of(s.text, allowed=cli_words()) for s in said] == [[]] * len(said)


def test_the_reader_says_every_message_and_a_lone_one_after_a_quiet_moment() -> None:
    """A message followed by nothing (the app goes on serving) is said without waiting for the
    process to end; at the end every message has been said, none twice."""
    read, write = os.pipe()
    shown: list[Said] = []
    changed = threading.Condition()

    def show(said: Said) -> None:
        with changed:
            shown.append(said)
            changed.notify_all()

    with os.fdopen(read, "rb") as stream:
        words = StreamlitWords(stream, show)
        os.write(write, (UNKNOWN + "\n").encode())
        with changed:
            assert changed.wait_for(lambda: len(shown) == 1, WAIT_S), shown
        os.write(write, "\n".join([PORT, PORT, UNCAUGHT, ""]).encode())
        os.close(write)
        words.close(WAIT_S)

    assert [s.text for s in shown] == [
        japanese(UNKNOWN).text,
        japanese(PORT).text,
        japanese(UNCAUGHT).text,
    ]
    assert words.errors == 2


def test_a_message_cut_by_the_end_of_the_output_is_still_said() -> None:
    read, write = os.pipe()
    shown: list[Said] = []
    with os.fdopen(read, "rb") as stream:
        words = StreamlitWords(stream, shown.append)
        os.write(write, b'Traceback (most recent call last):\n  File "x.py", line 1\n')
        os.close(write)
        started = time.monotonic()
        words.close(WAIT_S)

    assert time.monotonic() - started < WAIT_S
    assert shown == [
        Said(
            "画面（Streamlit）でエラーが起きました。",
            True,
            'Traceback (most recent call last):\n  File "x.py", line 1',
        )
    ]
