"""Stage 2 of plan generation: the wiring attempts and their repair (seed 004 §5, §6).

Each attempt sends the wiring prompt (plus, from the second on, a repair turn with the errors,
the spec excerpts of the blocks involved, the node diff between the last two attempts and the
contracts of the templates involved) under the stage-2 schema (``design.wire``), parses the
reply, validates the plan and dry-runs it. Validation errors and dry-run findings both send the
plan back, for at most ``max_attempts`` attempts in all (the first and up to two repairs by
default). Every attempt's prompt size, schema size and outcome goes to the design log.

:class:`Asker` makes the structured calls of both stages. It sends the hand-built schema in
the variant the endpoint takes (strict for OpenAI's own API and Azure, tool use otherwise:
``design.engine.schema_variant``); a provider that refuses
the request (HTTP 400: no tools, no such schema support) is asked once more without a schema,
for JSON in the reply text, which is extracted (``llm.extract``) and validated the same way
(seed 004 §5.1's free-form fallback). From then on that generation stays free-form; each such
attempt is recorded as ``mode: free_form``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from keiri_agent.design.candidates import estimate_tokens
from keiri_agent.design.finish import DesignLog
from keiri_agent.design.models import AttemptRecord
from keiri_agent.design.prompts import FREE_FORM, DesignPrompts
from keiri_agent.design.repair import (
    dump_plan,
    node_diff,
    offending_blocks,
    spec_excerpts,
    summarize_errors,
)
from keiri_agent.design.templates import TemplateSpec
from keiri_agent.design.to_plan import to_plan_dict
from keiri_agent.design.wire import WireSchema
from keiri_agent.errors import ErrorCode, LLMError, LLMOutputError
from keiri_agent.llm import LLMClient
from keiri_agent.llm.extract import extract_json_object
from keiri_agent.llm.field_problems import details_of, field_problems, lines_of
from keiri_agent.plan import (
    IssueCode,
    PlanEnv,
    PlanIssue,
    dry_run_source,
    parse_source,
    validate_text,
)
from keiri_agent.privacy import Ours, compose, fill

__all__ = ["REQUIREMENT_FINDINGS", "Asker", "Wiring", "prompt_size"]

M = TypeVar("M", bound=BaseModel)
Messages = list[tuple[str, str]]
# Dry-run findings the user answers (a value still unknown), not the model: no repair.
REQUIREMENT_FINDINGS = frozenset({IssueCode.DRY_RUN_NO_SAMPLE})


def prompt_size(messages: Messages) -> tuple[int, int]:
    """Characters and estimated tokens of every message of a request."""
    text = "".join(content for _, content in messages)
    return len(text), estimate_tokens(text)


def _refused(exc: LLMError) -> bool:
    """The provider refused the request itself (HTTP 400), e.g. tools or schema unsupported."""
    return exc.details.get("failure") == "bad_request"


class Asker:
    """Structured calls under a hand-built schema, with the free-form fallback."""

    def __init__(self, llm: LLMClient, *, strict: bool, free_form_fallback: bool) -> None:
        self.llm = llm
        self.strict = strict
        self.free_form_fallback = free_form_fallback
        self.free_form = False  # set once the provider refused a schema

    def ask(self, model: type[M], wire: WireSchema, messages: Messages) -> M:
        if not self.free_form:
            try:
                return self.llm.structured(
                    model,
                    messages,
                    method="function_calling",
                    tool_schema=wire.schema,
                    strict=True if self.strict else None,
                )
            except LLMOutputError:
                raise
            except LLMError as exc:
                if not (self.free_form_fallback and _refused(exc)):
                    raise
                self.free_form = True
        return self._free_form(model, wire, messages)

    def _free_form(self, model: type[M], wire: WireSchema, messages: Messages) -> M:
        schema = json.dumps(wire.schema, ensure_ascii=False, separators=(",", ":"))
        # the schema is the product's (block ids and descriptions): not masked
        reply = self.llm.invoke([*messages, ("human", fill(FREE_FORM, ours={"schema": schema}))])
        text = reply.text
        found = extract_json_object(text)
        if found is None:
            raise LLMOutputError(
                "LLM の応答（形式指定なし）に JSON オブジェクトが見つかりませんでした。",
                code=ErrorCode.OUTPUT_SCHEMA_MISMATCH,
                hint="構造化出力（ツール呼び出し）に対応したモデルを KEIRI_LLM_MODEL_PLAN で指定してください。",
                details={"raw": text[:2000], "mode": "free_form"},
            )
        try:
            return model.model_validate(found)
        except ValidationError as exc:
            problems = field_problems(exc, data=found, schema=model)
            lines = lines_of(problems)
            raise LLMOutputError(
                "LLM の応答（形式指定なし）が Plan の形式に合いませんでした: " + "; ".join(lines),
                code=ErrorCode.OUTPUT_SCHEMA_MISMATCH,
                hint="構造化出力（ツール呼び出し）に対応したモデルを KEIRI_LLM_MODEL_PLAN で指定してください。",
                details={
                    "raw": text[:2000],
                    "mode": "free_form",
                    "problems": lines,
                    "validation": details_of(problems),
                },
            ) from None


@dataclass(kw_only=True)
class Wiring:
    """The attempts of one stage-2 round (see the module docstring)."""

    asker: Asker
    env: PlanEnv  # the generation's (``finish.design_env``)
    prompts: DesignPrompts
    log: DesignLog
    max_attempts: int
    plan_id: str | None
    templates: Sequence[TemplateSpec]
    dry_run: bool

    def run(self, model: type[BaseModel], wire: WireSchema, human: str) -> list[AttemptRecord]:
        attempts: list[AttemptRecord] = []
        for number in range(1, self.max_attempts + 1):
            messages: Messages = [("system", self.prompts.system_text()), ("human", human)]
            if attempts:
                messages.append(("human", self._repair_prompt(attempts)))
                self.log.stage("repair", "start", attempt=number)
            self.log.stage("wiring", "start", attempt=number)
            attempt = self._attempt(model, wire, messages, number, attempts)
            attempts.append(attempt)
            self.log.stage("validate", attempt.outcome, attempt=number)
            self.log.metric("design.attempt", attempt.metrics())
            if attempt.valid:
                break
        return attempts

    def _attempt(
        self,
        model: type[BaseModel],
        wire: WireSchema,
        messages: Messages,
        number: int,
        previous: list[AttemptRecord],
    ) -> AttemptRecord:
        started = time.perf_counter()
        chars, tokens = prompt_size(messages)
        sizes = {"prompt_chars": chars, "prompt_tokens": tokens, "schema_bytes": wire.size}

        def mode() -> Any:
            return "free_form" if self.asker.free_form else "structured"

        try:
            design = self.asker.ask(model, wire, messages)
        except LLMOutputError as exc:
            self.log.raw_outputs[number] = str(exc.details.get("raw", ""))
            elapsed = (time.perf_counter() - started) * 1000
            return AttemptRecord(
                number=number, output_error=exc.message, duration_ms=elapsed, mode=mode(), **sizes
            )
        plan = to_plan_dict(design)
        if self.plan_id:
            plan["id"] = self.plan_id
        errors, findings = self._check(plan)
        before = previous[-1].plan if previous else None
        return AttemptRecord(
            number=number,
            plan=plan,
            errors=errors,
            findings=findings,
            diff=node_diff(before, plan) if before is not None else [],
            duration_ms=(time.perf_counter() - started) * 1000,
            mode=mode(),
            reasoning=str(getattr(design, "reasoning", "") or ""),
            **sizes,
        )

    def _check(self, plan: dict[str, Any]) -> tuple[list[PlanIssue], list[PlanIssue]]:
        """Validation errors, then (for a valid plan) the dry run's findings to repair."""
        text = dump_plan(plan)
        report = validate_text(text, self.env)
        if report.errors or not self.dry_run:
            return list(report.errors), []
        dry = dry_run_source(parse_source(text), self.env)
        findings = [
            PlanIssue(code=f.code, message=f.message, node_id=f.node_id, path=f.path, hint=f.hint)
            for f in dry.findings
            if f.code not in REQUIREMENT_FINDINGS
        ]
        return [], findings

    def _repair_prompt(self, attempts: list[AttemptRecord]) -> str:
        last = attempts[-1]
        problems = [*last.errors, *last.findings]
        blocks = offending_blocks(last.plan, problems)
        diff = ""
        if last.diff:
            changes = "\n".join(f"- {c.describe()}" for c in last.diff)
            diff = compose(
                Ours(f"\n### 前回（{last.number - 1} 回目）からの変更点（ノード単位）\n"),
                changes,  # node ids the model chose
                Ours("\n"),
            )
        previous = dump_plan(last.plan) if last.plan else self.log.raw_outputs.get(last.number, "")
        kind = "ドライラン" if last.findings and not last.errors else "検証"
        # the template's text, the kind and the spec excerpts are the product's; the errors
        # quote the plan's values, and the plan and the templates' contracts are the user's
        return fill(
            self.prompts.repair,
            ours={
                "attempt": str(last.number),
                "kind": kind,
                "specs": spec_excerpts(self.env.registry, blocks) if blocks else "（該当なし）",
            },
            theirs={
                "errors": summarize_errors(problems, last.output_error),
                "diff": diff,
                "contracts": self._contracts(problems),
                "previous": previous,
            },
        )

    def _contracts(self, problems: Sequence[PlanIssue]) -> str:
        named = {e.node_id for e in problems if e.node_id}
        involved = [t for t in self.templates if any(n.startswith(f"{t.id}_") for n in named)]
        if not involved:
            return ""
        return (
            "\n### 関係するテンプレートの契約\n" + "\n\n".join(t.summary() for t in involved) + "\n"
        )
