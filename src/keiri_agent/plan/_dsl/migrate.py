"""Migration of legacy UI blocks to ``ui.interactive_input`` (seed 002 §13).

Old plans used ``ui.file_uploader.*`` and ``ui.confirmation.*``. This module rewrites them,
keeping each node's id, and rewrites the references other nodes make to their outputs so the
plan means the same thing afterwards. Accepted legacy shapes (anything else is reported as a
problem, never guessed):

``ui.file_uploader`` and its variants ``.single``/``.file`` (one file), ``.multiple``/
``.files`` (several), ``.zip``, ``.excel``, ``.xlsx``, ``.pdf``, ``.csv`` (default ``accept``)::

    in:  {label?, accept?: ".zip" | [zip, xlsx], multiple?: bool, required?: bool,
          message?, description?}
    out: {file | files | path | paths | uploaded: <alias>}   (one or more of these ports)

becomes ``mode: collect`` with one requirement ``{id: file | files, type: file | files, label,
accept: ".zip,.xlsx", required}`` (``files`` when ``multiple: true`` or a ``.multiple`` variant)
and ``out: {collected_data: <alias>}``, the first alias kept. ``message`` (or ``description``
when there is no message) becomes the node's message; with both, ``description`` describes the
requirement. References ``${node.<alias>...}`` become ``${node.<alias>.<requirement id>...}``;
without ``out``, ``${node.<port>...}`` becomes ``${node.collected_data.<requirement id>...}``.

``ui.confirmation`` and ``ui.confirmation.*``::

    in:  {message, title?, default?: bool}
    out: {approved | confirmed | result: <alias>}

becomes ``mode: confirm``, ``requirements: []``, ``out: {approved: <alias>}``; the title is put
in front of the message, and ``default`` is dropped (a person always chooses), with a note.
References keep working: ``approved`` is a boolean in both blocks.

References are rewritten everywhere (``in``, ``when``, loop ``foreach``/``while``, subflow
inputs, ``exports.from``), in loop bodies too: node ids are unique in a whole plan. Plans
called as subflows are separate files and are migrated one by one. Writing YAML drops comments,
so :func:`migrate_file` writes next to the input unless asked to replace it (with a ``.bak``).
"""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from keiri_agent.byte_place import decode_failure_place, decode_text, where
from keiri_agent.errors import (
    BlockError,
    ErrorCode,
    FileProcessingError,
    cause_of,
    input_error,
    reason_of,
)
from keiri_agent.plan._dsl.issues import format_path
from keiri_agent.plan._dsl.loader import MAX_PLAN_BYTES, load_yaml
from keiri_agent.plan._dsl.models import LEGACY_UI_PREFIXES
from keiri_agent.plan._dsl.refs import Reference, bare_reference, find_references
from keiri_agent.workspace import atomic_path
from keiri_agent.yaml_words import yaml_problem

__all__ = ["MigrationResult", "migrate_file", "migrate_plan", "migrate_text"]

NEW_BLOCK: Final = "ui.interactive_input"
FILE_FAMILY: Final = "ui.file_uploader"
FILE_PORTS: Final = ("file", "files", "path", "paths", "uploaded")
CONFIRM_PORTS: Final = ("approved", "confirmed", "result")
# variant suffix → (requirement type it forces, accept it implies)
FILE_VARIANTS: Final[Mapping[str, tuple[str | None, str | None]]] = {
    "": (None, None), "single": ("file", None), "file": ("file", None),
    "multiple": ("files", None), "files": ("files", None), "zip": (None, ".zip"),
    "excel": (None, ".xlsx,.xlsm,.xls"), "xlsx": (None, ".xlsx"), "pdf": (None, ".pdf"),
    "csv": (None, ".csv"),
}  # fmt: skip
_FILE_INPUTS: Final = frozenset({"label", "accept", "multiple", "required", "message", "description"})  # fmt: skip
_CONFIRM_INPUTS: Final = frozenset({"message", "title", "default"})

Loc = tuple[str | int, ...]
# node id → {name under the node (alias or port) → the segments replacing it}
Rewrites = dict[str, dict[str, tuple[str, ...]]]
Fixer = Callable[[str, Loc], str]


@dataclass
class MigrationResult:
    """The migrated plan (a new dict), one Japanese line per change, and what blocked it.

    ``plan`` is only meant to be used when ``problems`` is empty. :func:`migrate_file` fills
    ``written`` (and ``backup`` for in-place runs) with the files it wrote.
    """

    plan: dict[str, Any]
    changes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    written: Path | None = None
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def migrate_plan(raw: Any) -> MigrationResult:
    """Rewrite the legacy UI nodes of a raw plan mapping; ``raw`` itself is not modified."""
    if not isinstance(raw, Mapping):
        return MigrationResult(
            plan={}, problems=["Plan の内容がマッピング（キー: 値）ではありません。"]
        )
    result = MigrationResult(plan=copy.deepcopy(dict(raw)))
    rewrites: Rewrites = {}
    seen: dict[str, int] = {}
    for node, loc in _nodes(result.plan.get("graph"), ("graph",)):
        node_id = node.get("id")
        seen[str(node_id)] = seen.get(str(node_id), 0) + 1
        block = node.get("block")
        if not isinstance(block, str) or not block.startswith(LEGACY_UI_PREFIXES):
            continue
        where = f"{format_path(loc)}（ノード {node_id}）"
        problems, mapping = _migrate_node(node, block, where, result.changes)
        result.problems += problems
        if not problems and isinstance(node_id, str):
            rewrites[node_id] = mapping
    for node_id in rewrites:
        if seen[node_id] > 1:
            result.problems.append(
                f"ノード ID '{node_id}' が複数あるため、参照をどちらに向けるか決められません。"
            )
    if rewrites:
        result.plan = dict(_rewrite_plan(result.plan, rewrites, result))
    return result


def migrate_text(text: str) -> tuple[str, MigrationResult]:
    """Migrate plan YAML text. Returns the text unchanged when nothing changed or there are
    problems, else the migrated plan dumped as YAML (comments are not kept)."""
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        reason = yaml_problem(exc)
        return text, MigrationResult(plan={}, problems=[f"YAML として解釈できません: {reason}"])
    result = migrate_plan(raw)
    if result.problems or not result.changes:
        return text, result
    return yaml.safe_dump(result.plan, allow_unicode=True, sort_keys=False), result


# --- nodes -----------------------------------------------------------------------------------


def _nodes(graph: Any, loc: Loc) -> list[tuple[dict[str, Any], Loc]]:
    """Every node dict in ``graph`` and the loop bodies within, with its location."""
    found: list[tuple[dict[str, Any], Loc]] = []
    if not isinstance(graph, list):
        return found
    for i, node in enumerate(graph):
        if not isinstance(node, dict):
            continue
        found.append((node, (*loc, i)))
        body = node.get("body")
        plan = body.get("plan") if isinstance(body, dict) else None
        if node.get("type") == "loop" and isinstance(plan, dict):
            found += _nodes(plan.get("graph"), (*loc, i, "body", "plan", "graph"))
    return found


def _migrate_node(
    node: dict[str, Any], block: str, where: str, changes: list[str]
) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """Rewrite ``node`` in place; returns (problems, reference rewrites). With problems the
    node is left as it was."""
    block_id, _, pinned = block.partition("@")
    family, variant = _split(block_id)
    if family is None or (family == FILE_FAMILY and variant not in FILE_VARIANTS):
        return [f"{where}: {block_id} は移行方法が決まっていない旧 UI ブロックです。"], {}
    in_key = "in" if "in" in node or "inputs" not in node else "inputs"
    inputs, out = node.get(in_key) or {}, node.get("out") or {}
    if not isinstance(inputs, dict):
        return [f"{where}: in がマッピングではありません。"], {}
    if not isinstance(out, dict) or not all(isinstance(v, str) for v in out.values()):
        return [f"{where}: out が {{出力名: 別名}} のマッピングではありません。"], {}
    ports = FILE_PORTS if family == FILE_FAMILY else CONFIRM_PORTS
    allowed = _FILE_INPUTS if family == FILE_FAMILY else _CONFIRM_INPUTS
    unknown = [f"in.{k}" for k in inputs if k not in allowed]
    unknown += [f"out.{p}" for p in out if p not in ports]
    if unknown:
        return [f"{where}: {block_id} の {', '.join(unknown)} は移行できません。"], {}
    problems: list[str] = []
    tail: tuple[str, ...]
    if family == FILE_FAMILY:
        new_inputs, rid = _file_inputs(inputs, variant, where, problems)
        summary = f"項目 {rid}（{new_inputs['requirements'][0]['type']}）"
        new_port, tail = "collected_data", (rid,)
    else:
        new_inputs, summary = _confirm_inputs(inputs, where, problems), "承認の確認"
        new_port, tail = "approved", ()
    if problems:
        return problems, {}
    aliases = list(dict.fromkeys(out.values()))
    if aliases:  # the first alias names the new output; the others are folded into it
        new_out = {new_port: aliases[0]}
        mapping = {alias: (aliases[0], *tail) for alias in aliases}
    else:  # unaliased: references name the legacy ports themselves
        new_out = {}
        mapping = {port: (new_port, *tail) for port in ports}
    _replace(node, in_key, {"block": NEW_BLOCK, in_key: new_inputs, "out": new_out})
    pin = f"（版 {pinned} の固定は外しました）" if pinned else ""
    changes.append(f"{where}: {block} → {NEW_BLOCK}（mode: {new_inputs['mode']}、{summary}）{pin}")
    if family != FILE_FAMILY and inputs.get("default") is not None:
        changes.append(
            f"{where}: default: {str(inputs['default']).lower()} は {NEW_BLOCK} にないため"
            "削除しました（承認は毎回人が選びます）。"
        )
    return [], mapping


def _split(block_id: str) -> tuple[str | None, str]:
    """``ui.file_uploader.zip`` → (``ui.file_uploader``, ``zip``); (None, "") if no family."""
    for family in LEGACY_UI_PREFIXES:
        if block_id == family or block_id.startswith(family + "."):
            return family, block_id[len(family) + 1 :]
    return None, ""


def _replace(node: dict[str, Any], in_key: str, new: dict[str, Any]) -> None:
    """Swap keys in place, keeping the node's key order (a readable diff)."""
    items = [(k, new.pop(k) if k in new else v) for k, v in node.items()]
    items += [(k, v) for k, v in new.items() if v or k == in_key]
    node.clear()
    node.update(items)


def _file_inputs(
    inputs: Mapping[str, Any], variant: str, where: str, problems: list[str]
) -> tuple[dict[str, Any], str]:
    forced, implied_accept = FILE_VARIANTS[variant]
    for key in ("multiple", "required"):
        if key in inputs and not isinstance(inputs[key], bool):
            problems.append(f"{where}: {key} は true / false で書いてください（{inputs[key]!r}）。")
    for key in ("label", "message", "description"):
        if inputs.get(key) is not None and not isinstance(inputs[key], str):
            problems.append(f"{where}: {key} は文字列で書いてください。")
    multiple = inputs.get("multiple")
    if forced is not None and multiple is not None and multiple != (forced == "files"):
        problems.append(f"{where}: ブロック名（.{variant}）と multiple: {multiple} が矛盾します。")
    given = inputs.get("accept")
    accept = implied_accept if given is None else _accept(given, where, problems)
    kind = forced or ("files" if multiple else "file")
    rid = kind  # "file" or "files": the key under collected_data
    label = inputs.get("label") or ("ファイル（複数可）" if kind == "files" else "ファイル")
    message, description = inputs.get("message"), inputs.get("description")
    if message is None:
        message, description = description, None
    requirement: dict[str, Any] = {"id": rid, "type": kind, "label": label}
    requirement.update({"description": description} if description else {})
    requirement.update({"accept": accept} if accept else {})
    requirement["required"] = inputs.get("required", True)
    message = message or f"{label}をアップロードしてください。"
    return {"mode": "collect", "message": message, "requirements": [requirement]}, rid


def _accept(value: Any, where: str, problems: list[str]) -> str | None:
    """ ".ZIP, xlsx" or [zip, .xlsx] → ".zip,.xlsx" (the form ui.interactive_input checks)."""
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
        problems.append(f"{where}: accept は拡張子の文字列かリストで書いてください。")
        return None
    exts = []
    for part in filter(None, (p.strip().lower() for p in parts)):
        if any(c in part for c in "/*${"):
            # MIME types, wildcards and references cannot be checked against a file name.
            problems.append(f"{where}: accept の '{part}' は拡張子ではないため移行できません。")
            return None
        exts.append(part if part.startswith(".") else "." + part)
    return ",".join(exts) or None


def _confirm_inputs(inputs: Mapping[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    message, title, default = inputs.get("message"), inputs.get("title"), inputs.get("default")
    for key, value in (("message", message), ("title", title)):
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}: {key} は文字列で書いてください。")
    if not message and not title:
        problems.append(f"{where}: 確認メッセージ（message）がありません。")
    if default is not None and not isinstance(default, bool):
        problems.append(f"{where}: default は true / false で書いてください（{default!r}）。")
    text = f"{title}\n{message}" if title and message else (message or title)
    return {"mode": "confirm", "message": text, "requirements": []}


# --- references ------------------------------------------------------------------------------


def _rewrite_plan(plan: dict[str, Any], rewrites: Rewrites, result: MigrationResult) -> Any:
    def in_text(text: str, loc: Loc) -> str:
        try:
            refs = find_references(text)
        except BlockError:
            if any("${" + node_id in text for node_id in rewrites):
                result.problems.append(
                    f"{format_path(loc)}: 参照式が不正なため書き換えられません。"
                )
            return text
        pieces, last = [], 0
        for ref in refs:
            new = _rewrite_ref(ref, rewrites, loc, result.problems)
            if new is not None:
                result.changes.append(f"{format_path(loc)}: {ref.text} → ${{{new}}}")
                pieces += [text[last : ref.start], "${" + new + "}"]
                last = ref.end
        return "".join([*pieces, text[last:]])

    def export_from(text: str, loc: Loc) -> str:
        # exports.from is a reference written without ${ }.
        try:
            ref = bare_reference(text)
        except BlockError:
            return text
        new = _rewrite_ref(ref, rewrites, loc, result.problems) if ref is not None else None
        if new is not None:
            result.changes.append(f"{format_path(loc)}: {text} → {new}")
        return new or text

    return _walk(plan, (), in_text, export_from)


def _rewrite_ref(ref: Reference, rewrites: Rewrites, loc: Loc, problems: list[str]) -> str | None:
    """The new dotted text of ``ref``, or None when it stays as it is."""
    mapping = rewrites.get(ref.root)
    if mapping is None:
        return None
    head = str(ref.path[0]) if ref.path else None
    if head is None or head not in mapping:
        problems.append(
            f"{format_path(loc)}: 参照 {ref.text} の移行先が決まりません"
            f"（{ref.root} の出力として移行できるのは {', '.join(mapping)} です）。"
        )
        return None
    segments = (ref.root, *mapping[head], *(str(s) for s in ref.path[1:]))
    if ".".join(segments) == ref.dotted:
        return None
    return ".".join(segments) + (".length" if ref.length else "")


def _walk(value: Any, loc: Loc, fix: Fixer, fix_from: Fixer) -> Any:
    """Apply ``fix`` to every string holding ``${``, and ``fix_from`` to the ``from`` of the
    plan's and loop bodies' exports (subflow ``out.exports`` name the called plan's exports)."""
    if isinstance(value, str):
        return fix(value, loc) if "${" in value else value
    if isinstance(value, list):
        return [_walk(v, (*loc, i), fix, fix_from) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    walked = {k: _walk(v, (*loc, str(k)), fix, fix_from) for k, v in value.items()}
    exports = walked.get("exports")
    if (not loc or loc[-2:] == ("body", "plan")) and isinstance(exports, list):
        for i, export in enumerate(exports):
            if isinstance(export, dict) and isinstance(export.get("from"), str):
                export["from"] = fix_from(export["from"], (*loc, "exports", i, "from"))
    return walked


# --- a plan file on disk (``keiri-agent plan migrate``): read, migrate, write atomically ------
# Nothing is written when nothing changed or something cannot be migrated, an in-place migration
# keeps a ``.bak`` copy first, and every write goes through a temporary file and a rename.


def migrate_file(
    path: str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    in_place: bool = False,
) -> MigrationResult:
    """Migrate a plan file, writing ``<stem>.migrated.yaml`` next to it (or ``output``, or the
    file itself after copying it to ``<name>.bak``). Nothing is written when nothing changed;
    with problems a BlockError (INPUT_VALIDATION_FAILED) is raised and nothing is written."""
    source = Path(path)
    if output is not None and in_place:
        raise input_error(
            "出力先の指定と上書き（in_place）は同時に使えません。",
            "どちらか一方だけを指定してください。",
            file=str(source),
            output=str(output),
        )
    data = _read(source)
    try:
        text = decode_text(data, "utf-8-sig")
    except UnicodeDecodeError as exc:
        position, line = decode_failure_place(exc)
        raise FileProcessingError(
            str(source),
            f"{source} は UTF-8 のテキストではなく、{where(position, line)}以降を読めません。",
            hint="Plan ファイルを UTF-8 で保存し直してください。",
            details={"position": position, "line": line},
        ) from exc
    new_text, result = migrate_text(text)
    if result.problems:
        listed = "；".join(result.problems)
        raise input_error(
            f"{source} を移行できません（{len(result.problems)} 件）: {listed}",
            "挙げた箇所を直すか ui.interactive_input に手で書き換えてから、"
            "もう一度実行してください（ファイルは書き込んでいません）。",
            file=str(source),
            problems=list(result.problems),
        )
    if not result.changes:
        return result
    if in_place:
        result.backup = _free_backup(source)
        _write_atomic(result.backup, data, mode_from=source)
        target = source
    else:
        target = (
            Path(output) if output is not None else source.with_name(f"{source.stem}.migrated.yaml")
        )
    _write_atomic(target, new_text.encode("utf-8"), mode_from=source)
    result.written = target
    return result


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_PLAN_BYTES:
            raise FileProcessingError(
                str(path),
                f"{path} は Plan ファイルとして大きすぎます（上限 {MAX_PLAN_BYTES} バイト）。",
                code=ErrorCode.FILE_TOO_LARGE,
                hint="Plan ファイルを指定しているか確認してください。",
            )
        return path.read_bytes()
    except OSError as exc:
        raise FileProcessingError(
            str(path),
            f"{path} を読み込めません: {reason_of(exc)}",
            hint="ファイルのパスと読み取り権限を確認してください。",
            details={"cause": cause_of(exc)},
        ) from exc


def _free_backup(path: Path) -> Path:
    """``<name>.bak``, or ``<name>.bak.2``... so an earlier backup is never overwritten."""
    candidate, n = path.with_name(path.name + ".bak"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.bak.{n}")
    return candidate


def _write_atomic(target: Path, data: bytes, *, mode_from: Path) -> None:
    """Write via a temporary file in the same directory and ``os.replace``: readers see the
    old file or the new one, never half of it."""
    try:
        with atomic_path(target) as tmp:
            with tmp.open("wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            shutil.copymode(mode_from, tmp)  # mkstemp's 0600 would hide the plan from others
    except OSError as exc:
        denied = isinstance(exc, PermissionError)
        raise BlockError(
            f"移行結果を {target} に書き込めません: {reason_of(exc)}",
            code=ErrorCode.PERMISSION_DENIED if denied else ErrorCode.INTERNAL_ERROR,
            hint="出力先のフォルダが存在し、書き込めることを確認してください。",
            details={"file": str(target), "cause": cause_of(exc)},
        ) from exc
