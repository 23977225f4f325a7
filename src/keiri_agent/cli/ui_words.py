"""What Streamlit writes to standard error while ``keiri-agent ui`` runs it, said in Japanese.

Streamlit's standard error carries its logger's warnings and errors (a line starting with the
time, maybe followed by more lines), the command-line mistakes of ``streamlit run`` (click's
``Usage:`` … ``Error: …`` block) and Python's tracebacks and warnings. None of it may reach an
accountant in English: :class:`StreamlitWords` groups the lines into messages (a message ends
where the next one starts, at the end of the output, or after :data:`MESSAGE_QUIET_S` without a
line) and :func:`japanese` says each in Japanese: the known ones by the table
:data:`KNOWN_MESSAGES`, a traceback, a warning or an unknown message as a Japanese sentence
saying what kind of message it is (with the exception's or warning's class name, a name, not
English); the message's own English is kept in :attr:`Said.original` for the command to save to
a file it names, never shown. Nothing is dropped: a real failure always shows.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Final

__all__ = [
    "KNOWN_MESSAGES",
    "MESSAGE_QUIET_S",
    "Said",
    "StreamlitWords",
    "japanese",
    "split_messages",
]

# A message's last line may be followed by more of it (a traceback under a log line); after this
# long without a new line it is complete. Streamlit writes one message in one go, well within it.
MESSAGE_QUIET_S: Final = 0.5

# Where a message starts: a log line (Streamlit's default format begins with the time), a
# traceback, click's usage block, or a Python warning (``path:line: SomethingWarning: text``).
_LOG_LINE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[.,]\d{3}\s?(?P<rest>.*)")
_LEVEL = re.compile(r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+[\w.]+:\s?(?P<text>.*)", re.S)
_STARTS = (
    _LOG_LINE,
    re.compile(r"Traceback \(most recent call last\):"),
    re.compile(r"Usage: "),
    re.compile(r".+:\d+: \w*Warning: .*"),
)
# A traceback's last line: the exception's class and its text.
_EXCEPTION = re.compile(
    r"(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): ?(?P<text>.*)"
)
_WARNING = re.compile(r"(?P<where>.+):(?P<line>\d+): (?P<type>\w*Warning): (?P<text>.*)")


@dataclass(frozen=True)
class Said:
    """A message of Streamlit in Japanese; ``error``: it reports a failure; ``original``: the
    message as Streamlit wrote it when the Japanese does not say all of it (kept, not shown)."""

    text: str
    error: bool
    original: str = ""


def _port(match: re.Match[str]) -> Said:
    return Said(
        f"ポート {match['port']} は他のプログラムが使っているため、画面を起動できません。"
        f"--port で別の番号を指定するか、そのプログラムを終了してください。",
        True,
    )


def _no_option(match: re.Match[str]) -> Said:
    known = re.findall(r"'(--[\w.]+)'", match["rest"] or "")
    close = f"（近いもの: {'、'.join(known)}）" if known else ""
    return Said(
        f"streamlit run にオプション {match['option']} はありません{close}。"
        "keiri-agent ui の後ろに書いた Streamlit のオプションを確認してください。",
        True,
    )


_VALUE_KINDS: Final = {"integer": "整数", "float": "数値", "boolean": "true か false"}


def _bad_value(match: re.Match[str]) -> Said:
    kind = _VALUE_KINDS.get(match["kind"], match["kind"])
    return Said(
        f"streamlit run のオプション {match['option']} の値「{match['value']}」が正しくありません"
        f"（{kind}を指定してください）。",
        True,
    )


def _open_cors(match: re.Match[str]) -> Said:
    return Said(
        "注意: server.enableCORS=false のため、ほかのサイトのページからもこの画面に接続できます。"
        "接続元を限るには server.enableCORS=true にして、信頼する接続元を "
        "server.corsAllowedOrigins に書いてください。",
        False,
    )


# Streamlit's messages a person may meet, by a pattern of their English, and what they mean.
KNOWN_MESSAGES: Final[tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Said]], ...]] = (
    (re.compile(r"Port (?P<port>\d+) is (?:not available|already in use)"), _port),
    (
        re.compile(r"Error: No such option '(?P<option>[^']+)'\.?(?P<rest>.*)", re.S),
        _no_option,
    ),
    (
        re.compile(
            r"Error: Invalid value for '(?P<option>[^']+)'.*?: '(?P<value>[^']*)' is not a "
            r"valid (?P<kind>\w+)",
            re.S,
        ),
        _bad_value,
    ),
    (re.compile(r"'server\.enableCORS=false' tells Streamlit"), _open_cors),
)


def japanese(message: str) -> Said:
    """``message`` (one of :func:`split_messages`) in Japanese."""
    for pattern, say in KNOWN_MESSAGES:
        found = pattern.search(message)
        if found is not None:
            return say(found)
    lines = [line for line in message.splitlines() if line.strip()]
    if not lines:
        return Said("", False)
    logged = _LOG_LINE.fullmatch(lines[0])
    level = _LEVEL.match(logged["rest"]) if logged is not None else None
    raised = next((m for m in map(_EXCEPTION.fullmatch, reversed(lines)) if m), None)
    if raised is not None and (message.startswith("Traceback") or logged is not None):
        return Said(f"画面（Streamlit）でエラーが起きました（{raised['type']}）。", True, message)
    if message.startswith("Traceback"):  # cut before its exception's line
        return Said("画面（Streamlit）でエラーが起きました。", True, message)
    if message.startswith("Usage: "):
        return Said(
            "streamlit run がコマンドラインを受け付けませんでした。"
            "keiri-agent ui の後ろに書いた Streamlit のオプションを確認してください。",
            True,
            message,
        )
    warned = _WARNING.fullmatch(lines[0])
    if warned is not None:
        return Said(
            f"注意: 画面のライブラリが警告を出しました（{warned['type']}、"
            f"{warned['where']} の {warned['line']} 行目）。",
            False,
            message,
        )
    error = level is not None and level["level"] in ("ERROR", "CRITICAL")
    label = "エラー" if error else "メッセージ"
    return Said(f"画面（Streamlit）から{label}がありました。", error, message)


def split_messages(lines: Iterable[str]) -> list[str]:
    """``lines`` (without their line ends) grouped into Streamlit's messages."""
    messages: list[list[str]] = []
    for line in lines:
        if not messages or any(start.match(line) for start in _STARTS):
            if messages and _continues(messages[-1], line):
                messages[-1].append(line)
                continue
            messages.append([line])
        else:
            messages[-1].append(line)
    return ["\n".join(m) for m in messages]


def _continues(message: list[str], line: str) -> bool:
    """A traceback right under a log line belongs to it (``logger.exception``)."""
    return line.startswith("Traceback") and bool(_LOG_LINE.match(message[0]))


class StreamlitWords:
    """Reads a Streamlit process's standard error in a thread and hands each message, in
    Japanese, to ``show``; :meth:`close` waits for the last one (the process has ended)."""

    def __init__(self, stream: IO[bytes], show: Callable[[Said], None]) -> None:
        self._stream = stream
        self._show = show
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.errors = 0  # messages that reported a failure
        self._last = ""
        self._reader = threading.Thread(target=self._read, name="streamlit-stderr", daemon=True)
        self._teller = threading.Thread(target=self._tell, name="streamlit-words", daemon=True)
        self._reader.start()
        self._teller.start()

    def _read(self) -> None:
        try:
            for raw in iter(self._stream.readline, b""):
                self._lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        finally:
            self._lines.put(None)

    def _tell(self) -> None:
        pending: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=MESSAGE_QUIET_S if pending else None)
            except queue.Empty:
                self._say(split_messages(pending))
                pending = []
                continue
            if line is None:
                self._say(split_messages(pending))
                return
            pending.append(line)
            *complete, last = split_messages(pending)
            if complete:
                self._say(complete)
                pending = last.splitlines()

    def _say(self, messages: list[str]) -> None:
        for message in messages:
            said = japanese(message)
            if said.text and said.text != self._last:  # the same fact logged twice is said once
                self.errors += said.error
                self._last = said.text
                self._show(said)

    def close(self, timeout: float | None = None) -> None:
        """Wait until every message of the ended process has been shown."""
        self._reader.join(timeout)
        self._teller.join(timeout)
