"""Shared pieces of the CLI: the Typer app, consoles, and Japanese error display."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console

from keiri_agent import __version__
from keiri_agent.errors import BlockError, ErrorCode

__all__ = [
    "EXIT_FAILED",
    "EXIT_USER_ERROR",
    "app",
    "check_choice",
    "console",
    "err_console",
    "user_errors",
]

app = typer.Typer(
    name="keiri-agent",
    help="keiri-agent: 経理などバックオフィス業務のための LLM ワークベンチ。",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()
err_console = Console(stderr=True)
EXIT_FAILED = 1
EXIT_USER_ERROR = 2


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a BlockError as its Japanese message and hint (no traceback) and exit non-zero."""
    try:
        yield
    except BlockError as exc:
        err_console.print(f"[bold red]エラー[/bold red] [{exc.code}] {exc.message}", markup=True)
        if exc.hint:
            err_console.print(f"ヒント: {exc.hint}")
        raise typer.Exit(code=EXIT_USER_ERROR) from None


def check_choice(option: str, value: str, choices: Sequence[str]) -> None:
    """Refuse ``value`` for ``option`` (``--mode``) unless it is one of ``choices``."""
    if value not in choices:
        raise BlockError(
            f"{option} '{value}' は使えません。",
            code=ErrorCode.INPUT_VALIDATION_FAILED,
            hint=f"{' / '.join(choices)} のいずれかを指定してください。",
            details={option.lstrip("-"): value},
        )


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
