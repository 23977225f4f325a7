"""``--help`` and command-line mistakes in Japanese, whole at any terminal width.

Typer's help (Rich panels) cuts Japanese descriptions with "…" at any width and speaks
English around them ("Usage", "Options", "Show this message and exit.", "[required]"); Click's
errors are English too ("No such option: --runs-dir"). Typer carries its own copy of Click
(``typer._click``, private): parameters and errors are read here by what they hold (Click's
``param_type_name``, an error's class name and attributes), never by that module's classes.

Every command of ``keiri-agent`` draws its help here instead: 使い方, the description, 引数,
オプション and コマンド, each text folded to the terminal's width by display cells (a
full-width character is two), never cut, with a closing bracket or punctuation mark kept on
the line it closes and an opening bracket moved to the line it opens (a light 禁則). A
command-line mistake (:func:`usage_error`) becomes a ``BlockError`` with a Japanese message,
the hint to use ``--help``, and Click's own English words in ``details["original"]``.
"""

from __future__ import annotations

import inspect
import math
import re
import shutil
import typing
from collections.abc import Sequence
from typing import Any, Final

from rich.cells import cell_len
from typer import BadParameter, TyperException
from typer.core import TyperCommand, TyperGroup

from keiri_agent.errors import BlockError, input_error

__all__ = [
    "HELP_OPTION_TEXT",
    "MIN_WIDTH",
    "HelpMixin",
    "KeiriCommand",
    "KeiriSubGroup",
    "help_text",
    "usage_error",
    "wrap",
]

NOT_FINITE: Final = "有限の数値を指定してください（nan・inf は使えません）"
MIN_WIDTH: Final = 40  # narrower terminals are treated as this wide
MAX_NAME_CELLS: Final = 26  # an option's name column; a longer name puts its text below
HELP_OPTION_TEXT: Final = "この説明を表示して終了します。"
TYPE_NAMES: Final = {
    "integer": "整数",
    "float": "数値",
    "text": "文字列",
    "path": "パス",
    "file": "ファイル",
    "directory": "フォルダ",
    "boolean": "はい/いいえ",
}
PYTHON_TYPES: Final = {"int": "integer", "float": "float", "str": "text", "Path": "path"}
# Characters that may not begin a line (closing brackets and punctuation).
_NO_LINE_START: Final = set("、。，．）」』】〕］｝〉》・ー：；？！)]},.:;?!%")
# Characters that may not end a line (opening brackets): they move to the next line.
_NO_LINE_END: Final = set("（「『【〔［｛〈《([{")
_TOKEN: Final = re.compile(r"[\x21-\x7e]+|\s+|.", re.DOTALL)
_LAST_WORD: Final = re.compile(r"[\x21-\x7e]+$")


def wrap(text: str, width: int) -> list[str]:
    """``text`` folded into lines of at most ``width`` display cells: ASCII words stay whole
    unless longer than a line, Japanese breaks between characters, nothing is left out."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for token in _TOKEN.findall(paragraph):
            if token.isspace():
                if line:
                    line += " "
                continue
            while cell_len(token) > width:  # a word longer than a line: split it
                room = width - cell_len(line)
                head = _fit(token, room if room > 0 else width)
                if room <= 0:
                    lines.append(line.rstrip())
                    line = ""
                    head = _fit(token, width)
                lines.append((line + head).rstrip())
                line, token = "", token[len(head) :]
            if cell_len(line + token) > width and line:
                head, line = _break(line, token)
                if head:
                    lines.append(head)
            line += token
        lines.append(line.rstrip())
    return lines


def _break(line: str, token: str) -> tuple[str, str]:
    """Where a full ``line`` ends before ``token``: the line, and what goes on to the next one.

    A closing mark may not begin the next line and an opening bracket may not end this one,
    so the last characters (or ASCII word) of the line move on with ``token``; a line that
    would be left empty stays as it is.
    """
    head, tail = line.rstrip(), ""
    while head and ((tail or token)[0] in _NO_LINE_START or head[-1] in _NO_LINE_END):
        word = _LAST_WORD.search(head)
        unit = word.group(0) if word else head[-1]
        head, tail = head[: -len(unit)], unit + tail
        if head.endswith(" "):  # the space before what moved: the next line starts there
            head, tail = head.rstrip(), " " + tail
    if not head:
        return line.rstrip(), ""
    spaced = tail and line.endswith(" ")
    return head, tail.lstrip() + (" " if spaced else "")


def _fit(token: str, cells: int) -> str:
    taken = ""
    for char in token:
        if cell_len(taken + char) > cells:
            break
        taken += char
    return taken or token[0]


def _joined(lines: list[str]) -> str:
    """Lines of one paragraph as one text: a space only between two ASCII words."""
    text = ""
    for line in (part.strip() for part in lines):
        ascii_edge = text[-1:].isascii() and line[:1].isascii() and text and line
        text += (" " if ascii_edge else "") + line
    return text


def _paragraphs(text: str | None) -> list[str]:
    clean = inspect.cleandoc(text or "").replace("\b", "")
    return [_joined(p.split("\n")) for p in re.split(r"\n\s*\n", clean) if p.strip()]


def _is_option(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _metavar(param: Any) -> str:
    """What an option's value is, in Japanese (整数, パス, a|b); none for a flag."""
    if _is_option(param) and (param.is_flag or param.count):
        return ""
    if param.metavar:
        return str(param.metavar)
    desc = getattr(param, "type_descriptor", None)  # Typer's own parameters
    if desc is not None:
        if desc.is_choice and desc.choices:
            return "|".join(str(getattr(c, "value", c)) for c in desc.choices)
        if desc.is_path:
            return TYPE_NAMES["path"]
        annotation = desc.annotation
        if desc.is_list and typing.get_args(annotation):  # list[str]: the type of one value
            annotation = typing.get_args(annotation)[0]
        name = getattr(annotation, "__name__", "")
        return TYPE_NAMES.get(PYTHON_TYPES.get(name, ""), "値")
    name = str(getattr(getattr(param, "type", None), "name", "") or "").lower()
    return TYPE_NAMES.get(name, "値")


def _extras(param: Any) -> str:
    notes = []
    if param.required:
        notes.append("必須")
    default = param.default
    shown = getattr(param, "show_default", False)
    flag = _is_option(param) and param.is_flag
    if shown and not flag and not callable(default) and default not in (None, "", [], ()):
        value = ", ".join(map(str, default)) if isinstance(default, list | tuple) else default
        notes.append(f"既定: {value}")
    return f"（{'、'.join(notes)}）" if notes else ""


def _rows(rows: Sequence[tuple[str, str]], width: int) -> list[str]:
    """Two columns: names, then their text folded beside them (or below a long name)."""
    name_cells = min(max((cell_len(n) for n, _ in rows), default=0), MAX_NAME_CELLS)
    text_width = max(width - name_cells - 4, MIN_WIDTH // 2)
    lines = []
    for name, text in rows:
        folded = wrap(text, text_width) if text else [""]
        if cell_len(name) > name_cells:
            lines.append(f"  {name}")
            lines += [f"  {' ' * name_cells}  {part}".rstrip() for part in folded]
            continue
        pad = " " * (name_cells - cell_len(name))
        lines.append(f"  {name}{pad}  {folded[0]}".rstrip())
        lines += [f"  {' ' * name_cells}  {part}".rstrip() for part in folded[1:]]
    return lines


def _usage(command: Any, ctx: Any) -> str:
    pieces = " ".join(command.collect_usage_pieces(ctx))
    pieces = re.sub(r"\{([^{}]+)\}", r"\1", pieces).replace("[OPTIONS]", "[オプション]")
    pieces = pieces.replace("COMMAND [ARGS]...", "コマンド [引数]...")
    return f"使い方: {ctx.command_path} {pieces}".rstrip()


def _argument_name(param: Any) -> str:
    return str(param.metavar or str(param.name).upper())


def help_text(command: Any, ctx: Any, width: int | None = None) -> str:
    """The whole help of ``command`` (see the module docstring)."""
    width = max(width or shutil.get_terminal_size().columns, MIN_WIDTH)
    lines = [*wrap(_usage(command, ctx), width), ""]
    for paragraph in _paragraphs(command.help):
        lines += [*wrap(paragraph, width), ""]
    params = command.get_params(ctx)
    arguments = [
        (_argument_name(p), str(getattr(p, "help", "") or "") + _extras(p))
        for p in params
        if _is_argument(p)
    ]
    if arguments:
        lines += ["引数:", *_rows(arguments, width), ""]
    options = []
    for param in params:
        if not _is_option(param) or param.hidden:
            continue
        names = ", ".join([*param.opts, *param.secondary_opts])
        options.append(
            (f"{names} {_metavar(param)}".strip(), str(param.help or "") + _extras(param))
        )
    if options:
        lines += ["オプション:", *_rows(options, width), ""]
    entries = []
    for name in command.list_commands(ctx) if hasattr(command, "list_commands") else []:
        sub = command.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        first = _paragraphs(sub.short_help or sub.help)
        entries.append((name, first[0] if first else ""))
    if entries:
        lines += ["コマンド:", *_rows(entries, width), ""]
    return "\n".join(lines).rstrip() + "\n"


class HelpMixin:
    """A command whose help is :func:`help_text` and whose ``--help`` says so in Japanese."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(help_text(self, ctx))

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.help = HELP_OPTION_TEXT
        return option


class KeiriCommand(HelpMixin, TyperCommand):
    """Every ``keiri-agent`` command. A number option refuses ``nan`` and ``inf``, which Click
    reads as numbers: no count, day or second is one, and every comparison with ``nan`` is
    false, so a check such as "at least 1 day" would let it through."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        params: list[Any] = list(self.params)  # Typer's parameters, as Click's
        for param in params:
            value = ctx.params.get(param.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise BadParameter(NOT_FINITE, ctx=ctx, param=param)
        return rest


class KeiriSubGroup(HelpMixin, TyperGroup):
    """A command group (``keiri-agent plan ...``)."""


# Typer's own checks of a path parameter (the file must exist, be readable, ...): the path and
# what is wrong with it are only in its English message.
_PATH_PROBLEM: Final = re.compile(
    r"(?:file|dir|path) '(?P<path>.*)' (?P<what>does not exist|is a file|is a directory"
    r"|is not readable|is not writable)\.$"
)
_PATH_WORDS: Final = {
    "does not exist": "はありません",
    "is a file": "はファイルです（フォルダを指定してください）",
    "is a directory": "はフォルダです（ファイルを指定してください）",
    "is not readable": "を読む権限がありません",
    "is not writable": "に書き込む権限がありません",
}
_EXTRA_ARGS: Final = re.compile(r"Got unexpected extra arguments? \((.*)\)")
_NO_COMMAND: Final = re.compile(r"No such command '([^']+)'")
_DID_YOU_MEAN: Final = re.compile(r"Did you mean '([^']+)'")


def _hint(exc: TyperException) -> str:
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "keiri-agent"
    return f"使い方は `{path} --help` で表示できます。"


def _param_name(exc: Any) -> str:
    param, ctx = getattr(exc, "param", None), getattr(exc, "ctx", None)
    if param is not None:
        try:  # Typer's parameters take no context, Click's do
            hint = param.get_error_hint()
        except TypeError:
            hint = param.get_error_hint(ctx)
        return str(hint).replace("'", "")
    hint = getattr(exc, "param_hint", None)
    return hint if isinstance(hint, str) else "指定した値"


def _bad_value(exc: TyperException) -> str:
    """A value the option's type refuses, said by what the type wants.

    Typer converts a value with Pydantic: the ``ValidationError`` it raises is the error's
    cause, and says what was wrong (``llm.field_problems``, in Japanese) and what came. A
    choice lists the values it allows (its own check speaks English: ``'x' is not one of``); a
    path names itself and what is wrong with it (it cannot be read, it is a folder, ...).
    """
    from pydantic import ValidationError

    from keiri_agent.llm.field_problems import field_problems

    name = _param_name(exc)
    cause = exc.__cause__
    problems = field_problems(cause) if isinstance(cause, ValidationError) else []
    given = f"（受け取った値: {problems[0].received}）" if problems else ""
    desc = getattr(getattr(exc, "param", None), "type_descriptor", None)
    if desc is not None and desc.is_choice and desc.choices:
        allowed = " / ".join(str(getattr(c, "value", c)) for c in desc.choices)
        return f"{name} に使えない値です{given}。使える値: {allowed}"
    if problems:
        return f"{name} の値が正しくありません: {problems[0].problem}{given}。"
    if getattr(exc, "message", "") == NOT_FINITE:
        return f"{name} の値が正しくありません: {NOT_FINITE}。"
    if found := _PATH_PROBLEM.match(str(getattr(exc, "message", ""))):
        return f"{name} に指定した {found['path']} {_PATH_WORDS[found['what']]}。"
    return f"{name} の値が正しくありません。"


def _message(exc: TyperException) -> str:
    original = exc.format_message()
    kind = type(exc).__name__
    if kind == "NoSuchOption":
        near = getattr(exc, "possibilities", None)
        also = f"（近いもの: {', '.join(near)}）" if near else ""
        return f"オプション {getattr(exc, 'option_name', '')} はありません{also}。"
    if found := _NO_COMMAND.search(original):
        near = _DID_YOU_MEAN.search(original)
        also = f"（近いもの: {near.group(1)}）" if near else ""
        return f"コマンド {found.group(1)} はありません{also}。"
    if kind == "MissingParameter":
        return f"{_param_name(exc)} を指定してください。"
    if kind == "BadParameter":
        return _bad_value(exc)
    if kind == "BadOptionUsage":
        option = getattr(exc, "option_name", "")
        return f"オプション {option} の指定が正しくありません（値が要るオプションです）。"
    if found := _EXTRA_ARGS.search(original):
        return f"余分な引数があります: {found.group(1)}"
    if original.strip() == "Missing command.":
        return "コマンドを指定してください。"
    if kind == "FileError":
        return f"ファイル {getattr(exc, 'ui_filename', '')} を開けません。"
    return "コマンドラインの指定が正しくありません。"


def usage_error(exc: TyperException) -> BlockError:
    """A command-line mistake in Japanese; Click's English is kept in ``details.original``."""
    return input_error(_message(exc), _hint(exc), original=exc.format_message())
