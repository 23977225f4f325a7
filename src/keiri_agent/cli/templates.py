"""`keiri-agent templates list|show`: the plan templates plan generation can use (seed 004 §4).

``list`` shows one line per template (id, category, tags, the title); ``show`` one template's
contract: imports, exports (with the node output they come from) and the vars with defaults,
which is what ``plan generate --templates ... --bind IMPORT=TEMPLATE.EXPORT`` needs. Templates
are read from ``<KEIRI_DESIGNS_DIR>/templates`` (else the bundled copy), checked on load.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from keiri_agent.cli.common import (
    JsonFlag,
    WrappingTable,
    check_category,
    command_group,
    console,
    echo_json,
    user_errors,
)

if TYPE_CHECKING:
    from keiri_agent.design.templates import TemplateSpec

__all__ = ["templates_app"]

templates_app = command_group(
    "templates", "Plan 生成で使えるテンプレートの一覧と入出力の契約を表示します。"
)


def _entry(spec: TemplateSpec) -> dict[str, Any]:
    return {
        "id": spec.id,
        "category": spec.category,
        "title": spec.title,
        "tags": list(spec.tags),
        "blocks": spec.blocks(),
    }


def _detail(spec: TemplateSpec) -> dict[str, Any]:
    return {
        **_entry(spec),
        "description": spec.description,
        "imports": {n: p.model_dump(exclude_none=True) for n, p in spec.imports.items()},
        "exports": {
            n: p.model_dump(by_alias=True, exclude_none=True) for n, p in spec.exports.items()
        },
        "vars": dict(spec.vars_defaults),
        "source": spec.source,
    }


@templates_app.command("list")
def list_templates(
    category: Annotated[
        str | None, typer.Option("--category", help="このカテゴリのテンプレートだけを表示します。")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """テンプレートの一覧（ID・カテゴリ・タグ・説明）を表示します。"""
    from keiri_agent.design.templates import TemplateLibrary

    with user_errors():
        library = TemplateLibrary.load()
        specs = library.list()
        categories = sorted({s.category for s in specs})
        check_category(category, categories, "テンプレート")
        specs = [s for s in specs if category is None or s.category == category]
    if as_json:
        echo_json([_entry(s) for s in specs])
        return
    table = WrappingTable(title="テンプレート一覧")
    table.add_column("ID", no_wrap=True)
    table.add_column("カテゴリ", no_wrap=True)
    table.add_column("タグ")
    table.add_column("説明")
    for spec in specs:
        table.add_row(
            escape(spec.id), escape(spec.category), escape("、".join(spec.tags)), escape(spec.title)
        )
    console.print(table)
    console.print(
        f"{len(specs)} 件。入出力は `keiri-agent templates show ID` で表示します。", markup=False
    )


@templates_app.command("show")
def show(
    template: Annotated[
        str,
        typer.Argument(metavar="ID", help="テンプレート ID（id または カテゴリ/id）。"),
    ],
    as_json: JsonFlag = False,
) -> None:
    """テンプレートの入力（imports）・出力（exports）・設定値（vars）を表示します。"""
    from keiri_agent.design.templates import TemplateLibrary

    with user_errors():
        spec = TemplateLibrary.load().get(template)
    detail = _detail(spec)
    if as_json:
        echo_json(detail)
        return
    out = [f"{spec.title}（{spec.key}）"]
    if spec.description:
        out.append(spec.description.strip())
    if spec.tags:
        out.append(f"タグ: {'、'.join(spec.tags)}")
    out.append(f"ブロック: {', '.join(detail['blocks'])}")
    sections = {
        "入力（imports。--bind の左辺は <テンプレートID>.<名前>）:": [
            f"{spec.id}.{name}: {port.type}{_about(port.description)}"
            for name, port in spec.imports.items()
        ],
        "出力（exports。--bind の右辺は <テンプレートID>.<名前>）:": [
            f"{spec.id}.{name}: {port.type}（{port.from_}）{_about(port.description)}"
            for name, port in spec.exports.items()
        ],
        "設定値（vars の既定値）:": [
            f"{name}: {json.dumps(value, ensure_ascii=False, default=str)}"
            for name, value in spec.vars_defaults.items()
        ],
    }
    for title, lines in sections.items():
        out += [title, *(f"  - {line}" for line in lines)] if lines else [title, "  なし"]
    console.print("\n".join(out), markup=False, highlight=False)


def _about(description: str | None) -> str:
    return f" — {description}" if description else ""
