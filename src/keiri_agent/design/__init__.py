"""Plan generation (seed 004): Top-K blocks, templates and compose, two-stage generation,
self-repair, the requirements builder and the design chat.

The public entry points are re-exported here::

    from keiri_agent.design import generate_plan, DesignChat
    result = generate_plan("請求書と入金明細を照合して差異を Excel に出力", documents_text=[...])
    result.status   # "ok" | "needs_input" | "failed" | "fallback"

Modules: ``topk`` (block retrieval), ``templates``/``snippets``/``compose`` (templates),
``schema`` (the dynamic LLM models), ``prompts``, ``engine`` (the steps), ``repair``,
``requirements``, ``finish`` (validation, dry-run, log, fallback), ``chat``, ``store``,
``documents`` (reference files → text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent._lazy import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.design.chat import DesignChat, describe_result
    from keiri_agent.design.compose import ComposeConflict, ComposeResult, compose
    from keiri_agent.design.engine import generate_plan
    from keiri_agent.design.models import (
        DesignEngineOptions,
        GeneratedPlan,
        Requirement,
        RequirementTarget,
    )
    from keiri_agent.design.requirements import apply_answers, build_requirements
    from keiri_agent.design.store import save_plan
    from keiri_agent.design.templates import TemplateLibrary, TemplateSpec
    from keiri_agent.design.topk import BlockRetriever, RetrievalResult

__all__ = [
    "BlockRetriever",
    "ComposeConflict",
    "ComposeResult",
    "DesignChat",
    "DesignEngineOptions",
    "GeneratedPlan",
    "Requirement",
    "RequirementTarget",
    "RetrievalResult",
    "TemplateLibrary",
    "TemplateSpec",
    "apply_answers",
    "build_requirements",
    "compose",
    "describe_result",
    "generate_plan",
    "save_plan",
]

# Loaded on first use: `blocks search` needs only .topk, not the LLM layer behind .engine.
_EXPORTS = {
    "BlockRetriever": ".topk",
    "ComposeConflict": ".compose",
    "ComposeResult": ".compose",
    "DesignChat": ".chat",
    "DesignEngineOptions": ".models",
    "GeneratedPlan": ".models",
    "Requirement": ".models",
    "RequirementTarget": ".models",
    "RetrievalResult": ".topk",
    "TemplateLibrary": ".templates",
    "TemplateSpec": ".templates",
    "apply_answers": ".requirements",
    "build_requirements": ".requirements",
    "compose": ".compose",
    "describe_result": ".chat",
    "generate_plan": ".engine",
    "save_plan": ".store",
}
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
