"""振込依頼人名 fields as banks fill them, for near pairs of customers, for the 入金消込 property
tests.

The generators before this one write a few legal forms (株式会社, 有限会社, 合同会社, 医療法人,
社団, 財団) always with their parenthesis, a branch glued after a place the dictionary tags, and
look-alikes that are the start of one another by a whole word. A :class:`~tests.support.
bank_shapes.Case` here is a pair (or three) of customers whose names differ by one small word at
the end (青葉商事 / 青葉商事産業, みどり / みどり屋, 北斗 / 北斗学園, ニューライフ /
ニューライフサービス), each owing the same two amounts, one sometimes left out of the master (its
transfers are nobody's), the master's 取引先名カナ registered (full-width, half-width with small
kana, with the form) or not. Every legal form of the 全銀協 list, as the form of the name,
stands first or last in the master. The payers write:

- the form's abbreviation first, last, in the middle before a branch, with both parentheses,
  with a period for one, or no form at all;
- small kana as typed (``ｼｮｳｼﾞ``) or large (``ｼﾖｳｼﾞ``, ``ﾂ`` for ``ｯ``), voiced marks written
  apart (``ﾊ゛``, combining) or lost (``ｱｵﾊｼﾖｳｼﾞ``: another name, never promised), the long
  vowel as ``ｰ``, ``-``, ``‐``, ``ー`` or left out;
- the whole in full-width kana (Internet banking);
- a remitter number before the name, an invoice number or a month after it;
- a branch after the name: after a space, or glued to it after a city's name, some of which the
  dictionary does not tag as places in kana (ﾊﾏﾏﾂ, ﾀｶﾏﾂ, ﾏﾂﾔﾏ, ｳﾂﾉﾐﾔ);
- a person paying for the company after a space (担当者名: ``ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾝﾄｳ ﾔﾏﾀﾞ``);
- the field cut at the bank's width (48, an export's 30) in the middle of a word that follows
  the name, or in the middle of the name itself (never promised: a near pair starts the same).

The truth (:class:`~tests.support.bank_shapes.Truth`) promises what a careful person would
book without asking; every transfer of a customer the master does not hold, or whose name is
lost to a cut or to a lost mark, must still never be booked to anyone. Written apart from
``keiri_agent.blocks.table`` (its own forms and half-width conversion).
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth
from tests.support.payments_alike import DatedTransfer, owing_the_same, paid_amount
from tests.support.payments_marks import marks_apart

__all__ = ["FORMS", "PAIRS", "cases"]

# The 全銀協 法人略語 (the kanji form and the bank's abbreviation), as banks publish it.
FORMS = {
    "株式会社": "ｶ", "有限会社": "ﾕ", "合同会社": "ﾄﾞ", "合資会社": "ｼ", "合名会社": "ﾒ",
    "相互会社": "ｿ", "医療法人": "ｲ", "医療法人社団": "ｲ", "社会福祉法人": "ﾌｸ",
    "一般社団法人": "ｼﾔ", "公益社団法人": "ｼﾔ", "一般財団法人": "ｻﾞｲ", "公益財団法人": "ｻﾞｲ",
    "学校法人": "ｶﾞｸ", "宗教法人": "ｼﾕｳ", "国立大学法人": "ﾀﾞｲ", "特定非営利活動法人": "ﾄｸﾋ",
    "税理士法人": "ｾﾞｲ", "弁護士法人": "ﾍﾞﾝ", "司法書士法人": "ｼﾎｳ", "行政書士法人": "ｷﾞﾖ",
    "農事組合法人": "ﾉｳ", "独立行政法人": "ﾄﾞｸ", "更生保護法人": "ﾎｺﾞ", "管理組合法人": "ｶﾝﾘ",
}  # fmt: skip
COMPANY_FORMS = ("株式会社",) * 6 + ("有限会社",) * 2 + ("合同会社", "合資会社", "合名会社", "相互会社")  # fmt: skip
OTHER_FORMS = tuple(f for f in FORMS if not f.endswith("会社"))


@dataclass(frozen=True)
class Name:
    kanji: str  # as the master writes it, without the form
    reading: str  # its reading, katakana with small kana


# Customers whose names differ by one small word at the end; the first two of each are written
# by companies (COMPANY_FORMS), ``institution`` pairs by the other forms.
PAIRS: tuple[tuple[bool, tuple[Name, ...]], ...] = (
    (False, (Name("青葉商事", "アオバショウジ"), Name("青葉商事産業", "アオバショウジサンギョウ"))),
    (False, (Name("みどり", "ミドリ"), Name("みどり屋", "ミドリヤ"))),
    (False, (Name("東洋電機", "トウヨウデンキ"), Name("東洋電機工業", "トウヨウデンキコウギョウ"),
             Name("東洋電機工業販売", "トウヨウデンキコウギョウハンバイ"))),
    (False, (Name("ニューライフ", "ニューライフ"), Name("ニューライフサービス", "ニューライフサービス"))),
    (False, (Name("丸正", "マルショウ"), Name("丸正運輸", "マルショウウンユ"))),
    (False, (Name("日の出食品", "ヒノデショクヒン"), Name("日の出食品工業", "ヒノデショクヒンコウギョウ"))),
    (False, (Name("北日本ロジスティクスサービス", "キタニホンロジスティクスサービス"),
             Name("北日本ロジスティクスサービス東北", "キタニホンロジスティクスサービストウホク"))),
    (True, (Name("北斗", "ホクト"), Name("北斗学園", "ホクトガクエン"))),
    (True, (Name("さくら会", "サクラカイ"), Name("さくら会記念", "サクラカイキネン"))),
    (True, (Name("みらい共生", "ミライキョウセイ"), Name("みらい共生会", "ミライキョウセイカイ"))),
)  # fmt: skip
# Cities before a branch word glued to the name: some the dictionary tags as places in kana,
# some it does not.
CITIES = ("オオサカ", "ナゴヤ", "フクオカ", "センダイ", "ハママツ", "タカマツ", "マツヤマ", "ウツノミヤ")  # fmt: skip
UNTAGGED = ("ハママツ", "タカマツ", "マツヤマ", "ウツノミヤ")
BRANCH_WORDS = ("ｼﾃﾝ", "ｴｲｷﾞﾖｳｼﾖ", "ｼｼﾔ")
PEOPLE = ("ﾔﾏﾀﾞ ﾀﾛｳ", "ｽｽﾞｷ", "ﾀﾝﾄｳ ｻﾄｳ", "ｹｲﾘ ﾀﾅｶ ﾊﾅｺ")
AFTER_NOTES = ("ｾｲｷﾕｳ1234", "NO.20260131", "5ｶﾞﾂﾌﾞﾝ", "INV-0012")
LONG_MARKS = ("ｰ", "-", "‐", "ー", "")
WIDTHS = (48, 30)


@dataclass(frozen=True)
class _Customer:
    code: str
    name: Name
    form: str
    first: bool  # the form before the name in the master
    held: bool

    @property
    def written(self) -> str:
        return f"{self.form}{self.name.kanji}" if self.first else f"{self.name.kanji}{self.form}"


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``."""
    rng = random.Random(seed)
    return [_case(rng, n) for n in range(count)]


def _case(rng: random.Random, number: int) -> Case:
    institution, names = rng.choice(PAIRS)
    forms = OTHER_FORMS if institution else COMPANY_FORMS
    customers = [
        _Customer(f"{8000 + 10 * n}", name, rng.choice(forms), rng.random() < 0.7, True)
        for n, name in enumerate(names)
    ]
    if rng.random() < 0.35:  # one of them is not in the master (never the last one held)
        out = rng.randrange(len(customers))
        gone = customers[out]
        customers[out] = _Customer(gone.code, gone.name, gone.form, gone.first, False)
    held = [c for c in customers if c.held]
    amounts, invoices = owing_the_same([(c.code, c.written) for c in held], rng)
    master = [_master_row(c, rng) for c in held]
    payers = rng.sample(customers, rng.choice((1, 2, 2)))
    day = f"2026-02-{10 + number % 18:02d}"
    transfers: list[Transfer] = [_transfer(p, amounts, day, rng) for p in payers]
    return Case(master, invoices, transfers, [t.truth.shape for t in transfers])


def _master_row(customer: _Customer, rng: random.Random) -> dict[str, str]:
    """The master's row: its 取引先名カナ full-width, typed half-width, with the form as the
    bank writes it, or none (four in ten)."""
    typed, short = _typed(customer.name.reading), FORMS[customer.form]
    spellings = (
        customer.name.reading,
        typed,
        f"{short}){typed}" if customer.first else f"{typed}({short}",
        "",
    )
    kana = rng.choices(spellings, weights=(3, 2, 1, 4))[0]
    return {"取引先コード": customer.code, "取引先名": customer.written, "取引先名カナ": kana}


def _typed(katakana: str) -> str:
    """Half-width kana as a person types it: small kana kept small, ー as ｰ."""
    return unicodedata.normalize("NFD", katakana).translate(_TYPED)


_TYPED = {ord(unicodedata.normalize("NFKC", chr(c))): chr(c) for c in range(0xFF66, 0xFF9E)}
_TYPED.update({ord("ー"): "ｰ", 0x3099: "ﾞ", 0x309A: "ﾟ"})


def _kana(customer: _Customer, rng: random.Random) -> tuple[str, list[str], bool]:
    """The payer's name as its bank spells it: the spelling's shapes, and whether it is still
    the name (a lost voiced mark makes another)."""
    reading = customer.name.reading
    style = rng.random()
    if style < 0.2:
        kana, shape = _typed(reading), "small_kana_typed"
    else:
        kana, shape = half_width(reading), "small_kana_large"
    shapes, named = [shape], True
    if "ー" in reading:
        mark = rng.choice(LONG_MARKS)
        kana = kana.replace("-", mark).replace("ｰ", mark)
        shapes.append("long_mark_" + {"": "missing", "ｰ": "half", "-": "hyphen"}.get(mark, "other"))
    if "ﾞ" in kana or "ﾟ" in kana:
        marks = rng.random()
        if marks < 0.15:
            kana, shapes = marks_apart(kana, combining=rng.random() < 0.3), [*shapes, "marks_apart"]
        elif marks < 0.22:
            at = kana.index("ﾞ") if "ﾞ" in kana else kana.index("ﾟ")
            kana, named = kana[:at] + kana[at + 1 :], False
            shapes.append("mark_lost")
    return kana, shapes, named


def _with_form(kana: str, customer: _Customer, rng: random.Random) -> tuple[str, str]:
    short = FORMS[customer.form]
    style = rng.random()
    if style < 0.1:
        return kana, "no_form"
    if style < 0.2:
        return (
            (f"({short}){kana}", "form_both_first")
            if customer.first
            else (
                f"{kana}({short})",
                "form_both_last",
            )
        )
    if style < 0.27:
        return (
            (f"{short}.{kana}", "form_period")
            if customer.first
            else (
                f"{kana}.{short}",
                "form_period",
            )
        )
    return (f"{short}){kana}", "form_first") if customer.first else (f"{kana}({short}", "form_last")


def _transfer(
    customer: _Customer, amounts: tuple[int, int], day: str, rng: random.Random
) -> Transfer:
    kana, shapes, named = _kana(customer, rng)
    text, form_shape = _with_form(kana, customer, rng)
    after = rng.random()
    if after < 0.12:
        text, shape = f"{text} {rng.choice(AFTER_NOTES)}", "note_after"
    elif after < 0.2:
        text, shape = (
            f"{rng.randrange(10**6, 10**10)}{rng.choice(('', ' '))}{text}",
            "number_before",
        )
    elif after < 0.32:
        city = rng.choice(CITIES)
        # Glued to the name: after a form written first, or with no form.
        glued = form_shape in ("form_first", "form_both_first", "form_period", "no_form")
        text = f"{text}{'' if glued else ' '}{half_width(city)}{rng.choice(BRANCH_WORDS)}"
        shape = "spaced_branch" if not glued else "glued_branch"
        shape += "_untagged" if glued and city in UNTAGGED else ""
    elif after < 0.42:
        text, shape = f"{text} {rng.choice(PEOPLE)}", "person_after"
    elif after < 0.5:
        city = half_width(rng.choice(CITIES))
        text, form_shape = f"{kana}({FORMS[customer.form]}){city}ｼﾃﾝ", "form_middle"
        shape = "branch_after_form"
    else:
        shape = "plain"
    shapes += [form_shape, shape]
    if rng.random() < 0.1:
        text = unicodedata.normalize("NFKC", text).translate(_FULL)
        shapes.append("full_width")
    elif shape == "plain" and rng.random() < 0.35:
        # A branch and a department after the name, the field cut at the bank's width.
        width = rng.choice(WIDTHS)
        branch = f"{text} {half_width(rng.choice(CITIES))}ｼﾃﾝ "
        whole = f"{branch}ｹｲﾘﾌﾞ ﾀﾝﾄｳ"
        if len(whole) > width:
            text = whole[:width].rstrip()
            shapes.append(f"cut_{width}")
            # The name is told when a whole branch follows it before the cut: a word cut after
            # the name may be the rest of another's (``ｱｵﾊﾞ ｼﾖ`` of ``ｱｵﾊﾞ ｼﾖｳｼﾞ``).
            named = named and len(text) > len(branch)
    amount, paid, how = paid_amount(customer.code, amounts, rng)
    shapes.append(how)
    if not customer.held:
        return DatedTransfer(
            text, amount, Truth(None, (), False, "/".join(["stranger", *shapes])), day
        )
    promised = named and shape not in ("person_after", "glued_branch_untagged")
    return DatedTransfer(
        text, amount, Truth(customer.code, (paid,), promised, "/".join(shapes)), day
    )


# Full-width input: NFKC writes the kana full-width; the rest as an Internet bank's form keeps it.
_FULL = {ord(ch): chr(ord(ch) + 0xFEE0) for ch in "()0123456789.-ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
_FULL[ord(" ")] = "\u3000"
