"""``ai.process_llm``: extract or reconcile evidence with an LLM into a plan-given schema.

Seed 002 §4: the plan gives a prompt (or instruction) and a simple JSON-Schema-like
``output_schema``; :func:`schema_to_model` turns that into a Pydantic model and the LLM must
answer in it (``LLMClient.structured``). The evidence is excerpted per file (``per_file_chars``
characters, ``max_table_rows`` rows of tables) so a large archive cannot flood the prompt.
With ``group_key`` the LLM is called once per group and results are keyed by group.

Seed 002 §1 forbids fallbacks: an LLM failure or a reply that does not fit the schema is the
LLM layer's ``BlockError`` (API_ERROR, TIMEOUT_ERROR, OUTPUT_SCHEMA_MISMATCH), never a guess.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from keiri_agent.blocks.ai.output_schema import object_properties, schema_to_model
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.config import LLMRole
from keiri_agent.errors import input_error

__all__ = [
    "DEFAULT_MAX_IMAGES",
    "DEFAULT_MAX_TABLE_ROWS",
    "DEFAULT_PER_FILE_CHARS",
    "DEFAULT_SYSTEM_PROMPT",
    "ProcessLLMBlock",
    "build_evidence_text",
    "schema_to_model",
]

DEFAULT_PER_FILE_CHARS = 1500
DEFAULT_MAX_TABLE_ROWS = 20
DEFAULT_MAX_IMAGES = 0
MAX_IMAGE_BYTES = 5 * 1024 * 1024  # larger images are left out (and said so) rather than sent
TABLE_FORMATS = frozenset({"xlsx", "csv", "tsv"})
TABLE_EXTS = frozenset({".xlsx", ".xlsm", ".csv", ".tsv"})
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
# Top-level schema keys that map onto the block's outputs of the same name.
OUTPUT_KEYS = ("results", "summary")
DEFAULT_SYSTEM_PROMPT = (
    "あなたは経理業務の書類を読み取るアシスタントです。\n"
    "ユーザーが示す証跡（ファイルの抜粋）に書かれている内容だけを根拠に回答してください。"
    "推測や一般知識で補ってはいけません。\n"
    "回答は指定された出力スキーマのすべての項目を埋めた JSON にしてください。\n"
    "証跡から分からない項目は null にしてください。"
)
NO_EVIDENCE = "（証跡ファイルはありません）"


class ProcessLLMBlock(ProcessingBlock):
    """Runs one structured LLM call (or one per group) over excerpts of the evidence."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _prompt(inputs)
        _model_for(inputs.get("output_schema"))
        _files(inputs.get("evidence_data"))
        for name in ("per_file_chars", "max_table_rows", "max_images"):
            _limit(inputs, name)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        prompt = _prompt(inputs)
        model, wrapped = _model_for(inputs.get("output_schema"))
        files = _files(inputs.get("evidence_data"))
        system = inputs.get("system_prompt") or DEFAULT_SYSTEM_PROMPT
        limits = {name: _limit(inputs, name) for name in ("per_file_chars", "max_table_rows")}
        max_images = _limit(inputs, "max_images")
        group_key = inputs.get("group_key") or None
        llm = ctx.llm(LLMRole.PROCESS)

        def ask(records: list[dict[str, Any]], group: str | None) -> dict[str, Any]:
            ctx.check_cancelled()
            text = build_evidence_text(records, group=group, **limits)
            content = _with_images(f"{prompt}\n\n{text}", records, max_images, ctx)
            messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(content)]
            reply: BaseModel = llm.structured(model, messages)
            return reply.model_dump(mode="json", by_alias=True)

        if group_key:
            groups = _group(files, str(group_key))
            answers = {name: ask(records, name) for name, records in groups.items()}
            ctx.log(f"{len(groups)} グループ（{len(files)} ファイル）を LLM で処理しました")
            if wrapped:
                # Each mapped output keyed by group; an output the schema lacks stays {}.
                return {
                    key: {g: a[key] or {} for g, a in answers.items()} if key in wrapped else {}
                    for key in OUTPUT_KEYS
                }
            return {"results": answers, "summary": {"files": len(files), "groups": len(groups)}}

        answer = ask(files, None)
        ctx.log(f"{len(files)} ファイルを LLM で処理しました")
        if wrapped:
            return {key: (answer[key] or {}) if key in wrapped else {} for key in OUTPUT_KEYS}
        distinct = {str(record.get("group", "")) for record in files}
        return {"results": answer, "summary": {"files": len(files), "groups": len(distinct)}}


def _prompt(inputs: Mapping[str, Any]) -> str:
    for key in ("prompt", "instruction"):
        value = inputs.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise input_error(
        "LLM への指示（prompt または instruction）がありません。",
        "prompt に「請求書ごとに取引先と金額を抽出してください」のような指示文を書いてください。",
        field="prompt",
    )


def _model_for(output_schema: Any) -> tuple[type[BaseModel], list[str]]:
    """The reply model, and which of results/summary are object fields mapped to outputs."""
    if not isinstance(output_schema, Mapping) or not output_schema:
        raise input_error(
            "output_schema（出力スキーマ）が指定されていません。",
            "output_schema に欲しい項目を書いてください（例: {vendor: string, amount: integer}）。"
            " 形式は seed 002 §4 の JSON-Schema 風スキーマです。",
            field="output_schema",
        )
    properties, _required = object_properties(output_schema)
    # Only object-typed results/summary fit the object output ports; a `summary: string`
    # stays inside `results` like any other field.
    wrapped = [key for key in OUTPUT_KEYS if _is_object(properties.get(key))]
    return schema_to_model(output_schema, required=wrapped), wrapped


def _is_object(spec: Any) -> bool:
    if isinstance(spec, str):
        return spec in ("object", "dict")
    return isinstance(spec, Mapping) and (
        spec.get("type") in ("object", "dict") or ("type" not in spec and "properties" in spec)
    )


def _limit(inputs: Mapping[str, Any], name: str) -> int:
    defaults = {
        "per_file_chars": (DEFAULT_PER_FILE_CHARS, 1),
        "max_table_rows": (DEFAULT_MAX_TABLE_ROWS, 1),
        "max_images": (DEFAULT_MAX_IMAGES, 0),
    }
    default, minimum = defaults[name]
    value = inputs.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise input_error(
            f"{name} '{value}' は {minimum} 以上の整数ではありません。",
            f"{name} には {minimum} 以上の整数を指定してください（既定: {default}）。",
            field=name,
        )
    return value


def _files(evidence: Any) -> list[dict[str, Any]]:
    """The file records of ``evidence_data`` (none is fine: the prompt may stand alone)."""
    if evidence is None:
        return []
    hint = "evidence_data には file.parse_zip_2tier の出力（files にファイルの一覧を持つオブジェクト）を渡してください。"
    if not isinstance(evidence, Mapping):
        raise input_error(
            "evidence_data がオブジェクトではありません。", hint, field="evidence_data"
        )
    files = evidence.get("files", [])
    if not isinstance(files, list):
        raise input_error(
            "evidence_data.files がリストではありません。", hint, field="evidence_data"
        )
    bad = [index for index, record in enumerate(files) if not isinstance(record, Mapping)]
    if bad:
        raise input_error(
            f"evidence_data.files の {len(bad)} 件がファイルの情報（オブジェクト）ではありません。",
            hint,
            field="evidence_data.files",
            indexes=bad,
        )
    return [dict(record) for record in files]


def _group(files: list[dict[str, Any]], group_key: str) -> dict[str, list[dict[str, Any]]]:
    missing = [index for index, record in enumerate(files) if group_key not in record]
    if missing:
        keys = sorted({str(k) for record in files for k in record})
        raise input_error(
            f"group_key '{group_key}' が evidence_data.files の {len(missing)} 件にありません。",
            f"ファイルの情報にあるキー（{', '.join(keys)}）から選んでください（通常は group）。",
            field="group_key",
            indexes=missing,
        )
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in files:
        value = record[group_key]
        groups.setdefault("" if value is None else str(value), []).append(record)
    return groups


def build_evidence_text(
    files: list[dict[str, Any]],
    *,
    group: str | None = None,
    per_file_chars: int = DEFAULT_PER_FILE_CHARS,
    max_table_rows: int = DEFAULT_MAX_TABLE_ROWS,
) -> str:
    """The evidence section of the prompt: a header and an excerpt per file."""
    title = "## 証跡" if group is None else f"## 証跡（グループ: {group or '(ルート)'}）"
    if not files:
        return f"{title}\n{NO_EVIDENCE}"
    parts = [f"{title}（{len(files)} ファイル）"]
    for number, record in enumerate(files, start=1):
        path = record.get("path") or record.get("name") or f"ファイル{number}"
        excerpt, notes = _excerpt(record, per_file_chars, max_table_rows)
        note = f"（{'、'.join(notes)}）" if notes else ""
        parts.append(f"### ファイル {number}: {path}{note}\n{excerpt}".rstrip())
    return "\n\n".join(parts)


def _excerpt(
    record: Mapping[str, Any], per_file_chars: int, max_rows: int
) -> tuple[str, list[str]]:
    notes: list[str] = []
    error = record.get("error")
    if isinstance(error, Mapping):
        notes.append(f"読み取りエラー: {error.get('message', '')}")
    text = record.get("text")
    if not isinstance(text, str) or not text:
        if not error:
            notes.append("本文なし")
        return "", notes
    ext = Path(str(record.get("name") or record.get("path") or "")).suffix.lower()
    if record.get("format") in TABLE_FORMATS or ext in TABLE_EXTS:
        lines = text.splitlines()
        if len(lines) > max_rows:
            text = "\n".join(lines[:max_rows])
            notes.append(f"表の先頭 {max_rows} 行のみ・全 {len(lines)} 行")
    if len(text) > per_file_chars:
        notes.append(f"先頭 {per_file_chars} 文字のみ・全 {len(text)} 文字")
        text = text[:per_file_chars]
    return text, notes


def _with_images(
    text: str, records: list[dict[str, Any]], max_images: int, ctx: BlockContext
) -> str | list[str | dict[str, Any]]:
    """The user message: plain text, or text plus up to ``max_images`` attached images."""
    if max_images <= 0:
        return text
    parts: list[str | dict[str, Any]] = []
    skipped: list[str] = []
    for record in records:
        local = record.get("local_path")
        mime = IMAGE_TYPES.get(Path(str(local or "")).suffix.lower())
        if not local or mime is None:
            continue
        # Read where the run may read: a record is data, and data can name any file.
        path = ctx.access.read(str(local), "evidence_data.files.local_path")
        name = str(record.get("path") or path.name)
        if len(parts) >= max_images or not path.is_file() or path.stat().st_size > MAX_IMAGE_BYTES:
            skipped.append(name)
            continue
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}})
    if skipped:
        # Said to the model and logged: it must not believe it saw every image.
        text += f"\n\n（添付していない画像 {len(skipped)} 件: {', '.join(skipped)}）"
        ctx.log(
            f"画像 {len(skipped)} 件を添付しませんでした（上限・サイズ・不在）", level="warning"
        )
    return [{"type": "text", "text": text}, *parts] if parts else text
