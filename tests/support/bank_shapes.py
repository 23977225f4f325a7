"""Bank-written payer names and amounts in the shapes ``bank_names`` / ``payment_months`` do not
write, each with the truth of who paid what, for the 入金消込 property tests.

A :class:`Case` is one small world: a customer master holding look-alike customers (names one
kana apart, one name the start of another, long names sharing their first 30 characters, a sole
proprietor and a company of one family name), the open invoices of the paying customer and of
its look-alikes (often with the same amounts), and one to three transfers of one payer. Names
are written as payers' banks and internet banking exports write them, beyond the earlier
generator's forms:

- the master's 取引先名カナ in half-width kana, small kana kept (``ｱｵﾊﾞｼｮｳｼﾞ``), hiragana, the
  legal form written into the kana (``カ)アオバショウジ``, ``カブシキガイシャ アオバショウジ``);
- the payer with spaces between the words and around the form (``ｶ) ｱｵﾊﾞ ｼﾖｳｼﾞ``), the form
  spelled out first or last (``ｶﾌﾞｼｷｶﾞｲｼﾔｱｵﾊﾞｼﾖｳｼﾞ``), in full-width kana (``カ）アオバショウジ``),
  small kana as typed (``ｼｮｳｼﾞ``), a long vowel as ``-``, ``ｰ`` or left out;
- a payer's own code (7 to 10 digits, not a customer code) before the name;
- a transfer word a bank put before the name (``ﾌﾘｺﾐ``, ``ﾃﾞﾝｼﾝ``, ``ｶﾞｲﾀﾒ``);
- a branch after the name with or without the form (``ｱｵﾊﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ``);
- the name cut at the 全銀 width (48) or at a narrower export's (30, 20) in the middle of a word;
- a person paying for a company (``ﾀﾅｶ ﾊﾅｺ`` for 田中商事) and payers nobody knows.

Amounts: exact, less a bank fee (440 / 660 / 880 円) or the customer's own (110 … 770 円), one
yen short or over, two or three invoices in one transfer (with or without a fee), one invoice in
two transfers, a part payment while two invoices are open, and two open invoices within a fee of
each other of which the newer is paid less a fee.

Every transfer carries its :class:`Truth`: the customer and the sets of invoices that are a right
answer (``acceptable``), and whether the product promises to find it (``promised``: the shapes
its README and docs name — forms, small kana, ``-``/``ｰ``, full-width, spaces, a customer code
put first, a 48-character cut, a branch after a form, fees up to the tolerance, まとめ入金,
分割入金 of a customer's one invoice, 過入金, a bank's word before the name). A shape outside the promise must still never be
matched to anyone else. The generator is written apart from ``keiri_agent.blocks.table``: its
own readings and abbreviations (:mod:`tests.support.bank_names`).
"""

from __future__ import annotations

import itertools
import random
import unicodedata
from dataclasses import dataclass, field

from tests.support.bank_names import half_width

__all__ = ["FEES", "TOLERANCE", "Case", "Transfer", "Truth", "case", "cases"]

FEES = (440, 660, 880)
OWN_FEES = (110, 220, 330, 550, 770)  # a customer's own fee table, within the tolerance
TOLERANCE = 880  # the product's default fee tolerance
ZENGIN_WIDTH = 48
NARROW_WIDTHS = (30, 20)  # internet banking exports that cut the name shorter

# Long names of one group, sharing their first 20 kana (東日本ロジスティクスソリューションズ).
LONG_START = ("東日本ロジスティクスソリューションズ", "ヒガシニホンロジスティクスソリューションズ")


def _long(code: str, tail: str, tail_reading: str) -> tuple[str, str, str, str, bool]:
    """A customer of the group: 株式会社 and the long start, then its own ``tail``."""
    return (code, f"株式会社{LONG_START[0]}{tail}", LONG_START[1] + tail_reading, "株式会社", True)


# Customers: (code, master name, true reading of the name without its form, form, form first).
# Look-alikes sit together: one kana apart, one the start of another, a long shared start.
CUSTOMERS = (
    ("2001", "株式会社青葉商事", "アオバショウジ", "株式会社", True),
    ("2002", "青葉商会株式会社", "アオバショウカイ", "株式会社", False),
    ("2003", "株式会社山田", "ヤマダ", "株式会社", True),
    ("2004", "山田工業株式会社", "ヤマダコウギョウ", "株式会社", False),
    ("2005", "有限会社佐藤電機", "サトウデンキ", "有限会社", True),
    ("2006", "株式会社斎藤電機", "サイトウデンキ", "株式会社", True),
    ("2007", "大和ホールディングス株式会社", "ヤマトホールディングス", "株式会社", False),
    ("2008", "株式会社東洋コーポレーション", "トウヨウコーポレーション", "株式会社", True),
    ("2009", "合同会社東京キャピタル", "トウキョウキャピタル", "合同会社", True),
    ("2010", "株式会社中央ショッピングセンター", "チュウオウショッピングセンター", "株式会社", True),
    _long("2011", "北関東", "キタカントウ"),
    _long("2012", "南関東", "ミナミカントウ"),
    ("2013", "田中商事株式会社", "タナカショウジ", "株式会社", False),
    ("2014", "田中 太郎", "タナカタロウ", "", False),  # a sole proprietor, no form
    ("2015", "医療法人社団 桜歯科", "サクラシカ", "医療法人社団", True),
    ("2016", "一般社団法人 日本経理協会", "ニホンケイリキョウカイ", "一般社団法人", True),
    ("2017", "公益財団法人 大空文化財団", "オオゾラブンカザイダン", "公益財団法人", True),
    ("2018", "株式会社ニッポンファーマシー", "ニッポンファーマシー", "株式会社", True),
    # A name that fills the 全銀 field with its form, and one going on from it: cut at 48, the
    # second is written as the first.
    _long("2019", "北関東栃木群馬茨城倉庫", "キタカントウトチギグンマイバラキソウコ"),
    _long("2020", "北関東栃木群馬茨城倉庫管理", "キタカントウトチギグンマイバラキソウコカンリ"),
)  # fmt: skip
# Whose names a look-alike may be taken for (each way).
LOOK_ALIKES = {
    "2001": ("2002",), "2002": ("2001",), "2003": ("2004",), "2004": ("2003",),
    "2005": ("2006",), "2006": ("2005",), "2011": ("2012",), "2012": ("2011",),
    "2013": ("2014",), "2014": ("2013",), "2019": ("2020",), "2020": ("2019",),
}  # fmt: skip
FORM_ABBREVIATIONS = {
    "株式会社": ("ｶ", "ｶﾌﾞｼｷｶﾞｲｼﾔ"),
    "有限会社": ("ﾕ", "ﾕｳｹﾞﾝｶﾞｲｼﾔ"),
    "合同会社": ("ﾄﾞ", "ｺﾞｳﾄﾞｳｶﾞｲｼﾔ"),
    "医療法人社団": ("ｲ", ""),
    "一般社団法人": ("ｼﾔ", ""),
    "公益財団法人": ("ｻﾞｲ", ""),
}
BRANCHES = ("ｵｵｻｶｼﾃﾝ", "ﾄｳｷﾖｳｼｼﾔ", "ﾌｸｵｶｴｲｷﾞﾖｳｼﾖ")
BANK_WORDS = ("ﾌﾘｺﾐ ", "ﾃﾞﾝｼﾝ ", "ｶﾞｲﾀﾒ ")
PEOPLE = ("ﾀﾅｶ ﾊﾅｺ", "ｻﾄｳ ｹﾝｼﾞ", "ﾔﾏﾀﾞ ﾕﾐ")  # people paying for a company
STRANGERS = ("ｶ)ｱｵﾊﾞｹﾝｾﾂ", "ﾔﾏﾀﾞﾌﾄﾞｳｻﾝ(ﾕ", "ｶ)ﾄｳﾖｳｼﾖｳｼﾞ", "ﾄﾞ)ｻｸﾗｼｽﾃﾑ")  # no customer
# Words after a customer's name that make another company (a parent, a sister company written
# with a space): not a branch, not the customer.
SISTER_WORDS = ("ﾎｰﾙﾃﾞｲﾝｸﾞｽ", "ﾘｰｽ", "ﾌﾄﾞｳｻﾝ", "ｺｳｼﾞ", "ｻｰﾋﾞｽ")


@dataclass(frozen=True)
class Truth:
    code: str | None  # the customer who paid; None: nobody of the master
    acceptable: tuple[tuple[str, ...], ...]  # invoice sets a right match may clear
    promised: bool  # the product promises to match it
    shape: str  # how the payer and the amount were written


@dataclass(frozen=True)
class Transfer:
    payer: str
    amount: int
    truth: Truth


@dataclass
class Case:
    master: list[dict[str, str]]
    invoices: list[dict[str, object]]
    transfers: list[Transfer]
    shapes: list[str] = field(default_factory=list)


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``."""
    rng = random.Random(seed)
    return [case(rng) for _ in range(count)]


def case(rng: random.Random) -> Case:
    """One world: the master, the open invoices, a payer's transfers with their truth, and for
    half the payers with a look-alike the look-alike's transfers after them."""
    master = [_master_row(c, rng) for c in CUSTOMERS]
    book = _Book(rng)
    payer = rng.choice(CUSTOMERS)
    for other in LOOK_ALIKES.get(payer[0], ()):
        book.decoys(other)
    transfers = _pay(payer, book, rng, alone=True)
    if payer[0] in LOOK_ALIKES and rng.random() < 0.5:
        code = rng.choice(LOOK_ALIKES[payer[0]])
        book.echo = None
        transfers += _pay(next(c for c in CUSTOMERS if c[0] == code), book, rng, alone=False)
    return Case(master, book.rows, transfers, [t.truth.shape for t in transfers])


# --- the master ---------------------------------------------------------------------------------


def _master_row(customer: tuple[str, str, str, str, bool], rng: random.Random) -> dict[str, str]:
    code, name, reading, form, first = customer
    style = rng.random()
    if style < 0.3:
        kana = reading
    elif style < 0.5:  # half-width, small kana kept as typed
        kana = _half_width_small(reading)
    elif style < 0.6:
        kana = "".join(chr(ord(ch) - 0x60) if "ァ" <= ch <= "ヶ" else ch for ch in reading)
    elif style < 0.75 and form in FORM_ABBREVIATIONS:  # the form written into the kana
        short = FORM_ABBREVIATIONS[form][0]
        full = unicode_full(short)
        kana = f"{full}）{reading}" if first else f"{reading}（{full}"
    elif style < 0.85 and FORM_ABBREVIATIONS.get(form, ("", ""))[1]:
        kana = f"{unicode_full(FORM_ABBREVIATIONS[form][1])} {reading}"
    else:
        kana = reading
    return {"取引先コード": code, "取引先名": name, "取引先名カナ": kana}


def unicode_full(half: str) -> str:
    """Half-width kana → full-width (NFKC of the kana block alone)."""
    return unicodedata.normalize("NFKC", half)


def _half_width_small(katakana: str) -> str:
    """Half-width kana keeping small kana small (ｮ, ｬ, ｯ) and ー as ｰ, as a person types it."""
    small = {"ァ": "ｧ", "ィ": "ｨ", "ゥ": "ｩ", "ェ": "ｪ", "ォ": "ｫ", "ッ": "ｯ", "ャ": "ｬ", "ュ": "ｭ"}
    small["ョ"] = "ｮ"
    return "".join(small.get(ch) or half_width(ch).replace("-", "ｰ") for ch in katakana)


# --- invoices -----------------------------------------------------------------------------------


class _Book:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rows: list[dict[str, object]] = []
        self.echo: str | None = None  # the look-alike given the payer's amounts too

    def invoice(self, code: str, amount: int, due: str) -> str:
        number = f"INV-{code}-{len(self.rows) + 1:03d}"
        name = next(c[1] for c in CUSTOMERS if c[0] == code)
        row = {"請求番号": number, "取引先コード": code, "取引先名": name}
        self.rows.append({**row, "請求金額": amount, "支払期日": due})
        return number

    def amounts(self, code: str, count: int) -> list[int]:
        """``count`` new amounts for ``code`` such that no two sets (up to 4) of its open
        invoices come within the tolerance of each other, nor a new amount within it of a
        look-alike's invoice (a look-alike may be given the same amounts)."""
        while True:
            drawn = [self.rng.randrange(5_000, 900_000) for _ in range(count)]
            # A look-alike is given single amounts (``echo_amount``): singles apart suffice.
            alike = [a for other in LOOK_ALIKES.get(code, ()) for a in self.balances(other)]
            apart = all(abs(a - b) > TOLERANCE for a in drawn for b in alike)
            if apart and _separated(self.balances(code), drawn):
                return drawn

    def balances(self, code: str) -> list[int]:
        return [int(str(row["請求金額"])) for row in self.rows if row["取引先コード"] == code]

    def decoys(self, code: str) -> None:
        """A look-alike's open invoices: one with its own amount, one echoing an amount later."""
        (amount,) = self.amounts(code, 1)
        self.invoice(code, amount, "2026-01-31")
        self.echo = code

    def echo_amount(self, amount: int) -> None:
        """Give the look-alike an invoice of ``amount`` too: only the name tells them apart."""
        if self.echo is not None:
            self.invoice(self.echo, amount, "2026-01-31")


def _separated(old: list[int], new: list[int]) -> bool:
    """Whether every set (up to 4) of ``old`` + ``new`` holding a new amount is more than the
    tolerance from every other set (sets of old amounts alone are as they were drawn)."""
    pool = [*old, *new]
    sets = [c for size in range(1, 5) for c in itertools.combinations(range(len(pool)), size)]
    fresh = sorted(sum(pool[i] for i in c) for c in sets if max(c) >= len(old))
    before = sorted(sum(pool[i] for i in c) for c in sets if max(c) < len(old))
    if any(b - a <= TOLERANCE for a, b in itertools.pairwise(fresh)):
        return False
    return all(abs(a - b) > TOLERANCE for a in fresh for b in before)


# --- transfers ----------------------------------------------------------------------------------

DUES = ("2025-12-31", "2026-01-31", "2026-02-28", "2026-03-31")


def _pay(
    customer: tuple[str, str, str, str, bool], book: _Book, rng: random.Random, *, alone: bool
) -> list[Transfer]:
    """The transfers of ``customer``; ``alone``: it has no open invoices but the ones made here
    (else a part payment or an overpayment cannot be told to be for one invoice)."""
    code = customer[0]  # whose invoices are open
    name, named_promise, name_shape, known = _payer_name(customer, rng)
    kind = rng.choice(
        ("exact", "fee", "own_fee", "yen_short", "yen_over", "combined", "combined_fee",
         "installments", "part_of_two", "near_fee")
    )  # fmt: skip
    transfers: list[Transfer] = []

    def send(amount: int, sets: tuple[tuple[str, ...], ...], promised: bool) -> None:
        truth = Truth(
            code if known else None,
            sets if known else (),
            promised and named_promise,
            f"{name_shape}/{kind}",
        )
        transfers.append(Transfer(name, amount, truth))

    if kind in ("exact", "fee", "own_fee", "yen_short"):
        amounts = book.amounts(code, rng.randint(1, 3))
        numbers = [book.invoice(code, a, d) for a, d in zip(amounts, DUES, strict=False)]
        index = rng.randrange(len(numbers))
        off = {"exact": 0, "fee": rng.choice(FEES), "own_fee": rng.choice(OWN_FEES)}.get(kind, 1)
        book.echo_amount(amounts[index])
        send(amounts[index] - off, ((numbers[index],),), True)
    elif kind == "yen_over":  # one invoice open, one yen more: 過入金 of 1 円
        (amount,) = book.amounts(code, 1)
        number = book.invoice(code, amount, "2026-01-31")
        book.echo_amount(amount)
        send(amount + 1, ((number,),), alone)
    elif kind in ("combined", "combined_fee"):
        amounts = book.amounts(code, rng.randint(2, 4))
        numbers = [book.invoice(code, a, d) for a, d in zip(amounts, DUES, strict=False)]
        size = rng.randint(2, min(3, len(numbers)))
        picked = sorted(rng.sample(range(len(numbers)), size))
        fee = rng.choice(FEES) if kind == "combined_fee" else 0
        total = sum(amounts[i] for i in picked)
        send(total - fee, (tuple(numbers[i] for i in picked),), True)
    elif kind == "installments":  # the customer's one invoice in two transfers
        (amount,) = book.amounts(code, 1)
        number = book.invoice(code, amount, "2026-01-31")
        first = amount * rng.randint(2, 8) // 10
        send(first, ((number,),), alone)
        send(amount - first, ((number,),), alone)
    elif kind == "part_of_two":  # a part payment while two invoices are open: nobody can tell
        amounts = book.amounts(code, 2)
        numbers = [book.invoice(code, a, d) for a, d in zip(amounts, DUES, strict=False)]
        send(amounts[0] // 2, ((numbers[0],),), False)
    else:  # near_fee: two invoices within a fee of each other; the newer is paid less a fee
        (amount,) = book.amounts(code, 1)
        older = book.invoice(code, amount, "2026-01-31")
        gap = rng.choice((100, 200, 300))
        newer = book.invoice(code, amount + gap, "2026-02-28")
        fee = rng.choice((440, 660))
        del older
        send(amount + gap - fee, ((newer,),), False)
    return transfers


def _payer_name(
    customer: tuple[str, str, str, str, bool], rng: random.Random
) -> tuple[str, bool, str, bool]:
    """The payer as a bank writes it, whether the product promises to know it, the shape, and
    whether the payer is the customer (or someone paying for it) at all."""
    code, _, reading, form, first = customer
    shape = rng.choice(
        ("plain", "spaces", "spelled", "full_width", "small_kana", "no_long_mark",
         "payer_code", "our_code", "bank_word", "branch_form", "branch_bare", "cut_48",
         "cut_narrow", "person", "stranger", "sister", "mixed_width")
    )  # fmt: skip
    long_mark = rng.choice(("-", "ｰ"))
    kana = half_width(reading).replace("-", long_mark)
    short, spelled = FORM_ABBREVIATIONS.get(form, ("", ""))
    if shape == "no_long_mark":
        if "-" not in half_width(reading):
            shape = "plain"
        kana = kana.replace(long_mark, "")
    if shape == "small_kana":
        kana = _half_width_small(reading)
    if shape == "spaces":
        kana = _spaced(kana, rng)
    if shape == "spelled" and not spelled:
        shape = "plain"
    if shape == "spelled":
        written = f"{spelled}{kana}" if first else f"{kana} {spelled}"
    else:
        written = _with_form(kana, short, first, rng) if short else kana
    promised = shape != "no_long_mark"
    half_width_length = len(written)  # what the field holds, before a width is changed
    if shape == "full_width":
        written = unicode_full(written).replace(")", "）").replace("(", "（")
    elif shape == "mixed_width":  # half of the name full-width, as a payer's system wrote it
        half = len(written) // 2
        written = unicode_full(written[:half]) + written[half:]
    elif shape == "payer_code":
        written = f"{rng.randrange(10**6, 10**10)} {written}"
    elif shape == "our_code":
        written = f"{code}{written}"
    elif shape == "bank_word":
        written = rng.choice(BANK_WORDS) + written  # read without it (keiri_agent.bank_words)
    elif shape == "branch_form" and short:
        written = f"{kana}({short}){rng.choice(BRANCHES)}"
    elif shape in ("branch_form", "branch_bare"):
        written = f"{kana} {rng.choice(BRANCHES)}"
        shape = "branch_bare"
    elif shape == "cut_48":
        # The name, then branches after a space until the field is full, cut at 48 inside a
        # branch: the name's first word decides when a whole branch follows it.
        # A branch survives whole when a character of the next word follows it.
        name = written if first or not short else f"{kana}({short})"  # a form before a branch
        branch = rng.choice(BRANCHES)
        written = f"{name} {branch}"
        while len(written) <= ZENGIN_WIDTH:
            written += " " + rng.choice(BRANCHES)
        promised = len(name) + len(branch) + 2 < ZENGIN_WIDTH
        written = written[:ZENGIN_WIDTH]
    elif shape == "cut_narrow":
        width = rng.choice(NARROW_WIDTHS)
        if len(written) > width:
            written, promised = written[:width], False
        else:
            shape = "plain"
    elif shape == "person":
        return rng.choice(PEOPLE), False, shape, True
    elif shape == "stranger":
        return rng.choice(STRANGERS), False, shape, False
    elif shape == "sister":
        sister = f"{kana} {rng.choice(SISTER_WORDS)}"
        return (_with_form(sister, short, first, rng) if short else sister), False, shape, False
    if shape not in ("full_width", "mixed_width"):
        half_width_length = len(written)
    if half_width_length >= ZENGIN_WIDTH:  # the 全銀 field cuts whatever is longer
        written, promised = written[:ZENGIN_WIDTH], promised and code not in LOOK_ALIKES
    return written, promised, shape, True


def _with_form(kana: str, short: str, first: bool, rng: random.Random) -> str:
    if first:
        return rng.choice((f"{short}){kana}", f"{short}) {kana}", f"({short}){kana}"))
    return rng.choice((f"{kana}({short}", f"{kana} ({short}", f"{kana}({short})"))


def _spaced(kana: str, rng: random.Random) -> str:
    """A space put between two words of the name (after the first 3 or 4 characters)."""
    at = rng.choice((3, 4))
    if kana[at : at + 1] in ("ﾞ", "ﾟ"):
        at += 1  # a voiced mark stays with its kana
    return f"{kana[:at]} {kana[at:]}" if len(kana) > at + 2 else kana
