"""The dry-run engine (seed 002 §7, フォールバック禁止): check a plan's I/O without real data.

``dry_run`` walks each graph in dependency order and never loads or runs a block. A block node's
outputs are its spec's declared samples (``dry_run.samples[0]``, else ``examples[0]``, else
``default``); an output port that declares none fails that node with ``DRY_RUN_NO_SAMPLE``
instead of an invented value. Inputs are rendered from vars, env, config, loop variables and
upstream samples and checked against the input ports. ``when`` is decided on the sample values;
a loop body runs once (foreach: on the first element); subflows are walked recursively.

Every problem becomes a :class:`DryRunFinding` (code, Japanese message and hint, node); all of
them are collected. ``_dryrun.source.dry_run_source`` validates first and walks only a valid plan:
structural checks are the validator's, value checks the dry run's. Given the run's file access
(``files``), the files the plan's blocks will read are looked up too (``_dryrun.input_files``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import NO_SAMPLE, port_is_required, port_sample
from keiri_agent.blocks.ui.samples import collected_sample
from keiri_agent.errors import BlockError, reason_of
from keiri_agent.events.models import type_label
from keiri_agent.file_access import FileAccess
from keiri_agent.plan._dryrun.evaluator import UNAVAILABLE, DryScope, Evaluator, display
from keiri_agent.plan._dryrun.input_files import input_file_problems
from keiri_agent.plan._dryrun.report import DryRunFinding, DryRunNode, DryRunReport
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.models import (
    MAX_SUBFLOW_DEPTH,
    BlockNode,
    LoopNode,
    Plan,
    SubflowNode,
    when_raw,
)
from keiri_agent.plan._dsl.refs import single_reference
from keiri_agent.plan._graph.compiled import AnyNode, CompiledGraph, compile_graph
from keiri_agent.plan._graph.env import EnvOptions, PlanEnv
from keiri_agent.plan._graph.names import plan_words
from keiri_agent.plan._graph.scope import Scope
from keiri_agent.plan._graph.subflows import (
    Chain,
    call_cycle,
    call_too_deep,
)

__all__ = [
    "MAX_SUBFLOW_DEPTH",
    "DryRunFinding",
    "DryRunNode",
    "DryRunReport",
    "dry_run",
]


class _Walker:
    """Walks graphs, loops and subflows (blocks and subflows read through the command's
    ``env``); values and findings live in ``self.evaluator``."""

    def __init__(self, env: PlanEnv, evaluator: Evaluator, files: FileAccess | None) -> None:
        self.env, self.evaluator, self.files = env, evaluator, files
        self.nodes: list[DryRunNode] = []

    def graph(
        self,
        nodes: Sequence[AnyNode],
        scope: DryScope,
        prefix: str,
        stack: Chain,
        compiled: CompiledGraph | None = None,
    ) -> None:
        """Walk ``nodes`` in the runner's order, on its compiled graph (``compiled``: a loop
        body's, compiled with its parent; conditions are parsed there, never per node)."""
        if compiled is None:
            try:  # a cycle or a broken condition only reaches here without validation
                compiled = compile_graph(list(nodes))
            except BlockError as exc:
                self.evaluator.add(None, exc.code, exc.message, exc.hint)
        order = [compiled.nodes[n] for n in compiled.order] if compiled else list(nodes)
        for node in order:
            self.node(node, scope, prefix, stack, compiled)

    def node(
        self, node: AnyNode, scope: DryScope, prefix: str, stack: Chain, graph: CompiledGraph | None
    ) -> None:
        report = DryRunNode(node_id=prefix + node.id, kind=node.type)
        self.nodes.append(report)
        try:
            decided = None
            if node.when is not None:
                when = graph.conditions[node.id] if graph else node.when
                decided = self.evaluator.condition(when, scope, report, "when")
            if decided is False:
                # Skipped nodes are not checked further: with these samples they would not run.
                report.status = "skipped"
                report.notes.append("when がサンプル値で偽と判定されたため、スキップしました。")
                scope.nodes[node.id] = None  # as in the runner: no outputs at all
                report.outputs = display(dict.fromkeys(self._output_names(node)))
                return
            if decided is True:
                report.notes.append("when はサンプル値で真と判定されました。")
            if isinstance(node, BlockNode):
                self.block(node, scope, report)
            elif isinstance(node, LoopNode):
                self.loop(node, scope, report, stack, graph)
            else:
                self.subflow(node, scope, report, stack)
        except Exception as exc:  # bad input must become a finding, never a crash
            self.evaluator.add(
                report,
                IssueCode.DRY_RUN_INTERNAL_ERROR,
                f"{self.evaluator.words.node(report.node_id)} をドライランできませんでした:"
                f" {reason_of(exc)}",
                "`keiri-agent plan validate` で Plan を検証してください。"
                " 検証を通る Plan で起きる場合は不具合として報告してください。",
            )
            scope.nodes.setdefault(node.id, UNAVAILABLE)
        report.status = "failed" if report.findings else "ok"

    def _output_names(self, node: AnyNode) -> list[str]:
        if isinstance(node, BlockNode):
            spec = self.env.registry.find(node.block)
            return [node.out.get(p, p) for p in spec.outputs] if spec else list(node.out.values())
        if isinstance(node, LoopNode):
            return node.out.names(node.body.plan.exports)
        return [e.as_ for e in node.out.exports]

    def block(self, node: BlockNode, scope: DryScope, report: DryRunNode) -> None:
        add, words = self.evaluator.add, self.evaluator.words
        spec = self.env.registry.find(node.block)
        if spec is None:
            hint = "`keiri-agent blocks list` で利用可能なブロックを確認してください。"
            message = f"ブロック '{node.block}' は登録されていません。"
            add(report, IssueCode.UNKNOWN_BLOCK, message, hint)
            scope.nodes[node.id] = UNAVAILABLE
            return
        report.block = spec.ref
        inputs: dict[str, Any] = {}
        for key, raw in node.inputs.items():
            port = spec.inputs.get(key)
            if port is None:
                hint = f"使える入力: {', '.join(spec.inputs) or 'なし'}"
                add(
                    report,
                    IssueCode.UNKNOWN_INPUT,
                    f"{words.block(spec.id)} に入力 '{key}' はありません。",
                    hint,
                )
                continue
            inputs[key] = self.evaluator.input_value(raw, port, key, scope, report)
            # The runner's rule (_run.execute.prepare_inputs): an optional input may be null.
            optional_null = inputs[key] is None and not (
                port.get("nullable") or port_is_required(port)
            )
            if optional_null and "default" in port:
                inputs[key] = port["default"]  # as the runner does: null means "not given"
            elif inputs[key] is not UNAVAILABLE and not optional_null:
                what = f"{words.place(report.node_id, f'in.{key}')} の値"
                self.evaluator.check(inputs[key], port, report, f"in.{key}", what)
        for key, port in spec.inputs.items():
            if key in node.inputs:
                continue
            if port_is_required(port):
                message = (
                    f"{words.block(spec.id)} の必須入力 {words.port(spec.id, key)} がありません。"
                )
                fix = f"in に {key}: を追加してください。"
                add(report, IssueCode.MISSING_REQUIRED_INPUT, message, fix)
            elif "default" in port:
                inputs[key] = port["default"]
        report.inputs = display(inputs, self.evaluator.masked(node.inputs, scope))
        if self.files is not None:
            sampled = {k for k, raw in node.inputs.items() if self.evaluator.null_var(raw, scope)}
            found = input_file_problems(spec, node.inputs, inputs, sampled, self.files)
            for port_name, message, hint in found:
                add(report, IssueCode.DRY_RUN_INPUT_FILE, message, hint, f"in.{port_name}")
        outputs: dict[str, Any] = {}
        for name, port in spec.outputs.items():
            alias = node.out.get(name, name)
            sample = port_sample(port)
            if sample is NO_SAMPLE:
                add(
                    report,
                    IssueCode.DRY_RUN_NO_SAMPLE,
                    f"{words.block(spec.ref)} の出力 {words.port(spec.id, name)} には"
                    "サンプルが宣言されていないため、"
                    "ドライランできません。",
                    f"ブロック定義（{spec.source or spec.id}）の outputs.{name} に"
                    " dry_run: {samples: [...]}（または examples / default）を宣言してください。",
                    f"out.{name}",
                )
                outputs[alias] = UNAVAILABLE
                continue
            if name == "collected_data" and spec.is_ui:
                sample = _collected_sample(inputs.get("requirements"), sample, report)
            what = f"{words.place(report.node_id, f'out.{name}')} のサンプル"
            self.evaluator.check(sample, port, report, f"out.{name}", what)
            outputs[alias] = sample
        scope.nodes[node.id] = outputs
        report.outputs = display(outputs)

    def loop(
        self,
        node: LoopNode,
        scope: DryScope,
        report: DryRunNode,
        stack: Chain,
        graph: CompiledGraph | None,
    ) -> None:
        body: DryScope = Scope(vars=scope.vars, parent=scope)
        compiled = graph.bodies[node.id] if graph else None
        prefix = f"{report.node_id}/"
        items: Any = None
        if node.foreach is not None:
            items = self._foreach_items(node, scope, report)
            first = items[0] if isinstance(items, list) and items else UNAVAILABLE
            body.loop_vars[node.foreach.itemVar] = first
            if node.foreach.indexVar:
                body.loop_vars[node.foreach.indexVar] = 0
            self.graph(node.body.plan.graph, body, prefix, stack, compiled)
        else:
            assert node.while_ is not None
            path = "while.condition"
            condition = graph.loop_conditions[node.id] if graph else node.while_.condition
            # As in the runner: before the first pass the body's nodes exist without outputs.
            body.nodes = dict.fromkeys(n.id for n in node.body.plan.graph)
            found = len(report.findings)
            before = self.evaluator.condition(condition, body, report, path)
            body.nodes = {}
            report.inputs = display({"while.condition": when_raw(node.while_.condition)})
            report.notes.append(f"while 条件の初回判定（本体の出力は null）: {_truth(before)}")
            self.graph(node.body.plan.graph, body, prefix, stack, compiled)
            if len(report.findings) == found:  # a broken condition is reported once
                after = self.evaluator.condition(condition, body, report, path)
                report.notes.append(f"本体 1 回後の判定（サンプル値）: {_truth(after)}")
        report.notes.append("ループ本体はサンプル値で 1 回だけドライランしました。")
        exports = {
            e.as_: self.evaluator.export(e.from_, body, report, f"body.plan.exports.{e.as_}")
            for e in node.body.plan.exports
        }
        outputs: dict[str, Any] = {}
        for name in node.out.names(node.body.plan.exports):
            value = exports.get(name, UNAVAILABLE)
            if name not in exports:
                self.evaluator.add(
                    report,
                    IssueCode.LOOP_UNKNOWN_COLLECT,
                    f"out.collect の '{name}' は body.plan.exports にありません。",
                    f"exports の as に定義した名前を指定してください（{', '.join(exports) or 'なし'}）。",
                    "out.collect",
                )
            if value is UNAVAILABLE or items is UNAVAILABLE:
                outputs[name] = UNAVAILABLE
            else:
                outputs[name] = [] if items == [] else [value]
        scope.nodes[node.id] = outputs
        report.outputs = display(outputs)

    def _foreach_items(self, node: LoopNode, scope: DryScope, report: DryRunNode) -> Any:
        assert node.foreach is not None
        raw, path = node.foreach.input, "foreach.input"
        items = self.evaluator.render(raw, scope, report, path)
        report.inputs = display({path: items}, self.evaluator.masked({path: raw}, scope))
        lone = single_reference(raw) if isinstance(raw, str) and "${" in raw else None
        if items is None and lone is not None and lone.root == "vars":
            self.evaluator.add(
                report,
                IssueCode.DRY_RUN_NO_SAMPLE,
                f"foreach の入力 {lone.text} が null で、ドライランに使う値がありません。",
                f"ドライランで設定値 {lone.text} にリストを与えてください。",
                path,
            )
            return UNAVAILABLE
        if items is not UNAVAILABLE and not isinstance(items, list):
            self.evaluator.add(
                report,
                IssueCode.TYPE_MISMATCH,
                f"foreach.input はリストである必要がありますが、{type_label(items)}でした。",
                "配列を出力するノードの出力（例: ${parse.evidence.files}）を指定してください。",
                path,
            )
            return UNAVAILABLE
        if items == []:
            self.evaluator.add(
                report,
                IssueCode.DRY_RUN_NO_SAMPLE,
                "foreach の入力がサンプルでは空のリストのため、ループ本体を確かめられません。",
                "上流ブロックの dry_run.samples に 1 件以上の要素を持つリストを宣言してください。",
                path,
            )
        elif isinstance(items, list):
            report.notes.append(f"foreach は {len(items)} 件中の先頭の要素で本体を確かめました。")
        return items

    def subflow(self, node: SubflowNode, scope: DryScope, report: DryRunNode, stack: Chain) -> None:
        plan_id = node.call.plan_id
        report.block = plan_id
        given = {
            k: self.evaluator.render(v, scope, report, f"call.inputs.{k}")
            for k, v in node.call.inputs.items()
        }
        masked = self.evaluator.masked(node.call.inputs, scope)
        report.inputs = display(given, masked)
        outputs: dict[str, Any] = {e.as_: UNAVAILABLE for e in node.out.exports}
        scope.nodes[node.id] = outputs
        loaded = self.env.subflows.load(plan_id)
        error = call_too_deep(stack, plan_id) or call_cycle(stack, plan_id, loaded) or loaded.error
        if error is not None:
            self.evaluator.add(report, error.code, error.message, error.hint, "call.plan_id")
            return
        sub = loaded.plan
        assert sub is not None
        variables = self.evaluator.plan_vars(sub, given, report, render_given=False)
        variables.secret |= set(masked)
        sub_scope: DryScope = Scope(vars=variables)
        # the subflow's steps are named as the subflow names them, not as the caller does
        outer, self.evaluator.words = self.evaluator.words, plan_words(sub, self.env.registry)
        try:
            self.graph(sub.graph, sub_scope, f"{report.node_id}/", (*stack, (plan_id, loaded.file)))
        finally:
            self.evaluator.words = outer
        published = {e.as_: e.from_ for e in sub.exports}
        for export in node.out.exports:
            source = published.get(export.from_, export.from_)
            path = f"out.exports.{export.as_}"
            outputs[export.as_] = self.evaluator.export(source, sub_scope, report, path)
        report.outputs = display(outputs)


def _collected_sample(requirements: Any, declared: Any, report: DryRunNode) -> Any:
    """A UI node's ``collected_data``: one example answer per requirement the plan declares.

    The spec's sample has its own keys; downstream ``${node.collected.<id>}`` must be checked
    against the ids this node really asks for (seed 002 §3).
    """
    if not isinstance(requirements, list):
        return declared
    report.notes.append("collected_data は requirements の各項目の例（既定値）で作りました。")
    return collected_sample(requirements)


def _truth(value: bool | None) -> str:
    return "判定できません" if value is None else ("真" if value else "偽")


def dry_run(
    plan: Plan,
    registry: BlockRegistry | PlanEnv,
    *,
    vars_override: Mapping[str, Any] | None = None,
    file: str | None = None,
    files: FileAccess | None = None,
    **options: Unpack[EnvOptions],
) -> DryRunReport:
    """Dry-run a (validated) plan on declared samples; never loads or runs a block.

    ``registry``: the command's :class:`PlanEnv` (its subflow loader the one its validation
    used, so that the dry run walks the subflow files that were validated), or a registry with
    ``options`` to build one from. ``file`` is the plan's resolved file (for the cycle guard).
    ``files``: the run's file access, to look up the files the blocks will read (None: not).
    """
    started = time.perf_counter()
    env = PlanEnv.given(registry, **options)
    evaluator = Evaluator(env, plan_words(plan, env.registry))
    walker = _Walker(env, evaluator, files)
    given = dict(vars_override or {})
    variables = evaluator.plan_vars(plan, given, None, render_given=True)
    scope: DryScope = Scope(vars=variables)
    walker.graph(plan.graph, scope, "", ((plan.id, file),))
    exports = {
        e.as_: evaluator.export(e.from_, scope, None, f"exports.{e.as_}") for e in plan.exports
    }
    return DryRunReport(
        plan_id=plan.id,
        ok=not evaluator.findings,
        nodes=walker.nodes,
        findings=evaluator.findings,
        exports=display(exports),
        duration_ms=(time.perf_counter() - started) * 1000,
    )
