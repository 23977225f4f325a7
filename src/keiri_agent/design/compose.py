"""Deterministic composition of templates into one plan (seed 004 §4, 合成ルール).

``compose`` applies the templates in the given order and never guesses:

- node ids become ``<template id>_<node id>``; every reference to them inside the snippet
  (``in``, ``when``, loop inputs, conditions and exports) is rewritten structurally
  (:class:`keiri_agent.design.snippets.SnippetRewriter`), so vars and plain text are untouched;
- each import is bound, in this order, by an explicit ``bindings["<template>.<import>"]``
  (``"<template>.<export>"``, ``"vars.<name>"`` or a ``${...}`` reference used as written);
  else by the one earlier export with the same name and a compatible type; else it becomes
  ``${vars.<import>}``, declared in the plan's vars (value from ``vars_values``, else the
  template's ``vars_defaults``, else null) and listed in ``unbound_imports``;
- ambiguity (the same export name from two templates, or no same-name export but others of the
  same type that could be meant), a type mismatch, a duplicate export alias, an unknown or
  malformed binding and two different defaults for one var are conflicts: the result then has
  ``plan=None`` and every conflict with a Japanese message and hint;
- template vars keep their names (``${vars.amount_tolerance}``, not a prefixed name): they are
  the settings a user edits, so two templates naming the same var share it, and differing
  defaults for it are a conflict unless ``vars_values`` decides;
- ``ui.layout`` concatenates the templates' suggested layouts (prefixed); template exports
  become plan ``exports`` (``rename_exports`` can rename one to resolve a duplicate alias).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from keiri_agent.design.plan_nodes import iter_nodes
from keiri_agent.design.snippets import SnippetRewriter, ref_text
from keiri_agent.design.templates import NAME_RE, PortContract, TemplateSpec, types_compatible
from keiri_agent.errors import BlockError, input_error
from keiri_agent.llm.field_problems import field_problems
from keiri_agent.plan import PLAN_ID_RE, Plan, Reference, bare_reference, single_reference

__all__ = ["ComposeConflict", "ComposeResult", "compose"]

Target = tuple[str, tuple[str | int, ...]]  # a reference's root and path
_FORMS = "「テンプレートID.出力名」「vars.設定値の名前」または ${...} の参照"
MAX_PORT_NAME_CHARS = 30  # a longer description is a sentence, not a name
# A contract type as people read it (design.templates.PORT_TYPES)
TYPE_WORDS = {
    "records": "表",
    "object": "まとまった値",
    "file": "ファイル",
    "text": "文章",
    "number": "数値",
    "evidence": "証跡",
    "workbook": "Excel ブック",
    "markdown": "Markdown の文書",
}


class ComposeConflict(BaseModel):
    kind: str  # duplicate_template | unknown_binding | invalid_binding | ambiguous |
    # type_mismatch | duplicate_export | var_conflict | duplicate_node | invalid_plan
    message: str
    templates: list[str] = Field(default_factory=list)
    hint: str = ""
    # ambiguous only: the import to bind ("<template>.<import>") and what it may be bound to,
    # for a choice per conflict (CLI --bind, the 設計 page, ``bindings`` of the API)
    binding: str | None = None
    choices: list[str] = Field(default_factory=list)
    # the same, as a person reads them (the 設計 page's choice): the import, then each choice
    binding_said: str = ""
    choices_said: list[str] = Field(default_factory=list)


class ComposeResult(BaseModel):
    plan: dict[str, Any] | None = None
    conflicts: list[ComposeConflict] = Field(default_factory=list)
    unbound_imports: list[str] = Field(default_factory=list)
    bindings: dict[str, str] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.plan is not None and not self.conflicts


def compose(
    templates: Sequence[TemplateSpec],
    *,
    plan_id: str,
    description: str | None = None,
    bindings: Mapping[str, str] | None = None,
    vars_values: Mapping[str, Any] | None = None,
    rename_exports: Mapping[str, str] | None = None,
) -> ComposeResult:
    """Join ``templates`` into a plan mapping; see the module docstring for the rules."""
    if not templates:
        raise input_error(
            "合成するテンプレートが指定されていません。",
            "テンプレートを 1 つ以上指定してください。",
        )
    if not PLAN_ID_RE.match(plan_id):
        raise input_error(
            f"Plan の id '{plan_id}' が不正です。",
            "Plan の id は英数字・_・- と / で書いてください（例: generated/invoice_check）。",
            plan_id=plan_id,
        )
    composer = _Composer(templates, bindings or {}, vars_values or {}, rename_exports or {})
    return composer.run(plan_id, description)


def _prefix(template_id: str, node_id: str) -> str:
    return f"{template_id}_{node_id}"


class _Composer:
    def __init__(
        self,
        templates: Sequence[TemplateSpec],
        bindings: Mapping[str, str],
        vars_values: Mapping[str, Any],
        rename_exports: Mapping[str, str],
    ) -> None:
        self.templates = list(templates)
        self.explicit = dict(bindings)
        self.values = dict(vars_values)
        self.renames = dict(rename_exports)
        self.conflicts: list[ComposeConflict] = []
        self.vars: dict[str, Any] = {}
        self.var_owner: dict[str, str] = {}
        self.unbound: list[str] = []
        self.bound: dict[str, str] = {}
        # every template's exports: id → alias → (contract type, prefixed target)
        self.exports: dict[str, dict[str, tuple[str, Target]]] = {}
        for spec in self.templates:
            table: dict[str, tuple[str, Target]] = {}
            for alias, export in spec.exports.items():
                ref = bare_reference(export.from_)
                if ref is not None:  # TemplateLibrary.load has checked the shape
                    table[alias] = (export.type, (_prefix(spec.id, ref.root), ref.path))
            self.exports.setdefault(spec.id, table)
        self.provided: list[tuple[str, str, str, Target]] = []  # (owner, name, type, target)
        self.specs = {t.id: t for t in self.templates}

    def template(self, template_id: str) -> str:
        """A template as a person knows it: its title, its id (what a binding names) after it."""
        spec = self.specs.get(template_id)
        return (
            f"テンプレート「{spec.title}」（{template_id}）"
            if spec
            else f"テンプレート {template_id}"
        )

    def port(self, template_id: str, name: str, side: str) -> str:
        """Import (``side`` 入力) or export (出力) ``name``: its description when it is a name,
        the YAML name after it."""
        spec = self.specs.get(template_id)
        ports: Mapping[str, PortContract] = {}
        if spec is not None:
            ports = spec.imports if side == "入力" else spec.exports
        said = _short(ports[name].description) if name in ports else None
        return f"{side}「{said}」（{name}）" if said else f"{side} '{name}'"

    def output(self, choice: str) -> str:
        """A choice ``<template>.<export>`` as a person reads it."""
        owner, _, name = choice.partition(".")
        spec = self.specs.get(owner)
        said = _short(spec.exports[name].description) if spec and name in spec.exports else None
        title = f"「{spec.title}」の" if spec else ""
        return f"{title}出力{f'「{said}」' if said else ''}（{choice}）"

    def conflict(
        self,
        kind: str,
        message: str,
        templates: list[str],
        hint: str,
        *,
        binding: str | None = None,
        choices: Sequence[str] = (),
    ) -> None:
        owner, _, name = (binding or "").partition(".")
        self.conflicts.append(
            ComposeConflict(
                kind=kind,
                message=message,
                templates=templates,
                hint=hint,
                binding=binding,
                choices=list(choices),
                binding_said=f"{self.template(owner)}の{self.port(owner, name, '入力')}"
                if binding
                else "",
                choices_said=[self.choice(c) for c in choices],
            )
        )

    def choice(self, choice: str) -> str:
        """A choice of a binding as a person reads it (a setting: 設定値 'name')."""
        if choice.startswith("vars."):
            return f"設定値として受け取る（{choice}）"
        return self.output(choice)

    def run(self, plan_id: str, description: str | None) -> ComposeResult:
        ids = [t.id for t in self.templates]
        for dup in sorted({i for i in ids if ids.count(i) > 1}):
            self.conflict(
                "duplicate_template",
                f"テンプレート '{dup}' が二度指定されています（ノード ID が重なります）。",
                [dup],
                "同じテンプレートは 1 回だけ指定してください。",
            )
        if self.conflicts:
            return ComposeResult(conflicts=self.conflicts)
        self.check_keys()
        graph: list[dict[str, Any]] = []
        layout: list[str] = []
        exports: list[dict[str, str]] = []
        owners: dict[str, str] = {}
        for spec in self.templates:
            targets = {n: self.bind(spec, n, c.type) for n, c in spec.imports.items()}
            rewriter = SnippetRewriter(
                rename=partial(_prefix, spec.id), imports=partial(_substitute, targets=targets)
            )
            graph += rewriter.graph(spec.graph_snippet)
            for name in sorted(rewriter.vars_used):
                self.declare(name, spec.vars_defaults.get(name), spec.id)
            layout += [_prefix(spec.id, node_id) for node_id in spec.layout()]
            for alias, (kind, target) in self.exports[spec.id].items():
                name = self.renames.get(f"{spec.id}.{alias}", alias)
                if name in owners:
                    self.duplicate_export(name, owners[name], spec.id, alias)
                owners.setdefault(name, spec.id)
                exports.append({"from": ref_text(*target, False)[2:-1], "as": name})
                self.provided.append((spec.id, name, kind, target))
        for name, value in self.values.items():
            self.vars[name] = value
        self.check_node_ids(graph)
        plan: dict[str, Any] | None = None
        if not self.conflicts:
            titles = "・".join(f"「{t.title}」" for t in self.templates)
            plan = {
                "apiVersion": "v1",
                "id": plan_id,
                "version": "0.1.0",
                "description": description or f"テンプレート{titles}を組み合わせた Plan",
                "vars": self.vars,
                "ui": {"layout": layout},
                "graph": graph,
                "exports": exports,
            }
            try:
                Plan.model_validate(plan)
            except ValidationError as exc:
                first = field_problems(exc, data=plan)[0]
                self.conflict(
                    "invalid_plan",
                    f"合成した Plan が DSL の形になりません: {first.text}",
                    [t.id for t in self.templates],
                    "TemplateLibrary.load で検証したテンプレートを使ってください。",
                )
                plan = None
        return ComposeResult(
            plan=plan, conflicts=self.conflicts, unbound_imports=self.unbound, bindings=self.bound
        )

    def check_node_ids(self, graph: list[dict[str, Any]]) -> None:
        """Prefixing can still collide (``a`` + ``b_c`` and ``a_b`` + ``c``): say so."""
        seen: set[str] = set()
        for node in iter_nodes(graph):
            node_id = node.get("id")
            if isinstance(node_id, str) and node_id in seen:
                owners = [t.id for t in self.templates if node_id.startswith(f"{t.id}_")]
                self.conflict(
                    "duplicate_node",
                    f"合成後のノード ID '{node_id}' が重なります。",
                    owners,
                    "テンプレート ID とノード ID の組み合わせが同じ名前にならないよう、"
                    "どちらかのテンプレートのノード ID を変えてください。",
                )
            seen.add(str(node_id))

    def check_keys(self) -> None:
        imports = [f"{t.id}.{n}" for t in self.templates for n in t.imports]
        exports = [f"{t}.{a}" for t, table in self.exports.items() for a in table]
        for option, keys, known, what in (
            ("bindings", self.explicit, imports, "入力（imports）"),
            ("rename_exports", self.renames, exports, "出力（exports）"),
        ):
            for key in keys:
                if key not in known:
                    self.conflict(
                        "unknown_binding",
                        f"{option} の '{key}' に当たるテンプレートの{what}がありません。",
                        [key.partition(".")[0]],
                        f"指定できる名前: {', '.join(known) or 'なし'}",
                    )

    def bind(self, spec: TemplateSpec, name: str, kind: str) -> Target | None:
        key = f"{spec.id}.{name}"
        if key in self.explicit:
            target = self.explicit_target(spec, name, kind, self.explicit[key].strip())
        else:
            target = self.automatic(spec, name, kind)
        if target is not None:
            self.bound[key] = ref_text(*target, False)
        return target

    def automatic(self, spec: TemplateSpec, name: str, kind: str) -> Target | None:
        key = f"{spec.id}.{name}"
        same = [p for p in self.provided if p[1] == name]
        if len(same) > 1:
            owners = [f"{o}.{n}" for o, n, _, _ in same]
            self.conflict(
                "ambiguous",
                f"{self.template(spec.id)}の{self.port(spec.id, name, '入力')}に使える同じ名前の"
                f"出力が複数あります: {'、'.join(self.output(o) for o in owners)}",
                [spec.id, *(o for o, _, _, _ in same)],
                f"どれを使うか選んでください。{_typed(key, owners[0])}",
                binding=key,
                choices=owners,
            )
            return None
        if same:
            owner, _, other, target = same[0]
            if types_compatible(kind, other):
                return target
            self.mismatch(spec.id, name, kind, owner, name, other)
            return None
        similar = [f"{o}.{n}" for o, n, k, _ in self.provided if k == kind != "any"]
        if similar:
            self.conflict(
                "ambiguous",
                f"{self.template(spec.id)}の{self.port(spec.id, name, '入力')}（{_type(kind)}）と"
                f"同じ名前の出力はありませんが、同じ型の出力があります: "
                f"{'、'.join(self.output(s) for s in similar)}",
                [spec.id, *dict.fromkeys(s.partition(".")[0] for s in similar)],
                f"使う出力か設定値を選んでください。{_typed(key, similar[0])}"
                f"設定値で受け取るなら、CLI では --bind {key}=vars.{name} と入力します。",
                binding=key,
                choices=[*similar, f"vars.{name}"],
            )
            return None
        return self.var(spec, name, name)

    def explicit_target(self, spec: TemplateSpec, name: str, kind: str, expr: str) -> Target | None:
        ref: Reference | None = None
        if "${" in expr:
            try:
                ref = single_reference(expr)
            except BlockError:
                ref = None
            if ref is not None and not ref.length:
                if ref.root == "vars" and ref.path:
                    return self.var(spec, name, str(ref.path[0]))
                return ref.root, ref.path
        elif expr.startswith("vars.") and NAME_RE.match(expr[5:]):
            return self.var(spec, name, expr[5:])
        else:
            owner, _, alias = expr.partition(".")
            found = self.exports.get(owner, {}).get(alias) if owner != spec.id else None
            if found is not None:
                if types_compatible(kind, found[0]):
                    return found[1]
                self.mismatch(spec.id, name, kind, owner, alias, found[0])
                return None
        available = [f"{t}.{a}" for t, table in self.exports.items() if t != spec.id for a in table]
        self.conflict(
            "invalid_binding",
            f"{self.template(spec.id)}の{self.port(spec.id, name, '入力')}に指定された"
            f" '{expr}' を解釈できません。",
            [spec.id],
            f"{_FORMS}で書いてください。使える出力: "
            f"{'、'.join(self.output(a) for a in available) or 'なし'}",
        )
        return None

    def var(self, spec: TemplateSpec, name: str, var_name: str) -> Target:
        default = spec.vars_defaults.get(var_name, spec.vars_defaults.get(name))
        self.declare(var_name, default, spec.id)
        if var_name not in self.unbound:
            self.unbound.append(var_name)
        return "vars", (var_name,)

    def declare(self, name: str, value: Any, owner: str) -> None:
        if name in self.values:
            self.vars[name] = self.values[name]
        elif self.vars.get(name) is None:
            self.vars[name] = value
            self.var_owner[name] = owner
        elif value is not None and value != self.vars[name]:
            first = self.var_owner[name]
            self.conflict(
                "var_conflict",
                f"設定値 '{name}' の既定値が{self.template(first)}（{_value(self.vars[name])}）と"
                f"{self.template(owner)}（{_value(value)}）で違います。",
                [first, owner],
                f'使う値を決めてください（API では vars_values に "{name}": 値 と書きます）。',
            )

    def mismatch(
        self, template: str, name: str, kind: str, owner: str, alias: str, other: str
    ) -> None:
        self.conflict(
            "type_mismatch",
            f"{self.template(template)}の{self.port(template, name, '入力')}は{_type(kind)}"
            f"ですが、{self.template(owner)}の{self.port(owner, alias, '出力')}は{_type(other)}です。",
            [template, owner],
            "型の合う出力を指定するか、テンプレートの型を見直してください"
            f"（CLI では --bind {template}.{name}=テンプレートID.出力名 と入力します）。",
        )

    def duplicate_export(self, name: str, first: str, owner: str, alias: str) -> None:
        self.conflict(
            "duplicate_export",
            f"{self.template(first)}の{self.port(first, name, '出力')}と{self.template(owner)}の"
            f"{self.port(owner, alias, '出力')}が、Plan の出力として同じ名前になります"
            "（Plan の出力の名前は重複できません）。",
            [first, owner],
            f'片方の名前を変えてください（API では rename_exports に "{owner}.{alias}": '
            f'"{owner}_{alias}" と書きます）。後のテンプレートがどちらかを使うなら、'
            "使う出力も指定してください。",
        )


def _short(text: str | None) -> str | None:
    """A description short enough to name a port (its first sentence), else None."""
    first = (text or "").strip().split("。", 1)[0].split("\n", 1)[0].strip()
    return first if first and len(first) <= MAX_PORT_NAME_CHARS else None


def _type(kind: str) -> str:
    return f"{TYPE_WORDS.get(kind, kind)}型" if kind != "any" else "型を問わない値"


def _value(value: Any) -> str:
    return str(value) if isinstance(value, str | int | float | bool) else "値あり"


def _typed(key: str, choice: str) -> str:
    """What to type for one binding, said as what to type (the 設計 page offers a choice)."""
    return (
        f"CLI では --bind {key}={choice} と入力します"
        f'（API では bindings に "{key}": "{choice}" と書きます）。'
    )


def _substitute(ref: Reference, *, targets: Mapping[str, Target | None]) -> str | None:
    """``${imports.name.rest}`` → the bound target followed by ``rest`` (None: leave it)."""
    target = targets.get(str(ref.path[0]))
    if target is None:
        return None
    root, path = target
    return ref_text(root, (*path, *ref.path[1:]), ref.length)
