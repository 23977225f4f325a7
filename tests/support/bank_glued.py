"""Masters where one customer's name is another's and a word that names a place too, and payers
with a branch glued to the name, each with the truth of who paid, for the 入金消込 property tests.

A bank glues a branch to a payer's name (``ｱｵﾊﾞﾊﾏﾏﾂｼﾃﾝ``); a place before the branch word tells
where the name ends. But many places are words companies are named with as well (さくら, みどり,
大和, 日本, 日の出, 富士, いずみ): ``ｱｵﾊﾞｻｸﾗｼﾃﾝ`` is 青葉サクラ's branch as likely as 青葉's 桜
branch. Each :class:`~tests.support.bank_shapes.Case` has a customer (株式会社青葉) and one named
with it and such a word (青葉サクラ株式会社, its kana in the master or not), both owing the same
amounts, and one transfer, written as:

- ``lookalike_branch``: the longer customer's branch glued without a place
  (``ｶ)ｱｵﾊﾞｻｸﾗｼﾃﾝ``): its own (not promised: where its name ends cannot be told), never the
  shorter one's;
- ``lookalike_city``: the longer customer's branch glued after a city (``ｱｵﾊﾞｻｸﾗﾊﾏﾏﾂｼﾃﾝ``):
  promised;
- ``base_city``: the shorter customer's branch glued after a city (``ｶ)ｱｵﾊﾞﾊﾏﾏﾂｼﾃﾝ``): promised.

The longer customer's branch where the master holds only the shorter one (nothing in the master
tells that サクラ goes on a name there) is no transfer of these cases: :func:`glued_payers` writes
each base with each word and each office glued (``ｱｵﾊﾞｻｸﾗｼﾃﾝ``, never the base's), and each base
with each city of :data:`BRANCH_CITIES` (``ｱｵﾊﾞｾﾝﾀﾞｲｼﾃﾝ``, the base's branch).

Written apart from ``keiri_agent.blocks.table``: its own names and readings.
"""

from __future__ import annotations

import random

from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth

__all__ = ["BASES", "BRANCH_CITIES", "WORDS", "cases", "glued_payers"]

# The customer's own name (kanji, kana).
BASES = (
    ("青葉", "アオバ"), ("東邦", "トウホウ"), ("丸山", "マルヤマ"), ("三協", "サンキョウ"),
    ("北陸", "ホクリク"), ("光栄", "コウエイ"), ("大成", "タイセイ"), ("昭和", "ショウワ"),
)  # fmt: skip
# Words that name a place too and name companies as often (kanji or kana as a master writes
# them, kana).
WORDS = (
    ("サクラ", "サクラ"), ("みどり", "ミドリ"), ("大和", "ヤマト"), ("日本", "ニホン"),
    ("日の出", "ヒノデ"), ("富士", "フジ"), ("いずみ", "イズミ"), ("ミナミ", "ミナミ"),
)  # fmt: skip
CITIES = ("ﾊﾏﾏﾂ", "ﾀｶﾏﾂ", "ﾅﾊ", "ｵｵｻｶ", "ﾖｺﾊﾏ", "ﾅｺﾞﾔ", "ﾌｸｵｶ")
# Cities a branch is named after whose kana the dictionary also knows as a surname, a product or
# a rare word (マツモト, カワサキ, センダイ: 千代), and ones it knows in kanji only.
BRANCH_CITIES = (
    *CITIES, "ｾﾝﾀﾞｲ", "ﾏﾂﾔﾏ", "ﾏﾂﾓﾄ", "ｶﾜｻｷ", "ﾁﾊﾞ", "ﾐﾔｻﾞｷ", "ﾏﾂｴ", "ｻﾂﾎﾟﾛ", "ｷﾖｳﾄ",
    "ｺｳﾍﾞ", "ﾋﾛｼﾏ",
)  # fmt: skip
OFFICES = ("ｼﾃﾝ", "ｴｲｷﾞﾖｳｼﾖ", "ｼｼﾔ")
SHAPES = ("lookalike_branch", "lookalike_city", "base_city")
DUE = "2026-01-31"


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``, each shape in turn."""
    rng = random.Random(seed)
    return [_case(rng, number, SHAPES[number % len(SHAPES)]) for number in range(count)]


def glued_payers(*, city: bool) -> list[tuple[str, str, str]]:
    """Every base (kanji, kana) with a payer: the base's kana glued to each word of
    :data:`WORDS` (``city=False``: another company's branch) or each city of
    :data:`BRANCH_CITIES` (``city=True``: the base's), then each office."""
    middles = BRANCH_CITIES if city else tuple(half_width(kana) for _, kana in WORDS)
    return [
        (base, kana, f"{half_width(kana)}{middle}{office}")
        for base, kana in BASES
        for middle in middles
        for office in OFFICES
    ]


def _case(rng: random.Random, number: int, shape: str) -> Case:
    base, base_kana = rng.choice(BASES)
    word, word_kana = rng.choice(WORDS)
    with_kana = rng.random() < 0.7  # the master's 取引先名カナ filled in
    customers = {
        "8001": (f"株式会社{base}", base_kana if with_kana else ""),
        "8002": (f"{base}{word}株式会社", base_kana + word_kana if with_kana else ""),
    }
    master = [
        {"取引先コード": code, "取引先名": name, "取引先名カナ": kana}
        for code, (name, kana) in customers.items()
    ]
    amount = rng.randrange(30_000, 600_000)
    invoices: list[dict[str, object]] = [
        {"請求番号": f"{number}-{code}", "取引先コード": code, "取引先名": name,
         "請求金額": amount, "支払期日": DUE}
        for code, (name, _) in customers.items()
    ]  # fmt: skip
    office, city = rng.choice(OFFICES), rng.choice(CITIES)
    base_bank, long_bank = half_width(base_kana), half_width(base_kana + word_kana)
    payer, code, promised = {
        "lookalike_branch": (f"{long_bank}{office}", "8002", False),
        "lookalike_city": (f"{long_bank}{city}{office}", "8002", True),
        "base_city": (f"{base_bank}{city}{office}", "8001", True),
    }[shape]
    if rng.random() < 0.5:
        payer = f"ｶ){payer}"
    acceptable = ((f"{number}-{code}",),)
    truth = Truth(code, acceptable, promised, f"{shape}/{'kana' if with_kana else 'kanji'}")
    return Case(master, invoices, [Transfer(payer, amount, truth)], [truth.shape])
