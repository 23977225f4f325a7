"""``ui.interactive_input``: the one block that asks a person (seed 002 §3, seed 004 §7).

Fields are declared as ``requirements`` (file, files, folder, text, select, boolean, number,
chat, table, enum) and the same block serves four modes:

- ``collect``: fill in the fields → ``collected_data``; ``approved`` is true.
- ``confirm``: approve or reject → ``approved`` (a rejection is an answer, not an error).
- ``inquire``: answer in free text → ``response``; fields, if any, are collected too.
- ``mixed``: fields and an approval (a rejected request does not need its required fields).

Answers arrive as a mapping requirement id → value, plus the reserved keys ``approved`` and
``response``. Every answer is checked against its field type; all problems are reported in one
``BlockError`` so that a person fixes everything in one pass instead of one field per rerun.
Field definitions live in :mod:`keiri_agent.blocks.ui.field_types`, answer checks in
:mod:`keiri_agent.blocks.ui.answers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, UIBlock
from keiri_agent.blocks.ui.answers import check_answer, is_empty, missing_fix, to_bool
from keiri_agent.blocks.ui.field_types import (
    FIELD_TYPES,
    RESERVED_IDS,
    FieldError,
    normalize_requirements,
    problem,
    problems_error,
)
from keiri_agent.errors import input_error

__all__ = [
    "FIELD_TYPES",
    "MODES",
    "RESERVED_IDS",
    "InteractiveInputBlock",
    "normalize_requirements",
]

MODES = ("collect", "confirm", "inquire", "mixed")


def _mode_of(inputs: Mapping[str, Any]) -> str:
    mode = inputs.get("mode")
    if mode not in MODES:
        raise input_error(
            f"mode {mode!r} は使えません。",
            f"mode は {', '.join(MODES)} のいずれかにしてください。",
            field="mode",
            actual_value=mode,
        )
    return str(mode)


class InteractiveInputBlock(UIBlock):
    """Asks a person for files, values, an approval or a free-text answer."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        mode = _mode_of(inputs)
        requirements = normalize_requirements(inputs.get("requirements"))
        if mode == "confirm" and requirements:
            # The confirm output carries no collected_data: fields would be asked and dropped.
            raise input_error(
                "confirm モードでは requirements を指定できません（入力値が出力されません）。",
                "項目の入力と承認の両方が必要なら mode: mixed を使ってください。",
                field="requirements",
                ids=[r["id"] for r in requirements],
            )

    def describe_request(self, inputs: dict[str, Any]) -> dict[str, Any]:
        return {
            "mode": _mode_of(inputs),
            "message": inputs.get("message") or "",
            "requirements": normalize_requirements(inputs.get("requirements")),
            "context": dict(inputs.get("context") or {}),
        }

    def build_outputs(
        self, inputs: dict[str, Any], answers: dict[str, Any], ctx: BlockContext
    ) -> dict[str, Any]:
        mode = _mode_of(inputs)
        requirements = normalize_requirements(inputs.get("requirements"))
        problems: list[dict[str, str]] = []
        approved = _approval(mode, answers, problems)
        response = _response(mode, answers, problems)
        collected: dict[str, Any] = {}
        answered: list[str] = []
        defaults_used: list[str] = []
        if mode != "confirm":
            # A rejected mixed request needs no field values: the person said "no".
            for req in requirements:
                value, source = _field_value(req, answers.get(req["id"]), approved, problems, ctx)
                collected[req["id"]] = value
                if source == "answer":
                    answered.append(req["id"])
                elif source == "default":
                    defaults_used.append(req["id"])
        if problems:
            raise problems_error(
                "入力内容に問題があります",
                problems,
                recoverable=True,
                node_id=ctx.node_id,
                mode=mode,
            )
        return {
            "collected_data": collected,
            "approved": bool(approved),  # not None here: a missing approval is a problem
            "response": response,
            "metadata": {"mode": mode, "answered": answered, "defaults_used": defaults_used},
        }


def _approval(mode: str, answers: Mapping[str, Any], problems: list[dict[str, str]]) -> bool | None:
    """``approved``: asked in confirm and mixed modes, true where nobody is asked to approve;
    None when the answer is missing or unreadable (a problem is recorded)."""
    if mode not in ("confirm", "mixed"):
        return True
    raw = answers.get("approved")
    if raw is None:
        fix = "approved に true（承認）か false（却下）を指定してください"
        problems.append(problem("approved", "承認", "承認／却下の回答がありません", fix))
        return None
    try:
        return to_bool(raw)
    except FieldError as exc:
        problems.append(problem("approved", "承認", exc.message, exc.fix))
        return None


def _response(mode: str, answers: Mapping[str, Any], problems: list[dict[str, str]]) -> str:
    """``response``: required in inquire mode, an optional comment otherwise."""
    raw = answers.get("response")
    if mode == "inquire" and is_empty(raw):
        fix = "response に回答を文章で入力してください"
        problems.append(problem("response", "回答", "回答が入力されていません", fix))
        return ""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        fix = "response には文章を入力してください"
        problems.append(problem("response", "回答", "回答が文字列ではありません", fix))
        return ""
    return raw


def _field_value(
    req: Mapping[str, Any],
    raw: Any,
    approved: bool | None,
    problems: list[dict[str, str]],
    ctx: BlockContext,
) -> tuple[Any, str]:
    """One field's checked value and where it came from: "answer", "default" or "none"."""
    req_id, label = req["id"], req["label"]
    source = "answer"
    if is_empty(raw):
        if is_empty(req["default"]):
            if req["required"] and approved is not False:
                problems.append(problem(req_id, label, "未入力です（必須）", missing_fix(req)))
            return None, "none"
        raw, source = req["default"], "default"
    try:
        # Paths are looked up where the run may read (ctx.access), named node.field if refused.
        return check_answer(req, raw, ctx.access, f"{ctx.node_id}.{req_id}"), source
    except FieldError as exc:
        prefix = "既定値 " if source == "default" else ""
        problems.append(problem(req_id, label, prefix + exc.message, exc.fix))
        return None, "none"
