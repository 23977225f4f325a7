"""Why a program run in the sandbox stopped, said to a person in Japanese.

The worker reports the exception the code raised as Python words it: its class name and its
English message (``ZeroDivisionError: division by zero``, ``KeyError: '売上'``, ``ValueError:
could not convert string to float: '1,200円'``). The person who runs a script with ``keiri-agent
sandbox run`` reads :func:`failure_said` instead: what went wrong in Japanese by the kind of
exception (:data:`KINDS`, by the class's name or its ending; a kind the table does not know is
:data:`GENERIC`), followed by the values the message quotes (the column, the name, the text that
was not a number), which are the code's and the data's own words, and the class name in brackets
for whoever looks it up. A
message already written in Japanese (the sandbox's own: a syntax error, a policy violation; or
the code's own ``raise ValueError("金額が負です")``) is said as it is. Python's English stays in
the outcome (``--json``: ``error.type`` and ``error.message``); the model repairing analysis code
reads it there, not this line.

Two messages hold nothing a line can quote: an empty or blank value (``KeyError: ''`` is a key
that is an empty string, said as 空の文字列, not as an empty 「」), and the printout of a value
(``assert df.empty, df`` raises with a DataFrame's text; a Series, a numpy array): its rows are
data, not a reason, and joined into one line they read as noise, so the line says how many rows
the message printed and leaves them to ``--json``'s ``error.message``.
"""

from __future__ import annotations

import re
from typing import Final

from keiri_agent.sandbox.outcome import ExecutionFailure

__all__ = ["GENERIC", "KINDS", "english_hidden", "failure_said", "kind_said"]

GENERIC: Final = "コードの実行中にエラーが起きました"
# Exception class name -> what went wrong, for the kinds scripts on ledgers stop with (Python's
# built-ins, pandas', numpy's, decimal's and the json module's; warnings a script turned into
# errors). Looked up by the name the worker reports, else by its ending (:func:`kind_said`).
KINDS: Final[dict[str, str]] = {
    "ZeroDivisionError": "0 で割っています",
    "KeyError": "表や辞書にない列名・キーを使っています",
    "NameError": "定義されていない名前を使っています",
    "UnboundLocalError": "値を入れる前の変数を使っています",
    "TypeError": "値の種類が合いません（文字と数値の計算、関数の引数の数など）",
    "ValueError": "値を変換・処理できません",
    "IndexError": "範囲の外の位置を指定しています",
    "AttributeError": "その値にない属性やメソッドを使っています",
    "FileNotFoundError": "ファイルが見つかりません",
    "IsADirectoryError": "ファイルではなくフォルダーを開こうとしています",
    "NotADirectoryError": "フォルダーではないものをフォルダーとして使っています",
    "PermissionError": "このファイルは開けません（作業ディレクトリの外など）",
    "FileExistsError": "同じ名前のファイルが既にあります",
    "OSError": "ファイルなどの操作に失敗しました",
    "ModuleNotFoundError": "モジュールが見つかりません",
    "ImportError": "モジュールから読み込めないものがあります",
    "UnicodeDecodeError": "文字コードが合わず、文字として読めません",
    "UnicodeEncodeError": "この文字コードでは書けない文字があります",
    "OverflowError": "数値が大きすぎて扱えません",
    "RecursionError": "関数の呼び出しが深すぎます（終わらない再帰など）",
    "MemoryError": "メモリが足りません",
    "AssertionError": "assert の条件が成り立ちませんでした",
    "StopIteration": "繰り返しの値がもうありません",
    "NotImplementedError": "まだ作られていない処理を呼んでいます",
    "TimeoutError": "時間内に終わりませんでした",
    "JSONDecodeError": "JSON として読めません",
    "InvalidOperation": "Decimal で計算できない値です",
    "ParserError": "CSV などの表として読めません",
    "EmptyDataError": "読み込んだデータが空です",
    "MergeError": "表を結合できません（キーの重複など）",
    "IntCastingNaNError": "空欄（NaN）を整数にできません",
    "OutOfBoundsDatetime": "日付が扱える範囲の外です",
    "DateParseError": "日付として読めません",
    "InvalidIndexError": "行や列の見出しが重複していて選べません",
    "SettingWithCopyError": "表のコピーに値を入れようとしています",
    "SystemExit": "コードが終了コード付きで終わりました（sys.exit）",
    "KeyboardInterrupt": "実行が中断されました",
    "DivisionByZero": "0 で割っています",
    "OutOfBoundsTimedelta": "期間（日数・時間）が扱える範囲の外です",
    "UndefinedVariableError": "定義されていない名前を使っています",
    "IndexingError": "行や列の指定が表の形に合いません",
    "UFuncNoLoopError": "値の種類が合いません（文字と数値の計算など）",
    "LinAlgError": "行列の計算ができません（逆行列がないなど）",
    "BadZipFile": "Excel（xlsx）などの ZIP 形式のファイルとして読めません",
    "ArrowInvalid": "値を変換・処理できません",
    "RuntimeWarning": "数値計算の警告（0 で割る・桁あふれ・無効な値）がエラーとして扱われ、止まりました",
    "FutureWarning": "将来の版で変わる使い方への警告がエラーとして扱われ、止まりました",
    "DeprecationWarning": "廃止予定の使い方への警告がエラーとして扱われ、止まりました",
    "UserWarning": "ライブラリの警告がエラーとして扱われ、止まりました",
    "SettingWithCopyWarning": "表のコピーに値を入れようとしています（警告がエラーとして扱われました）",
    "DtypeWarning": "列の値の種類が混ざっている警告がエラーとして扱われ、止まりました",
    "PerformanceWarning": "処理が遅くなる使い方への警告がエラーとして扱われ、止まりました",
}
# Python's repr of a value: 'text' or "text" (a key, a name, a cell the message quotes).
_QUOTED: Final = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_JAPANESE_CHARS: Final = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff01-\uff9f"
# A value the message names without quotes: a word with Japanese in it (unable to parse: 令和8年…)
_JAPANESE_WORD: Final = re.compile(rf"[^\s:;,()\[\]]*[{_JAPANESE_CHARS}][^\s:;,()\[\]]*")
# English as Python and libraries write it: words in a row ("division by zero"; a list of names
# such as "pandas, numpy" in the sandbox's own message is not)
_ENGLISH: Final = re.compile(r"\b[A-Za-z]{2,} +[A-Za-z]{2,}\b")
# A class's repr (decimal's "[<class 'decimal.ConversionSyntax'>]"): Python's name, no value
_CLASS_REPR: Final = re.compile(r"<class '[^']*'>")
# The printout of a value: pandas' footers (a Series' ``Name: 金額, dtype: int64``, a frame's
# ``[5 rows x 3 columns]``, an empty frame's ``Columns: [...]``), or columns aligned by spaces
_PRINTOUT_LINE: Final = re.compile(
    r"(?:Name: .*, )?dtype: \S+|\[\d+ rows x \d+ columns\]|Empty DataFrame|(?:Columns|Index): \[.*\]"
    r"|Series\(\[\].*\)"
)
_ALIGNED: Final = re.compile(r"\S {2,}\S|^\s*\[*[-+.\deE ]+\]+$")
_BY_LENGTH: Final = sorted(KINDS, key=len, reverse=True)  # the longest ending first
MAX_QUOTED: Final = 3  # values quoted from one message: the first ones say enough


def english_hidden(failure: ExecutionFailure) -> bool:
    """Whether the message holds Python's or a library's English (its quoted values aside), so
    that :func:`failure_said` says it by its kind."""
    return bool(_ENGLISH.search(_QUOTED.sub(" ", failure.message)))


def failure_said(failure: ExecutionFailure) -> str:
    """One Japanese line (the message's own lines kept) for ``failure``, as the module says."""
    message = _unwrapped(_CLASS_REPR.sub("", failure.message).strip())
    if rows := _printed_rows(message):
        said = f"メッセージに表などの値の中身（{rows} 行）が入っているため、ここでは省きます"
        return f"{kind_said(failure.type)}: {said}（{failure.type}）"
    unquoted = _QUOTED.sub(" ", message)
    english = bool(_ENGLISH.search(unquoted))
    if not english and _JAPANESE_WORD.search(unquoted):
        return message  # the sandbox's own words or the code's
    values = [a or b for a, b in _QUOTED.findall(message)]
    if english:
        values += _JAPANESE_WORD.findall(unquoted)
    elif not values and re.search(r"\w", message):
        values = [message]  # a bare value: KeyError: 3
    shown = "、".join(_value_said(value) for value in dict.fromkeys(values[:MAX_QUOTED]))
    return f"{kind_said(failure.type)}{': ' + shown if shown else ''}（{failure.type}）"


def _value_said(value: str) -> str:
    """A quoted value as a person reads it: in 「」, or what it is when nothing would show."""
    if not value:
        return "空の文字列"
    return f"「{value}」" if value.strip() else f"空白だけの文字列（{len(value)} 文字）"


def _printed_rows(message: str) -> int:
    """How many lines the printout of a value in ``message`` spans (0: it holds none): a
    message of several lines, one of them a pandas footer or most in aligned columns."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) < 2:
        return 0
    aligned = sum(bool(_ALIGNED.search(line)) for line in lines)
    footer = any(_PRINTOUT_LINE.fullmatch(line) for line in lines)
    return len(lines) if footer or 3 * aligned >= 2 * len(lines) else 0


def _unwrapped(message: str) -> str:
    """A message that is one quoted English text as that text: a ``KeyError`` shows its
    argument's repr (``"None of [Index(['売上'])] are in the [columns]"``), not a value."""
    whole = _QUOTED.fullmatch(message)
    inner = whole[1] if whole and whole[1] is not None else whole[2] if whole else None
    return inner if inner and _ENGLISH.search(_QUOTED.sub(" ", inner)) else message


def kind_said(name: str) -> str:
    """What went wrong, for the exception class ``name``: its entry in :data:`KINDS`, else the
    entry its name ends with (numpy's ``_ArrayMemoryError`` is a ``MemoryError``, pyarrow's
    ``ArrowKeyError`` a ``KeyError``), else :data:`GENERIC`."""
    if name in KINDS:
        return KINDS[name]
    return next((KINDS[kind] for kind in _BY_LENGTH if name.endswith(kind)), GENERIC)
