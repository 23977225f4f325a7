"""Plan templates (seed 004 §4): reusable partial flows in ``designs/templates/<category>/<id>.yaml``.

A template is a piece of a plan's ``graph`` (``graph_snippet``) with an I/O contract: ``imports``
(what it needs, by logical name and type) and ``exports`` (what it provides, by alias and type,
each taken ``from`` one of its top-level nodes as ``node.output``). Inside the snippet an import
is written ``${imports.<name>}`` and the template's own settings ``${vars.<name>}``, each with a
default in ``vars_defaults`` (a default under an import's name is used when composition leaves
that import to a var). :func:`keiri_agent.design.compose.compose` joins templates into a plan.

Contract types are the names in :data:`PORT_TYPES` (``records`` = a list of rows); ``any`` fits
everything. :meth:`TemplateLibrary.load` checks every file (shape, blocks in the registry,
references, exports, layout) and reports all problems of all files in one ``BlockError``.
:func:`templates_root` finds the directory: ``<KEIRI_DESIGNS_DIR>/templates``, else the copy a
wheel carries (``keiri_agent/_bundled/designs/templates``), else the source checkout's.
"""

from __future__ import annotations

import builtins
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.design.plan_nodes import node_blocks
from keiri_agent.design.snippets import (
    IMPORTS_ROOT,
    AnyNode,
    SnippetRewriter,
    all_nodes,
    check_export_from,
)
from keiri_agent.errors import BlockError, ErrorCode, input_error, reason_of
from keiri_agent.llm.field_problems import field_problems
from keiri_agent.plan import BlockNode, Loc, Node, format_path, load_yaml

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = [
    "PORT_TYPES",
    "ExportContract",
    "PortContract",
    "TemplateLibrary",
    "TemplateSpec",
    "UISuggestions",
    "check_template",
    "load_template_file",
    "templates_root",
    "types_compatible",
]

TEMPLATES_DIR: Final = Path("designs") / "templates"
# records = a list of rows ({列名: 値}); workbook / markdown = a written report; any fits all.
PORT_TYPES: Final = frozenset(
    ("records", "object", "file", "text", "number", "evidence", "workbook", "markdown", "any")
)
TEMPLATE_ID_RE: Final = re.compile(r"^[a-z][a-z0-9_]*$")
NAME_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NODE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Node)
_TAGS: Final = frozenset({"block", "loop", "subflow"})


def types_compatible(a: str, b: str) -> bool:
    """Two contract types fit when they are equal or one of them is ``any``."""
    return a == b or "any" in (a, b)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class PortContract(_Strict):
    type: str
    description: str | None = None

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        if value not in PORT_TYPES:
            raise ValueError(
                f"型 '{value}' は使えません（使える型: {', '.join(sorted(PORT_TYPES))}）"
            )
        return value


class ExportContract(PortContract):
    from_: str = Field(alias="from", min_length=1)  # "<snippet node id>.<alias or output port>"


class UISuggestions(_Strict):
    layout: list[str] = Field(default_factory=list)


class TemplateSpec(_Strict):
    """One template; ``category`` is the directory it lives in, ``source`` its file."""

    id: str
    title: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    category: str
    imports: dict[str, PortContract] = Field(default_factory=dict)
    exports: dict[str, ExportContract] = Field(default_factory=dict)
    vars_defaults: dict[str, Any] = Field(default_factory=dict)
    ui_suggestions: UISuggestions | None = None
    graph_snippet: list[dict[str, Any]] = Field(min_length=1)
    source: str | None = None

    @field_validator("id", "category")
    @classmethod
    def _ident(cls, value: str) -> str:
        if not TEMPLATE_ID_RE.match(value):
            raise ValueError(f"'{value}' は英小文字で始め、英小文字・数字・_ で書いてください")
        return value

    @field_validator("imports", "exports", "vars_defaults")
    @classmethod
    def _names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not NAME_RE.match(name):
                raise ValueError(f"名前 '{name}' は英字か _ で始め、英数字と _ で書いてください")
        return value

    @property
    def key(self) -> str:
        """``<category>/<id>``: the template's path under the templates directory."""
        return f"{self.category}/{self.id}"

    def layout(self) -> list[str]:
        """The suggested display order; all top-level nodes when the template suggests none."""
        if self.ui_suggestions is not None and self.ui_suggestions.layout:
            return list(self.ui_suggestions.layout)
        return [str(n.get("id")) for n in self.graph_snippet]

    def blocks(self) -> builtins.list[str]:
        """Block ids the snippet uses (loop bodies included), in order of appearance, each once
        and without a ``@version`` pin."""
        return list(
            dict.fromkeys(
                block.partition("@")[0].strip() for block in node_blocks(self.graph_snippet)
            )
        )

    def summary(self) -> str:
        """The template for an LLM prompt: contract, defaults and the snippet as YAML."""
        lines = [f"テンプレート: {self.title}（{self.key}）"]
        if self.description:
            lines.append(f"説明: {self.description.strip()}")
        if self.tags:
            lines.append(f"タグ: {', '.join(self.tags)}")
        lines.append("入力（imports。スニペットでは ${imports.名前} で参照）:")
        lines += [_port_line(n, p) for n, p in self.imports.items()] or ["  なし"]
        lines.append("出力（exports）:")
        lines += [_port_line(n, p, p.from_) for n, p in self.exports.items()] or ["  なし"]
        if self.vars_defaults:
            lines.append("設定値の既定値（vars）:")
            lines.append(_yaml(self.vars_defaults, indent="  "))
        lines.append("graph_snippet:")
        lines.append(_yaml(self.graph_snippet, indent="  "))
        return "\n".join(lines)


def _port_line(name: str, port: PortContract, source: str | None = None) -> str:
    where = f"（{source}）" if source else ""
    return f"  - {name}: {port.type}{where}" + (
        f" — {port.description}" if port.description else ""
    )


def _yaml(value: Any, *, indent: str) -> str:
    text = yaml.safe_dump(value, allow_unicode=True, sort_keys=False, width=100).rstrip()
    return "\n".join(indent + line for line in text.splitlines())


# --- validation ------------------------------------------------------------------------------


def _error_loc(loc: Sequence[Any], prefix: Loc) -> str:
    """Drop the discriminator tags Pydantic puts after a graph index (or first)."""
    out: list[str | int] = list(prefix)
    for i, part in enumerate(loc):
        if part in _TAGS and (i == 0 or isinstance(loc[i - 1], int)):
            continue
        out.append(part if isinstance(part, int) else str(part))
    return format_path(out)


def _invalid(exc: ValidationError, prefix: Loc) -> list[str]:
    """A template's schema failures in Japanese, each at its place in the file."""
    errors = exc.errors(include_url=False)
    return [
        problem.at(_error_loc(err["loc"], prefix))
        for err, problem in zip(errors, field_problems(errors), strict=True)
    ]


def check_template(spec: TemplateSpec, registry: BlockRegistry) -> list[str]:
    """Every problem of one template (Japanese, each with its place); empty when it is usable."""
    problems: list[str] = []
    nodes: list[AnyNode] = []
    for i, raw in enumerate(spec.graph_snippet):
        try:
            nodes.append(_NODE_ADAPTER.validate_python(raw))
        except ValidationError as exc:
            problems += _invalid(exc, ("graph_snippet", i))
    if problems:
        return problems
    seen: set[str] = set()
    for node in all_nodes(nodes):
        if node.id in seen:
            problems.append(f"ノード ID '{node.id}' が重複しています。")
        if node.id == IMPORTS_ROOT:
            problems.append(f"ノード ID '{IMPORTS_ROOT}' は imports の参照と重なるため使えません。")
        seen.add(node.id)
        if isinstance(node, BlockNode) and registry.find(node.block) is None:
            problems.append(f"ノード '{node.id}' のブロック '{node.block}' は登録されていません。")
    rewriter = SnippetRewriter()
    rewriter.graph(spec.graph_snippet)
    problems += rewriter.problems
    imports, defaults = spec.imports.keys(), spec.vars_defaults.keys()
    for root, names, declared in (
        ("imports", imports, "imports"),
        ("vars", defaults, "vars_defaults"),
    ):
        used = rewriter.imports_used if root == "imports" else rewriter.vars_used
        problems += [
            f"${{{root}.{n}}} を使っていますが、{declared} に '{n}' がありません。"
            for n in sorted(used - names)
        ]
    unused = [*(imports - rewriter.imports_used), *(defaults - rewriter.vars_used - imports)]
    problems += [f"'{n}' は graph_snippet で使われていません。" for n in sorted(unused)]
    top = {node.id: node for node in nodes}
    for alias, export in spec.exports.items():
        problems += check_export_from(f"exports.{alias}.from", export.from_, top, registry)
    layout = spec.ui_suggestions.layout if spec.ui_suggestions else []
    where = "ui_suggestions.layout"
    problems += [f"{where} の '{n}' は最上位ノードではありません。" for n in layout if n not in top]
    if len(set(layout)) != len(layout):
        problems.append(f"{where} に同じノードが二度あります。")
    for node in nodes if layout else []:
        if isinstance(node, BlockNode) and getattr(registry.find(node.block), "is_ui", False):
            problems += [f"UI ノード '{node.id}' が {where} にありません。"] * (
                node.id not in layout
            )
    return problems


def load_template_file(
    path: Path, registry: BlockRegistry, *, category: str | None = None
) -> tuple[TemplateSpec | None, list[str]]:
    """One template file, checked: ``(spec, [])`` or ``(None or spec, problems)``."""
    category = category or path.parent.name
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return None, [f"YAML として読めません: {reason_of(exc)}"]
    if not isinstance(data, Mapping):
        return None, [
            "テンプレートの先頭は id・title・graph_snippet などを持つマッピングにしてください。"
        ]
    if "category" in data and data["category"] != category:
        return None, [
            f"category '{data['category']}' が置き場所のフォルダ '{category}' と違います。"
        ]
    try:
        spec = TemplateSpec.model_validate({**data, "category": category, "source": str(path)})
    except ValidationError as exc:
        return None, _invalid(exc, ())
    problems = check_template(spec, registry)
    if spec.id != path.stem:
        problems.insert(0, f"id '{spec.id}' はファイル名 '{path.stem}' と同じにしてください。")
    return spec, problems


# --- library ---------------------------------------------------------------------------------


def templates_root(settings: Settings | None = None) -> Path:
    """``<KEIRI_DESIGNS_DIR>/templates`` if present, else the wheel's copy, else the checkout's."""
    from keiri_agent.config import load_settings
    from keiri_agent.examples import BUNDLED_ROOT, SOURCE_ROOT

    settings = settings if settings is not None else load_settings()
    candidates = [
        settings.keiri_designs_dir / "templates",
        BUNDLED_ROOT / TEMPLATES_DIR,
        SOURCE_ROOT / TEMPLATES_DIR,
    ]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise BlockError(
        "テンプレートのフォルダが見つかりません。",
        code=ErrorCode.CONFIGURATION_ERROR,
        hint="KEIRI_DESIGNS_DIR の下に templates/<カテゴリ>/<id>.yaml を置いてください。",
        details={"searched": [str(c) for c in candidates]},
    )


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


class TemplateLibrary:
    """The loaded templates, looked up by id (or ``category/id``) and searched by tag or text."""

    def __init__(self, templates: Sequence[TemplateSpec]) -> None:
        self._templates = list(templates)
        self._by_id: dict[str, TemplateSpec] = {}
        for spec in self._templates:
            self._by_id.setdefault(spec.id, spec)
            self._by_id.setdefault(spec.key, spec)

    @classmethod
    def load(
        cls, root: Path | None = None, *, registry: BlockRegistry | None = None
    ) -> TemplateLibrary:
        """Every ``<root>/<category>/<id>.yaml``; any problem in any file raises one BlockError."""
        if registry is None:
            from keiri_agent.blocks.registry import default_registry

            registry = default_registry()
        root = Path(root) if root is not None else templates_root()
        if not root.is_dir():
            raise BlockError(
                f"テンプレートのフォルダ {root} がありません。",
                code=ErrorCode.CONFIGURATION_ERROR,
                hint="templates/<カテゴリ>/<id>.yaml の形で置いたフォルダを指定してください。",
                details={"root": str(root)},
            )
        templates: list[TemplateSpec] = []
        errors: list[dict[str, Any]] = []
        first: dict[str, Path] = {}
        files = sorted(p for p in root.glob("*/*") if p.suffix in (".yaml", ".yml"))
        for path in files:
            spec, problems = load_template_file(path, registry)
            if spec is not None and spec.id in first:
                problems.append(
                    f"テンプレート ID '{spec.id}' は {first[spec.id]} と重複しています。"
                )
            if problems:
                errors.append({"file": str(path), "problems": problems})
            elif spec is not None:
                first[spec.id] = path
                templates.append(spec)
        if errors:
            lines = [f"- {e['file']}: {p}" for e in errors for p in e["problems"]]
            raise BlockError(
                f"テンプレートに問題があります（{len(errors)} ファイル）:\n" + "\n".join(lines),
                code=ErrorCode.PLAN_INVALID,
                hint="各ファイルを直してください。書式は designs/templates の既存テンプレートを参考にしてください。",
                details={"root": str(root), "errors": errors},
            )
        return cls(templates)

    def get(self, template_id: str) -> TemplateSpec:
        spec = self._by_id.get(template_id)
        if spec is not None:
            return spec
        raise input_error(
            f"テンプレート '{template_id}' はありません。",
            f"使えるテンプレート: {', '.join(t.key for t in self._templates) or 'なし'}",
            template=template_id,
            known=[t.id for t in self._templates],
        )

    def list(self, *, tags: Sequence[str] = (), text: str = "") -> builtins.list[TemplateSpec]:
        """Templates carrying every tag in ``tags`` whose id/title/description/tags hold every word."""
        wanted = {_fold(t) for t in tags}
        words = [_fold(w) for w in text.split()]
        out: builtins.list[TemplateSpec] = []
        for spec in self._templates:
            own = {_fold(t) for t in spec.tags}
            haystack = _fold(" ".join([spec.key, spec.title, spec.description or "", *spec.tags]))
            if wanted <= own and all(w in haystack for w in words):
                out.append(spec)
        return out

    def tags(self) -> builtins.list[str]:
        return sorted({t for spec in self._templates for t in spec.tags})
