"""Payer names written with separators, each with the truth of who paid, for the 入金消込
property tests: a period, a middle dot or a slash where a bank's parenthesis or space belongs.

Some payers' systems write the 全銀協 abbreviation of the legal form and the words of a name
apart with a period (``ｶ.ｱｵﾊﾞｼﾖｳｼﾞ``, ``ｱｵﾊﾞｼﾖｳｼﾞ.ｶ.ｵｵｻｶｼﾃﾝ``, ``ｶ.ｱｵﾊﾞ.ｼﾖｳｼﾞ``), a middle
dot (``ﾕ･ｻｸﾗ･ｻﾝｷﾞﾖｳ``) or a slash (``ｱｵﾊﾞｼﾖｳｼﾞ/ｶ``), and mix them with the parenthesis
(``ｶ)ｱｵﾊﾞ.ｼﾖｳｼﾞ``). A :class:`~tests.support.bank_shapes.Case` is a master of two families of
look-alike customers: a company (``株式会社青葉商事``), its twin of the same name and another
legal form (``有限会社青葉商事``: the form the bank writes tells them apart), its cousin of the
same stem and another word (``株式会社青葉商店``), its sister named after it
(``青葉商事リース株式会社``), branches billed as customers of their own
(``株式会社青葉商事 大阪支店``), and a parent (``青葉ホールディングス株式会社``) held or not.
Every customer of the paying family owes the same amounts, so only the name tells them apart.

The payer is one of them, a branch the master does not hold (the company pays), the parent
when the master does not hold it, or a company of the same stem nobody holds. The product
promises the match of every payer the master holds and of a branch it does not hold; a
stranger must never be matched. Written apart from ``keiri_agent.blocks.table``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests.support.bank_groups import BANK_FEES
from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth

__all__ = ["SEPARATORS", "cases"]

SEPARATORS = (".", ".", ".", "･", "/")  # the period most often
# Legal forms with the bank's abbreviation (half-width).
FORMS = {"株式会社": "ｶ", "有限会社": "ﾕ", "合同会社": "ﾄﾞ", "医療法人": "ｲ"}
Word = tuple[str, str]  # kanji and reading
# A family's stem and its two words (the company's and its cousin's).
FAMILIES: tuple[tuple[Word, Word, Word], ...] = (
    (("青葉", "アオバ"), ("商事", "ショウジ"), ("商店", "ショウテン")),
    (("さくら", "サクラ"), ("産業", "サンギョウ"), ("興産", "コウサン")),
    (("北都", "ホクト"), ("運輸", "ウンユ"), ("物流", "ブツリュウ")),
    (("東洋", "トウヨウ"), ("物産", "ブッサン"), ("商会", "ショウカイ")),
    (("大空", "オオゾラ"), ("建設", "ケンセツ"), ("工務店", "コウムテン")),
    (("みどり", "ミドリ"), ("電機", "デンキ"), ("電設", "デンセツ")),
    (("ひかり", "ヒカリ"), ("システム", "システム"), ("ソフト", "ソフト")),
)  # fmt: skip
OTHER_WORDS = (
    ("建設", "ケンセツ"),
    ("食品", "ショクヒン"),
    ("印刷", "インサツ"),
)  # strangers' words
SISTER_WORDS: tuple[Word, ...] = (
    ("リース", "リース"),
    ("不動産", "フドウサン"),
    ("サービス", "サービス"),
)
PLACES = (("大阪", "オオサカ"), ("名古屋", "ナゴヤ"), ("福岡", "フクオカ"), ("仙台", "センダイ"))
UNITS = (("支店", "シテン"), ("営業所", "エイギョウショ"), ("支社", "シシャ"))


@dataclass(frozen=True)
class Entity:
    """A payer: its code (None when the master does not hold it), its words and its form."""

    code: str | None
    words: tuple[Word, ...]  # the name's words without the form
    form: str
    first: bool  # the form stands before the name
    branch: Word | None = None  # a branch after the name

    @property
    def name(self) -> str:
        core = "".join(kanji for kanji, _ in self.words)
        head = f"{self.form}{core}" if self.first else f"{core}{self.form}"
        return f"{head} {self.branch[0]}" if self.branch else head

    @property
    def reading(self) -> str:
        core = "".join(kana for _, kana in self.words)
        return f"{core} {self.branch[1]}" if self.branch else core


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``."""
    rng = random.Random(seed)
    return [_case(rng, number) for number in range(count)]


def _case(rng: random.Random, number: int) -> Case:
    paying, other = rng.sample(FAMILIES, 2)
    held = _family(paying, f"{number % 90 + 10}0", rng)
    master_entities = [e for e in held if e.code] + [
        e for e in _family(other, f"{number % 90 + 10}1", rng) if e.code
    ]
    master = [_master_row(e, rng) for e in master_entities]
    payer, truth, shape = _payer(paying, held, rng)
    amounts = [rng.randrange(10, 400) * 1_100 + rng.choice((0, 330, 770))]
    amounts.append(amounts[0] * 2 + rng.randrange(3, 50) * 1_100)  # no fee apart from the first
    invoices: list[dict[str, object]] = []
    paid = ""
    for entity in master_entities:
        owes = amounts if entity in held else [rng.randrange(500, 900) * 1_100]
        for k, amount in enumerate(owes):
            invoice = _invoice(invoices, entity, amount, k)
            if entity is truth and k == 0:
                paid = invoice
    fee = rng.choice((0, 0, *BANK_FEES))
    written, spelling = _written(payer, rng)
    code = truth.code if truth else None
    promised = code is not None and not shape.startswith("unheld")
    acceptable = ((paid,),) if code else ()
    amount_shape = f"fee:{fee}" if fee else "exact"
    return Case(
        master,
        invoices,
        [
            Transfer(
                written,
                amounts[0] - fee,
                Truth(code, acceptable, promised, f"{shape}/{spelling}/{amount_shape}"),
            )
        ],
    )


def _family(family: tuple[Word, Word, Word], code: str, rng: random.Random) -> list[Entity]:
    """The company, its twin, cousin, sister and parent (a code of None: the master does not
    hold it) and its branches the master holds, in this order."""
    stem, word, cousin_word = family
    form = rng.choice(("株式会社", "株式会社", "有限会社", "合同会社", "医療法人"))
    first = rng.random() < 0.6
    company = Entity(f"{code}0", (stem, word), form, first)
    twin_form = rng.choice([f for f in FORMS if f != form])
    entities = [
        company,
        Entity(_held(rng, 0.5, f"{code}1"), company.words, twin_form, not first),
        Entity(_held(rng, 0.5, f"{code}2"), (stem, cousin_word), form, first),
        Entity(_held(rng, 0.3, f"{code}3"), (stem, word, rng.choice(SISTER_WORDS)), "株式会社", False),
        Entity(_held(rng, 0.4, f"{code}4"), (stem, ("ホールディングス", "ホールディングス")), "株式会社", True),
    ]  # fmt: skip
    for k, (place, place_kana) in enumerate(rng.sample(PLACES, rng.choice((0, 1, 2)))):
        unit, unit_kana = rng.choice(UNITS)
        entities.append(Entity(f"{code}{5 + k}", company.words, form, first, (place + unit, place_kana + unit_kana)))  # fmt: skip
    return entities


def _held(rng: random.Random, chance: float, code: str) -> str | None:
    return code if rng.random() < chance else None


KINDS = ("company", "twin", "cousin", "sister", "parent")


def _payer(
    family: tuple[Word, Word, Word], held: list[Entity], rng: random.Random
) -> tuple[Entity, Entity | None, str]:
    """Who sends the money, whose invoice it pays (None: nobody's) and the shape. A twin the
    master does not hold is the company written with another form: the company's invoice may
    be cleared, or none, never promised."""
    company = held[0]
    roll = rng.random()
    if roll < 0.15:  # a branch the master does not hold: the company pays
        taken = {e.branch[0] for e in held if e.branch}
        place, place_kana = rng.choice([p for p in PLACES if not any(p[0] in t for t in taken)])
        unit, unit_kana = rng.choice(UNITS)
        branch = (place + unit, place_kana + unit_kana)
        payer = Entity(None, company.words, company.form, company.first, branch)
        return payer, company, "branch_unheld"
    if roll < 0.25:  # a company of the family's stem that nobody holds
        word = rng.choice([w for w in OTHER_WORDS if w not in family])
        return Entity(None, (family[0], word), company.form, company.first), None, "stranger"
    number = rng.randrange(len(held))
    entity, kind = held[number], KINDS[number] if number < len(KINDS) else "branch"
    if entity.code is None:
        return entity, company if kind == "twin" else None, f"unheld_{kind}"
    return entity, entity, kind


def _written(payer: Entity, rng: random.Random) -> tuple[str, str]:
    """The payer as its bank writes it with separators, and how."""
    sep = rng.choice(SEPARATORS)
    short = FORMS[payer.form]
    words = [half_width(kana) for _, kana in payer.words]
    if rng.random() < 0.4:  # the words of the name apart too
        core, apart = sep.join(words), "words"
    else:
        core, apart = "".join(words), "whole"
    branch = half_width(payer.branch[1]) if payer.branch else ""
    if payer.first:
        position = rng.choice(("first", "first", "paren_first"))
        text = f"{short}){core}" if position == "paren_first" else f"{short}{sep}{core}"
        if branch:
            text += rng.choice((sep, " ")) + branch
    elif branch:
        position = "middle"
        text = f"{core}{sep}{short}{sep}{branch}"
    else:
        position = "last"
        text = f"{core}{sep}{short}"
    if position == "paren_first" and apart == "whole" and not branch:
        text = f"{short}{sep}{core}"  # a separator somewhere, always
        position = "first"
    if rng.random() < 0.3:
        text = text.replace("-", "ｰ")
    return (
        text,
        f"{position}_{apart}_{'dot' if sep == '･' else 'slash' if sep == '/' else 'period'}",
    )


def _master_row(entity: Entity, rng: random.Random) -> dict[str, str]:
    reading = entity.reading
    style = rng.random()
    if style < 0.2 and not entity.branch and entity.words[-1][0] != "ホールディングス":
        kana = ""  # the product reads the kanji name
    elif style < 0.55:
        kana = half_width(reading)
    else:
        kana = reading
    return {"取引先コード": entity.code or "", "取引先名": entity.name, "取引先名カナ": kana}


def _invoice(rows: list[dict[str, object]], entity: Entity, amount: int, n: int) -> str:
    number = f"INV-{entity.code}-{n:02d}"
    rows.append(
        {
            "請求番号": number,
            "取引先コード": entity.code,
            "取引先名": entity.name,
            "請求金額": amount,
            "支払期日": f"2026-{1 + n:02d}-{10 + n:02d}",
        }
    )
    return number
