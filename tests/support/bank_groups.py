"""Company groups as banks write their transfers, each with the truth of who paid what, for the
入金消込 property tests; the shapes ``bank_shapes`` and ``bank_spellings`` do not write.

A :class:`~tests.support.bank_shapes.Case` is a master of three groups. A group is a head company
or organization (株式会社, 有限会社, 合同会社, 医療法人社団, 社会福祉法人, 特定非営利活動法人,
一般社団法人, 学校法人; the form first or last in its name), often with branches and offices the
master holds as customers of their own (``株式会社青葉商事 大阪支店``, ``... 名古屋営業所``:
billed apart), and a parent (``青葉ホールディングス``) that is a customer with nothing open or
no customer at all. Every entity of the paying group owes the same amounts, so only the name
tells them apart. The payer is one of them, written as payers' banks write it:

- the 全銀協 abbreviation in every position: first (``ｶ)``), last (``(ｶ``), in the middle before a
  branch (``ｱｵﾊﾞｼﾖｳｼﾞ(ｶ)ｵｵｻｶｼﾃﾝ``: 青葉商事株式会社大阪支店), first before a spaced branch, closed by
  a space (``(ｶ ``), in full-width (``カ）``), spelled out; an office's own abbreviation at the end
  (``ﾅｺﾞﾔ(ｴｲ``, ``(ｼﾕﾂ``) or spelled (``ﾅｺﾞﾔｴｲｷﾞﾖｳｼﾖ``);
- a representative's title and name after the company (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ ﾔﾏﾀﾞ ﾀﾛｳ``,
  ``ﾘｼﾞﾁﾖｳ``, ``ﾀﾞｲﾋﾖｳｼﾔｲﾝ``);
- small kana written large, ー as ``-`` or ``ｰ``, the field cut at 48 characters;
- a branch or an office the master does not hold (the head company pays), the parent paying
  for the head company.

Amounts: exact; less a bank fee of any of the amounts banks charge (145 … 880 円); less more
than the tolerance (a part payment of the one open invoice); two or three of four invoices
less a fee; one invoice in two transfers each less a fee (分割); more than everything open
(過入金); a payer with nothing open while its group owes that very amount (前受: no invoice is
a right answer); the same invoice paid twice.

:class:`~tests.support.bank_shapes.Truth` says who paid, which invoice sets are right and
whether the product promises the match (a name it can read: not cut, not the parent; an amount
one set of the payer's invoices explains). Written apart from ``keiri_agent.blocks.table``: its
own forms, abbreviations and titles.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth

__all__ = ["BANK_FEES", "Group", "cases"]

TOLERANCE = 880  # the product's default fee tolerance
FIELD_CHARS = 48  # 振込依頼人名 of the 全銀 formats
EXPORT_CUTS = (30, 20)  # the narrower cuts of Internet banking exports and passbooks
# Fees banks take off a transfer (Internet banks 145/154/165/229, branches 220 … 880).
BANK_FEES = (145, 154, 165, 220, 229, 275, 330, 385, 440, 495, 550, 660, 770, 880)
OVER_FEES = (990, 1_100, 1_320)  # more than the tolerance: no fee, a part payment


@dataclass(frozen=True)
class Group:
    family: str  # the group's word (a parent is named after it): 青葉
    family_kana: str
    core: str  # the company's name without its form: 青葉商事
    core_kana: str  # its true reading (full-width katakana, small kana small)
    form: str  # 株式会社 ...
    first: bool  # the form stands before the name


GROUPS = (
    Group("青葉", "アオバ", "青葉商事", "アオバショウジ", "株式会社", True),
    Group("北都", "ホクト", "北都運輸", "ホクトウンユ", "株式会社", False),
    Group("さくら", "サクラ", "さくら会", "サクラカイ", "医療法人社団", True),
    Group("みどり", "ミドリ", "みどり福祉会", "ミドリフクシカイ", "社会福祉法人", True),
    Group("まちづくり", "マチヅクリ", "まちづくりサポート", "マチヅクリサポート", "特定非営利活動法人", True),
    Group("東京", "トウキョウ", "東京ソフト", "トウキョウソフト", "合同会社", True),
    Group("日本", "ニホン", "日本経理協会", "ニホンケイリキョウカイ", "一般社団法人", True),
    Group("桜丘", "サクラガオカ", "桜丘学園", "サクラガオカガクエン", "学校法人", True),
    Group("大空", "オオゾラ", "大空物産", "オオゾラブッサン", "有限会社", False),
)  # fmt: skip
# The 全銀協 abbreviation of each form (half-width), its spelling when banks spell it out, and
# the title its representative holds.
FORMS = {
    "株式会社": ("ｶ", "ｶﾌﾞｼｷｶﾞｲｼﾔ", "ダイヒョウトリシマリヤク"),
    "有限会社": ("ﾕ", "ﾕｳｹﾞﾝｶﾞｲｼﾔ", "トリシマリヤクシャチョウ"),
    "合同会社": ("ﾄﾞ", "ｺﾞｳﾄﾞｳｶﾞｲｼﾔ", "ダイヒョウシャイン"),
    "医療法人社団": ("ｲ", "", "リジチョウ"),
    "社会福祉法人": ("ﾌｸ", "", "リジチョウ"),
    "特定非営利活動法人": ("ﾄｸﾋ", "", "ダイヒョウリジ"),
    "一般社団法人": ("ｼﾔ", "", "ダイヒョウリジ"),
    "学校法人": ("ｶﾞｸ", "", "リジチョウ"),
}
PLACES = (("大阪", "オオサカ"), ("名古屋", "ナゴヤ"), ("福岡", "フクオカ"), ("札幌", "サッポロ"), ("仙台", "センダイ"))  # fmt: skip
# A branch or an office: its kanji, its reading and the bank's abbreviation of it ("": none).
UNITS = (("支店", "シテン", ""), ("支社", "シシャ", ""), ("営業所", "エイギョウショ", "ｴｲ"), ("出張所", "シュッチョウショ", "ｼﾕﾂ"))  # fmt: skip
PEOPLE = (("ヤマダ", "タロウ"), ("スズキ", "ハナコ"), ("サトウ", "ケンイチ"))


@dataclass(frozen=True)
class Entity:
    """One payer of a group: the head, a branch or office (``unit``), or the parent."""

    code: str | None  # its customer code, None when the master does not hold it
    group: Group
    unit: tuple[str, str, str, str, str] | None = None  # place, place kana, unit, kana, short
    parent: bool = False

    @property
    def name(self) -> str:
        g = self.group
        if self.parent:
            return f"{g.family}ホールディングス株式会社"
        head = f"{g.form}{g.core}" if g.first else f"{g.core}{g.form}"
        return f"{head} {self.unit[0]}{self.unit[2]}" if self.unit else head


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``."""
    rng = random.Random(seed)
    return [_case(rng, n) for n in range(count)]


def _case(rng: random.Random, number: int) -> Case:
    groups = rng.sample(GROUPS, 3)
    master: list[dict[str, str]] = []
    entities: dict[Group, list[Entity]] = {}
    for g_number, group in enumerate(groups):
        code = f"{number % 90 + 10}{g_number}"
        heads = [Entity(f"{code}0", group)]
        places = rng.sample(PLACES, rng.choice((0, 1, 2)))
        heads += [
            Entity(f"{code}{k + 1}", group, (*place, *rng.choice(UNITS)))
            for k, place in enumerate(places)
        ]
        entities[group] = heads
        master += [_master_row(e, rng) for e in heads]
    group = groups[0]
    parent_held = rng.random() < 0.4
    if parent_held:
        master.append(_master_row(_parent(entities[group][0], True), rng))
    invoices: list[dict[str, object]] = []
    for other in groups[1:]:  # other groups owe amounts of their own
        for entity in entities[other]:
            for k in range(rng.choice((0, 1, 2))):
                _invoice(invoices, entity, rng.randrange(10, 900) * 1_100, k)
    payer, truth_entity, name_shape = _payer(group, entities[group], parent_held, rng)
    name, cut, position = _written(payer, rng)
    transfers = _amounts(truth_entity, entities[group], invoices, name, rng)
    # A name exactly as long as an export's cut (30, 20) may be a longer one cut: not promised.
    readable = not cut and not payer.parent and len(name) not in EXPORT_CUTS
    transfers = [
        Transfer(
            t.payer,
            t.amount,
            Truth(
                truth_entity.code,
                t.truth.acceptable,
                t.truth.promised and readable,
                f"{name_shape}/{position}/{t.truth.shape}" + ("/cut" if cut else ""),
            ),
        )
        for t in transfers
    ]
    return Case(master, invoices, transfers, [t.truth.shape for t in transfers])


# --- the master ---------------------------------------------------------------------------------


def _reading(entity: Entity) -> str:
    g = entity.group
    if entity.parent:
        return f"{g.family_kana}ホールディングス"
    return f"{g.core_kana} {entity.unit[1]}{entity.unit[3]}" if entity.unit else g.core_kana


def _master_row(entity: Entity, rng: random.Random) -> dict[str, str]:
    reading = _reading(entity)
    style = rng.random()
    if style < 0.25 and not entity.unit:
        kana = ""  # the product reads the kanji name
    elif style < 0.5:
        kana = _bank_half(reading)
    elif style < 0.6:
        kana = reading.replace(" ", "")
    else:
        kana = reading
    return {"取引先コード": entity.code or "", "取引先名": entity.name, "取引先名カナ": kana}


def _invoice(rows: list[dict[str, object]], entity: Entity, amount: int, n: int) -> str:
    number = f"INV-{entity.code}-{n:02d}"
    due = f"2026-{1 + n:02d}-{10 + n:02d}"  # in the order of the numbers
    rows.append(
        {
            "請求番号": number,
            "取引先コード": entity.code,
            "取引先名": entity.name,
            "請求金額": amount,
            "支払期日": due,
        }
    )
    return number


# --- who pays and how the bank writes it ----------------------------------------------------------


def _payer(
    group: Group, held: list[Entity], parent_held: bool, rng: random.Random
) -> tuple[Entity, Entity, str]:
    """The entity that sends the money, the customer whose invoices it pays, and the shape."""
    roll = rng.random()
    head = held[0]
    if roll < 0.3 and len(held) > 1:
        branch = rng.choice(held[1:])
        return branch, branch, "branch_customer"
    if roll < 0.5:  # a branch or an office the master does not hold: the head company pays
        taken = {e.unit[0] for e in held[1:] if e.unit}
        place = rng.choice([p for p in PLACES if p[0] not in taken])
        return Entity(None, group, (*place, *rng.choice(UNITS))), head, "branch_unheld"
    if roll < 0.6:
        return _parent(head, parent_held), head, "parent_held" if parent_held else "parent"
    return head, head, "head"


def _parent(head: Entity, held: bool) -> Entity:
    """The group's holding company (a customer of the master or not)."""
    return Entity(head.code[:-1] + "9" if held and head.code else None, head.group, parent=True)


def _written(payer: Entity, rng: random.Random) -> tuple[str, bool, str]:
    """The payer name as the payer's bank writes it, whether the field cut it, and how the form
    and the branch were written."""
    group = payer.group
    short, spelled, title = FORMS["株式会社" if payer.parent else group.form]
    core = _bank_half(f"{group.family_kana}ホールディングス" if payer.parent else group.core_kana)
    first = True if payer.parent else group.first
    unit = payer.unit
    if unit is None:
        position = rng.choice(("first", "last", "full", "spaced", "open", "spelled", "title"))
        if (position == "spelled" and not spelled) or (position == "open" and not first):
            position = "first" if first else "last"
        text = {
            "first": f"{short}){core}",
            "last": f"{core}({short}",
            "full": f"{_full(short)}）{core}" if first else f"{core}（{_full(short)}",
            "spaced": f"{short}) {core}" if first else f"{core} ({short}",
            "open": f"({short} {core}",
            "spelled": f"{spelled} {core}" if first else f"{core} {spelled}",
            "title": (f"{short}){core}" if first else f"{core}({short}")
            + f" {_bank_half(title)} {_bank_half(' '.join(rng.choice(PEOPLE)))}",
        }[position]
    else:
        place, unit_kana = _bank_half(unit[1]), _bank_half(unit[3])
        office = f"{place}({unit[4]}" if unit[4] and rng.random() < 0.5 else place + unit_kana
        position = rng.choice(("middle", "middle_open", "spaced"))
        if position == "middle" or (position == "middle_open" and not first):
            text = f"{core}({short}){office}"
        elif position == "middle_open":
            text = f"{core}({short} {office}"
        else:
            text = f"{short}){core} {office}" if first else f"{core}({short} {office}"
        position += "_office_short" if "(" in office else ""
    if rng.random() < 0.3:
        text = text.replace("-", "ｰ")
    return text[:FIELD_CHARS], len(text) > FIELD_CHARS, position


def _bank_half(katakana: str) -> str:
    return half_width(katakana)


def _full(half: str) -> str:
    return {"ｶ": "カ", "ﾕ": "ユ", "ﾄﾞ": "ド", "ｲ": "イ", "ﾌｸ": "フク", "ﾄｸﾋ": "トクヒ"}.get(
        half, half
    )


# --- amounts ----------------------------------------------------------------------------------------


def _amounts(
    truth: Entity,
    group: list[Entity],
    invoices: list[dict[str, object]],
    payer: str,
    rng: random.Random,
) -> list[Transfer]:
    """The invoices of the paying group (every entity owes the same amounts) and the transfers."""
    shape = rng.choice(
        ("exact", "fee", "over_fee", "combined_fee", "installments", "overpaid", "prepaid", "twice")
    )
    count = {"combined_fee": 4, "prepaid": 0, "fee": 2, "exact": 2}.get(shape, 1)
    amounts = _separated(count, rng)
    numbers: list[str] = []
    for entity in group:
        mine = [_invoice(invoices, entity, a, k) for k, a in enumerate(amounts)]
        if entity is truth:
            numbers = mine
    if shape == "prepaid":  # nothing open for the payer; the others of its group owe this much
        amount = rng.randrange(10, 900) * 1_100
        for entity in group:
            if entity is not truth:
                _invoice(invoices, entity, amount, 7)
        return [_send(payer, amount, (), False, shape)]
    if shape == "exact":
        k = rng.randrange(count)
        return [_send(payer, amounts[k], ((numbers[k],),), True, shape)]
    if shape == "fee":
        k = rng.randrange(count)
        fee = rng.choice(BANK_FEES)
        return [_send(payer, amounts[k] - fee, ((numbers[k],),), True, f"fee:{fee}")]
    if shape == "over_fee":
        return [_send(payer, amounts[0] - rng.choice(OVER_FEES), ((numbers[0],),), True, shape)]
    if shape == "combined_fee":
        chosen = sorted(rng.sample(range(4), rng.choice((2, 3))))
        total = sum(amounts[k] for k in chosen) - rng.choice(BANK_FEES)
        sets = _fitting(amounts, numbers, total)
        return [_send(payer, total, tuple(sets), len(sets) == 1, shape)]
    if shape == "installments":
        half = amounts[0] // 2 // 1_000 * 1_000
        first, second = half - rng.choice(BANK_FEES), amounts[0] - half - rng.choice(BANK_FEES)
        one = ((numbers[0],),)
        return [_send(payer, first, one, True, shape), _send(payer, second, one, True, shape)]
    if shape == "overpaid":
        over = amounts[0] + rng.randrange(1, 50) * 1_000
        return [_send(payer, over, ((numbers[0],),), True, shape)]
    return [  # twice: the second transfer pays nothing open
        _send(payer, amounts[0], ((numbers[0],),), True, shape),
        _send(payer, amounts[0], (), False, shape),
    ]


def _send(
    payer: str, amount: int, sets: tuple[tuple[str, ...], ...], promised: bool, shape: str
) -> Transfer:
    return Transfer(payer, amount, Truth(None, sets, promised, shape))


def _separated(count: int, rng: random.Random) -> list[int]:
    """``count`` invoice amounts no two subsets of which add up within the tolerance."""
    while True:
        amounts = [rng.randrange(10, 900) * 1_100 + rng.choice((0, 330, 770)) for _ in range(count)]
        sums = sorted(
            sum(c) for size in range(1, count + 1) for c in itertools.combinations(amounts, size)
        )
        if all(b - a > 2 * TOLERANCE for a, b in itertools.pairwise(sums)):
            return amounts


def _fitting(amounts: list[int], numbers: list[str], total: int) -> list[tuple[str, ...]]:
    """Every set of invoices whose sum is ``total`` plus at most the tolerance."""
    return [
        tuple(numbers[k] for k in combo)
        for size in range(1, len(amounts) + 1)
        for combo in itertools.combinations(range(len(amounts)), size)
        if 0 <= sum(amounts[k] for k in combo) - total <= TOLERANCE
    ]
