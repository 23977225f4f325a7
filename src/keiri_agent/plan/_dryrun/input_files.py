"""What a dry run says of the files a plan's blocks will read, when it is asked to look.

A block spec marks the input ports that read a file (``path: read``). A dry run runs no block,
but the path such a port is given by the plan itself (written in the plan, or from its
``vars``, ``env`` or ``config``: not an upstream node's sample) is known: when the caller hands
the dry run the run's :class:`~keiri_agent.file_access.FileAccess`, each such path is looked
up as the run will, and one that is not there (or is a folder, for a port that reads files of
named types: its ``accept``) is a ``DRY_RUN_INPUT_FILE`` finding naming the port and the path.
The run would stop at that node. A caller whose paths are placeholders (a plan being
designed) does not ask.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.errors import BlockError
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._dsl.refs import iter_references

__all__ = ["input_file_problems"]

PLAN_ROOTS = frozenset({"vars", "env", "config"})  # what the plan itself gives


def input_file_problems(
    spec: BlockSpec,
    raw: Mapping[str, Any],
    rendered: Mapping[str, Any],
    from_sample: set[str],
    files: FileAccess,
) -> Iterator[tuple[str, str, str]]:
    """``(port, message, hint)`` for each file a ``path: read`` port of ``spec`` will not find.

    ``raw``: the node's inputs as written; ``rendered``: their values; ``from_sample``: the
    ports whose value is a sample (a null var), not a path the user gave."""
    for port, mode in spec.path_inputs().items():
        if mode != "read" or port not in raw or port in from_sample:
            continue
        if not _plan_given(raw[port]):
            continue
        value = rendered.get(port)
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and text.strip():
                problem = _problem(spec, port, text, files)
                if problem is not None:
                    yield port, *problem


def _plan_given(raw: Any) -> bool:
    """Whether ``raw`` is written in the plan or built from its vars, env and config only."""
    try:
        return all(ref.root in PLAN_ROOTS for _, ref in iter_references(raw))
    except BlockError:  # a malformed reference: the rendering reports it
        return False


def _problem(spec: BlockSpec, port: str, text: str, files: FileAccess) -> tuple[str, str] | None:
    name = f"{spec.port_label(port)}（{port}）"
    try:
        path = files.read(text, port)
    except BlockError as exc:  # a place the run may not read
        return f"{name}の「{text}」を読めません: {exc.message}", exc.hint
    if not path.exists():
        return (
            f"{name}に指定した「{text}」がありません（実行するとこのノードで止まります）。",
            "ファイルの名前と保存場所を確かめてください。別のファイルを使うなら、"
            "その設定値を --var 名前=パス で指定します。",
        )
    if path.is_dir() and spec.inputs[port].get("accept"):
        return (
            f"{name}に指定した「{text}」はフォルダです（実行するとこのノードで止まります）。",
            f"{spec.inputs[port]['accept']} のファイルまで指定してください。",
        )
    return None
