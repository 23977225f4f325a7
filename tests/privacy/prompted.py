"""A sixth generator: requests as the agents build them, with documents full of identifiers and of
business numbers (session 16).

The other generators write texts and send them through one entry point each. Here a user's
document goes into the request each agent really builds with its own prompt builder (the help
desk's planner, tool choice, subtask answer and final answer; the analysis agent's reason,
code and report prompts; the conversion's interpretation and CodeAct prompts), so the product's
own lines stand right beside the user's text, as they do on the wire.

A document holds a person's identifiers (names, phones, mail addresses, マイナンバー in groups or
not, card numbers of 13 to 19 digits in their issuers' groups, accounts, addresses, birthdays,
運転免許証 and 健康保険証 numbers) and what a model must still see: business numbers after their
label (受付番号, 会員番号, 注文番号, 請求書番号, お客様番号, 予約番号, 問合せ番号: a 12-digit one may
carry a マイナンバー's check digit, a 16-digit one pass Luhn, since the label, not the digits,
says what the number is), amounts and dates, and the words a form writes where no one is named
yet under a person's label (未定, なし, 同上, 空欄, 調整中, 後日決定, 該当なし), after a colon, on the
line below the label or in the label's column.

口座番号 is a secret: an account number is personal data when a person holds it, and from its
digits no one can tell a person's account from a company's; a model never needs its digits to
reason (what it needs, the amount and the date, stays). A 会員番号 or an お客様番号 is kept, as
customer codes are (``privacy.kinds``).

:func:`make_requests` gives :class:`Request` objects: the messages as built, the document's
``secrets`` and ``kept``, deterministic for a seed.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from keiri_agent.agents.analysis import prompts as analysis
from keiri_agent.agents.analysis.dfinfo import DataFrameInfo
from keiri_agent.agents.analysis.models import ExecutionResult
from keiri_agent.agents.convert import prompts as convert
from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.agents.helpdesk import prompts as helpdesk
from keiri_agent.agents.helpdesk.models import SearchOutput, Subtask, ToolResult
from tests.privacy.backoffice import Doc
from tests.privacy.registers import Writer
from tests.support.personal import luhn_valid, my_number_valid

__all__ = [
    "BUILDERS",
    "PLACEHOLDERS",
    "Request",
    "make_document",
    "make_requests",
    "own_lines",
    "sent_text",
]

BUSINESS_LABELS = [
    "受付番号",
    "会員番号",
    "注文番号",
    "請求書番号",
    "お客様番号",
    "予約番号",
    "問合せ番号",
]
PERSON_LABELS = ["担当者", "担当", "承認者", "責任者", "作成者", "申請者", "契約者"]
PLACEHOLDERS = ["未定", "なし", "同上", "空欄", "調整中", "後日決定", "該当なし"]
COMPANIES = ["青葉商事株式会社", "株式会社みどり電機", "星野商会"]


class Writer16(Writer):
    """:class:`~tests.privacy.registers.Writer` with card numbers of every length and the
    business numbers that look like identifiers."""

    def card(self) -> str:
        """A Luhn-valid number of 13 to 19 digits with an issuer's prefix, in its groups."""
        length = self.r.choice([13, 14, 15, 16, 16, 17, 18, 19])
        prefix = {13: "4", 14: "36", 15: "37"}.get(length, self.r.choice(["4", "53", "35", "62"]))
        value = self.with_check(prefix + self.digits(length - 1 - len(prefix)), luhn_valid)
        if length in (14, 15):
            groups = [value[:4], value[4:10], value[10:]]
        else:
            groups = [value[i : i + 4] for i in range(0, length, 4)]
        return self.wide(self.r.choice([" ", "-", "  "]).join(groups))

    def business_number(self) -> str:
        """A number a business gives: 12 digits with a マイナンバー check digit, 16 that pass
        Luhn with a card's prefix, or an ordinary one, grouped or not."""
        form = self.r.randrange(3)
        if form == 0:
            value = self.with_check(self.digits(11), my_number_valid)
            sep = self.r.choice(["", "-", " "])
            return sep.join((value[:4], value[4:8], value[8:]))
        if form == 1:
            value = self.with_check("4" + self.digits(14), luhn_valid)
            return self.r.choice(["", "-"]).join(value[i : i + 4] for i in range(0, 16, 4))
        return self.digits(self.r.choice([8, 10, 12]))


def _business(w: Writer16, doc: Doc) -> None:
    """Business numbers after their label: after a colon, on the line below, or a column."""
    for label in w.r.sample(BUSINESS_LABELS, 3):
        form = w.r.randrange(3)
        if form == 0:
            doc.add(f"{label}：").keep(w.business_number()).add("\n")
        elif form == 1:
            doc.add(f"{label} ").keep(w.business_number()).add(" の件、承知しました。\n")
        else:
            doc.add(f"\n{label}\n").keep(w.business_number()).add("\n\n")
    doc.add("請求額 ").keep(w.amount()).add("、支払期日 ").keep(w.date()).add("\n")


def _identifiers(w: Writer16, doc: Doc) -> None:
    name, sur, kana = w.person()
    symbol, number = w.insurance()
    doc.add("氏名：").secret(name, sur).add("\nフリガナ：").secret(kana)
    doc.add("\n生年月日：").secret(w.birth()).add("\n住所：").secret(w.address())
    doc.add("\n電話：").secret(w.phone()).add("\nメール：").secret(w.email())
    doc.add("\nマイナンバー：").secret(w.my_number())
    doc.add("\n" + w.r.choice(["カード番号：", "法人カード ", "決済カード "])).secret(w.card())
    doc.add("\n振込先：みずほ銀行 普通 ").secret(w.account())
    doc.add("\n健康保険証 記号 ").secret(symbol).add(" 番号 ").secret(number)
    doc.add("\n運転免許証番号：").secret(w.licence()).add("\n")


def _person_labels(w: Writer16, doc: Doc) -> None:
    """A person's label over a name and over the words of a form where no one is named yet."""
    for label in w.r.sample(PERSON_LABELS, 3):
        value = w.r.choice(PLACEHOLDERS)
        form = w.r.randrange(2)
        if form == 0:
            doc.add(f"{label}：").keep(value).add("\n")
        else:
            doc.add(f"\n{label}\n").keep(value).add("\n\n")
    name, sur, _ = w.person()
    doc.add(f"{w.r.choice(PERSON_LABELS)}：").secret(name, sur).add("\n")


def _table(w: Writer16, doc: Doc) -> None:
    """A CSV with a person's column (names and 未定), a business number's and an amount's."""
    label, number = w.r.choice(PERSON_LABELS), w.r.choice(BUSINESS_LABELS)
    doc.rows.append([number, label, "金額"])
    for _ in range(4):
        if w.r.random() < 0.5:
            person = w.r.choice(PLACEHOLDERS)
            doc.kept.append(person)
        else:
            person, sur, _ = w.person()
            doc.secrets += [person, sur]
        value, amount = w.business_number(), str(w.r.randint(1_000, 999_999))
        doc.kept += [value, amount]
        doc.rows.append([value, person, amount])
    doc.add("\n".join(",".join(row) for row in doc.rows) + "\n")


PARTS: list[Callable[[Writer16, Doc], None]] = [_business, _identifiers, _person_labels, _table]


def make_document(w: Writer16) -> Doc:
    """One document: every part, in a random order, with a line of prose between."""
    doc = Doc("prompted")
    parts = list(PARTS)
    w.r.shuffle(parts)
    doc.add(w.r.choice(["お世話になっております。", "以下、ご確認ください。", ""]) + "\n")
    for part in parts:
        part(w, doc)
    if w.r.random() < 0.5:  # a form's last field left blank (承認者：): a label over nothing
        doc.add(f"{w.r.choice(PERSON_LABELS)}{w.r.choice(['：', ':', ''])}")
    return doc


@dataclass
class Request:
    """One request as an agent builds it around a document."""

    agent: str
    messages: list[BaseMessage]
    secrets: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def _hit(text: str, number: int) -> SearchOutput:
    return SearchOutput(
        file_name=f"問い合わせ履歴{number}.csv",
        content=text,
        row=number,
        score=0.5,
        chunk_id=f"qa-{number}",
        source="qa",
    )


def _frame(doc: Doc) -> pd.DataFrame:
    header, *rows = doc.rows
    return pd.DataFrame(rows, columns=header)


def _result(doc: Doc, *, instruction: str) -> ExecutionResult:
    return ExecutionResult(success=True, code="print(df)", stdout=doc.text, instruction=instruction)


def _planner(w: Writer16, doc: Doc) -> list[BaseMessage]:
    return helpdesk.planner_messages(helpdesk.HelpDeskAgentPrompts(), doc.text)


def _tool_selection(w: Writer16, doc: Doc) -> list[BaseMessage]:
    return helpdesk.tool_selection_messages(
        helpdesk.HelpDeskAgentPrompts(),
        question=doc.text,
        plan=["登録内容の変更手順を調べる", "問い合わせ先を確認する"],
        subtask="登録内容の変更手順を調べる",
        previous_answer=doc.text if w.r.random() < 0.5 else None,
        advice="search_qa で 変更 手順 を調べ直す" if w.r.random() < 0.5 else None,
    )


def _subtask_answer(w: Writer16, doc: Doc) -> list[BaseMessage]:
    result = ToolResult(
        tool_name="search_qa", args='{"query": "変更"}', results=[_hit(doc.text, 3)]
    )
    return [helpdesk.subtask_answer_message(helpdesk.HelpDeskAgentPrompts(), [result])]


def _final_answer(w: Writer16, doc: Doc) -> list[BaseMessage]:
    subtask = Subtask(
        index=0,
        task_name="登録内容の変更手順を調べる",
        is_completed=True,
        subtask_answer=doc.text,
        challenge_count=1,
        verified_citations=["【出典: Q&A 問い合わせ履歴3.csv 3 行目】"],
    )
    return helpdesk.final_answer_messages(helpdesk.HelpDeskAgentPrompts(), doc.text, [subtask])


def _revision(w: Writer16, doc: Doc) -> list[BaseMessage]:
    """The final answer sent back once: the draft, then what it must mend (a citation not among
    the results, a sentence without one, not Japanese), each quoting the draft."""
    prompts = helpdesk.HelpDeskAgentPrompts()
    messages = _final_answer(w, doc)
    line = doc.text.splitlines()[0]
    found = helpdesk.fix_requests(
        prompts,
        removed=[f"【出典: {line}】"] if w.r.random() < 0.7 else [],
        uncited=[line] if w.r.random() < 0.7 else [],
        japanese=w.r.random() < 0.7,
    )
    return [*messages, AIMessage(doc.text), helpdesk.revision_message(prompts, found)]


def _reason(w: Writer16, doc: Doc) -> list[BaseMessage]:
    info = DataFrameInfo.from_frame(_frame(doc), name="台帳")
    history = [HumanMessage(doc.text)]
    results = [_result(doc, instruction="一覧を表示する")]
    return analysis.reason_messages(history, [info], results, loop=2)


def _codegen(w: Writer16, doc: Doc) -> list[BaseMessage]:
    info = DataFrameInfo.from_frame(_frame(doc), name="台帳")
    previous = ExecutionResult(success=False, code="print(df)", error=doc.text)
    return analysis.codegen_messages(doc.text, [info], "/tmp/ws", previous)


def _report(w: Writer16, doc: Doc) -> list[BaseMessage]:
    results = [_result(doc, instruction=doc.text)]
    return analysis.report_messages(
        [HumanMessage(doc.text)], results, [doc.text], forced=w.r.random() < 0.5
    )


def _interpret(w: Writer16, doc: Doc) -> list[BaseMessage]:
    return convert.interpret_messages(doc.text, "inputs/台帳.csv" if w.r.random() < 0.5 else None)


def _codeact(w: Writer16, doc: Doc) -> list[BaseMessage]:
    job = ConvertJob(action="convert", target_format="xml", summary_ja="台帳を XML に変換します。")
    task = convert.codeact_task(
        job,
        request=doc.text,
        reason="XML は標準の変換で扱えません。",
        workdir="/tmp/work",
        inputs=[convert.InputSummary("inputs/台帳.csv", len(doc.text), table=doc.text)],
        output_name="台帳",
        answers=[("ルート要素名は何にしますか？", doc.text)],
    )
    system = convert.codeact_prompt("/tmp/work", "inputs/台帳.csv")
    feedback = convert.exec_feedback(success=False, stdout=doc.text, error=doc.text, files=[])
    return [SystemMessage(system), HumanMessage(task), HumanMessage(feedback)]


BUILDERS: dict[str, Callable[[Writer16, Doc], list[BaseMessage]]] = {
    "helpdesk.planner": _planner,
    "helpdesk.tool_selection": _tool_selection,
    "helpdesk.subtask_answer": _subtask_answer,
    "helpdesk.final_answer": _final_answer,
    "helpdesk.revision": _revision,
    "analysis.reason": _reason,
    "analysis.codegen": _codegen,
    "analysis.report": _report,
    "convert.interpret": _interpret,
    "convert.codeact": _codeact,
}


def make_requests(seed: int, per_agent: int) -> list[Request]:
    """``per_agent`` requests of each builder, deterministic for ``seed``."""
    w = Writer16(seed)
    requests = []
    for agent, build in BUILDERS.items():
        for _ in range(per_agent):
            doc = make_document(w)
            requests.append(Request(agent, build(w, doc), list(doc.secrets), list(doc.kept)))
    return requests


def _template_texts() -> list[str]:
    texts: list[str] = []
    for module in (helpdesk, analysis, convert):
        texts += [v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)]
    return texts


def own_lines(text: str) -> list[str]:
    """The lines of the agents' prompt templates (each literal piece between a line's fields)
    that ``text`` holds: the product's own lines of a request."""
    return [line for line in _TEMPLATE_LINES if line in text]


def _pieces(line: str) -> list[str]:
    """The literal pieces of a template line between its fields (``参照した資料: {citations}``
    gives ``参照した資料:``)."""
    try:
        parsed = list(string.Formatter().parse(line))
    except ValueError:
        return [line.strip()]
    return [literal.strip() for literal, _, _, _ in parsed]


_TEMPLATE_LINES = sorted(
    {
        piece
        for text in _template_texts()
        for line in text.splitlines()
        for piece in _pieces(line)
        if len(piece) >= 4
    }
)


def sent_text(messages: list[Any]) -> str:
    """The texts of ``messages``, one after the other."""
    return "\n".join(str(m.content) for m in messages)
