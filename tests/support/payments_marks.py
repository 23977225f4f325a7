"""Payer names whose voiced marks, forms, spaces and notes are written as systems really write
them, against customers one voiced mark or one word apart, for the 入金消込 property tests.

The generators before this one (``bank_shapes``, ``bank_spellings``, ``bank_groups``,
``bank_separators``) write every 濁点 and 半濁点 joined to its kana (``ﾊﾞ``, ``バ``). Names
also travel through systems that convert half-width kana one character at a time and write the
mark as a letter of its own, the full-width ``゛`` / ``゜`` (``ﾊ゛ﾚﾂﾄ``, ``ハ゛レット``), or as the
combining mark (U+3099 / U+309A, which NFKC already joins to its kana): a payer's own
accounting system sending the transfer, or a customer master typed or converted so. A :class:`~tests.support.bank_shapes.Case` is a master of
families of look-alike customers, every one owing the same amounts, so only the name tells
them apart:

- names one voiced mark apart (パレット / バレット / ハレット, ガイア / カイア, ブライト /
  プライト / フライト, 後藤工業 / 小藤工業, 浜田建設 / 浜多建設);
- one name the start of the next (青葉 / 青葉商事 / 青葉商事開発) and one name under two legal
  forms (株式会社青葉 / 有限会社青葉: only the form the bank writes tells them apart);
- legal forms beyond 株式会社 (``ﾄﾞ)``, ``ｲ)``, ``ｼﾔ)``, ``ｻﾞｲ)``, ``ｶﾞｸ)``, ``ﾌｸ)``, ``ｾﾞｲ)``,
  ``ﾀﾞｲ)``), first, last or in the middle before a branch, spaces doubled or left out;
- the master's 取引先名カナ full-width, half-width, with its marks written apart, or none.

Some customers of a family are left out of the master: their transfers are strangers' and must
never be matched. The payer may write a note after its name (an invoice number, the month paid
for: ``ｶ)ｱｵﾊﾞ ｾｲｷﾕｳ1234``, ``ｱｵﾊﾞｼﾖｳｼﾞ 5ｶﾞﾂﾌﾞﾝ``), or be a person paying for the company.
Amounts: one invoice exact or less a bank fee (440 / 660 / 770 / 880 円), or both less a fee.

:class:`~tests.support.bank_shapes.Truth` says whether the product promises the match: a payer
the master holds, whose name written any of those ways, a note after it or not, is one
customer's (a form tells twins apart; a person's name is not promised). Written apart from
``keiri_agent.blocks.table``: its own half-width conversion (``bank_names.half_width``) and
its own abbreviations.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth

__all__ = ["FAMILIES", "Member", "cases", "marks_apart"]

FEES = (440, 660, 770, 880)
# Legal forms and the 全銀協 abbreviation banks write for them.
FORMS = {
    "株式会社": "ｶ",
    "有限会社": "ﾕ",
    "合同会社": "ﾄﾞ",
    "医療法人": "ｲ",
    "一般社団法人": "ｼﾔ",
    "一般財団法人": "ｻﾞｲ",
    "学校法人": "ｶﾞｸ",
    "社会福祉法人": "ﾌｸ",
    "税理士法人": "ｾﾞｲ",
    "国立大学法人": "ﾀﾞｲ",
}
OTHER_FORMS = tuple(f for f in FORMS if f not in ("株式会社", "有限会社"))
BRANCHES = ("ｵｵｻｶｼﾃﾝ", "ﾅｺﾞﾔｴｲｷﾞﾖｳｼﾖ", "ﾎﾝｼﾔ")
NOTES = ("ｾｲｷﾕｳ1234", "5ｶﾞﾂﾌﾞﾝ", "NO.20260131", "ｾｲｷﾕｳｼﾖ A-0012", "ｼﾊﾗｲ")
PEOPLE = ("ﾔﾏﾓﾄ ｹﾝｼﾞ", "ｽｽﾞｷ ﾊﾅｺ")  # a person paying for a company


@dataclass(frozen=True)
class Member:
    """A customer of a family: its name without the form (kanji or katakana) and its reading."""

    core: str
    reading: str


# Each family: look-alikes. The names of the voiced families differ in one 濁点 or 半濁点.
FAMILIES: tuple[tuple[Member, ...], ...] = (
    (Member("パレット", "パレット"), Member("バレット", "バレット"), Member("ハレット", "ハレット")),
    (Member("ガイア", "ガイア"), Member("カイア", "カイア")),
    (Member("ブライト", "ブライト"), Member("プライト", "プライト"), Member("フライト", "フライト")),
    (Member("後藤工業", "ゴトウコウギョウ"), Member("小藤工業", "コトウコウギョウ")),
    (Member("浜田建設", "ハマダケンセツ"), Member("浜多建設", "ハマタケンセツ")),
    (Member("ダイワ精機", "ダイワセイキ"), Member("タイワ精機", "タイワセイキ")),
    (Member("青葉", "アオバ"), Member("青葉商事", "アオバショウジ"), Member("青葉商事開発", "アオバショウジカイハツ")),
)  # fmt: skip
PREFIX_FAMILY = FAMILIES[-1]


@dataclass(frozen=True)
class _Customer:
    code: str
    member: Member
    form: str
    form_first: bool

    @property
    def name(self) -> str:
        return (
            f"{self.form}{self.member.core}"
            if self.form_first
            else f"{self.member.core}{self.form}"
        )


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``."""
    rng = random.Random(seed)
    return [_case(rng, number) for number in range(count)]


def marks_apart(text: str, combining: bool = False) -> str:
    """``text`` with every voiced and semi-voiced mark written as a letter of its own: the
    full-width ``゛`` / ``゜`` (a conversion one character at a time), or the combining mark."""
    marks = ("\u3099", "\u309a") if combining else ("゛", "゜")
    out = []
    for ch in text:
        if ch in "ﾞﾟ":
            out.append(marks[ch == "ﾟ"])
            continue
        decomposed = unicodedata.normalize("NFD", ch)
        out.append(decomposed[0])
        out.extend(marks[m == "\u309a"] for m in decomposed[1:])
    return "".join(out)


def _case(rng: random.Random, number: int) -> Case:
    family = rng.choice(FAMILIES)
    customers: list[_Customer] = []
    held: list[_Customer] = []
    for index, member in enumerate(family):
        form = rng.choice(["株式会社"] * 4 + list(OTHER_FORMS))
        customer = _Customer(f"{5000 + 10 * index}", member, form, rng.random() < 0.7)
        customers.append(customer)
        if rng.random() < 0.8:
            held.append(customer)
    if family is PREFIX_FAMILY and rng.random() < 0.5:  # the shortest name under two forms
        first = customers[0]
        forms = ("株式会社", "有限会社") if rng.random() < 0.5 else ("有限会社", "株式会社")
        customers[0] = _Customer(first.code, first.member, forms[0], first.form_first)
        twin = _Customer("5090", first.member, forms[1], rng.random() < 0.5)
        customers.append(twin)
        held = [customers[0] if c is first else c for c in held] + [twin]
    amounts = _amounts(rng)
    invoices: list[dict[str, object]] = []
    for customer in held:
        for n, amount in enumerate(amounts, start=1):
            invoices.append(
                {
                    "請求番号": f"INV-{customer.code}-{n}",
                    "取引先コード": customer.code,
                    "取引先名": customer.name,
                    "請求金額": amount,
                    "支払期日": f"2026-0{n}-28",
                }
            )
    master = [_master_row(c, rng) for c in held]
    payers = rng.sample(customers, min(len(customers), rng.choice((1, 2))))
    transfers = [_transfer(p, customers, held, amounts, rng) for p in payers]
    return Case(master, invoices, transfers, [t.truth.shape for t in transfers])


def _amounts(rng: random.Random) -> tuple[int, int]:
    """Two invoices far enough apart that no sum of them less a fee is another."""
    first = rng.randrange(30, 300) * 1_100
    second = first + rng.randrange(5, 200) * 1_100
    return first, second


def _master_row(customer: _Customer, rng: random.Random) -> dict[str, str]:
    reading = customer.member.reading
    style = rng.random()
    if style < 0.35:
        kana = reading
    elif style < 0.55:
        kana = half_width(reading)
    elif style < 0.75:  # typed or converted with the marks apart
        kana = marks_apart(reading, combining=rng.random() < 0.3)
    elif style < 0.85 and not _kanji(customer.member.core):
        kana = ""  # a katakana name is its own kana
    else:
        kana = reading
    return {"取引先コード": customer.code, "取引先名": customer.name, "取引先名カナ": kana}


def _full(ch: str) -> str:
    """One half-width character → full-width, a mark written apart kept as it is."""
    return ch if ch in "゛゜" else unicodedata.normalize("NFKC", ch)


def _kanji(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _transfer(
    payer: _Customer,
    customers: list[_Customer],
    held: list[_Customer],
    amounts: tuple[int, int],
    rng: random.Random,
) -> Transfer:
    written, shapes, readable = _written(payer, customers, rng)
    style = rng.random()
    fee = rng.choice(FEES)
    code = payer.code
    paid: tuple[str, ...]
    if style < 0.35:
        amount, paid, shapes = amounts[0], (f"INV-{code}-1",), [*shapes, "exact"]
    elif style < 0.75:
        amount, paid, shapes = amounts[0] - fee, (f"INV-{code}-1",), [*shapes, f"fee_{fee}"]
    else:
        amount = sum(amounts) - fee
        paid, shapes = (f"INV-{code}-1", f"INV-{code}-2"), [*shapes, "combined_fee"]
    twin = next((c for c in held if c.member == payer.member and c is not payer), None)
    if payer not in held and twin is not None:  # the master may hold the twin's form wrong
        sets = (
            (f"INV-{twin.code}-1",),
            (f"INV-{twin.code}-2",),
            tuple(f"INV-{twin.code}-{n}" for n in (1, 2)),
        )
        truth = Truth(twin.code, sets, False, "/".join(["unheld_twin", *shapes]))
    elif payer not in held:
        truth = Truth(None, (), False, "/".join(["stranger", *shapes]))
    else:
        truth = Truth(code, (paid,), readable, "/".join(shapes))
    return Transfer(written, amount, truth)


def _written(
    payer: _Customer, customers: list[_Customer], rng: random.Random
) -> tuple[str, list[str], bool]:
    """The payer as its bank writes it, the shapes drawn, and whether a careful reader can tell
    it from every other customer of the family (held or not)."""
    if rng.random() < 0.06:
        return rng.choice(PEOPLE), ["person"], False
    kana = half_width(payer.member.reading)
    if rng.random() < 0.3:
        kana = kana.replace("-", "ｰ")
    short = FORMS[payer.form]
    twins = [c for c in customers if c.member == payer.member and c is not payer]
    style = rng.random()
    if style < 0.1 and not twins:
        text, shapes = kana, ["no_form"]
    elif style < 0.35:
        text, shapes = f"{short}){kana}", ["first"]
    elif style < 0.45:
        text, shapes = f"{short})  {kana}", ["first_two_spaces"]
    elif style < 0.7:
        text, shapes = f"{kana}({short}", ["last"]
    elif style < 0.8:
        text, shapes = f"{kana}({short}){rng.choice(BRANCHES)}", ["middle_branch"]
    elif style < 0.9:
        text, shapes = f"{short}){kana} {rng.choice(BRANCHES)}", ["first_branch"]
    else:
        text, shapes = f" {short}){kana} ", ["spaces_around"]
    shapes.append("form_" + short)
    readable = True
    marks = rng.random()
    if marks < 0.4 and any(ch in text for ch in "ﾞﾟ"):
        text = marks_apart(text)
        shapes.append("marks_apart")
    elif marks < 0.5 and any(ch in text for ch in "ﾞﾟ"):
        text = "".join(_full(ch) for ch in marks_apart(text))
        shapes.append("full_marks_apart")
    elif marks < 0.55:
        text = marks_apart(text, combining=True)
        shapes.append("combining_marks")
    if rng.random() < 0.15:
        text = f"{text.rstrip()} {rng.choice(NOTES)}"
        shapes.append("note")
    return text, shapes, readable
