"""The kinds of personal data keiri-agent keeps from a language model, and their labels.

One kind, one Japanese label: the label names the placeholder a model sees (``〔人名1〕``,
``〔電話番号2〕``) and the mark a log keeps (``〔電話番号〕``), and it is what ``doctor``, the
README and the counts of a run call the kind. Amounts, dates, invoice and order numbers,
法人番号 and company names are *not* personal data: no kind here covers them, so a model can
still reason about them.

The numbers of a driving licence, a health-insurance card (記号・番号), a pension book, a
passport or a residence card are 個人識別符号 whatever they look like: masked after their label
(運転免許証番号, 被保険者証の記号・番号) or in their column, as one kind.

A 社員番号 is no 個人識別符号 by itself, but the company holds the register that ties it to one
employee (容易照合性), so for the company it is personal data: it is masked where its label or
column says what it is. Customer and supplier codes stay: in accounting they mostly name
companies; so do the numbers a business gives (受付番号, 会員番号, お客様番号, 予約番号), whatever
their digits (a 12-digit one may carry a マイナンバー's check digit): their label says what they are.
An account number (口座番号) is masked: a person's is personal data, and its digits cannot tell it
from a company's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["LABELS", "NOT_MASKED", "PersonalKind", "Span", "masking_status"]


class PersonalKind(StrEnum):
    MY_NUMBER = "my_number"  # マイナンバー (12 digits, valid check digit)
    CARD = "card"  # クレジットカード番号 (Luhn)
    ACCOUNT = "account"  # 口座番号 (in context: 普通/当座/口座 ...)
    BRANCH = "branch"  # 支店名 beside an account number
    PHONE = "phone"  # fixed, mobile, 0120, +81
    EMAIL = "email"
    ADDRESS = "address"  # a postal code with an address, an address under 住所
    BIRTH_DATE = "birth_date"  # a date in the context of 生年月日 / 誕生日 / 生まれ
    EMPLOYEE_ID = "employee_id"  # 社員番号 / 従業員番号 / 職員番号 (labelled or in its column)
    # 運転免許証, 健康保険証 (記号・番号), 被保険者番号, 基礎年金番号, 旅券, 在留カード: 個人識別符号
    # (施行令 1 条) in any form, masked after their label or in their column
    ID_CARD = "id_card"
    PERSON = "person"  # a person's name


LABELS: dict[PersonalKind, str] = {
    PersonalKind.MY_NUMBER: "マイナンバー",
    PersonalKind.CARD: "カード番号",
    PersonalKind.ACCOUNT: "口座番号",
    PersonalKind.BRANCH: "支店名",
    PersonalKind.PHONE: "電話番号",
    PersonalKind.EMAIL: "メール",
    PersonalKind.ADDRESS: "住所",
    PersonalKind.BIRTH_DATE: "生年月日",
    PersonalKind.EMPLOYEE_ID: "社員番号",
    PersonalKind.ID_CARD: "免許証・保険証番号",
    PersonalKind.PERSON: "人名",
}


@dataclass(frozen=True, order=True)
class Span:
    """``text[start:end]`` is personal data of ``kind``."""

    start: int
    end: int
    kind: PersonalKind

    def __len__(self) -> int:
        return self.end - self.start


# What stays visible to a model: not personal data, and what it needs to reason.
NOT_MASKED = ("金額", "日付", "請求書番号・注文番号", "法人番号・登録番号", "会社名")


def masking_status(enabled: bool) -> dict[str, Any]:
    """What ``KEIRI_LLM_MASK_PII`` does on this installation, for ``doctor``, the app's
    sidebar and ``/readyz`` (one wording for all three)."""
    if enabled:
        summary = (
            "個人情報は LLM に送る前に仮名（〔人名1〕など）に置き換え、応答では元に戻します"
            "（KEIRI_LLM_MASK_PII=on）。"
        )
    else:
        summary = (
            "個人情報をそのまま LLM に送ります（KEIRI_LLM_MASK_PII=off: 自社内のモデル向け）。"
            "ログでは引き続きマスクします。"
        )
    return {
        "mask_pii": enabled,
        "summary": summary,
        "masked": [LABELS[kind] for kind in PersonalKind],
        "not_masked": list(NOT_MASKED),
    }
