"""The design chat (seed 004 §7): generation over several turns, driven by requirements.

``start()`` generates; when the result needs input, its requirements are the questions (the
same fields ``ui.interactive_input`` shows in inquire mode). ``answer(values)`` checks the answers
like that block does, then either fills the plan (vars and node inputs: no LLM call) or, for
questions from the skeleton stage, generates again with the answers as confirmed context.
The chat's state is plain data, so a UI can keep it in its session.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Unpack

from pydantic import BaseModel, Field

from keiri_agent.blocks.registry import BlockRegistry, default_registry
from keiri_agent.config import load_settings
from keiri_agent.design.engine import DesignParts, generate_plan
from keiri_agent.design.finish import DesignLog, design_env, finish_plan
from keiri_agent.design.models import ApplyMode, DesignEngineOptions, GeneratedPlan
from keiri_agent.design.requirements import apply_answers
from keiri_agent.errors import input_error

__all__ = ["ChatTurn", "DesignChat", "describe_result"]


class ChatTurn(BaseModel):
    role: Literal["assistant", "user"]
    text: str
    answers: dict[str, Any] = Field(default_factory=dict)


def describe_result(result: GeneratedPlan) -> str:
    """What the assistant says about a result, in Japanese."""
    if result.status == "ok":
        return f"Plan を生成しました（検証エラー 0 件、試行 {max(len(result.attempts), 1)} 回）。"
    if result.status == "needs_input":
        asked = "、".join(r.label or r.id for r in result.requirements if r.required)
        return f"Plan を完成させるために、次の項目を教えてください: {asked}"
    if result.status == "fallback":
        return f"自動生成に失敗したため代替 Plan を返しました。{result.reasoning}"
    listed = "；".join(f"{e.message}（コード {e.code}）" for e in result.errors[:5])
    return f"Plan を完成できませんでした（エラー {len(result.errors)} 件）: {listed}"


class DesignChat:
    """One design conversation; see the module docstring."""

    def __init__(
        self,
        instruction: str,
        documents_text: Sequence[str] = (),
        *,
        selected_templates: Sequence[str] = (),
        apply_mode: ApplyMode = "hint",
        options: DesignEngineOptions | None = None,
        registry: BlockRegistry | None = None,
        **given: Unpack[DesignParts],
    ) -> None:
        self.instruction = instruction
        self.documents_text = list(documents_text)
        self.selected_templates = list(selected_templates)
        self.apply_mode: ApplyMode = apply_mode
        self.options = options or DesignEngineOptions()
        self.registry = registry or default_registry()
        self.settings = given.get("settings") or load_settings()
        self.given: DesignParts = {**given, "settings": self.settings}  # for every generation
        self.context: dict[str, Any] = {}  # confirmed answers to skeleton questions
        self.filled: dict[str, Any] = {}  # answers put into the plan
        self.turns: list[ChatTurn] = []
        self.result: GeneratedPlan | None = None

    @property
    def plan_id(self) -> str | None:
        return self.given.get("plan_id")

    def _generate(self) -> GeneratedPlan:
        return generate_plan(
            self.instruction,
            self.documents_text,
            self.registry,
            self.options,
            self.selected_templates,
            self.apply_mode,
            answers={**self.context, **self.filled},
            **self.given,
        )

    def _record(self, result: GeneratedPlan) -> GeneratedPlan:
        self.result = result
        self.turns.append(ChatTurn(role="assistant", text=describe_result(result)))
        return result

    def start(self) -> GeneratedPlan:
        self.turns.append(ChatTurn(role="user", text=self.instruction))
        return self._record(self._generate())

    @property
    def vars_preview(self) -> dict[str, Any]:
        """The values confirmed so far (seed 004 UI: 確定値のプレビュー)."""
        return {**self.context, **self.filled}

    def answer(self, answers: Mapping[str, Any]) -> GeneratedPlan:
        """Apply one round of answers and continue; bad answers raise before anything changes."""
        last = self.result
        if last is None:
            raise input_error(
                "設計チャットがまだ始まっていません。", "先に start() で生成を始めてください。"
            )
        if not last.requirements:
            raise input_error(
                "いま回答を待っている項目はありません。",
                "指示を変えて作り直す場合は、新しい設計チャットを始めてください。",
            )
        updated, context = apply_answers(last.plan or {}, last.requirements, answers)
        given = {
            r.id: answers[r.id] for r in last.requirements if answers.get(r.id) not in (None, "")
        }
        self.turns.append(ChatTurn(role="user", text="回答", answers=given))
        self.context.update(context)
        if context or last.plan is None:
            self.filled.update({k: v for k, v in given.items() if k not in context})
            return self._record(self._generate())
        self.filled.update(given)
        log = DesignLog.open(self.settings, runs_dir=self.given.get("runs_dir"))
        started = time.perf_counter()
        result = finish_plan(
            updated,
            env=design_env(self.registry, self.settings),
            reasoning=f"{last.reasoning}（設計チャットの回答を反映）",
            attempts=last.attempts,
            answers={},
            log=log,
            dry_run=self.options.dry_run,
        )
        result.candidates, result.skeleton = last.candidates, last.skeleton
        return self._record(log.close(result, started=started, apply_mode=self.apply_mode))
