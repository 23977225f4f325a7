"""``file.extract_text``: the text of one or more files, shaped like an evidence set.

Each file is read through the file layer (``read_source`` then ``extract_text``), so limits,
mislabelled files and encodings are handled as everywhere else. ``evidence_data`` has the shape
of ``file.parse_zip_2tier``'s (one root group ``""``), so ``ai.process_llm`` and
``text.extract_fields`` take either. A file that cannot be read stops the block with the file
layer's error, unless ``skip_unreadable`` is set: then it is recorded in ``evidence_data.errors``
and the warnings, and the others are still read. Folders are refused here: they belong to
``file.list_folder`` or ``file.parse_zip_2tier``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock, given
from keiri_agent.blocks.inputs import count_limit, port_path
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.documents import EvidenceFile, EvidenceSet, ExtractedText, extract_text
from keiri_agent.documents.archives import ROOT_GROUP
from keiri_agent.documents.limits import MAX_TEXT_CHARS
from keiri_agent.documents.source import read_source
from keiri_agent.errors import BlockError, input_error

__all__ = ["MAX_PATHS", "ExtractTextBlock"]

# More files than this belong in a ZIP or folder read by file.parse_zip_2tier.
MAX_PATHS = 1_000
_LIST_NOTE = "file.list_folder の files（path 列を持つレコード）もそのまま渡せます。"
_PATHS_HINT = "paths にはファイルのパス（文字列）か、その一覧を指定してください。" + _LIST_NOTE
_MANY_NOTE = "複数のファイルはパスの一覧で指定できます。" + _LIST_NOTE  # ends the port's hint


class ExtractTextBlock(ProcessingBlock):
    """Extracts ``paths`` into ``evidence_data``, a joined ``text`` and ``documents``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _paths(self.spec, inputs.get("paths"))
        _max_chars(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        given_paths = _paths(self.spec, inputs.get("paths"))
        # Read where the run may read (ctx.access); the i-th entry is named in a refusal.
        paths = [
            ctx.access.read(path, "paths" if len(given_paths) == 1 else f"paths[{index}]")
            for index, path in enumerate(given_paths)
        ]
        max_chars = _max_chars(inputs)
        skip = bool(given(inputs, "skip_unreadable", False))
        evidence = EvidenceSet(source=paths[0].name)
        seen: set[str] = set()
        for path in paths:
            ctx.check_cancelled()
            key = os.path.normcase(os.path.abspath(path))
            if key in seen:
                evidence.warnings.append(
                    f"「{path}」が重複して指定されていたため、1 回だけ読みました。"
                )
                continue
            seen.add(key)
            item = _read_one(path, max_chars, skip, evidence)
            evidence.groups.setdefault(ROOT_GROUP, []).append(item)
            evidence.files.append(item)
        if len(evidence.files) > 1:
            evidence.source = f"{paths[0].name} ほか {len(evidence.files) - 1}件"
        data = evidence.to_dict()
        for record, item in zip(data["files"], evidence.files, strict=True):
            # Where the file is on disk: ai.process_llm attaches images found through it.
            record["local_path"] = os.path.abspath(item.path)
        documents = [_document(f.path, f.name, f.text) for f in evidence.files if f.text]
        ctx.log(
            f"{len(documents)} ファイルからテキストを抽出しました"
            f"（計 {sum(d['chars'] for d in documents):,} 文字、"
            f"読めなかったファイル {len(evidence.errors)} 件）",
            level="warning" if evidence.errors else "info",
        )
        return {"evidence_data": data, "text": _joined(evidence.files), "documents": documents}


def _read_one(path: Path, max_chars: int, skip: bool, evidence: EvidenceSet) -> EvidenceFile:
    name = path.name
    if path.is_dir():
        # Checked here too: a folder may appear between check_inputs and run.
        raise _folder_error(path)
    data = b""
    text: ExtractedText | None = None
    error: dict[str, Any] | None = None
    try:
        data = read_source(path, label=name)
        text = extract_text(data, name=name, max_chars=max_chars)
    except BlockError as exc:
        if not skip:
            raise
        exc.details.setdefault("path", str(path))
        error = exc.to_dict()
        evidence.errors.append(error)
        evidence.warnings.append(
            f"「{path}」を読み取れなかったため、本文なしで続けました: {exc.message}"
        )
    return EvidenceFile(
        group=ROOT_GROUP,
        path=str(path),
        name=name,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest() if data else "",
        data=data,
        text=text,
        error=error,
    )


def _joined(files: list[EvidenceFile]) -> str:
    """Every file's text under a ``=== name ===`` header (the path when names repeat)."""
    names = [f.name for f in files]
    parts = []
    for item in files:
        label = item.path if names.count(item.name) > 1 else item.name
        if item.text is not None:
            body = item.text.text
        else:
            message = (item.error or {}).get("message", "")
            body = f"（読み取れませんでした: {message}）"
        parts.append(f"=== {label} ===\n{body}".rstrip())
    return "\n\n".join(parts)


def _document(path: str, name: str, text: ExtractedText) -> dict[str, Any]:
    return {
        "name": name,
        "path": path,
        "format": text.format,
        "pages": text.units_read if text.unit in ("page", "slide") else None,
        "chars": text.chars,
        "truncated": text.truncated,
        "warnings": list(text.warnings),
    }


def _folder_error(path: Path) -> BlockError:
    return input_error(
        f"「{path}」はフォルダです。file.extract_text はファイルだけを読みます。",
        "フォルダ内のファイルを読むには、file.list_folder で一覧を作って files を paths に渡すか、"
        "file.parse_zip_2tier にフォルダのパスを渡してください。",
        field="paths",
        path=str(path),
    )


def _paths(spec: BlockSpec, value: Any) -> list[str]:
    """The paths' texts (nothing is looked up here: check_inputs calls this too)."""
    one_path = isinstance(value, str | os.PathLike) and bool(str(value).strip())
    items = [value] if one_path else value
    if not isinstance(items, list) or not items:  # absent, blank, or an empty list
        # The port's "no file given" error (its label and file types), said for a list too.
        return [port_path(spec, "paths", None, note=_MANY_NOTE)]
    if len(items) > MAX_PATHS:
        raise input_error(
            f"paths のファイルが多すぎます（{len(items):,} 件、上限 {MAX_PATHS:,} 件）。",
            "ファイルを ZIP かフォルダにまとめ、file.parse_zip_2tier で読んでください。",
            field="paths",
            count=len(items),
        )
    paths: list[str] = []
    for index, item in enumerate(items):
        raw = item.get("path") if isinstance(item, Mapping) else item
        if not isinstance(raw, str | os.PathLike) or not str(raw).strip():
            raise input_error(
                f"paths の {index + 1} 件目がファイルのパスではありません（{str(item)[:100]!r}）。",
                _PATHS_HINT,
                field="paths",
                index=index,
            )
        paths.append(str(os.fspath(raw)))
    return paths


def _max_chars(inputs: dict[str, Any]) -> int:
    return count_limit(inputs, "max_chars", MAX_TEXT_CHARS, "1 ファイルあたりの最大文字数")
