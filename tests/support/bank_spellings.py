"""Payer names in the spellings ``bank_shapes`` does not write, each with the truth of who paid,
for the 入金消込 property tests.

A :class:`Case` is a customer master (every customer with its 取引先名カナ, in one of the ways
masters hold it: full-width with small kana, half-width, long marks left out, the legal form
written into the kana), the open invoices of one paying customer and of the customers that
look like it (given the same amounts, so that only the name tells them apart), and one or two
transfers of that customer or of a stranger. The payer is written as payers' banks and the
statements that carry it write names:

- the legal form with a space after it or its closing parenthesis missing (``(ｶ ﾄｳﾖｳ...``,
  ``ｶ) ﾄｳﾖｳ...``, ``ﾄｳﾖｳ...(ｶ ｵｵｻｶｼﾃﾝ``), spelled out with or without a space
  (``ｶﾌﾞｼｷｶﾞｲｼﾔ ﾄｳﾖｳ...``), 有限会社 ``ﾕ``, 合同会社 ``ﾄﾞ``, 医療法人 ``ｲ``, 一般財団法人 ``ｻﾞｲ``;
- the long vowel as ``-``, ``ｰ``, ``‐``, ``－`` or left out (``ﾌﾞﾙﾘﾌ`` for ブルーリーフ), on the
  payer's side or on the master's;
- small kana written small as typed (``ｼｮｯﾋﾟﾝｸﾞ``) or large as banks write them; ヂ and ヅ
  written ``ｼﾞ`` and ``ｽﾞ``;
- the whole field cut at 48, or at an export's 30 or 20 half-width characters: inside the name,
  inside a spelled-out or abbreviated form after it, between a kana and its voiced mark;
- a sole proprietor's account named by its trade name (屋号), its owner or both
  (``ﾔﾏﾀﾞｼﾖｳﾃﾝ ﾀﾞｲﾋﾖｳ ﾔﾏﾀﾞ ﾀﾛｳ``, ``ﾔﾏﾀﾞ ﾀﾛｳ(ﾔﾏﾀﾞｼﾖｳﾃﾝ``), the master holding both
  (in parentheses, after 代表 or a space only) and as kana nothing, the trade name or both;
- a period where the form's parenthesis belongs (``ｶ.ﾄｳﾖｳ...``, ``ﾄｳﾖｳ....ｶ``);
- two or three invoices paid in one transfer, with or without a bank fee taken off.

The master holds customers whose names share their first 20 or more kana, a name that is the
start of longer ones, and two names that differ only in a long mark (ビルサービス / ビール
サービス). :class:`Truth` says whether the product promises the match: a name it can tell from
every other customer's (the visible part of a cut name is at least 6 kana and begins no other
customer's name; no other name is the same once long marks are left out). Whatever is promised
or not, no transfer may be matched to another customer or other invoices than it paid. Written
apart from ``keiri_agent.blocks.table``: its own forms, its own small-kana and mark rules.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

from tests.support.bank_names import half_width
from tests.support.bank_shapes import FORM_ABBREVIATIONS, Case, Transfer, Truth

__all__ = ["FEES", "Case", "Customer", "Transfer", "Truth", "case", "cases"]

FEES = (440, 660, 880)
WIDTHS = (48, 30, 20)  # the 全銀 field, and the narrower cuts of exports and passbooks
MIN_VISIBLE = 6  # kana of a cut name that must remain for the product to promise it


@dataclass(frozen=True)
class Customer:
    code: str
    name: str  # as the master writes it (kanji)
    reading: str  # the true reading of the name without its form (full-width katakana)
    form: str  # the legal form ("" for a sole proprietor)
    first: bool  # the form stands before the name
    owner: str = ""  # a sole proprietor: the owner's name (katakana); ``reading`` is the 屋号


# Bank abbreviation and spelled-out reading (half-width) of the forms used here.
FORMS = {
    **FORM_ABBREVIATIONS,
    "医療法人": ("ｲ", "ｲﾘﾖｳﾎｳｼﾞﾝ"),
    "一般財団法人": ("ｻﾞｲ", "ｲﾂﾊﾟﾝｻﾞｲﾀﾞﾝﾎｳｼﾞﾝ"),
}
CUSTOMERS = (
    Customer("3001", "株式会社東洋コーポレーション", "トウヨウコーポレーション", "株式会社", True),
    Customer("3002", "グリーンサービス有限会社", "グリーンサービス", "有限会社", False),
    Customer("3003", "合同会社ブルーリーフ", "ブルーリーフ", "合同会社", True),
    Customer("3004", "株式会社ビルサービス", "ビルサービス", "株式会社", True),
    Customer("3005", "ビールサービス株式会社", "ビールサービス", "株式会社", False),
    Customer("3006", "医療法人三日月会", "ミカヅキカイ", "医療法人", True),
    Customer("3007", "株式会社チヂミ工房", "チヂミコウボウ", "株式会社", True),
    Customer("3008", "一般財団法人日本ショッピング振興会", "ニホンショッピングシンコウカイ", "一般財団法人", True),
    Customer("3009", "株式会社東日本ロジスティクス", "ヒガシニホンロジスティクス", "株式会社", True),
    Customer("3010", "株式会社東日本ロジスティクスソリューションズ北関東", "ヒガシニホンロジスティクスソリューションズキタカントウ", "株式会社", True),
    Customer("3011", "株式会社東日本ロジスティクスソリューションズ南関東", "ヒガシニホンロジスティクスソリューションズミナミカントウ", "株式会社", True),
    Customer("3012", "サクラデザインスタジオ株式会社", "サクラデザインスタジオ", "株式会社", False),
    Customer("3013", "サクラデザインスタジオジャパン株式会社", "サクラデザインスタジオジャパン", "株式会社", False),
    Customer("3014", "株式会社ダイヤモンドジャパン", "ダイヤモンドジャパン", "株式会社", True),
    # Sole proprietors: the master holds the trade name (屋号) and the owner; its kana (when it
    # has one) spells the trade name, or both.
    Customer("3015", "山田商店（山田太郎）", "ヤマダショウテン", "", True, "ヤマダ タロウ"),
    Customer("3016", "さくら整骨院 代表 佐藤花子", "サクラセイコツイン", "", True, "サトウ ハナコ"),
    Customer("3017", "みどり薬局 鈴木一郎", "ミドリヤッキョク", "", True, "スズキ イチロウ"),
)  # fmt: skip
STRANGERS = ("ｶ)ﾋｶﾞｼﾆﾎﾝｹﾝｾﾂ", "ﾄﾞ)ﾌﾞﾙｰｽｶｲ", "ｻｸﾗﾃﾞｻﾞｲﾝ(ﾕ", "(ｶ ﾀﾞｲﾔﾓﾝﾄﾞﾘｰｽ", "ｲ)ﾐｶｽﾞｷ")
# Words after a customer's name that make another company (a parent, a sister).
SISTER_WORDS = ("ﾘｰｽ", "ﾌﾄﾞｳｻﾝ", "ｻｰﾋﾞｽ", "ﾎｰﾙﾃﾞｲﾝｸﾞｽ", "ｼﾖｳｼﾞ")
BRANCHES = ("ｵｵｻｶｼﾃﾝ", "ﾄｳｷﾖｳｼｼﾔ", "ﾌｸｵｶｴｲｷﾞﾖｳｼﾖ")
MARKS = ("-", "ｰ", "‐", "－", "")  # how the long vowel reaches the field ("": left out)
_SMALL_HALF = dict(zip("ァィゥェォッャュョ", "ｧｨｩｪｫｯｬｭｮ", strict=True))


def cases(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    return [case(rng) for _ in range(count)]


def case(rng: random.Random) -> Case:
    master = [_master_row(c, rng) for c in CUSTOMERS]
    payer = rng.choice(CUSTOMERS)
    alike = [c for c in CUSTOMERS if c is not payer and _looks_alike(payer, c)]
    scale = rng.choice((1, 3, 7))
    bits = rng.sample(range(5), rng.randint(1, 4))
    # Amounts whose sums all differ by far more than a fee: powers of two, a little jitter.
    amounts = [(2**b) * 11_000 * scale + rng.randrange(100) for b in bits]
    invoices: list[dict[str, object]] = []
    numbers = [_invoice(invoices, payer, a, n) for n, a in enumerate(amounts)]
    for other in alike:  # the look-alikes owe the same amounts: only the name tells
        for n, a in enumerate(amounts):
            _invoice(invoices, other, a, n)
    size = rng.randint(1, min(3, len(amounts)))
    picked = sorted(rng.sample(range(len(amounts)), size))
    fee = rng.choice((0, *FEES))
    total = sum(amounts[i] for i in picked) - fee
    paid = (tuple(numbers[i] for i in picked),)
    kind = f"{'combined' if size > 1 else 'single'}{'_fee' if fee else ''}"
    draw = rng.random()
    if draw < 0.12:
        stranger = rng.choice(STRANGERS)
        transfers = [Transfer(stranger, total, Truth(None, (), False, f"stranger/{kind}"))]
    elif draw < 0.24:  # another company named after the customer, the field cut or not
        written = _sister(payer, rng)
        transfers = [Transfer(written, total, Truth(None, (), False, f"sister/{kind}"))]
    else:
        written, promised, shape = payer_name(payer, rng)
        truth = Truth(payer.code, paid, promised, f"{shape}/{kind}")
        transfers = [Transfer(written, total, truth)]
    return Case(master, invoices, transfers)


def _invoice(rows: list[dict[str, object]], customer: Customer, amount: int, n: int) -> str:
    number = f"INV-{customer.code}-{len(rows) + 1:03d}"
    due = f"2026-{1 + n:02d}-28"
    rows.append(
        {"請求番号": number, "取引先コード": customer.code, "取引先名": customer.name}
        | {"請求金額": amount, "支払期日": due}
    )
    return number


# --- names ---------------------------------------------------------------------------------


def _core(customer: Customer) -> str:
    """The name as a bank writes it, half-width, small kana large, ー as ``-``."""
    return half_width(customer.reading)


def _plain(half: str) -> str:
    """A half-width name without marks that do not tell names apart (long vowels)."""
    return half.replace("-", "")


def _large(half: str) -> str:
    """A written half-width name with small kana large and every long mark as ``-``."""
    large = {small: half_width(full) for full, small in _SMALL_HALF.items()}
    return "".join("-" if ch in MARKS else large.get(ch, ch) for ch in half)


def _looks_alike(a: Customer, b: Customer) -> bool:
    """Names one may be read as the other: one begins the other, or one without long marks."""
    x, y = _core(a), _core(b)
    shared = len(x) >= MIN_VISIBLE and len(y) >= MIN_VISIBLE and (x[:20] == y[:20])
    return shared or x.startswith(y) or y.startswith(x) or _plain(x) == _plain(y)


def _master_row(customer: Customer, rng: random.Random) -> dict[str, str]:
    if customer.owner:  # no kana (read from the kanji name), the trade name's, or both parts'
        owner = customer.owner.replace(" ", "")
        kana = rng.choice(("", customer.reading, half_width(customer.reading)))
        if rng.random() < 0.25:
            kana = f"{customer.reading}{rng.choice(('', ' '))}{owner}"
        return {"取引先コード": customer.code, "取引先名": customer.name, "取引先名カナ": kana}
    style = rng.random()
    reading = customer.reading
    if style < 0.35:
        kana = reading
    elif style < 0.55:  # half-width, small kana as typed
        kana = "".join(_SMALL_HALF.get(ch) or half_width(ch).replace("-", "ｰ") for ch in reading)
    elif style < 0.7:  # the long marks left out
        kana = reading.replace("ー", "")
    elif style < 0.85 and customer.form in FORMS:  # the form written into the kana
        short = unicodedata.normalize("NFKC", FORMS[customer.form][0])
        kana = f"{short}）{reading}" if customer.first else f"{reading}（{short}"
    else:
        kana = half_width(reading)
    return {"取引先コード": customer.code, "取引先名": customer.name, "取引先名カナ": kana}


def payer_name(customer: Customer, rng: random.Random) -> tuple[str, bool, str]:
    """The payer as written, whether the product promises to know it, and the shape."""
    if customer.owner:
        return _proprietor(customer, rng)
    core = _core(customer)
    mark = rng.choice(MARKS)
    spelling = rng.choice(("large", "small", "same_sound"))
    if spelling == "small":
        core = "".join(_SMALL_HALF.get(ch) or half_width(ch) for ch in customer.reading)
    elif spelling == "same_sound":
        core = core.replace("ﾁﾞ", "ｼﾞ").replace("ﾂﾞ", "ｽﾞ")
    core = core.replace("-", mark)
    before, after, form_shape = _form(customer, rng)
    branch = rng.choice(BRANCHES) if form_shape.startswith("middle") else ""
    written = before + core + after + branch
    width = rng.choice((None, *WIDTHS))
    cut = width is not None and len(written) > width
    if len(written) > WIDTHS[0]:
        width, cut = WIDTHS[0], True
    visible = core
    if cut and width is not None:
        visible = written[len(before) : width][: len(core)]
        written = written[:width]
    # A cut name (or one exactly at a width: it may be cut) that begins another's is either;
    # a name that is another's once long marks are left out is either.
    seen = _plain(_large(visible))
    others = [_plain(_core(c)) for c in CUSTOMERS if c is not customer]
    unique = _plain(_core(customer)) not in others
    if cut or len(written) in WIDTHS:
        kana = _kana(seen)
        unique = unique and kana >= MIN_VISIBLE and not any(o.startswith(seen) for o in others)
    if cut and after.strip() == _spelled_after(customer).strip():
        # One kana of a spelled-out form after the name proves nothing (``ｶ`` goes on names).
        tail = written[len(before) + len(core) :]
        unique = unique and _kana(tail) != 1
    shape = f"{form_shape}/{'mark:' + (mark or 'none')}/{spelling}/cut:{width if cut else 0}"
    return written, unique, shape


def _proprietor(customer: Customer, rng: random.Random) -> tuple[str, bool, str]:
    """A sole proprietor's account as banks name it: the trade name, the owner or both."""
    trade, owner = _core(customer), half_width(customer.owner)
    shapes = {
        "trade_owner_word": f"{trade} {rng.choice(('ﾀﾞｲﾋﾖｳ', 'ﾀﾞｲﾋﾖｳｼﾔ'))} {owner}",
        "owner_trade_paren": f"{owner}({trade}",
        "trade_owner": f"{trade} {owner}",
        "trade": trade,
        "owner": owner,
    }
    shape = rng.choice(sorted(shapes))
    return shapes[shape], True, f"proprietor_{shape}"


def _sister(customer: Customer, rng: random.Random) -> str:
    """Another company: the customer's name, a space and a word, cut at a width or not; a
    cut leaves some of the word (cut before it, the name is the customer's as the bank cut it)."""
    before, after, _ = _form(customer, rng)
    name = f"{before}{_core(customer)} "
    written = f"{name}{rng.choice(SISTER_WORDS)}{after}"
    width = rng.choice(WIDTHS)
    return written[:width] if len(name) < width < len(written) else written


def _kana(half: str) -> int:
    """Kana in a half-width text (a voiced mark is not one)."""
    return sum(ch not in "ﾞﾟ ()" for ch in half)


def _spelled_after(customer: Customer) -> str:
    return f" {FORMS[customer.form][1]}"


def _form(customer: Customer, rng: random.Random) -> tuple[str, str, str]:
    """What stands before and after the name for its legal form, and the shape's name."""
    if not customer.form:
        return "", "", "no_form"
    short, spelled = FORMS[customer.form]
    if customer.first:
        choices = {
            "first": (f"{short})", ""),
            "first_space": (f"{short}) ", ""),
            "first_paren": (f"({short})", ""),
            "first_open": (f"({short} ", ""),
            "first_spelled": (f"{spelled} ", ""),
            "first_spelled_glued": (spelled, ""),
            "first_period": (f"{short}.", ""),  # a period for the parenthesis
        }
    else:
        choices = {
            "last": ("", f"({short}"),
            "last_space": ("", f" ({short}"),
            "last_paren": ("", f"({short})"),
            "last_spelled": ("", _spelled_after(customer)),
            "last_spelled_glued": ("", spelled),
            "last_period": ("", f".{short}"),
            "middle": ("", f"({short})"),
            "middle_open": ("", f"({short} "),
        }
    shape = rng.choice(sorted(choices))
    before, after = choices[shape]
    return before, after, shape
