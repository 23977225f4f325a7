"""A month of 入金消込 as a company lives it: a customer master, open invoices, and the bank's
deposits, each deposit with the truth of what it paid.

:func:`month` picks customers from ``bank_names.companies`` (kanji names as a master holds
them; the master has 取引先名カナ for most) and gives each one to four open invoices and one way
of paying them (:data:`SCENARIOS`), written by the payer's bank the way banks write
(``bank_names.bank_written``: half-width kana, forms first / last / in the middle, branches, a
customer code put first, names cut at 48):

- ``exact`` pays its oldest invoice, ``fee`` the same less 440 / 660 / 880 円, ``combined``
  two or three of its oldest invoices in one transfer (sometimes less a fee), ``edi`` any one
  invoice with its number in the EDI information, ``installments`` its one invoice in two or
  three parts (一部入金, the rest open until the last part), ``over`` its one invoice and a
  little more (過入金), ``monthly`` two invoices of the same amount with different due dates,
  oldest first, ``prepaid`` the balance of an invoice already partly paid (入金済額);
- ``same_due`` has two invoices of one amount due the same day and pays one: which one nobody
  can tell (a 要確認 line, not matchable);
- ``unpaid`` pays nothing.

Besides: a pair of customers whose names read the same (山田工業 / 山田興業; their payers are
matchable only with a code written first), a parent company (``ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ``) paying one
invoice of :data:`PARENT_PAYS_FOR`'s stem, and payers nobody knows (people, companies outside
the master) with amounts of their own.

Amounts are drawn so that no two sets of one customer's invoices (up to four) come within the
fee tolerance of each other, except where a scenario wants it: a transfer then fits exactly
the set it paid. Each customer's transfers pay its invoices oldest first (the due-date rule a
careful matcher follows). :class:`Truth` says, for every deposit, the customer, the invoices in
the order paid, and whether a careful matcher can tell (``matchable``).

The generator is written apart from ``keiri_agent.blocks.table.payments``: the tests compare the
matcher with this independent account of the month.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import random
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from tests.documents.bank_files import Deposit, bank_payer
from tests.support.bank_names import ABBREVIATIONS, Company, bank_written, companies

__all__ = [
    "FEES",
    "PARENT",
    "SCENARIOS",
    "Month",
    "Truth",
    "month",
]

FEES = (440, 660, 880)
TOLERANCE = 880
MAX_COMBINED = 4
PARENT = "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ"
PARENT_PAYS_FOR = "山田商事"
SCENARIOS = (
    "exact", "exact", "exact", "fee", "fee", "combined", "edi", "installments", "over",
    "monthly", "prepaid", "same_due", "unpaid",
)  # fmt: skip
PEOPLE = (
    "タナカ　タロウ",
    "スギモト　ハナコ",
    "ワタナベ　ケンジ",
    "コバヤシ　ユミ",
    "ノムラ　サトシ",
)
DUES = (dt.date(2025, 12, 31), dt.date(2026, 1, 31), dt.date(2026, 2, 28))
FIRST_DAY = dt.date(2026, 2, 2)
DAYS = 25


@dataclass(frozen=True)
class Truth:
    """What a deposit paid: the customer's code, the invoices in the order paid, how."""

    code: str | None  # None: a payer nobody knows
    invoices: tuple[str, ...]
    scenario: str
    matchable: bool  # a careful matcher can tell the customer and the invoices


@dataclass
class Month:
    master: list[dict[str, str]]
    invoices: list[dict[str, object]]
    deposits: list[Deposit]
    truths: list[Truth]
    parent_for: str | None = None  # the code the parent company pays for
    homophones: tuple[str, ...] = ()
    notes: dict[str, int] = field(default_factory=dict)

    def truth_of(self, deposit_index: int) -> Truth:
        return self.truths[deposit_index]


def month(seed: int = 35, customers: int = 60, unknown: int = 4, kana_share: float = 0.8) -> Month:
    """A month of invoices and deposits (see the module docstring)."""
    rng = random.Random(seed)
    pool = companies(seed)
    by_name = {c.core: c for c in pool}
    # Both 株式会社, so that the form written by the bank does not tell them apart either.
    homophones = [
        dataclasses.replace(by_name[core], name=f"株式会社{core}", form="株式会社", form_first=True)
        for core in ("山田工業", "山田興業")
    ]
    parent_target = by_name[PARENT_PAYS_FOR]
    taken = {c.code for c in homophones} | {parent_target.code}
    others = [c for c in pool if c.code not in taken]
    chosen = [parent_target, *homophones, *rng.sample(others, max(customers - 3, 0))]
    readings = {_fold(c.reading) for c in chosen}
    builder = _Builder(rng)
    # Customers whose names read the same and carry the same form: a payer of one of them
    # (without a code) could be either.
    spoken = Counter((_fold(c.reading), ABBREVIATIONS[c.form]) for c in chosen)
    homophone_codes = {
        c.code for c in chosen if spoken[(_fold(c.reading), ABBREVIATIONS[c.form])] > 1
    }
    master = []
    for company in chosen:
        row = {"取引先コード": company.code, "取引先名": company.name}
        row["取引先名カナ"] = company.reading if rng.random() < kana_share else ""
        master.append(row)
    for company in chosen:
        scenario = rng.choice(SCENARIOS)
        if company is parent_target:
            scenario = "parent"
        ambiguous = company.code in homophone_codes
        builder.customer(company, scenario, ambiguous)
    for index in range(unknown):
        builder.unknown(index, pool, readings)
    deposits, truths = builder.finish()
    return Month(
        master,
        builder.invoices,
        deposits,
        truths,
        parent_target.code,
        tuple(sorted(homophone_codes)),
        dict(builder.counts),
    )


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.invoices: list[dict[str, object]] = []
        self.lines: list[tuple[Deposit, Truth]] = []
        self.counts: dict[str, int] = {}
        self._number = 0

    # --- invoices -----------------------------------------------------------------------------

    def open_invoices(
        self, company: Company, count: int, *, equal: bool = False, same_due: bool = False
    ) -> list[tuple[str, int, dt.date]]:
        """``count`` invoices of ``company`` (number, balance, due), oldest first, with
        balances no two sets of which are within the fee tolerance (unless ``equal``)."""
        if equal:
            amount = self.rng.randrange(20_000, 900_000)
            amounts = [amount] * count
        else:
            amounts = self._separated(count)
        if same_due:
            dues = [self.rng.choice(DUES)] * count
        else:
            dues = (
                sorted(self.rng.sample(DUES, count))
                if count <= len(DUES)
                else sorted(self.rng.choice(DUES) for _ in range(count))
            )
        made = []
        for amount, due in zip(amounts, dues, strict=True):
            self._number += 1
            number = f"INV-{self._number:06d}"
            self.invoices.append(
                {
                    "請求番号": number,
                    "取引先コード": company.code,
                    "取引先名": company.name,
                    "請求金額": amount,
                    "支払期日": due.isoformat(),
                    "入金済額": 0,
                }
            )
            made.append((number, amount, due))
        return sorted(made, key=lambda item: (item[2], item[0]))

    def _separated(self, count: int) -> list[int]:
        while True:
            amounts = [self.rng.randrange(8_000, 2_500_000) for _ in range(count)]
            sums = [
                sum(c)
                for size in range(1, min(count, MAX_COMBINED) + 1)
                for c in itertools.combinations(amounts, size)
            ]
            ordered = sorted(sums)
            if all(b - a > TOLERANCE for a, b in itertools.pairwise(ordered)):
                return amounts

    # --- deposits -----------------------------------------------------------------------------

    def pay(
        self,
        company: Company | None,
        amount: int,
        invoices: tuple[str, ...],
        scenario: str,
        matchable: bool,
        *,
        day: dt.date,
        payer: str | None = None,
        edi: str = "",
    ) -> None:
        if payer is None:
            assert company is not None
            payer = bank_written(company, self.rng)
        code = company.code if company is not None else None
        self.lines.append(
            (Deposit(day, amount, payer, edi), Truth(code, invoices, scenario, matchable))
        )
        self.counts[scenario] = self.counts.get(scenario, 0) + 1

    def days(self, count: int) -> list[dt.date]:
        offsets = sorted(self.rng.sample(range(DAYS), count))
        return [FIRST_DAY + dt.timedelta(days=o) for o in offsets]

    def customer(self, company: Company, scenario: str, ambiguous: bool) -> None:
        rng = self.rng

        def pay(
            amount: int, paid: tuple[str, ...], day: dt.date, *, matchable: bool = True
        ) -> None:
            payer = bank_written(company, rng)
            coded = payer.startswith(company.code)
            ok = matchable and (coded or not ambiguous)
            self.pay(company, amount, paid, scenario, ok, day=day, payer=payer)

        if scenario == "parent":
            (number, amount, _), *_ = self.open_invoices(company, 1)
            self.pay(company, amount, (number,), "parent", False, day=self.days(1)[0], payer=PARENT)
            return
        if scenario in ("exact", "fee"):
            invoices = self.open_invoices(company, rng.randint(1, 3))
            paying = rng.randint(1, len(invoices))
            for (number, amount, _), day in zip(invoices[:paying], self.days(paying), strict=False):
                fee = rng.choice(FEES) if scenario == "fee" else 0
                pay(amount - fee, (number,), day)
        elif scenario == "combined":
            invoices = self.open_invoices(company, rng.randint(2, 4))
            size = rng.randint(2, min(3, len(invoices)))
            fee = rng.choice((0, *FEES))
            paid = invoices[:size]
            pay(sum(a for _, a, _ in paid) - fee, tuple(n for n, _, _ in paid), self.days(1)[0])
        elif scenario == "edi":
            invoices = self.open_invoices(company, rng.randint(1, 3))
            number, amount, _ = rng.choice(invoices)
            fee = rng.choice((0, 0, *FEES))
            # The EDI names the invoice: the customer is known however the name reads.
            self.pay(
                company, amount - fee, (number,), scenario, True, day=self.days(1)[0], edi=number
            )
        elif scenario == "installments":
            ((number, amount, _),) = self.open_invoices(company, 1)
            parts = rng.randint(2, 3)
            cuts = sorted(rng.sample(range(1, 10), parts - 1))
            shares = [b - a for a, b in itertools.pairwise([0, *cuts, 10])]
            instalments = [amount * s // 10 for s in shares[:-1]]
            instalments.append(amount - sum(instalments))
            for part, day in zip(instalments, self.days(parts), strict=True):
                pay(part, (number,), day)
        elif scenario == "over":
            ((number, amount, _),) = self.open_invoices(company, 1)
            pay(amount + rng.randrange(1_000, 30_000), (number,), self.days(1)[0])
        elif scenario == "monthly":
            invoices = self.open_invoices(company, 2, equal=True)
            paying = rng.randint(1, 2)
            for (number, amount, _), day in zip(invoices[:paying], self.days(paying), strict=False):
                pay(amount, (number,), day)
        elif scenario == "prepaid":
            ((number, amount, _),) = self.open_invoices(company, 1)
            paid_before = amount // 3
            self.invoices[-1]["入金済額"] = paid_before
            pay(amount - paid_before, (number,), self.days(1)[0])
        elif scenario == "same_due":
            invoices = self.open_invoices(company, 2, equal=True, same_due=True)
            number, amount, _ = invoices[0]
            # Either invoice may be the one paid: the truth is "one of them".
            pay(amount, (number,), self.days(1)[0], matchable=False)
        elif scenario == "unpaid":
            self.open_invoices(company, rng.randint(1, 2))
        else:
            raise ValueError(scenario)

    def unknown(self, index: int, pool: list[Company], readings: set[str]) -> None:
        """A payer nobody knows: a person, or a company whose name reads like no customer."""
        if index % 2 == 0:
            payer = bank_payer(PEOPLE[index // 2 % len(PEOPLE)])
        else:
            strangers = [c for c in pool if not _near_any(_fold(c.reading), readings)]
            company = self.rng.choice(strangers)
            payer = bank_written(company, self.rng).removeprefix(company.code)
        amount = self.rng.randrange(3_000, 800_000)
        self.pay(None, amount, (), "unknown", False, day=self.days(1)[0], payer=payer)

    def finish(self) -> tuple[list[Deposit], list[Truth]]:
        ordered = sorted(self.lines, key=lambda item: item[0].date)
        return [d for d, _ in ordered], [t for _, t in ordered]


def _fold(reading: str) -> str:
    small = str.maketrans("ァィゥェォッャュョヮヵヶ", "アイウエオツヤユヨワカケ")
    return unicodedata.normalize("NFKC", reading).translate(small).replace("ー", "-")


def _near_any(reading: str, readings: set[str]) -> bool:
    """A reading equal to one of ``readings``, or one kana from one of them."""
    for other in readings:
        if abs(len(other) - len(reading)) > 1:
            continue
        if reading == other or _one_edit(reading, other):
            return True
    return False


def _one_edit(a: str, b: str) -> bool:
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))
