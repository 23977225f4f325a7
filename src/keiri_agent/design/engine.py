"""``generate_plan``: instruction and documents → a validated Plan (seed 004 §3–§6, §10).

1. Documents are normalized to ~4,000 characters (``normalize_for_prompt``; none → said so).
2. Top-K retrieval picks the candidate blocks (plus every block of the selected templates and
   ``ui.interactive_input``); the LLM sees only those.
3. ``apply_mode="compose"``: the selected templates are composed without the LLM. Otherwise
   stage 1 asks for the skeleton; questions it cannot answer stop the round with requirements.
4. Stage 2 wires the plan under the dynamic schema; each attempt is validated, and the errors,
   spec excerpts and diff go back to the LLM until it validates or ``max_attempts`` is spent.
5. A valid plan is dry-run; what it still needs becomes requirements for the design chat.

Nothing falls back silently: LLM failures are raised, invalid plans are returned with their
errors and suggestions. Only ``KEIRI_AGENT_LLM_FALLBACK=1`` returns the fallback plan, and its
``reasoning`` says so. Every step is an event in the generation's JSONL log.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import LLMRole, Settings, load_settings
from keiri_agent.design.candidates import CutBlock
from keiri_agent.design.compose import compose
from keiri_agent.design.finish import (
    DesignLog,
    conflict_issues,
    design_env,
    finish_plan,
    skeleton_requirements,
)
from keiri_agent.design.models import (
    ApplyMode,
    AttemptRecord,
    DesignEngineOptions,
    GeneratedPlan,
    SchemaChoice,
)
from keiri_agent.design.prompts import DesignPrompts, catalog_text, context_text
from keiri_agent.design.repair import dump_plan
from keiri_agent.design.schema import PlanSkeleton, design_model, skeleton_model
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec
from keiri_agent.design.topk import BlockRetriever, RetrievalResult
from keiri_agent.design.wire import SchemaVariant, skeleton_schema, wiring_schema
from keiri_agent.design.wiring import Asker, Wiring
from keiri_agent.documents.normalize import normalize_for_prompt
from keiri_agent.errors import BlockError, check_choice, input_error
from keiri_agent.llm import LLMClient, get_llm, strict_schema_for
from keiri_agent.plan import PlanEnv, PlanIssue
from keiri_agent.privacy import fill, job_scope

__all__ = [
    "APPLY_MODES",
    "UI_BLOCK",
    "DesignParts",
    "generate_plan",
    "prompt_documents",
    "required_blocks",
    "retrieve_candidates",
    "schema_variant",
]

APPLY_MODES: tuple[ApplyMode, ...] = ("hint", "compose", "llm-only")
UI_BLOCK = "ui.interactive_input"
DEFAULT_COMPOSED_ID = "composed_plan"


def schema_variant(choice: SchemaChoice, settings: Settings, llm: LLMClient) -> SchemaVariant:
    """The schema variant to send: the option, else KEIRI_LLM_STRICT_SCHEMA, else by endpoint
    (strict only for OpenAI's own API and Azure: ``llm.providers.strict_schema_for``)."""
    if choice != "auto":
        return choice
    return "strict" if strict_schema_for(llm.ref, settings) else "tool"


def prompt_documents(documents_text: Sequence[str], options: DesignEngineOptions) -> str:
    """The reference documents as the prompts carry them: 資料1, 資料2... normalized to
    ``options.max_docs_chars``."""
    docs = [(f"資料{i + 1}", text) for i, text in enumerate(documents_text) if text]
    return normalize_for_prompt(docs, max(options.max_docs_chars, 1)).text


def required_blocks(templates: Sequence[TemplateSpec]) -> list[str]:
    """The blocks every candidate set holds: ``ui.interactive_input`` and the templates' blocks."""
    return list(dict.fromkeys([UI_BLOCK, *(b for t in templates for b in t.blocks())]))


def retrieve_candidates(
    retriever: BlockRetriever,
    instruction: str,
    documents: str,
    templates: Sequence[TemplateSpec],
    options: DesignEngineOptions,
) -> RetrievalResult:
    """Top-K for a request as the generator asks for it (the 設計 page shows the same)."""
    return retriever.retrieve(
        instruction,
        documents=documents,
        mode=options.retrieval_mode,
        k_per_category=options.topk_per_category,
        max_total=options.topk_total,
        required=required_blocks(templates),
        token_budget=options.token_budget,
    )


def _check_arguments(instruction: str, apply_mode: str, templates: Sequence[str]) -> None:
    if not instruction or not instruction.strip():
        raise input_error(
            "指示テキストが空です。",
            "作りたい業務フローを日本語で書いてください（例: 請求書と入金明細を照合して差異を Excel に出力）。",
        )
    check_choice(
        "apply_mode",
        apply_mode,
        APPLY_MODES,
        hint=f"apply_mode は {' / '.join(APPLY_MODES)} のいずれかにしてください。",
    )
    if apply_mode == "compose" and not templates:
        raise input_error(
            "apply_mode=compose にはテンプレートの指定が必要です。",
            "--templates でテンプレート ID を指定するか、apply_mode を hint にしてください。",
        )


class _Engine:
    """One generation: its inputs, its log, and the steps of the module docstring."""

    def __init__(
        self,
        *,
        instruction: str,
        documents_text: Sequence[str],
        env: PlanEnv,
        options: DesignEngineOptions,
        templates: list[TemplateSpec],
        apply_mode: ApplyMode,
        answers: Mapping[str, Any],
        llm: LLMClient,
        retriever: BlockRetriever,
        prompts: DesignPrompts,
        log: DesignLog,
        plan_id: str | None,
    ) -> None:
        self.instruction = instruction.strip()
        self.plan_id = plan_id
        self.env = env  # the generation's: every check of its drafts reads the same files
        self.registry = env.registry
        self.options = options
        self.templates = templates
        self.apply_mode = apply_mode
        self.answers = dict(answers)
        self.llm = llm.bind(events=log.stream) if log.stream is not None else llm
        self.retriever = retriever
        self.prompts = prompts
        self.log = log
        self.documents = prompt_documents(documents_text, options)
        self.variant = schema_variant(options.schema_variant, env.settings, self.llm)
        self.asker = Asker(
            self.llm, strict=self.variant == "strict", free_form_fallback=options.free_form_fallback
        )
        self.cut: list[CutBlock] = []

    # --- the steps ------------------------------------------------------------------------

    def run(self) -> GeneratedPlan:
        if self.apply_mode == "compose":
            return self._compose()
        candidates = self._retrieve()
        skeleton = self._skeleton(candidates)
        questions = [q for q in skeleton.missing_information if q.id not in self.answers]
        if questions:
            self.log.stage("skeleton", "needs_input")
            return GeneratedPlan(
                status="needs_input",
                reasoning="structured: 骨子の段階で確認が必要な事項があります",
                requirements=skeleton_requirements(questions),
                candidates=candidates,
                cut=self.cut,
                skeleton=skeleton.model_dump(),
            )
        result = self._wire(candidates, skeleton)
        result.candidates = candidates
        result.cut = self.cut
        result.skeleton = skeleton.model_dump()
        return result

    def _compose(self) -> GeneratedPlan:
        self.log.stage("compose", "start")
        composed = compose(
            self.templates,
            plan_id=self.plan_id or DEFAULT_COMPOSED_ID,
            description=self.instruction,
            bindings=self.options.bindings,
            vars_values={
                key: value
                for key, value in self.answers.items()
                if any(key in t.vars_defaults or key in t.imports for t in self.templates)
            },
        )
        if composed.plan is None:
            issues = conflict_issues(composed.conflicts)
            self.log.stage("compose", "failed")
            return GeneratedPlan(
                status="failed",
                reasoning="compose: テンプレートの合成で競合がありました",
                errors=issues,
                suggestions=[c.hint for c in composed.conflicts],
                conflicts=composed.conflicts,
            )
        self.log.stage("compose", "done")
        result = self._finish(
            composed.plan, reasoning="compose: テンプレートを合成しました", attempts=[]
        )
        if result.status == "failed":
            return self.log.suggest(result, self.instruction, self.registry)
        return result

    def _retrieve(self) -> list[str]:
        self.log.stage("retrieve", "start")
        result = retrieve_candidates(
            self.retriever, self.instruction, self.documents, self.templates, self.options
        )
        self.log.metric("retrieval", result.metrics())
        self.log.stage("retrieve", "done")
        self.cut = result.cut
        return result.candidate_ids()

    def _template_text(self) -> str:
        if not self.templates or self.apply_mode == "llm-only":
            return ""
        parts = [t.summary() for t in self.templates]
        return "\n## 選択されたテンプレート（尊重して使うこと）\n" + "\n\n".join(parts) + "\n"

    def _skeleton(self, candidates: list[str]) -> PlanSkeleton:
        self.log.stage("skeleton", "start")
        # The template's text and the catalog are the product's; the rest is the user's.
        human = fill(
            self.prompts.skeleton,
            ours={"catalog": catalog_text(self.registry, candidates)},
            theirs={
                "instruction": self.instruction,
                "answers": context_text(self.answers),
                "documents": self.documents,
                "templates": self._template_text(),
            },
        )
        messages = [("system", self.prompts.system_text()), ("human", human)]
        wire = skeleton_schema(candidates, variant=self.variant)
        self.log.metric(
            "schema", {"stage": "skeleton", "variant": self.variant, "bytes": wire.size}
        )
        skeleton = self.asker.ask(skeleton_model(candidates), wire, messages)
        self.log.stage("skeleton", "done")
        return skeleton

    def _options_text(self) -> str:
        tips = []
        if self.options.suggest_when:
            tips.append("条件で分岐する処理には when を使ってください。")
        if self.options.suggest_foreach:
            tips.append(
                f"明細ごとの繰り返しには type: loop の foreach（変数名 {self.options.foreach_var_name}）を使ってください。"
            )
        return ("\n" + "\n".join(tips)) if tips else ""

    def _wire(self, candidates: list[str], skeleton: PlanSkeleton) -> GeneratedPlan:
        model = design_model(self.registry, candidates)
        wire = wiring_schema(self.registry, candidates, variant=self.variant)
        self.log.metric("schema", {"stage": "wiring", "variant": self.variant, "bytes": wire.size})
        human = fill(
            self.prompts.wiring,
            ours={
                "catalog": catalog_text(self.registry, candidates),
                "options": self._options_text(),
            },
            theirs={
                "instruction": self.instruction,
                "answers": context_text(self.answers),
                "skeleton": dump_plan(skeleton.model_dump(exclude_defaults=True)),
                "documents": self.documents,
                "templates": self._template_text(),
            },
        )
        attempts = Wiring(
            asker=self.asker,
            env=self.env,
            prompts=self.prompts,
            log=self.log,
            max_attempts=self.options.max_attempts,
            plan_id=self.plan_id,
            templates=self.templates if self.apply_mode != "llm-only" else [],
            dry_run=self.options.dry_run,
        ).run(model, wire, human)
        last = attempts[-1]
        if last.valid and last.plan is not None:
            repairs = len(attempts) - 1
            note = "structured" + (f"（修復 {repairs} 回）" if repairs else "")
            if last.mode == "free_form":
                note += "・形式指定なしの応答から JSON を抽出"
            return self._finish(
                last.plan, reasoning=f"{note}: {last.reasoning}".strip(), attempts=attempts
            )
        return self._failed(attempts, candidates)

    def _failed(self, attempts: list[AttemptRecord], candidates: list[str]) -> GeneratedPlan:
        last = attempts[-1]
        errors = [*last.errors, *last.findings]
        if last.output_error:
            errors.append(
                PlanIssue(
                    code="OUTPUT_SCHEMA_MISMATCH",
                    message=last.output_error,
                    hint="指示を具体的にするか、テンプレートを選んで再生成してください。",
                )
            )
        result = GeneratedPlan(
            status="failed",
            plan=last.plan,
            yaml=dump_plan(last.plan) if last.plan else None,
            reasoning=f"structured: {len(attempts)} 回試しましたが検証・ドライランのエラーが残りました",
            attempts=attempts,
            errors=errors,
            candidates=candidates,
        )
        return self.log.suggest(result, self.instruction, self.registry)

    def _finish(
        self, plan: dict[str, Any], *, reasoning: str, attempts: list[AttemptRecord]
    ) -> GeneratedPlan:
        return finish_plan(
            plan,
            env=self.env,
            reasoning=reasoning,
            attempts=attempts,
            answers=self.answers,
            log=self.log,
            dry_run=self.options.dry_run,
        )


class DesignParts(TypedDict, total=False):
    """What a generation uses instead of its default (left out or None: the default)."""

    llm: LLMClient | None
    retriever: BlockRetriever | None
    template_library: TemplateLibrary | None
    settings: Settings | None
    prompts: DesignPrompts | None
    runs_dir: Path | None  # where the design log goes
    plan_id: str | None


def generate_plan(
    instruction: str,
    documents_text: Sequence[str] | None = None,
    registry: BlockRegistry | None = None,
    options: DesignEngineOptions | None = None,
    selected_templates: Sequence[str] | None = None,
    apply_mode: ApplyMode = "hint",
    *,
    answers: Mapping[str, Any] | None = None,
    bindings: Mapping[str, str] | None = None,
    **given: Unpack[DesignParts],
) -> GeneratedPlan:
    """Generate a plan; see the module docstring. ``answers`` are the design chat's replies;
    ``bindings`` (compose) decide the conflicts a failed compose returned in ``conflicts``
    (``{conflict.binding: one of conflict.choices}``), on top of ``options.bindings``."""
    selected = list(selected_templates or [])
    _check_arguments(instruction, apply_mode, selected)
    settings = given.get("settings") or load_settings()
    env = design_env(registry, settings)
    registry = env.registry
    options = options or DesignEngineOptions()
    if bindings:
        options = options.model_copy(update={"bindings": {**options.bindings, **bindings}})
    templates: list[TemplateSpec] = []
    if selected:
        library = given.get("template_library") or TemplateLibrary.load(registry=registry)
        templates = [library.get(t) for t in selected]
    log = DesignLog.open(settings, runs_dir=given.get("runs_dir"))
    started = time.perf_counter()
    engine = _Engine(
        instruction=instruction,
        documents_text=list(documents_text or []),
        env=env,
        options=options,
        templates=templates,
        apply_mode=apply_mode,
        answers=answers or {},
        llm=given.get("llm") or get_llm(LLMRole.PLAN, settings=settings),
        retriever=given.get("retriever") or BlockRetriever(registry, settings=settings),
        prompts=given.get("prompts") or DesignPrompts(),
        log=log,
        plan_id=given.get("plan_id"),
    )
    redactor = log.stream.redactor if log.stream is not None else None
    try:
        # One generation, one set of placeholders; its log masks what they hide.
        with job_scope(learnt=redactor.learn_personal if redactor is not None else None) as vault:
            try:
                result = engine.run()
            finally:
                masked = vault.counts()
        if masked:
            result.metrics["masked"] = masked
    except BlockError as exc:
        if not settings.keiri_agent_llm_fallback or apply_mode == "compose":
            log.close_failed(exc)
            raise
        result = log.fallback(instruction, exc.message, env=env)
    if result.status == "failed" and settings.keiri_agent_llm_fallback and apply_mode != "compose":
        reason = "; ".join(e.message for e in result.errors[:3]) or result.reasoning
        fallback = log.fallback(instruction, reason, env=env)
        fallback.attempts, fallback.errors = result.attempts, result.errors
        result = fallback
    return log.close(result, started=started, apply_mode=apply_mode)
