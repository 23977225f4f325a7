"""Payer names whose branch, number or learned spelling decides who paid, against look-alike
customers that all owe the same amounts, for the 入金消込 property tests.

The generators before this one (``bank_shapes``, ``bank_spellings``, ``bank_groups``,
``bank_separators``, ``payments_marks``) write a branch after a space or after a form in the
middle, never a number that is part of a company's name, learn no payer names, and give every
transfer a day of its own. A :class:`AlikeCase` here is a family of customers whose names are
the start of one another or the same name with a number (青葉 / 青葉商事 / 青葉商事開発 /
アオバ2000, 中央 / 中央電機 / 中央電機サービス / 中央21), each owing the same two amounts, some
left out of the master (their transfers are strangers' and are never to be matched), and a
learned payer name (a parent company, ``ｶ)ﾔﾏﾄﾎｰﾙﾃﾞｨﾝｸﾞｽ``, that a person said pays for one of
them). The payers write:

- a branch glued to the name, no space (``ｱｵﾊﾞｼﾖｳｼﾞｵｵｻｶｼﾃﾝ``, ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞﾅｺﾞﾔｼﾕﾂﾁﾖｳｼﾖ``),
  a branch after a middle form with a space for its closing parenthesis (``ｱｵﾊﾞｼﾖｳｼﾞ(ｶ ｵｵｻｶ``),
  or after a space as before;
- a number that is part of the name, the bank putting a space before it (``ｶ)ｱｵﾊﾞ 2000``), and
  a note of what is paid (``ｶ)ｱｵﾊﾞ ｾｲｷﾕｳ1234``, ``ｱｵﾊﾞ NO.20260131``);
- the learned name in another spelling than the one learned: the long vowel as ``-``, ``ｰ`` or
  left out, small kana as typed or written large, marks written apart (``ﾃ゛``), full-width, a
  bank word before it (``ﾌﾘｺﾐ``), a branch or a note after it; and the same name under another
  legal form (another company: never the learned customer's);
- two payers paying the same amount the same day, a fee taken off, two invoices at once.

:class:`~tests.support.bank_shapes.Truth` says whether the product promises the match. A glued
branch is promised when a place name stands before the branch word (大阪, 名古屋, 福岡, 仙台,
横浜, 札幌, 広島, 京都); a branch named otherwise (第一支店, 駅前支店) glued is not, and must
still never be matched to anyone else. Written apart from ``keiri_agent.blocks.table``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth
from tests.support.payments_marks import marks_apart

__all__ = ["AlikeCase", "DatedTransfer", "cases", "owing_the_same", "paid_amount"]

FEES = (440, 660, 880)
FORMS = {"株式会社": "ｶ", "有限会社": "ﾕ", "合同会社": "ﾄﾞ"}
CITIES = ("オオサカ", "ナゴヤ", "フクオカ", "センダイ", "ヨコハマ", "サッポロ", "ヒロシマ", "キョウト")  # fmt: skip
# Branches named otherwise than by a place (第一支店, 駅前支店): glued, the end of the name cannot
# be told, not promised.
NOT_PLACES = ("ダイイチ", "ダイニ", "エキマエ")
BRANCH_WORDS = ("ｼﾃﾝ", "ｼﾕﾂﾁﾖｳｼﾖ", "ｴｲｷﾞﾖｳｼﾖ", "ｼｼﾔ")
NOTES = ("ｾｲｷﾕｳ1234", "NO.20260131", "5ｶﾞﾂﾌﾞﾝ")
BANK_WORDS = ("ﾌﾘｺﾐ ", "ﾃﾞﾝｼﾝ ")


@dataclass(frozen=True)
class Member:
    core: str  # the name without its form, as the master writes it
    reading: str  # katakana; digits of a number in the name as they are
    number: str = ""  # the number ending the name (the bank puts a space before it)


FAMILIES: tuple[tuple[Member, ...], ...] = (
    (Member("青葉", "アオバ"), Member("青葉商事", "アオバショウジ"),
     Member("青葉商事開発", "アオバショウジカイハツ"), Member("アオバ2000", "アオバ2000", "2000")),
    (Member("中央", "チュウオウ"), Member("中央電機", "チュウオウデンキ"),
     Member("中央電機サービス", "チュウオウデンキサービス"), Member("中央21", "チュウオウ21", "21")),
    (Member("東洋", "トウヨウ"), Member("東洋物産", "トウヨウブッサン"),
     Member("トウヨウ1985", "トウヨウ1985", "1985")),
)  # fmt: skip
# A parent company a person said pays for one customer (it is in no master), learned so.
PARENT = "ヤマトホールディングス"


@dataclass(frozen=True)
class DatedTransfer(Transfer):
    day: str = "2026-02-10"


@dataclass
class AlikeCase(Case):
    aliases: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Customer:
    code: str
    member: Member
    form: str
    held: bool

    @property
    def name(self) -> str:
        return f"{self.form}{self.member.core}"


def cases(seed: int, count: int) -> list[AlikeCase]:
    """``count`` cases drawn from ``seed``."""
    rng = random.Random(seed)
    return [_case(rng) for _ in range(count)]


def _case(rng: random.Random) -> AlikeCase:
    family = rng.choice(FAMILIES)
    customers = [
        _Customer(f"{7000 + 10 * n}", m, rng.choice(["株式会社"] * 3 + ["有限会社"]), False)
        for n, m in enumerate(family)
    ]
    customers = [
        _Customer(c.code, c.member, c.form, n == 0 or rng.random() < 0.75)
        for n, c in enumerate(customers)
    ]
    rng.shuffle(customers)
    held = [c for c in customers if c.held]
    amounts, invoices = owing_the_same([(c.code, c.name) for c in held], rng)
    master = [_master_row(c, rng) for c in held]
    payers = rng.sample(customers, min(len(customers), rng.choice((1, 2, 2, 3))))
    # Every transfer of a case the same day: two payers of one amount, that day, are usual.
    day = f"2026-02-{rng.randrange(10, 20):02d}"
    transfers: list[Transfer] = [_transfer(p, amounts, day, rng) for p in payers]
    parent_for = rng.choice(held)
    parent_form = rng.choice(("ｶ", "ｶ", "ﾕ"))
    aliases = [
        {"振込依頼人名": _learned_spelling(parent_form, rng), "取引先コード": parent_for.code}
    ]
    if parent_for not in payers and rng.random() < 0.5:
        transfers.append(_parent_transfer(parent_for, parent_form, amounts, day, rng))
    return AlikeCase(master, invoices, transfers, [t.truth.shape for t in transfers], aliases)


def owing_the_same(
    customers: list[tuple[str, str]], rng: random.Random
) -> tuple[tuple[int, int], list[dict[str, object]]]:
    """Two amounts drawn, and the invoices INV-code-1 and -2 of them of each customer (code,
    name): look-alikes that owe the same, so only the name tells them apart."""
    first = rng.randrange(30, 300) * 1_100
    amounts = (first, first + rng.randrange(5, 200) * 1_100)
    invoices: list[dict[str, object]] = [
        {
            "請求番号": f"INV-{code}-{n}",
            "取引先コード": code,
            "取引先名": name,
            "請求金額": amount,
            "支払期日": f"2026-0{n}-28",
        }
        for code, name in customers
        for n, amount in enumerate(amounts, start=1)
    ]
    return amounts, invoices


def _master_row(customer: _Customer, rng: random.Random) -> dict[str, str]:
    reading = customer.member.reading
    style = rng.random()
    kana = reading if style < 0.5 else half_width(reading) if style < 0.8 else ""
    return {"取引先コード": customer.code, "取引先名": customer.name, "取引先名カナ": kana}


def _learned_spelling(form: str, rng: random.Random) -> str:
    """The parent as the bank wrote it the day a person confirmed it."""
    kana = rng.choice(("ﾔﾏﾄﾎｰﾙﾃﾞｨﾝｸﾞｽ", "ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "ﾔﾏﾄﾎｰﾙﾃﾞｲﾝｸﾞｽ"))
    return f"{form}){kana}" if rng.random() < 0.5 else f"{kana}({form}"


def _parent_transfer(
    pays_for: _Customer, form: str, amounts: tuple[int, int], day: str, rng: random.Random
) -> Transfer:
    """The parent pays for ``pays_for``, its name written another way than it was learned."""
    style = rng.random()
    kana = half_width(PARENT)  # ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ: ィ written large
    shapes = ["learned"]
    if style < 0.15:
        kana, shape = kana.replace("-", ""), "learned_no_long_mark"
    elif style < 0.3:
        kana, shape = kana.replace("-", "ｰ").replace("ﾃﾞｲ", "ﾃﾞｨ"), "learned_small_kana"
    elif style < 0.45:
        kana, shape = marks_apart(kana), "learned_marks_apart"
    elif style < 0.55:
        kana, shape = "ヤマトホールディングス", "learned_full_width"
    else:
        shape = "learned_bank_spelling"
    shapes.append(shape)
    other_form = rng.random() < 0.12
    written_form = ("ﾕ" if form == "ｶ" else "ｶ") if other_form else form
    text = f"{written_form}){kana}" if rng.random() < 0.5 else f"{kana}({written_form}"
    extra = rng.random()
    if extra < 0.2:
        text, shapes = rng.choice(BANK_WORDS) + text, [*shapes, "learned_bank_word"]
    elif extra < 0.35:
        text, shapes = f"{text} {rng.choice(NOTES)}", [*shapes, "learned_note"]
    elif extra < 0.5:
        text, shapes = f"{text} {_place(rng, CITIES)}ｼﾃﾝ", [*shapes, "learned_branch"]
    amount, paid, how = paid_amount(pays_for.code, amounts, rng)
    shapes.append(how)
    if other_form:  # another company of the same name: nobody's
        return DatedTransfer(
            text, amount, Truth(None, (), False, "/".join([*shapes, "learned_other_form"])), day
        )
    return DatedTransfer(text, amount, Truth(pays_for.code, (paid,), True, "/".join(shapes)), day)


def paid_amount(
    code: str, amounts: tuple[int, int], rng: random.Random
) -> tuple[int, tuple[str, ...], str]:
    """What customer ``code`` (owing INV-code-1 and -2 of ``amounts``) pays: the amount, the
    invoices it clears, and the shape (exact, less a fee, both less a fee)."""
    style = rng.random()
    fee = rng.choice(FEES)
    one = (f"INV-{code}-1",)
    if style < 0.4:
        return amounts[0], one, "exact"
    if style < 0.75:
        return amounts[0] - fee, one, "fee"
    return sum(amounts) - fee, (*one, f"INV-{code}-2"), "two_invoices_fee"


def _place(rng: random.Random, places: tuple[str, ...]) -> str:
    return half_width(rng.choice(places))


def _transfer(payer: _Customer, amounts: tuple[int, int], day: str, rng: random.Random) -> Transfer:
    member = payer.member
    kana = half_width(member.reading.removesuffix(member.number))
    number = f" {member.number}" if member.number else ""
    short = FORMS[payer.form]
    style = rng.random()
    promised = True
    if style < 0.2:
        text, shape = (f"{short}){kana}{number}", "form_first")
    elif style < 0.3:
        text, shape = (f"{kana}{number}({short}", "form_last")
    elif member.number and style < 0.4:
        text, shape = (f"{short}){kana}{number} {rng.choice(NOTES)}", "number_and_note")
    elif style < 0.55:
        text, shape = (
            f"{rng.choice(('', short + ')'))}{kana}{member.number}{_place(rng, CITIES)}"
            f"{rng.choice(BRANCH_WORDS)}",
            "glued_branch",
        )
    elif style < 0.62:
        text, shape = f"{kana}{member.number}{_place(rng, NOT_PLACES)}ｼﾃﾝ", "glued_no_place"
        promised = False
    elif style < 0.72:
        text, shape = f"{kana}{member.number}({short} {_place(rng, CITIES)}", "middle_spaced_place"
    elif style < 0.82:
        text, shape = f"{short}){kana}{number} {_place(rng, CITIES)}ｼﾃﾝ", "spaced_branch"
    else:
        text, shape = f"{short}){kana}{number} {rng.choice(NOTES)}", "note"
    amount, paid, how = paid_amount(payer.code, amounts, rng)
    shapes = [shape, how]
    if not payer.held:
        # A look-alike the master does not hold: its transfer is nobody's.
        return DatedTransfer(
            text, amount, Truth(None, (), False, "/".join(["stranger", *shapes])), day
        )
    return DatedTransfer(text, amount, Truth(payer.code, (paid,), promised, "/".join(shapes)), day)
