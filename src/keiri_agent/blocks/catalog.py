"""The block catalog for people: port details, a usage example per block, and docs/blocks.md.

``docs/blocks.md`` is generated from the specs (``keiri-agent blocks docs``) so it cannot drift
from what the registry loads; a test checks that the committed file is current. The example
node of each block is built from its declared ``examples``, and the catalog test validates and
dry-runs exactly that node, so every example in the document is known to pass the validator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import yaml

from keiri_agent.blocks.spec import BlockSpec, port_is_required

__all__ = [
    "example_node",
    "example_plan",
    "port_details",
    "port_type",
    "render_markdown",
    "summary",
]

DOC_HEADER = """\
# ブロックカタログ

<!-- このファイルは `keiri-agent blocks docs` が block_specs から生成します。直接編集しないでください。 -->

Plan（`designs/*.yaml`）の `graph` で使えるブロックの一覧です。各ブロックの入出力は JSON Schema で
定義され、検証（`keiri-agent plan validate`）とドライラン（`keiri-agent plan dry-run`）はこの定義に
基づいて行われます。表は各ブロックの最新版です。Plan の書き方は [plan-dsl.md](plan-dsl.md) を
参照してください。「使用例」は宣言された入力例から作ったノードで、テストで検証・ドライランしています。
型に「パス（読み込み）」「パス（書き込み）」とある入力はファイルやフォルダのパスです。API サーバーの
タスクでは、読めるのはそのタスクのアップロード・出力と共有データフォルダ（`KEIRI_SHARED_DATA_DIRS`）の
中だけ、書けるのはそのタスクのフォルダの中だけです。
"""
PATH_LABELS = {"read": "パス（読み込み）", "write": "パス（書き込み）"}


def port_type(port: dict[str, Any]) -> str:
    """The port's type as people read it: ``string``, ``array | object``, ``$ref`` name."""
    declared = port.get("type")
    if isinstance(declared, list):
        return " | ".join(str(t) for t in declared)
    if declared:
        return str(declared)
    ref = port.get("$ref")
    if isinstance(ref, str):
        return ref.removeprefix("jsonschema://")
    return "any"


def port_details(port: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """What a person needs to fill one port: type, required, default, choices, description."""
    out: dict[str, Any] = {"type": port.get("type", port.get("$ref", "any"))}
    out["required"] = required
    for key in ("default", "enum", "description"):
        if key in port:
            out[key] = port[key]
    return out


def example_node(spec: BlockSpec, node_id: str = "node") -> dict[str, Any]:
    """A node using the block: inputs set to their first declared examples, every output kept."""
    inputs = {
        name: port["examples"][0] for name, port in spec.inputs.items() if port.get("examples")
    }
    return {
        "id": node_id,
        "block": spec.id,
        "in": inputs,
        "out": {name: name for name in spec.outputs},
    }


def example_plan(spec: BlockSpec) -> str:
    """A one-node plan of :func:`example_node` as YAML."""
    plan = {
        "apiVersion": "v1",
        "id": "catalog_example",
        "version": "0.1.0",
        "graph": [example_node(spec)],
    }
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


def _cell(text: Any) -> str:
    """Text for one Markdown table cell (no line breaks or bare pipes)."""
    flat = " ".join(str(text).split())
    return flat.replace("|", "\\|")


def _value(value: Any) -> str:
    return "`" + json.dumps(value, ensure_ascii=False) + "`"


def _section(spec: BlockSpec) -> list[str]:
    lines = [
        f"### {spec.id}",
        "",
        f"版 {spec.version}　カテゴリ `{spec.category}`"
        + ("　タグ: " + "、".join(spec.tags) if spec.tags else ""),
        "",
        spec.description.strip(),
        "",
        "| 入力 | 型 | 必須 | 既定値 | 説明 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, port in spec.inputs.items():
        required = "必須" if port_is_required(port) else ""
        default = _value(port["default"]) if "default" in port else ""
        kind = port_type(port)
        if "enum" in port:
            kind += "（" + " / ".join(str(v) for v in port["enum"]) + "）"
        if "path" in port:
            kind += "、" + PATH_LABELS[str(port["path"])]
        lines.append(
            f"| `{name}` | {_cell(kind)} | {required} | {_cell(default)} "
            f"| {_cell(port.get('description', ''))} |"
        )
    lines += ["", "| 出力 | 型 | 説明 |", "| --- | --- | --- |"]
    for name, port in spec.outputs.items():
        lines.append(
            f"| `{name}` | {_cell(port_type(port))} | {_cell(port.get('description', ''))} |"
        )
    node = yaml.safe_dump(
        [example_node(spec, node_id=spec.id.replace(".", "_"))],
        allow_unicode=True,
        sort_keys=False,
        width=100,
    )
    lines += ["", "使用例:", "", "```yaml", node.rstrip(), "```", ""]
    return lines


def render_markdown(specs: Iterable[BlockSpec]) -> str:
    """docs/blocks.md: a table of contents by category, then one section per block."""
    ordered = sorted(specs, key=lambda s: (s.category, s.id))
    lines = [DOC_HEADER, "## 一覧", "", "| ID | カテゴリ | 概要 |", "| --- | --- | --- |"]
    for spec in ordered:
        anchor = spec.id.replace(".", "")
        lines.append(
            f"| [{spec.id}](#{anchor}) | {spec.category} | {_cell(summary(spec.description))} |"
        )
    lines.append("")
    category = None
    for spec in ordered:
        if spec.category != category:
            category = spec.category
            lines += [f"## {category}", ""]
        lines += _section(spec)
    return "\n".join(lines).rstrip() + "\n"


def summary(text: str) -> str:
    """The first sentence of a description (descriptions are often one long line)."""
    line = (text.strip().splitlines() or [""])[0]
    head, sep, _ = line.partition("。")
    return head + sep
