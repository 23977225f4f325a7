"""What an answer may rest on: the relevant hits of this question, and the citations that name them.

- ``split_relevant`` decides which hits count as retrieved at all. It is the agent's one place
  for "nothing relevant was found": a hit the knowledge base flags as under the relevance floor
  (``above_floor``: ``KEIRI_HELPDESK_MIN_RELEVANCE``) is kept out of the model's sight and
  cannot back an answer.
- ``check_citations`` reads every 【出典: …】 label of a text (also in round or square brackets;
  one file or several, ``p.3``,
  ``12 行目``, ``、p.4`` continuing the previous file), keeps the ones that name a relevant hit
  of this question (file and page or row) and removes the others, reporting both.
- ``uncited_sentences`` finds the sentences of an answer that state something without a
  citation: a citation covers the sentences of its paragraph before it (a list of steps ending
  in one label is covered), so what follows the last label of a paragraph, or a paragraph with
  none, is uncited; short connecting sentences (見出し, 「次のとおりです。」, closings with no
  number) state nothing. ``remove_sentences`` takes them out.
- ``attempt_issue`` says why one attempt of a subtask cannot count as resolved, whatever the
  reflection says: every tool call failed, nothing was found, nothing relevant was found, or
  the answer cites none of what was found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from keiri_agent.agents.helpdesk.models import SearchOutput, ToolResult, citation

__all__ = [
    "UNRESOLVED_REASONS",
    "CitationCheck",
    "UnresolvedReason",
    "attempt_issue",
    "check_citations",
    "remove_sentences",
    "retry_advice",
    "split_relevant",
    "uncited_sentences",
]

UnresolvedReason = Literal[
    "tool_errors", "no_results", "below_floor", "no_citation", "not_completed"
]

# Why a subtask stayed unresolved, as the user reads it.
UNRESOLVED_REASONS: dict[str, str] = {
    "tool_errors": "ツールの呼び出しがすべてエラーになり、資料を検索できませんでした",
    "no_results": "検索しても該当する資料が 1 件も見つかりませんでした",
    "below_floor": "検索結果はありましたが、どれも関連度が基準に届きませんでした",
    "no_citation": "回答が検索結果のどれも出典として示していませんでした",
    "not_completed": "資料を調べ直しても十分な回答を得られませんでした",
}

# What the next attempt is told when the agent, not the reflection, found the attempt lacking.
_RETRY_ADVICE: dict[str, str] = {
    "tool_errors": "ツールの呼び出しがすべてエラーでした。エラーの内容を読み、使えるツール名と正しい引数"
    "（query に検索語、k に整数）で呼び出し直してください。",
    "no_results": "検索結果が 0 件でした。資料に書かれていそうな別の語句（同義語・正式名称・"
    "質問文そのもの）や、もう一方のツールで検索し直してください。",
    "below_floor": "関連する資料が見つかりませんでした。資料に書かれていそうな別の語句（同義語・"
    "正式名称・質問文そのもの）や、もう一方のツールで検索し直してください。",
    "no_citation": "回答に出典がありません。根拠にした検索結果の出典ラベル（【出典: …】）を"
    "そのまま書き写してください。検索結果に答えが無い場合は、別の語句で検索し直してください。",
}

# 【出典: …】 as asked; models also write （出典: …）, (出典: …) or [出典: …], checked the same way
# (and rewritten as 【出典: …】).
_LABEL_RE = re.compile(
    r"【\s*出典\s*[:：]\s*([^】]*)】"
    r"|[（(]\s*出典\s*[:：]\s*([^）)]*)[）)]"
    r"|\[\s*出典\s*[:：]\s*([^\]]*)\]"
)
_ITEM_SPLIT_RE = re.compile(r"\s*[、,;]\s*")
_PAGE_RE = re.compile(
    r"^(?P<file>.*?)\s*(?:p\.?|ページ)\s*(?P<n>\d+)\s*(?:ページ)?$", re.IGNORECASE
)
_ROW_RE = re.compile(r"^(?P<file>.*?)\s*(?P<n>\d+)\s*行目?$")
_QA_PREFIX_RE = re.compile(r"^Q\s*&\s*A\s*", re.IGNORECASE)
# A sentence ends at 。！？ unless a citation label follows (it belongs to that sentence).
_SENTENCE_END_RE = re.compile(r"(?<=[。！？!?])(?!\s*(?:【|[（(\[])\s*出典)")
MIN_FACT_CHARS = 12  # shorter sentences (「以上です。」, a heading) state no fact to cite
# Sentences that only connect or close (checked when they hold no digit, which a fact would).
_NON_FACT_PHRASES = (
    "次のとおり",
    "以下のとおり",
    "以下の手順",
    "次の手順",
    "ご確認ください",
    "お問い合わせください",
    "ご相談ください",
    "ご連絡ください",
    "お試しください",
    "よろしくお願い",
)


def split_relevant(hits: Sequence[SearchOutput]) -> tuple[list[SearchOutput], list[SearchOutput]]:
    """``(relevant, too weak)``: the one decision of what counts as found.

    The knowledge base flags each hit against the one relevance floor
    (``KEIRI_HELPDESK_MIN_RELEVANCE`` on the 0..1 relevance, or ``KEIRI_HELPDESK_MIN_SIMILARITY``
    for a semantic Q/A hit): ``SearchOutput.above_floor``.
    """
    relevant = [hit for hit in hits if hit.above_floor]
    weak = [hit for hit in hits if not hit.above_floor]
    return relevant, weak


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


@dataclass(frozen=True)
class _Ref:
    file: str
    page: int | None = None
    row: int | None = None

    def matches(self, hit: SearchOutput) -> bool:
        if self.file != _norm(hit.file_name):
            return False
        if self.page is not None:
            return hit.page == self.page
        if self.row is not None:
            return hit.row == self.row
        return hit.page is None and hit.row is None

    def label(self) -> str:
        where = f" p.{self.page}" if self.page is not None else ""
        where = f" {self.row} 行目" if self.row is not None else where
        return f"【出典: {self.file}{where}】"


def _refs(body: str) -> list[_Ref]:
    refs: list[_Ref] = []
    previous = ""
    for raw in _ITEM_SPLIT_RE.split(_norm(body)):
        item = _QA_PREFIX_RE.sub("", raw.strip())
        if not item:
            continue
        page = _PAGE_RE.match(item)
        row = None if page else _ROW_RE.match(item)
        found = page or row
        file = (found["file"] if found else item).strip() or previous
        refs.append(
            _Ref(
                file=file,
                page=int(page["n"]) if page else None,
                row=int(row["n"]) if row else None,
            )
        )
        previous = file
    return refs


@dataclass
class CitationCheck:
    """A text with its citations checked: ``text`` keeps only the labels of relevant hits."""

    text: str
    verified: list[str] = field(default_factory=list)  # labels kept, once each
    removed: list[str] = field(default_factory=list)  # labels that named no relevant hit
    cited: list[SearchOutput] = field(default_factory=list)  # the hits the text cites

    @property
    def citation_labels(self) -> list[str]:
        return [citation(hit) for hit in self.cited]


def check_citations(text: str, hits: Sequence[SearchOutput]) -> CitationCheck:
    """Keep the citations of ``text`` that name one of ``hits``; remove the others."""
    check = CitationCheck(text="")

    def replace(match: re.Match[str]) -> str:
        kept: list[str] = []
        body = next(group for group in match.groups() if group is not None)
        for ref in _refs(body):
            hit = next((h for h in hits if ref.matches(h)), None)
            if hit is None:
                check.removed.append(ref.label())
                continue
            label = citation(hit)
            kept.append(label)
            if hit not in check.cited:
                check.cited.append(hit)
                check.verified.append(label)
        return "".join(dict.fromkeys(kept))

    check.text = _LABEL_RE.sub(replace, text)
    check.removed = list(dict.fromkeys(check.removed))
    return check


def _sentences(paragraph: str) -> list[str]:
    return [
        piece.strip()
        for line in paragraph.splitlines()
        for piece in _SENTENCE_END_RE.split(line)
        if piece.strip()
    ]


def _states_fact(sentence: str) -> bool:
    bare = _LABEL_RE.sub("", sentence).strip().lstrip("#-*・0123456789.)） ").strip()
    if len(bare) < MIN_FACT_CHARS or bare.endswith((":", "：")) or sentence.startswith("#"):
        return False
    has_number = any(ch.isdigit() for ch in unicodedata.normalize("NFKC", bare))
    return has_number or not any(phrase in bare for phrase in _NON_FACT_PHRASES)


def uncited_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that state a fact with no citation covering them."""
    uncited: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        pending: list[str] = []
        for sentence in _sentences(paragraph):
            if _LABEL_RE.search(sentence):
                pending = []  # the label covers the sentences before it in this paragraph
            elif _states_fact(sentence):
                pending.append(sentence)
        uncited.extend(pending)
    return uncited


def remove_sentences(text: str, sentences: Sequence[str]) -> str:
    """``text`` without ``sentences`` (each removed once; emptied lines dropped)."""
    for sentence in sentences:
        text = text.replace(sentence, "", 1)
    lines = [line.rstrip() for line in text.splitlines()]
    kept = [line for line in lines if line.strip() or not line]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def attempt_issue(
    results: Sequence[ToolResult], cited: Sequence[SearchOutput]
) -> UnresolvedReason | None:
    """Why an attempt with these tool results and an answer citing ``cited`` cannot resolve its
    subtask, or None when it can (the reflection then decides)."""
    if all(result.error is not None for result in results):
        return "tool_errors"
    if not any(result.results for result in results):
        return "below_floor" if any(result.weak_results for result in results) else "no_results"
    if not cited:
        return "no_citation"
    return None


def retry_advice(issue: UnresolvedReason, model_advice: str) -> str:
    """The next attempt's advice when the agent overrode a reflection that said "done"."""
    return f"{_RETRY_ADVICE.get(issue, '')}（内省の評価: {model_advice}）"
