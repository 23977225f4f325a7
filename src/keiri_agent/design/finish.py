"""The end of a generation: checking a plan, what it still needs, the log, the fallback.

``finish_plan`` fills answered vars, validates, dry-runs (timed) and asks the requirements builder
what is still missing; the design chat calls it again after each answer. ``DesignLog`` writes the
generation's events (stages, LLM calls, metrics) to ``<KEIRI_RUNS_DIR>/design/<time>.jsonl``.
The fallback plan exists only for ``KEIRI_AGENT_LLM_FALLBACK=1`` and says that it is one.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.config import Settings
from keiri_agent.design.compose import ComposeConflict
from keiri_agent.design.models import AttemptRecord, GeneratedPlan, Requirement, RequirementTarget
from keiri_agent.design.plan_nodes import node_blocks
from keiri_agent.design.repair import dump_plan
from keiri_agent.design.requirements import build_requirements
from keiri_agent.design.schema import MissingInfo
from keiri_agent.design.templates import TemplateLibrary, TemplateSpec
from keiri_agent.errors import BlockError
from keiri_agent.events import EventStream, open_run
from keiri_agent.plan import PlanEnv, PlanIssue, dry_run_source, parse_source, validate_text
from keiri_agent.retrieval import BM25Index

__all__ = [
    "DESIGN_LOG_SOURCE",
    "DesignLog",
    "conflict_issues",
    "design_env",
    "fallback_plan",
    "finish_plan",
    "recommend_templates",
    "skeleton_requirements",
]

DESIGN_LOG_SOURCE = "design"
FALLBACK_NOTE = "fallback"
MAX_RECOMMENDED = 3  # templates suggested after a failed generation


def design_env(registry: BlockRegistry | None, settings: Settings) -> PlanEnv:
    """What a generation checks its drafts with (built once per generation or chat answer):
    no ``${env.*}`` of this process is read (a draft's reference to one is a warning to set it
    before a run)."""
    return PlanEnv.of(registry, settings=settings, env={})


def skeleton_requirements(questions: Sequence[MissingInfo]) -> list[Requirement]:
    """Stage 1's questions as requirements whose answers become context for the next round."""
    return [
        Requirement(
            id=q.id,
            type=q.type,
            label=q.question,
            options=list(q.options),
            hint=q.hint,
            target=RequirementTarget(kind="context"),
        )
        for q in questions
    ]


def conflict_issues(conflicts: Sequence[ComposeConflict]) -> list[PlanIssue]:
    return [
        PlanIssue(code=f"COMPOSE_{c.kind.upper()}", message=c.message, hint=c.hint)
        for c in conflicts
    ]


def recommend_templates(
    instruction: str, library: TemplateLibrary, *, limit: int = MAX_RECOMMENDED
) -> list[TemplateSpec]:
    """The templates closest to ``instruction``, best first: BM25 over Sudachi terms of their
    id, title, description and tags (as Top-K ranks blocks; a Japanese sentence has no spaces
    to split on). None when no term is shared."""
    specs = library.list()
    if not specs:
        return []
    texts = [
        " ".join([s.id.replace("_", " "), s.title, s.description or "", *s.tags, *s.tags])
        for s in specs
    ]
    index = BM25Index.build(texts, ids=[s.id for s in specs])
    return [specs[hit.index] for hit in index.search(instruction, k=limit)]


def _fill_vars(plan: dict[str, Any], answers: Mapping[str, Any]) -> dict[str, Any]:
    declared = dict(plan.get("vars") or {})
    for key, value in answers.items():
        if key in declared and declared[key] in (None, ""):
            declared[key] = value
    return {**plan, "vars": declared}


def _blocks(plan: Mapping[str, Any]) -> list[str]:
    return list(node_blocks(plan.get("graph")))


class DesignLog:
    """Events and metrics of one generation (or of one design chat turn)."""

    def __init__(self, stream: EventStream | None) -> None:
        self.stream = stream
        self.raw_outputs: dict[int, str] = {}
        self.dry_run_ms: float | None = None

    @classmethod
    def open(cls, settings: Settings, *, runs_dir: Path | None = None) -> DesignLog:
        return cls(open_run(DESIGN_LOG_SOURCE, runs_dir=runs_dir or settings.keiri_runs_dir))

    def stage(self, step: str, status: str, **extra: Any) -> None:
        if self.stream is not None:
            attempt = extra.get("attempt")
            name = f"{step}#{attempt}" if attempt else step
            self.stream.emit("stage", step=name, status=status)

    def metric(self, scope: str, values: Mapping[str, Any]) -> None:
        if self.stream is not None:
            self.stream.emit("metrics", scope=scope, values=dict(values))

    def suggest(
        self, result: GeneratedPlan, instruction: str, registry: BlockRegistry
    ) -> GeneratedPlan:
        """Seed 004 §6: after a failure, ask for missing items and recommend templates."""
        requirements = (
            build_requirements(result.plan, errors=result.errors, registry=registry)
            if result.plan
            else build_requirements(result.errors, registry=registry)
        )
        result.requirements = requirements
        if requirements:
            names = "、".join(r.label or r.id for r in requirements[:5])
            result.suggestions.append(
                f"不足している項目（{names}）を設計チャットで回答してください。"
            )
        matches = recommend_templates(instruction, TemplateLibrary.load(registry=registry))
        for template in matches:
            result.suggestions.append(
                f"テンプレート「{template.title}」（{template.id}）を選んで再生成すると安定します。"
            )
        if not matches:
            result.suggestions.append(
                "近いテンプレートを選ぶ（--templates）か、指示に入力ファイルと出力を具体的に書いて再生成してください。"
            )
        return result

    def fallback(self, instruction: str, reason: str, *, env: PlanEnv) -> GeneratedPlan:
        plan = fallback_plan(instruction)
        self.stage("fallback", "used")
        result = finish_plan(
            plan,
            env=env,
            reasoning=f"{FALLBACK_NOTE}: KEIRI_AGENT_LLM_FALLBACK=1 のため代替 Plan を返しました（理由: {reason}）",
            attempts=[],
            answers={},
            log=self,
            dry_run=True,
        )
        result.status = "fallback"
        return result

    def close(self, result: GeneratedPlan, *, started: float, apply_mode: str) -> GeneratedPlan:
        error_counts = [
            len(a.errors) + len(a.findings) + (1 if a.output_error else 0) for a in result.attempts
        ]
        metrics = {
            "status": result.status,
            "apply_mode": apply_mode,
            "attempts": len(result.attempts),
            "validation_errors": error_counts,
            "repair_rounds": max(len(result.attempts) - 1, 0),
            "attempt_details": [a.metrics() for a in result.attempts],
            "candidate_count": len(result.candidates),
            "cut_count": len(result.cut),
            "dry_run_ms": self.dry_run_ms,
            "chosen_blocks": dict(Counter(_blocks(result.plan))) if result.plan else {},
            "requirements": len(result.requirements),
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        result.metrics = {**result.metrics, **metrics}
        self.metric("design.generate", metrics)
        if self.stream is not None:
            result.run_log = str(self.stream.log_path) if self.stream.log_path else None
            self.stream.close()
        return result

    def close_failed(self, error: BlockError) -> None:
        if self.stream is not None:
            self.stream.emit("error", step="design", message=error.message, error=error.to_dict())
            self.stream.close()


def fallback_plan(instruction: str) -> dict[str, Any]:
    """The plan returned only under KEIRI_AGENT_LLM_FALLBACK=1: ask a person for what is needed."""
    return {
        "apiVersion": "v1",
        "id": "fallback_plan",
        "version": "0.1.0",
        "description": f"自動生成に失敗したための代替 Plan（指示: {instruction[:200]}）",
        "graph": [
            {
                "id": "ask",
                "block": "ui.interactive_input",
                "in": {
                    "mode": "inquire",
                    "message": "自動生成に失敗しました。業務に必要な情報とファイルを入力してください。",
                    "requirements": [
                        {
                            "id": "files",
                            "type": "files",
                            "label": "対象ファイル",
                            "required": False,
                        },
                        {"id": "details", "type": "text", "label": "処理の内容（具体的に）"},
                    ],
                },
            }
        ],
    }


def finish_plan(
    plan: dict[str, Any],
    *,
    env: PlanEnv,
    reasoning: str,
    attempts: list[AttemptRecord],
    answers: Mapping[str, Any],
    log: DesignLog,
    dry_run: bool,
) -> GeneratedPlan:
    """Validate ``plan`` (answers filled), dry-run it, and list what is still missing;
    ``env``: the generation's (:func:`design_env`)."""
    plan = _fill_vars(plan, answers)
    text = dump_plan(plan)
    report = validate_text(text, env)
    requirements = build_requirements(plan, errors=report.errors, registry=env.registry)
    # What the result says whatever its status.
    written: dict[str, Any] = {"plan": plan, "yaml": text, "reasoning": reasoning}
    written |= {"attempts": attempts, "requirements": requirements}
    if not report.valid:
        return GeneratedPlan(status="failed", errors=report.errors, **written)
    dry: dict[str, Any] | None = None
    if dry_run:
        started = time.perf_counter()
        source = parse_source(text)
        dry_report = dry_run_source(source, env)
        log.dry_run_ms = round((time.perf_counter() - started) * 1000, 3)
        dry = dry_report.to_dict()
        log.stage("dry_run", "ok" if dry_report.ok else "findings")
    pending = [r for r in requirements if r.required]
    return GeneratedPlan(status="needs_input" if pending else "ok", dry_run=dry, **written)
