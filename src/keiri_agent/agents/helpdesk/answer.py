"""The final answer (seed 001 §4.6), built only from what was found.

- No subtask resolved: the model is not asked at all; the answer says plainly that the materials
  do not cover the question and who to ask (``prompts.no_answer``), so no guess reaches the user.
- Otherwise the model writes the answer from the resolved subtasks (an unresolved one is passed
  by name only). A draft that cites something not retrieved for the resolved subtasks, states a
  fact in a sentence no citation covers (``grounding.uncited_sentences``), or is not in Japanese
  is sent back once (``llm.revise.revise_once``); what is still wrong after that is removed
  (citations, uncited sentences) or flagged (language), and said in the answer.
- An answer with unresolved subtasks opens by saying part of the question was not confirmed and
  ends with 【未解決の項目】, decided from the subtasks' structured status, never from the
  model's wording. ``sources`` are exactly the hits the answer cites.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from keiri_agent.agents.helpdesk.context import HelpDeskContext, log, stage
from keiri_agent.agents.helpdesk.grounding import (
    UNRESOLVED_REASONS,
    check_citations,
    remove_sentences,
    uncited_sentences,
)
from keiri_agent.agents.helpdesk.models import (
    AgentState,
    CitedSource,
    FinalCheck,
    SearchOutput,
    Subtask,
    citation,
)
from keiri_agent.agents.helpdesk.prompts import (
    HelpDeskAgentPrompts,
    final_answer_messages,
    fix_requests,
    revision_message,
)
from keiri_agent.errors import LLMOutputError
from keiri_agent.llm.revise import is_japanese_text, revise_once

__all__ = ["collect_sources", "create_answer", "finish_answer", "unresolved_items"]

NODE = "create_answer"


def unresolved_items(subtasks: Sequence[Subtask]) -> str:
    """One ``- task（why）`` line per unresolved subtask."""
    return "\n".join(
        f"- {s.task_name}（{UNRESOLVED_REASONS.get(s.unresolved_reason or '', '未確認')}）"
        for s in subtasks
        if s.unresolved
    )


def _allowed(subtasks: Sequence[Subtask]) -> list[SearchOutput]:
    """The hits a final answer may cite: the relevant hits the resolved subtasks answered from."""
    return [hit for s in subtasks if not s.unresolved for hit in s.used_results()]


def _require_text(text: str) -> str:
    if not text.strip():
        raise LLMOutputError(
            "最終回答が空でした。",
            hint="再実行するか、KEIRI_LLM_MODEL_HELPDESK で別のモデルを指定してください。",
        )
    return text.strip()


def create_answer(state: AgentState, runtime: Runtime[HelpDeskContext]) -> dict[str, Any]:
    ctx = runtime.context
    prompts = ctx.prompts
    stage(ctx, NODE, NODE, "start")
    subtasks = sorted(state["subtask_results"], key=lambda subtask: subtask.index)
    if all(s.unresolved for s in subtasks):
        log(
            ctx,
            NODE,
            "資料で確認できた項目が無いため、推測の回答は作らず未解決として答えます",
            "warning",
        )
        answer = prompts.no_answer.format(items=unresolved_items(subtasks))
        stage(ctx, NODE, NODE, "done")
        return {"last_answer": answer, "answer_check": FinalCheck(status="unresolved")}
    llm = ctx.llm.bind(node_id=NODE)
    messages = final_answer_messages(prompts, state["question"], subtasks)
    allowed = _allowed(subtasks)

    def problems(text: str) -> list[str]:
        checked = check_citations(_require_text(text), allowed)
        return fix_requests(
            prompts,
            removed=checked.removed,
            uncited=uncited_sentences(checked.text),
            japanese=is_japanese_text(text),
        )

    def revise(draft: str, found: Sequence[str]) -> str:
        log(ctx, NODE, "最終回答の書き直しを依頼します: " + " ".join(found), "warning")
        request = revision_message(prompts, found)
        return str(llm.invoke([*messages, AIMessage(draft), request]).text)

    text, _, revised = revise_once(str(llm.invoke(messages).text), problems, revise)
    answer, check = finish_answer(text, subtasks, prompts, revised=revised)
    for label in check.removed_citations:
        log(ctx, NODE, f"検索結果に無い出典を回答から削除しました: {label}", "warning")
    for sentence in check.removed_sentences:
        log(ctx, NODE, f"出典の無い記述を回答から削除しました: {sentence}", "warning")
    if not check.japanese:
        log(ctx, NODE, prompts.not_japanese_note, "warning")
    stage(ctx, NODE, NODE, "done")
    return {"last_answer": answer, "answer_check": check}


def finish_answer(
    text: str,
    subtasks: Sequence[Subtask],
    prompts: HelpDeskAgentPrompts,
    *,
    revised: bool = False,
) -> tuple[str, FinalCheck]:
    """The model's answer checked against the resolved subtasks' hits: citations of anything
    else removed (and said), the subtask answers' sources added when it cites none, a lead and
    a closing note when subtasks are unresolved, a note when it is not Japanese."""
    checked = check_citations(_require_text(text), _allowed(subtasks))
    body = checked.text.strip()
    cited = list(checked.cited)
    # With citations, a fact no citation covers is not confirmed by the materials: it goes.
    # (Without any, the sources of the subtask answers it was written from are named below.)
    uncited = uncited_sentences(body) if cited else []
    if uncited:
        body = remove_sentences(body, uncited)
    if not cited:
        # The answer was written from the subtask answers, whose citations were verified.
        cited = list(
            {
                citation(h): h for s in subtasks if not s.unresolved for h in s.cited_results()
            }.values()
        )
        if cited:
            labels = "、".join(citation(hit) for hit in cited)
            body = f"{body}\n\n{prompts.sources_note.format(citations=labels)}"
    japanese = is_japanese_text(body)
    notes = []
    if checked.removed:
        # Named without the 【出典: 】 brackets, so the note does not read as a citation.
        bare = [label.removeprefix("【出典: ").removesuffix("】") for label in checked.removed]
        notes.append(prompts.removed_citations_note.format(citations="、".join(bare)))
    if uncited:
        notes.append(prompts.uncited_removed_note.format(count=len(uncited)))
    if not japanese:
        notes.append(prompts.not_japanese_note)
    partial = any(s.unresolved for s in subtasks)
    parts = [prompts.partial_lead] if partial else []
    parts += [body, *notes]
    if partial:
        parts.append(prompts.unresolved_note.format(items=unresolved_items(subtasks)))
    check = FinalCheck(
        status="partial" if partial else "answered",
        removed_citations=checked.removed,
        removed_sentences=uncited,
        cited=cited,
        japanese=japanese,
        revised=revised,
    )
    return "\n\n".join(parts), check


def collect_sources(check: FinalCheck) -> list[CitedSource]:
    """The hits the final answer cites, once each, in the order it cites them."""
    return [CitedSource.from_hit(hit) for hit in check.cited]
