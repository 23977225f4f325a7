"""Shared pieces of the CLI: the Typer app, consoles, errors and ``--json`` output.

Every failure a command reports goes through :func:`fail`: with ``--json`` it becomes the one
JSON document on stdout (``{"status": "error", "error": {...}}``, where a script and support read
the error's code), otherwise the Japanese message and hint on stderr, the code said in words
(``エラー（承認が必要）: ...``, ``errors.CODE_WORDS``: one set of words per code). An error is shown once per command: :func:`show_error` remembers what it
printed, so an error reported live by a progress line (:func:`progress_printer`) is not printed
again when the command ends. Usage errors (an unknown option, a missing argument) and
unexpected exceptions are reported the same way, in Japanese (:class:`KeiriGroup`): no Python
traceback and no library's English on the screen.

A command that calls a model checks its key with :func:`require_llm` before it loads anything
heavy, so a missing key is reported at start-up speed (budget: benchmarks/cli_start.py).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup
from typer.models import CommandFunctionType

from keiri_agent import __version__
from keiri_agent.cli.help import HelpMixin, KeiriCommand, KeiriSubGroup, usage_error
from keiri_agent.cli.japanese_text import JapaneseText
from keiri_agent.errors import (
    BlockError,
    ErrorCode,
    LLMError,
    cause_of,
    check_choice,
    code_word,
    input_error,
    reason_of,
)

if TYPE_CHECKING:
    from keiri_agent.config import LLMRole, Settings
    from keiri_agent.events.models import RunEvent

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_USER_ERROR",
    "JsonFlag",
    "KeiriGroup",
    "ShownCount",
    "WrappingTable",
    "app",
    "check_category",
    "check_choice",
    "command_group",
    "console",
    "count_option",
    "echo_json",
    "err_console",
    "error_document",
    "fail",
    "forget_shown_errors",
    "interrupted_error",
    "node_shown",
    "option_form_error",
    "progress_printer",
    "require_llm",
    "save_record",
    "show_error",
    "unexpected_error",
    "user_errors",
    "wants_json",
]

EXIT_FAILED = 1
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
TRACEBACK_PREFIX = "keiri-agent-error-"  # a saved record's file name, in the temp folder
JSON_FLAG = "--json"

console = Console()
err_console = Console(stderr=True)


@dataclass
class _Invocation:
    """What one command line asked for, and the errors already shown to its user."""

    as_json: bool = False
    shown: set[tuple[str, str]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


_current = _Invocation()


def _json_token(args: Sequence[str]) -> bool:
    tokens = list(args)
    if "--" in tokens:
        tokens = tokens[: tokens.index("--")]
    return JSON_FLAG in tokens


def _has_json_option(command: Any) -> bool:
    return command is not None and any(
        JSON_FLAG in getattr(param, "opts", ()) for param in command.params
    )


def wants_json() -> bool:
    """True when the running command was given ``--json`` (its stdout is one JSON document)."""
    return _current.as_json


def echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def error_document(error: BlockError) -> dict[str, Any]:
    """The JSON document of a command that failed before it had a result to print.

    An agent's error may carry what its turn had already produced in ``details["turn"]``
    (runs, charts, files, in the keys of its result): those go to the top level, next to
    ``status`` and ``error``, so a script finds them where a successful run puts them.
    """
    status = "cancelled" if error.code == ErrorCode.CANCELLED else "error"
    data = error.to_dict()
    produced = data["details"].get("turn")
    if not isinstance(produced, Mapping):
        return {"status": status, "error": data}
    data["details"] = {k: v for k, v in data["details"].items() if k != "turn"}
    return {**produced, "status": status, "error": data}


def show_error(error: BlockError, node_name: Callable[[str], str] | None = None) -> None:
    """The Japanese message, node and hint on stderr, once per command (nothing under --json,
    where the command's JSON document carries the error). ``node_name`` names a plan's node as
    its progress lines do (``表の読み込み``); the id follows, for ``--from`` and the YAML."""
    if _current.as_json:
        return
    key = (str(error.code), error.message)
    with _current.lock:
        if key in _current.shown:
            return
        _current.shown.add(key)
    err_console.print(
        Text.assemble(("エラー", "bold red"), f"（{code_word(error.code)}）: {error.message}"),
        soft_wrap=True,
    )
    if node := str(error.details.get("node_id") or ""):
        shown = node_shown(node, node_name(node) if node_name else node)
        err_console.print(f"ノード: {shown}", markup=False, soft_wrap=True)
    if error.hint:
        err_console.print(f"ヒント: {error.hint}", markup=False, soft_wrap=True)


def node_shown(node: str, name: str) -> str:
    """A plan's node for a person: its name, then its id (for ``--from`` and the YAML)."""
    return node if name == node else f"{name}（{node}）"


def forget_shown_errors() -> None:
    """Let :func:`show_error` show every error again (a new turn of an interactive session)."""
    with _current.lock:
        _current.shown.clear()


def fail(error: BlockError, exit_code: int = EXIT_USER_ERROR) -> NoReturn:
    """Report ``error`` (JSON document or Japanese text) and end the command with ``exit_code``."""
    if _current.as_json:
        echo_json(error_document(error))
    else:
        show_error(error)
    raise typer.Exit(code=exit_code)


def interrupted_error(hint: str = "") -> BlockError:
    return BlockError(
        "中断しました（Ctrl-C）。",
        code=ErrorCode.CANCELLED,
        hint=hint or "もう一度実行してください。",
    )


@contextmanager
def user_errors(
    *,
    llm_exit_code: int = EXIT_USER_ERROR,
    on_ctrl_c: Callable[[], BlockError | None] | None = None,
) -> Iterator[None]:
    """Report a BlockError (no traceback) and exit: 2 for what the user can fix, and
    ``llm_exit_code`` for an LLM call that failed after its retries.

    With ``on_ctrl_c``, Ctrl-C ends the command too (exit code 130): ``on_ctrl_c`` stops the
    work and returns the error to report (None: the plain "interrupted" one).
    """
    try:
        yield
    except LLMError as exc:
        fail(exc, llm_exit_code)
    except BlockError as exc:
        fail(exc, EXIT_USER_ERROR)
    except KeyboardInterrupt:
        if on_ctrl_c is None:
            raise
        fail(on_ctrl_c() or interrupted_error(), EXIT_INTERRUPTED)


def require_llm(role: LLMRole | str, settings: Settings | None = None) -> Settings:
    """The settings (``settings``, else loaded afresh), once the model of ``role`` can be called.

    A command that will call a model checks here, after its own argument checks and before it
    imports or loads anything heavy (its pipeline, LangChain, pandas, a knowledge base): a missing
    key is the ``CredentialsMissingError`` the first call of ``role`` (a chat role, the first one
    the command calls) would raise, reported in start-up time and with nothing written.
    """
    from keiri_agent.config import LLMRole, load_settings

    settings = settings if settings is not None else load_settings()
    role = LLMRole(role)
    ref = settings.model_for(role)
    if ref is not None:  # always, for a chat role (they fall back to KEIRI_LLM_MODEL)
        settings.require_credentials(ref.provider, purpose=role.value)
    return settings


def _event_error(event: RunEvent) -> BlockError | None:
    """The error a progress event reports as final: an agent's ``error`` event or a node that
    failed for good (not one that will be retried)."""
    data = event.model_dump()
    if event.event not in ("error", "node_error") or data.get("will_retry"):
        return None
    error = data.get("error")
    if not isinstance(error, Mapping):
        return None
    found = BlockError.from_dict(dict(error))
    if event.node_id and event.event == "node_error":
        found.details.setdefault("node_id", event.node_id)
    return found


def progress_printer(
    describe: Callable[[RunEvent], str | None], node_name: Callable[[str], str] | None = None
) -> Callable[[RunEvent], None]:
    """A run listener printing one dim stderr line per event ``describe`` words, and errors
    with their hint through :func:`show_error` (so the command's last word does not repeat
    them; ``node_name`` names a plan's node there as ``describe`` does)."""

    def show(event: RunEvent) -> None:
        error = _event_error(event)
        if error is not None:
            show_error(error, node_name)
            return
        line = describe(event)
        if line is not None:
            err_console.print(line, style="dim", markup=False, highlight=False, soft_wrap=True)

    return show


def check_category(category: str | None, categories: Sequence[str], kind: str) -> None:
    """Refuse a ``--category`` filter that names none of ``categories`` (of blocks, templates)."""
    if category is not None:
        check_choice(
            "--category",
            category,
            categories,
            message=f"カテゴリ '{category}' の{kind}はありません。",
            hint=f"カテゴリ: {', '.join(categories) or 'なし'}",
        )


def option_form_error(option: str, value: str, form: str, hint: str) -> BlockError:
    """The one error for a ``NAME=VALUE`` option given in another form (``--var``, ``--input``,
    ``--bind``): ``form`` is how the option is written, ``hint`` an example with its parts."""
    return input_error(
        f"{option} '{value}' は {form} の形ではありません。",
        hint,
        **{option.removeprefix("--"): value},
    )


class WrappingTable(Table):
    """A table whose cells wrap onto more lines, never cut with "…", at any terminal width.

    Rich breaks lines at spaces, as for English; a cell of text is folded as Japanese is set
    instead (``cli.japanese_text``: between Japanese characters, never inside a Latin word that
    fits, no space left at a line's end), and a word too wide for its column is folded.
    """

    def add_column(self, header: Any = "", *args: Any, **kwargs: Any) -> None:
        kwargs["overflow"] = "fold"
        kwargs["no_wrap"] = False
        super().add_column(header, *args, **kwargs)

    def add_row(self, *renderables: Any, **kwargs: Any) -> None:
        cells = [JapaneseText.of(c) if isinstance(c, str | Text) else c for c in renderables]
        super().add_row(*cells, **kwargs)


class KeiriTyper(typer.Typer):
    """A Typer app whose commands draw their help in Japanese (``cli.help``)."""

    def command(  # Typer's own keywords, with our default class
        self, name: str | None = None, **kwargs: Any
    ) -> Callable[[CommandFunctionType], CommandFunctionType]:
        kwargs.setdefault("cls", KeiriCommand)
        return super().command(name, **kwargs)


class KeiriGroup(HelpMixin, TyperGroup):
    """The top-level group: notes whether ``--json`` was asked for; shows command-line mistakes
    in Japanese (``cli.help.usage_error``, Click's English in the details), as a JSON document
    for a ``--json`` command; reports a ``BlockError`` that no command caught (a path checked
    as the command line is read: ``cli.paths``) as what it says, and an unexpected exception as
    any failure (:func:`unexpected_error`: Japanese, the traceback saved to a file)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            result = super().main(
                args, prog_name, complete_var, False, windows_expand_args, **extra
            )
        except typer.TyperException as exc:  # Click's usage and parameter errors
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help itself, as Click shows it
                typer.echo(exc.format_message(), err=True)
            else:
                _report_usage(exc)
            sys.exit(int(getattr(exc, "exit_code", EXIT_USER_ERROR)))
        except typer.Abort:
            err_console.print("中止しました。", markup=False)
            sys.exit(EXIT_FAILED)
        sys.exit(result if isinstance(result, int) else 0)

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        global _current
        _current = _Invocation(as_json=_json_token(args))
        return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):  # main() reports a mistake
            raise
        except BlockError as exc:  # a path the command line gives checked as it is read
            fail(exc, EXIT_USER_ERROR)  # (``cli.paths``), or any failure said in Japanese
        except Exception as exc:
            fail(unexpected_error(exc), EXIT_FAILED)


def save_record(text: str, record: Path | None = None) -> Path:
    """``text`` (a library's own words: a traceback, an English message) added to ``record``,
    or to a new file of its own in the temp folder; the file's path, for a message to name."""
    if record is not None:
        with record.open("a", encoding="utf-8") as out:
            out.write(text)
        return record
    handle, name = tempfile.mkstemp(prefix=TRACEBACK_PREFIX, suffix=".txt")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    return Path(name)


def unexpected_error(exc: Exception) -> BlockError:
    """An exception no command turned into a ``BlockError``, said in Japanese.

    Python's traceback and the library's English never reach the screen: the reason is
    ``reason_of`` (an OSError by its errno, with the path it names), the traceback is saved to
    a file whose path the hint gives, for a bug report; the library's words stay in
    ``details["cause"]``.
    """
    saved = save_record(traceback.format_exc())
    paths = [str(p) for p in (getattr(exc, "filename", None), getattr(exc, "filename2", None)) if p]
    if len(paths) == 2 and _is_staging_of(Path(paths[0]), Path(paths[1])):
        paths = paths[1:]  # an atomic write's own temporary file: the user named the target
    where = f"（{' → '.join(paths)}）" if paths else ""
    report = f"不具合として報告してください（エラーの記録: {saved}）。"
    hint = f"指定したファイルやフォルダを確かめてください。解決しなければ{report}"
    return BlockError(
        f"コマンドを実行できませんでした{where}: {reason_of(exc)}",
        code=ErrorCode.INTERNAL_ERROR,
        hint=hint if isinstance(exc, OSError) else report,
        details={"cause": cause_of(exc), "traceback_file": str(saved)},
    )


def _is_staging_of(source: Path, target: Path) -> bool:
    """Whether ``source`` is the hidden temporary file an atomic write of ``target`` renames
    (``.name.xxxx.tmp`` beside it)."""
    same_folder = source.absolute().parent == target.absolute().parent
    return same_folder and source.name.startswith(f".{target.name}.")


def _report_usage(exc: typer.TyperException) -> None:
    """A command-line mistake: a JSON document for a ``--json`` command, else the Japanese
    message and hint on stderr (Click's own English only in the JSON document's
    ``details.original``)."""
    error = usage_error(exc)
    context = getattr(exc, "ctx", None)
    if _current.as_json and _has_json_option(getattr(context, "command", None)):
        echo_json(error_document(error))
        return
    show_error(error)


app = KeiriTyper(
    name="keiri-agent",
    help="keiri-agent: 経理などバックオフィス業務のための LLM ワークベンチ。",
    no_args_is_help=True,
    add_completion=False,
    cls=KeiriGroup,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]


def count_option(name: str, help: str) -> Any:
    """An option that counts what is shown or searched (``--k``, ``--limit``): a whole number,
    at least 1; a smaller one is refused as the command line is read, in Japanese
    (``--k の値が正しくありません: 1 以上にしてください（受け取った値: "0"）。``)."""
    return typer.Option(name, min=1, help=help)


ShownCount = Annotated[int, count_option("--k", "表示する件数。")]


def command_group(name: str, help: str) -> KeiriTyper:
    """The sub-command group ``keiri-agent NAME ...``, added to the top-level app."""
    group = KeiriTyper(help=help, no_args_is_help=True, cls=KeiriSubGroup)
    app.add_typer(group, name=name)
    return group


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"keiri-agent {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="バージョンを表示して終了します。",
        ),
    ] = False,
) -> None:
    """keiri-agent: 経理などバックオフィス業務のための LLM ワークベンチ。"""
