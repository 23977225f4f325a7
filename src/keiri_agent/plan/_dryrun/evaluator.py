"""What a value is during a dry run (seed 002 §7): its scope, references, conditions, checks.

``_dryrun.dryrun`` walks the graphs; this module's :class:`Evaluator` answers what a value is
while walking, reading
references through the phases' one scope (:data:`DryScope`, ``_graph.scope``). Values
come only from vars, env, config, loop variables and declared samples. A value that cannot be
known (its source declares no sample) is :data:`UNAVAILABLE`: its source is reported once, and
nodes downstream only note that they could not check it, so one missing sample is one finding.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from keiri_agent.blocks.schema import SchemaRefError, check_value, json_types, resolve_port
from keiri_agent.blocks.spec import NO_SAMPLE, port_sample
from keiri_agent.errors import BlockError
from keiri_agent.events.models import summarize_value
from keiri_agent.plan._dryrun.report import DryRunFinding, DryRunNode
from keiri_agent.plan._dsl.expr import Expression, compile_when, truthy
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.models import Plan, When, when_raw
from keiri_agent.plan._dsl.refs import (
    Reference,
    ReferencePathError,
    bare_reference,
    iter_references,
    render,
    resolve_env_config,
    resolve_path,
    single_reference,
)
from keiri_agent.plan._graph.env import PlanEnv
from keiri_agent.plan._graph.names import PlanWords
from keiri_agent.plan._graph.scope import Scope

__all__ = [
    "UNAVAILABLE",
    "DryScope",
    "Evaluator",
    "Vars",
    "display",
]

UNAVAILABLE: Final[Any] = object()  # a value the dry run cannot know; reported at its source
_UNKNOWN_LABEL = "（不明: ドライランでは値を得られません）"
_MASKED_LABEL = "＊＊＊（環境変数を含むため非表示）"


class _RefError(Exception):
    """A reference did not resolve; becomes a finding on the node that made it."""

    def __init__(self, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.code, self.message, self.hint = code, message, hint


class _Unavailable(Exception):  # noqa: N818 - a signal, not an error
    """A reference reached UNAVAILABLE; the cause was already reported where it arose."""


@dataclass
class Vars:
    """One plan's vars as the run will see them (UNAVAILABLE where they cannot be resolved)."""

    values: dict[str, Any] = field(default_factory=dict)
    secret: set[str] = field(default_factory=set)  # vars whose value comes from the environment
    shown: dict[str, str] = field(default_factory=dict)  # var → as messages name it (Plan.var_text)


DryScope = Scope[Any, Vars]
"""The dry run's scope (``_graph.scope``): node outputs as samples, UNAVAILABLE or None."""


def display(values: Mapping[str, Any], masked: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Values as a report shows them: summarized, unknown ones labelled, secrets hidden."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key in masked:
            out[key] = _MASKED_LABEL
        else:
            out[key] = _UNKNOWN_LABEL if value is UNAVAILABLE else summarize_value(value)
    return out


class Evaluator:
    """Resolves references and checks values for one dry run; collects every finding."""

    def __init__(self, env: PlanEnv, words: PlanWords) -> None:
        self.env = env  # the command's: ``${env.*}`` and ``${config.*}`` are read from it
        self.words = words  # how the messages name the plan's nodes, ports and references
        self.findings: list[DryRunFinding] = []

    def add(
        self, node: DryRunNode | None, code: str, message: str, hint: str, path: str = ""
    ) -> None:
        node_id = node.node_id if node else None
        finding = DryRunFinding(code=code, message=message, node_id=node_id, path=path, hint=hint)
        self.findings.append(finding)
        if node is not None:
            node.findings.append(finding)

    def plan_vars(
        self,
        plan: Plan,
        given: Mapping[str, Any],
        at: DryRunNode | None,
        *,
        render_given: bool,
    ) -> Vars:
        """A plan's vars as the runner builds them: declared values overridden by ``given``.

        Like the runner, every var is resolved up front (a missing env var fails the run even
        if no node reads it); ``given`` values are templates too for the top-level plan, but
        plain data for a subflow's call inputs. Undeclared names are findings.
        """
        plan_id, declared = plan.id, plan.vars
        for name in given:
            if name not in declared:
                self.add(
                    at,
                    IssueCode.UNKNOWN_VAR,
                    f"Plan {plan_id} に設定値 '{name}' は定義されていません。",
                    f"定義されている vars: {plan.var_listing()}。綴りを確認してください。",
                    f"vars.{name}",
                )
        variables = Vars()
        for name, raw in {**declared, **given}.items():
            variables.shown[name] = plan.var_text(name)
            if name in given and not render_given:
                variables.values[name] = raw
                continue
            if self._reads_env(raw):
                variables.secret.add(name)
            try:
                variables.values[name] = render(raw, self._var_ref)
            except _RefError as failed:
                message = (
                    f"Plan {plan_id} の {plan.var_text(name)} を解決できません: {failed.message}"
                )
                self.add(at, failed.code, message, failed.hint, f"vars.{name}")
                variables.values[name] = UNAVAILABLE
            except BlockError as exc:
                self.add(at, IssueCode.UNRESOLVED_REFERENCE, exc.message, exc.hint, f"vars.{name}")
                variables.values[name] = UNAVAILABLE
        return variables

    # --- inputs --------------------------------------------------------------------------------

    def input_value(
        self, raw: Any, port: Mapping[str, Any], key: str, scope: DryScope, node: DryRunNode
    ) -> Any:
        """The rendered input; a lone ``${vars.x}`` whose var is null takes the port's sample."""
        name = self.null_var(raw, scope)
        if name is None:
            return self.render(raw, scope, node, f"in.{key}")
        sample = port_sample(dict(port))
        shown = scope.vars.shown[name]
        if sample is NO_SAMPLE:
            self.add(
                node,
                IssueCode.DRY_RUN_NO_SAMPLE,
                f"{self.words.place(node.node_id, f'in.{key}')} に値もサンプルもありません"
                f"（{shown} が null です）。",
                f"{shown} に値を与える（ドライランで設定値を指定する）か、ブロック定義の inputs.{key} に"
                " examples か dry_run.samples を宣言してください。",
                f"in.{key}",
            )
            return UNAVAILABLE
        # A note of what the dry run did keeps the plan's own words (the recorded dry-run outputs
        # of the examples, tests/plan/golden, hold it); a finding to fix names the var's label.
        node.notes.append(
            f"{self.words.place(node.node_id, f'in.{key}')}: {shown} が null のため、"
            "入力のサンプル値を使いました。"
        )
        return copy.deepcopy(sample)

    def null_var(self, raw: Any, scope: DryScope) -> str | None:
        """The var's name when ``raw`` is one reference to a var whose value is null."""
        try:
            ref = single_reference(raw) if isinstance(raw, str) else None
        except BlockError:
            return None  # render reports it
        if ref is None or ref.root != "vars" or not ref.path:
            return None
        name = str(ref.path[0])
        return name if name in scope.vars.values and scope.vars.values[name] is None else None

    def check(
        self, value: Any, port: Mapping[str, Any], node: DryRunNode, path: str, what: str
    ) -> None:
        """``value`` against the port's schema (bytes pass for ``format: binary``)."""
        try:
            schema = resolve_port(port)
        except SchemaRefError as exc:
            self.add(node, IssueCode.SCHEMA_REF_UNRESOLVED, exc.message, exc.hint, path)
            return
        problem = check_value(value, schema)
        if problem:
            types = "/".join(sorted(json_types(schema) or ())) or "任意"
            self.add(
                node,
                IssueCode.TYPE_MISMATCH,
                f"{what}が型（{types}）に合いません: {problem}",
                "参照元のサンプル値と型を確認し、必要なら型を変換するブロックを間に入れてください。",
                path,
            )

    def masked(self, raw_inputs: Mapping[str, Any], scope: DryScope) -> frozenset[str]:
        """Inputs not to display because they carry environment values (possibly secrets)."""
        out: set[str] = set()
        for key, raw in raw_inputs.items():
            for ref in self._refs(raw):
                var = str(ref.path[0]) if ref.path else ""
                if ref.root == "env" or (ref.root == "vars" and var in scope.vars.secret):
                    out.add(key)
        return frozenset(out)

    # --- references ----------------------------------------------------------------------------

    def render(self, value: Any, scope: DryScope, node: DryRunNode | None, path: str) -> Any:
        """``value`` with its references replaced; every failing reference is a finding."""
        try:
            refs = [ref for _, ref in iter_references(value)]
        except BlockError as exc:
            self.add(node, IssueCode.INVALID_REFERENCE, exc.message, exc.hint, path)
            return UNAVAILABLE
        resolved: dict[str, Any] = {}
        complete = True
        for ref in refs:
            if ref.text in resolved:
                continue
            try:
                resolved[ref.text] = self.resolve(ref, scope)
            except _RefError as failed:
                where = self.words.place(node.node_id if node else None, path)
                self.add(node, failed.code, f"{where}: {failed.message}", failed.hint, path)
                complete = False
            except _Unavailable:
                if node is not None:
                    where = self.words.place(node.node_id, path)
                    node.notes.append(
                        f"{where} は {self.words.reference(ref.text)} の値が不明なため"
                        "検査していません。"
                    )
                complete = False
        if not complete:
            return UNAVAILABLE
        try:
            return render(value, lambda ref: resolved[ref.text])
        except BlockError as exc:  # a value that cannot be embedded into text
            self.add(node, IssueCode.TYPE_MISMATCH, exc.message, exc.hint, path)
            return UNAVAILABLE

    def resolve(self, ref: Reference, scope: DryScope) -> Any:
        """One reference's value (raises _RefError or _Unavailable)."""
        try:
            return self._resolve(ref, scope)
        except ReferencePathError as exc:
            raise _RefError(IssueCode.UNRESOLVED_REFERENCE, exc.message, exc.hint) from exc

    def _resolve(self, ref: Reference, scope: DryScope) -> Any:
        root, name = ref.root, str(ref.path[0]) if ref.path else ""
        if root == "vars":
            if name not in scope.vars.values:
                raise _RefError(
                    IssueCode.UNRESOLVED_REFERENCE,
                    f"参照 {ref.text} を解決できません: vars に '{name}' が定義されていません。",
                    f"定義されている vars: {', '.join(scope.vars.values) or 'なし'}",
                )
            if scope.vars.values[name] is UNAVAILABLE:
                raise _Unavailable(ref.text)
            return resolve_path(scope.vars.values, ref)
        if root in ("env", "config"):
            return self._env_config(ref)
        found = scope.read(ref)
        if found.answer == "missing":
            raise _RefError(
                IssueCode.UNRESOLVED_REFERENCE,
                f"参照 {ref.text} を解決できません: '{root}' はここから見えるノードでもループ変数でもありません。",
                "参照できるのは同じ graph と外側のノード、ループ変数、vars/env/config です。",
            )
        value = found.value
        if value is UNAVAILABLE or (
            not found.loop and isinstance(value, Mapping) and value.get(name) is UNAVAILABLE
        ):
            raise _Unavailable(ref.text)
        if found.answer == "null":
            return None
        if found.answer == "skipped":
            raise _RefError(
                IssueCode.UNRESOLVED_REFERENCE,
                f"{self.words.node(root)} はスキップされたか"
                "まだ実行されていないため、出力がありません。",
                f"${{{root}.出力名}} までは null として読めます。先に when: exists(${{{root}.出力名}})"
                " で確かめてください。",
            )
        return resolve_path(value, ref)

    def _env_config(self, ref: Reference) -> Any:
        try:
            return resolve_env_config(ref, self.env.environ, self.env.config)
        except ReferencePathError as exc:
            raise _RefError(IssueCode.UNRESOLVED_REFERENCE, exc.message, exc.hint) from exc

    def _var_ref(self, ref: Reference) -> Any:
        if ref.root not in ("env", "config"):
            raise _RefError(
                IssueCode.UNRESOLVED_REFERENCE,
                f"{ref.text} は使えません。vars から参照できるのは env と config だけです。",
                "ノードの出力を使う場合は、ノードの in で直接参照してください。",
            )
        try:
            return self._env_config(ref)
        except ReferencePathError as exc:
            raise _RefError(IssueCode.UNRESOLVED_REFERENCE, exc.message, exc.hint) from exc

    def condition(
        self, when: Expression | When, scope: DryScope, node: DryRunNode, path: str
    ) -> bool | None:
        """A ``when``/``while`` condition on dry values; None when it cannot be decided.

        ``when`` is the compiled graph's parsed condition; as written only for a graph that
        did not compile (a plan walked without validation).
        """
        try:
            expression = when if isinstance(when, Expression) else compile_when(when_raw(when))
            return truthy(expression.evaluate(lambda ref: self.resolve(ref, scope)))
        except _RefError as failed:
            self.add(node, failed.code, f"{path}: {failed.message}", failed.hint, path)
        except _Unavailable as missing:
            node.notes.append(f"{path} は {missing} の値が不明なため判定できませんでした。")
        except BlockError as exc:  # syntax or evaluation (null > 3, ...)
            self.add(node, IssueCode.INVALID_EXPRESSION, exc.message, exc.hint, path)
        return None

    def export(self, source: str, scope: DryScope, node: DryRunNode | None, path: str) -> Any:
        """The value behind an export's ``from`` (``node.alias[.path]``), or UNAVAILABLE."""
        try:
            ref = bare_reference(source)
        except BlockError as exc:
            self.add(node, IssueCode.INVALID_REFERENCE, exc.message, exc.hint, path)
            return UNAVAILABLE
        try:
            if ref is None:
                raise _RefError(
                    IssueCode.UNRESOLVED_REFERENCE, f"exports の from '{source}' が不正です。", ""
                )
            if scope.read(ref).answer in ("null", "skipped"):
                return None  # the runner exports null from a node that did not run
            return self.resolve(ref, scope)
        except _Unavailable:
            return UNAVAILABLE
        except _RefError as failed:
            hint = failed.hint or "from には ノードID.出力名 を書いてください。"
            self.add(node, failed.code, f"{path}: {failed.message}", hint, path)
            return UNAVAILABLE

    def _refs(self, value: Any) -> list[Reference]:
        try:
            return [ref for _, ref in iter_references(value)]
        except BlockError:
            return []

    def _reads_env(self, value: Any) -> bool:
        return any(ref.root == "env" for ref in self._refs(value))
