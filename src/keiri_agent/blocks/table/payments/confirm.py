"""What a person decided about 要確認 lines: the questions asked, and the answers read back.

The contract between ``table.match_payments`` and ``ui.interactive_input`` (documented in the
block spec): the first run's ``questions`` output is a list of ``requirements``, two per 要確認
line, keyed by the line (:attr:`..model.Deposit.question_id`: data row, date and amount, so an
answer never lands on another line):

- ``確認_<row>_<yyyymmdd>_<amount>``: a ``select`` whose options are the line's candidates
  (``取引先:<code>`` a customer, ``請求:<number>,<number>`` a set of invoices) and
  ``該当なし``; not required (a line left unanswered stays 要確認);
- ``覚える_<row>_<yyyymmdd>_<amount>``: a ``boolean``, 「この名義を覚える」.

The node's ``collected_data`` goes to a second run as ``confirmations`` (a mapping of those ids
to the answers); a table with the columns 確認ID, 選択 and 覚える (a CSV a person filled in)
says the same. An answer may name any customer or open invoice, not only the options offered
(the 不明入金 of the first run have ids too). Every problem with the answers (an id of no line,
a customer or invoice that does not exist, an answer that is no choice) is reported at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from keiri_agent.blocks.table.payments.book import OpenInvoices, identifier
from keiri_agent.blocks.table.payments.directory import Directory
from keiri_agent.blocks.table.payments.model import Deposit, Invoice, Review
from keiri_agent.documents.table_value import Table
from keiri_agent.errors import BlockError, input_error

__all__ = [
    "ANSWER_COLUMNS",
    "CUSTOMER_PREFIX",
    "INVOICE_PREFIX",
    "MAX_QUESTIONS",
    "NONE_ANSWER",
    "Answer",
    "AnswerKind",
    "questions",
    "read_answers",
]

CUSTOMER_PREFIX = "取引先:"
INVOICE_PREFIX = "請求:"
NONE_ANSWER = "該当なし"
# The columns of a table of answers: the question id, the choice, remember the name.
ANSWER_COLUMNS = ("確認ID", "選択", "覚える")
# 要確認 lines asked about in one run (two fields each); the rest are in ``review``.
MAX_QUESTIONS = 300
MAX_LISTED = 10  # problems spelled out in the message; all of them are in the details
_TRUE = frozenset({"true", "はい", "yes", "1", "○", "覚える"})
_FALSE = frozenset({"false", "いいえ", "no", "0", ""})


class AnswerKind(StrEnum):
    CUSTOMER = "customer"
    INVOICES = "invoices"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Answer:
    kind: AnswerKind
    customer: str = ""  # Customer.id
    invoices: tuple[Invoice, ...] = ()
    remember: bool = False


def questions(reviews: Sequence[Review]) -> list[dict[str, Any]]:
    """The ``requirements`` of a ``ui.interactive_input`` asking about ``reviews``."""
    fields: list[dict[str, Any]] = []
    for review in reviews[:MAX_QUESTIONS]:
        line = review.line
        options = [{"value": c.value, "label": c.label} for c in review.candidates]
        options.append({"value": NONE_ANSWER, "label": "該当なし（不明入金のまま）"})
        reference = f"照会番号 {line.reference}、" if line.reference else ""
        fields.append(
            {
                "id": line.question_id,
                "type": "select",
                "label": f"{line.date.isoformat()} {line.payer or '（名義なし）'} {line.amount:,} 円",
                "description": f"{reference}{review.why}",
                "required": False,
                "options": options,
            }
        )
        fields.append(
            {
                "id": line.remember_id,
                "type": "boolean",
                "label": f"この名義（{line.payer}）を覚える" if line.payer else "この名義を覚える",
                "description": "選んだ取引先を、次回からこの振込依頼人名の取引先として使います（学習済みの名義）。",
                "required": False,
                "default": False,
            }
        )
    return fields


def read_answers(
    value: Any, lines: Sequence[Deposit], directory: Directory, book: OpenInvoices
) -> dict[str, Answer]:
    """The answers in ``value`` (a mapping of question ids, or a table of answers) by question
    id; BlockError listing every problem."""
    if value is None:
        return {}
    pairs = _pairs(value)
    known = {line.question_id for line in lines}
    remembers = {line.remember_id: line.question_id for line in lines}
    problems: list[str] = []
    choices: dict[str, Any] = {}
    remember: dict[str, bool] = {}
    for key, raw in pairs:
        if key in known:
            choices[key] = raw
        elif key in remembers:
            flag = _flag(raw)
            if flag is None:
                problems.append(f"{key}: 「{raw}」は はい / いいえ として読めません")
            else:
                remember[remembers[key]] = flag
        else:
            problems.append(f"{key}: この ID の入金がありません")
    answers: dict[str, Answer] = {}
    for key, raw in choices.items():
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue  # not answered: the line is matched as usual
        answer = _answer(str(raw).strip(), directory, book, problems, key)
        if answer is not None:
            answers[key] = Answer(
                answer.kind, answer.customer, answer.invoices, remember.get(key, False)
            )
    if problems:
        raise _answers_error(problems)
    return answers


def _pairs(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items()]
    table = value if isinstance(value, Table) else None
    records = table.records() if table is not None else value
    if isinstance(records, list) and all(isinstance(r, Mapping) for r in records):
        pairs: list[tuple[str, Any]] = []
        for number, record in enumerate(records, start=1):
            key = record.get(ANSWER_COLUMNS[0])
            if not isinstance(key, str) or not key.strip():
                raise input_error(
                    f"confirmations の {number} 行目に{ANSWER_COLUMNS[0]}がありません。",
                    _HINT,
                    field="confirmations",
                )
            pairs.append((key.strip(), record.get(ANSWER_COLUMNS[1])))
            if record.get(ANSWER_COLUMNS[2]) is not None:
                pairs.append(
                    ("覚える_" + key.strip().removeprefix("確認_"), record[ANSWER_COLUMNS[2]])
                )
        return pairs
    raise input_error(
        f"confirmations の形が違います（{type(value).__name__}）。", _HINT, field="confirmations"
    )


def _answer(
    text: str, directory: Directory, book: OpenInvoices, problems: list[str], key: str
) -> Answer | None:
    normalized = text.replace("：", ":")
    if normalized == NONE_ANSWER:
        return Answer(AnswerKind.NONE)
    if normalized.startswith(CUSTOMER_PREFIX):
        code = normalized.removeprefix(CUSTOMER_PREFIX).strip()
        customer = directory.find(code)
        if customer is None:
            problems.append(f"{key}: 取引先「{code}」が取引先マスタにも請求一覧にもありません")
            return None
        return Answer(AnswerKind.CUSTOMER, customer=customer.id)
    if normalized.startswith(INVOICE_PREFIX):
        numbers = [n.strip() for n in normalized.removeprefix(INVOICE_PREFIX).split(",")]
        found = [book.by_number.get(identifier(n)) for n in numbers if n]
        missing = [n for n, f in zip([n for n in numbers if n], found, strict=True) if f is None]
        if missing or not found:
            problems.append(f"{key}: 請求「{'、'.join(missing) or text}」が請求一覧にありません")
            return None
        return Answer(AnswerKind.INVOICES, invoices=tuple(f for f in found if f is not None))
    problems.append(
        f"{key}: 「{text}」は {CUSTOMER_PREFIX}<コード>・{INVOICE_PREFIX}<請求番号>・{NONE_ANSWER} のどれでもありません"
    )
    return None


def _flag(raw: Any) -> bool | None:
    if isinstance(raw, bool):
        return raw
    if raw is None:
        return False
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


_HINT = (
    "confirmations には、前の実行の questions を requirements にした ui.interactive_input の "
    "collected_data（{確認ID: 選んだ値, 覚える_…: true/false}）か、列 確認ID・選択・覚える の表を"
    f"渡してください。選択は {CUSTOMER_PREFIX}<取引先コード>・{INVOICE_PREFIX}<請求番号>（複数は , 区切り）・"
    f"{NONE_ANSWER} のどれかです。"
)


def _answers_error(problems: list[str]) -> BlockError:
    listed = "、".join(problems[:MAX_LISTED])
    more = len(problems) - MAX_LISTED
    return input_error(
        f"confirmations（要確認への回答）に問題が {len(problems)} 件あります: {listed}"
        + (f" ほか {more} 件" if more > 0 else ""),
        _HINT
        + " 確認ID は前の実行の review（要確認）・unknown（不明入金）の列 確認ID にあります。",
        field="confirmations",
        problems=problems,
    )
