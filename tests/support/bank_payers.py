"""Payer fields and amounts in shapes the other bank generators do not write, each with the truth
of who paid what, for the 入金消込 property tests.

A :class:`~tests.support.bank_shapes.Case` is a master of look-alike customers (a name, the same
name with a city after it, a katakana-only name and a longer one starting with it, a subsidiary
and its parent) with open invoices of two or three months each, the look-alikes owing the same
amounts, and one or two transfers of one payer, written as payers' banks write them:

- a branch or an office glued after a city's name that Sudachi tags in kanji only
  (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞﾊﾏﾏﾂｼﾃﾝ``, ``ｱｵﾊﾞｼﾖｳｼﾞﾀｶﾏﾂｴｲｷﾞﾖｳｼﾖ``, ``...ﾅﾊｼﾃﾝ``), and another company's
  branch glued after a word that names a town too (``ｱｵﾊﾞｼﾖｳｼﾞﾋｶﾘｼﾃﾝ``: nobody of the master);
- a note of what is paid inside the field (``ｱｵﾊﾞｼﾖｳｼﾞ ｾｲｷﾕｳ NO.1234``, ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ NO.1234``);
- a representative (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ ｻﾄｳ ﾀﾛｳ``; ``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾞｲﾋﾖｳ ｻﾄｳ ﾀﾛｳ``: not
  promised, a name the dictionary may not tag), or the person in charge
  (``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ ﾀﾝﾄｳ ｻﾄｳ``; ``ｱｵﾊﾞｼﾖｳｼﾞ ｻﾄｳ ﾀﾛｳ``: not promised, a name the dictionary may not tag);
- the parent paying for its subsidiary (``ｶ)ｱｵﾊﾞﾎｰﾙﾃﾞｲﾝｸﾞｽ`` for 青葉物流: never the subsidiary's);
- a katakana-only name cut at an export's 20 characters (``ｶ)ﾌﾞﾙｰﾑﾃﾞｻﾞｲﾝﾗﾎﾞﾗﾄﾘｰ`` …: promised
  only where no look-alike starts so).

Amounts: one transfer paying the invoices of two months less a fee; two transfers, each one
month's invoice less a different standard fee (税込 440, 660, 770 …); exact.

Written apart from ``keiri_agent.blocks.table``: its own readings and city names.
"""

from __future__ import annotations

import random

from tests.support.bank_names import half_width
from tests.support.bank_shapes import Case, Transfer, Truth

__all__ = ["CITIES", "cases", "inside_cuts", "stranger_cuts"]

# Cities Sudachi knows in kanji only, and some it knows in kana too (ｵｵｻｶ, ｾﾝﾀﾞｲ).
CITIES = (
    "ﾊﾏﾏﾂ", "ﾀｶﾏﾂ", "ﾅﾊ", "ｳﾂﾉﾐﾔ", "ﾏﾂﾔﾏ", "ﾀｶｻｷ", "ﾏｴﾊﾞｼ", "ｺｳﾌ", "ﾜｶﾔﾏ", "ﾐﾔｻﾞｷ",
    "ｼﾓﾉｾｷ", "ﾖﾂｶｲﾁ", "ﾄﾂﾄﾘ", "ﾏﾂｴ", "ﾏﾂﾓﾄ", "ﾊﾁｵｳｼﾞ", "ｵｵｻｶ", "ｾﾝﾀﾞｲ",
)  # fmt: skip
OFFICES = ("ｼﾃﾝ", "ｴｲｷﾞﾖｳｼﾖ", "ｼｼﾔ")
# Words that name a town too (光市, 旭市, 東洋町, 中央市) and end companies' names as often.
TOWN_WORDS = ("ﾋｶﾘ", "ｱｻﾋ", "ﾄｳﾖｳ", "ﾁﾕｳｵｳ")
FEES = (440, 660, 770, 330, 550)  # standard fees, 税込
DUES = ("2026-01-31", "2026-02-28", "2026-03-31")
EXPORT_CUT = 20
PEOPLE = ("ｻﾄｳ ﾀﾛｳ", "ｽｽﾞｷ ﾊﾅｺ", "ﾀｶﾊｼ ｹﾝｼﾞ")
SURNAMES = ("ｻﾄｳ", "ｽｽﾞｷ", "ﾀｶﾊｼ")
TITLES = ("ﾀﾞｲﾋﾖｳﾄﾘｼﾏﾘﾔｸ", "ﾀﾞｲﾋﾖｳｼﾔｲﾝ", "ｼﾔﾁﾖｳ")

# code → (master name, kana, legal form's bank abbreviation, whether the form is written first)
CUSTOMERS = {
    "7001": ("株式会社青葉商事", "アオバショウジ", "ｶ", True),
    "7002": ("株式会社青葉", "アオバ", "ｶ", True),
    "7003": ("青葉商事浜松株式会社", "アオバショウジハママツ", "ｶ", False),  # a city in its name
    "7004": ("株式会社サンシャイン", "サンシャイン", "ｶ", True),
    "7005": ("株式会社サンシャインホーム", "サンシャインホーム", "ｶ", True),
    "7006": ("株式会社ブルームデザインラボラトリー", "ブルームデザインラボラトリー", "ｶ", True),
    "7007": ("青葉物流株式会社", "アオバブツリュウ", "ｶ", False),
    "7008": ("合同会社ミナト企画", "ミナトキカク", "ﾄﾞ", True),
}
PAYERS = ("7001", "7003", "7004", "7005", "7006", "7007", "7008")
LOOK_ALIKES = {"7001": ("7002", "7003"), "7003": ("7001",), "7004": ("7005",), "7005": ("7004",)}
PARENT = "ｶ)ｱｵﾊﾞﾎｰﾙﾃﾞｲﾝｸﾞｽ"  # no customer: 青葉物流's parent


# Katakana words a company's name is made of (full-width, as its registration reads), some with
# small kana a bank writes large that Sudachi does not know so (ﾛｼﾞｽﾃｲｸｽ, ｿﾌﾄｳｴｱ).
KANA_WORDS = (
    "サンシャイン", "ブルーム", "デザイン", "ラボラトリー", "ホーム", "サービス", "クリエイト",
    "ソリューションズ", "マネジメント", "テクノ", "システム", "プランニング", "グリーン",
    "フィールド", "アクア", "ネクスト", "ライフ", "パートナーズ", "トラスト", "メディカル",
    "ロジスティクス", "ソフトウェア", "ファクトリー", "ウェルネス", "フォレスト", "ディレクション",
)  # fmt: skip
KANA_STYLES = ("full", "bank", "typed")  # how the master writes a katakana-only name


def cases(seed: int, count: int) -> list[Case]:
    """``count`` cases drawn from ``seed``: a third of them of katakana-only names."""
    rng = random.Random(seed)
    return [_kana_case(rng, n) if rng.random() < 1 / 3 else _case(rng, n) for n in range(count)]


def _kana_case(rng: random.Random, number: int) -> Case:
    """A katakana-only customer whose name's first words, with ``ｶ)``, are exactly an export's
    cut wide, and the payer either that other company (whose whole name it is: nobody of the
    master) or the customer itself cut at the export's width (a cut inside a word or at its end:
    not promised, the product cannot tell it from the other company's name)."""
    while True:
        words = rng.sample(KANA_WORDS, rng.randint(3, 5))
        widths = [len("ｶ)" + half_width("".join(words[:k]))) for k in range(1, len(words))]
        if EXPORT_CUT in widths or 30 in widths:
            break
    width = EXPORT_CUT if EXPORT_CUT in widths else 30
    short = "".join(words[: widths.index(width) + 1])
    whole = "".join(words)
    style = rng.choice(KANA_STYLES)
    written = {"full": whole, "bank": half_width(whole), "typed": _typed(whole)}[style]
    master = [{"取引先コード": "7101", "取引先名": f"株式会社{whole}", "取引先名カナ": ""}]
    if style != "full":  # a master that keeps the name as the bank writes it, no kanji at all
        master = [{"取引先コード": "7101", "取引先名": f"ｶ){written}", "取引先名カナ": ""}]
    amount = rng.randrange(30_000, 600_000)
    invoice = f"{number}-7101-1"
    invoices: list[dict[str, object]] = [
        {"請求番号": invoice, "取引先コード": "7101", "取引先名": master[0]["取引先名"],
         "請求金額": amount, "支払期日": DUES[0]}
    ]  # fmt: skip
    stranger = rng.random() < 0.6
    payer = "ｶ)" + half_width(short if stranger else whole)[: width - 2]
    truth = Truth(
        None if stranger else "7101",
        () if stranger else ((invoice,),),
        False,
        f"kana_{'stranger' if stranger else 'own'}_cut_{style}/exact",
    )
    return Case(master, invoices, [Transfer(payer, amount, truth)], [truth.shape])


# The words of KANA_WORDS with a small kana (ｳｴ for ウェ when a bank writes them large).
SMALL_KANA_WORDS = [word for word in KANA_WORDS if set(word) & set("ァィゥェォ")]


def _name_with_small_kana(rng: random.Random) -> list[str]:
    """A katakana-only company name's words, in their order: one word with a small kana and
    two to four others of KANA_WORDS."""
    first = rng.choice(SMALL_KANA_WORDS)
    words = [first, *rng.sample([w for w in KANA_WORDS if w != first], rng.randint(2, 4))]
    rng.shuffle(words)
    return words


def stranger_cuts(seed: int, count: int) -> list[tuple[str, str]]:
    """``count`` (payer, master name) pairs drawn from ``seed``: a katakana-only customer holding
    a word with small kana (the master as the bank writes it, ``ｶ)ﾌﾞﾙｰﾑｿﾌﾄｳｴｱﾌｱｸﾄﾘｰ``, or in
    full-width katakana), and another company whose whole name is its first words, exactly as
    wide as an export's cut (``ｶ)ﾌﾞﾙｰﾑｿﾌﾄｳｴｱ``...): nobody of the master."""
    rng = random.Random(seed)
    found: list[tuple[str, str]] = []
    while len(found) < count:
        words = _name_with_small_kana(rng)
        for end in range(1, len(words)):
            payer = "ｶ)" + half_width("".join(words[:end]))
            if len(payer) in (EXPORT_CUT, 30) and len(words) > end:
                whole = "".join(words)
                bank = rng.random() < 0.5
                found.append((payer, f"ｶ){half_width(whole)}" if bank else f"株式会社{whole}"))
    return found[:count]


# The words of KANA_WORDS made of other words: a cut between them may be a whole name.
KANA_PARTS = {"ソフトウェア": 3, "パートナーズ": 5, "ソリューションズ": 7}


def inside_cuts(seed: int, count: int) -> list[tuple[str, str]]:
    """``count`` (payer, master name) pairs drawn from ``seed``: a katakana-only customer holding
    a word with small kana (the master in full-width katakana, as the bank writes it or as a
    person types it) paying under its name cut at an export's 20 or 30 characters inside a word
    (``ｶ)ﾛｼﾞｽﾃｲｸｽｻｰﾋﾞｽﾌﾞﾙｰﾑﾃﾞｻﾞ``): no company's whole name ends there, the customer's own."""
    rng = random.Random(seed)
    found: list[tuple[str, str]] = []
    while len(found) < count:
        words = _name_with_small_kana(rng)
        whole = half_width("".join(words))
        width = rng.choice((EXPORT_CUT, 30))
        if len("ｶ)" + whole) <= width or not _inside_word(words, width - 2):
            continue
        style = rng.choice(KANA_STYLES)
        name = {"full": "株式会社" + "".join(words), "bank": f"ｶ){whole}"}.get(style)
        found.append(("ｶ)" + whole[: width - 2], name or "ｶ)" + _typed("".join(words))))
    return found


def _inside_word(words: list[str], cut: int) -> bool:
    """Whether ``cut`` half-width characters of ``words`` end inside a word, not between the
    words a word is made of (:data:`KANA_PARTS`)."""
    start = 0
    for word in words:
        end = start + len(half_width(word))
        if start < cut < end:
            part = KANA_PARTS.get(word)
            return part is None or cut != start + len(half_width(word[:part]))
        start = end
    return False


def _typed(katakana: str) -> str:
    """Half-width kana as a person types it: small kana small, ー as ``ｰ``."""
    small = dict(zip("ァィゥェォッャュョ", "ｧｨｩｪｫｯｬｭｮ", strict=True))
    return "".join(small.get(ch) or half_width(ch).replace("-", "ｰ") for ch in katakana)


def _case(rng: random.Random, number: int) -> Case:
    master = [
        {"取引先コード": code, "取引先名": name, "取引先名カナ": kana}
        for code, (name, kana, _, _) in CUSTOMERS.items()
    ]
    payer = rng.choice(PAYERS)
    months = rng.randint(2, 3)
    amounts = [rng.randrange(30_000, 600_000) for _ in range(months)]
    while len({a // 2_000 for a in amounts}) < months:  # months apart by more than any fee
        amounts = [rng.randrange(30_000, 600_000) for _ in range(months)]
    invoices: list[dict[str, object]] = []
    numbers: dict[str, list[str]] = {}
    for code in (payer, *LOOK_ALIKES.get(payer, ())):
        name = CUSTOMERS[code][0]
        for month, (amount, due) in enumerate(zip(amounts, DUES, strict=False)):
            invoice = f"{number}-{code}-{month + 1}"
            numbers.setdefault(code, []).append(invoice)
            invoices.append(
                {"請求番号": invoice, "取引先コード": code, "取引先名": name,
                 "請求金額": amount, "支払期日": due}
            )  # fmt: skip
    written, promised, shape, truth = _payer(payer, rng)
    mine = numbers[payer]
    kind = rng.choice(("two_months_fee", "two_fees", "exact"))
    transfers: list[Transfer] = []

    def send(amount: int, paid: tuple[str, ...], sure: bool) -> None:
        right = (paid,) if truth else ()
        transfers.append(
            Transfer(written, amount, Truth(truth, right, promised and sure, f"{shape}/{kind}"))
        )

    if kind == "two_months_fee":
        send(amounts[0] + amounts[1] - rng.choice(FEES), (mine[0], mine[1]), True)
    elif kind == "two_fees":
        first, second = rng.sample(FEES, 2)
        send(amounts[0] - first, (mine[0],), True)
        send(amounts[1] - second, (mine[1],), True)
    else:
        at = rng.randrange(months)
        send(amounts[at], (mine[at],), True)
    return Case(master, invoices, transfers, [t.truth.shape for t in transfers])


def _payer(code: str, rng: random.Random) -> tuple[str, bool, str, str | None]:
    """The payer as written, whether the product promises to read it, its shape and who paid
    (None: nobody of the master)."""
    _, kana, short, first = CUSTOMERS[code]
    name = half_width(kana)
    formed = f"{short}){name}" if first else f"{name}({short}"
    shape = rng.choice(
        ("glued_city", "glued_word", "note_number", "representative", "in_charge", "owner_word",
         "person_after", "parent",
         "cut_export", "plain")
    )  # fmt: skip
    if shape == "glued_city":
        city, office = rng.choice(CITIES), rng.choice(OFFICES)
        glued = f"{name}{city}{office}"
        # 青葉商事's 浜松 branch, as written, is as likely a branch of 青葉商事浜松, a customer
        # too: not promised.
        named = {half_width(CUSTOMERS[other][1]) for other in LOOK_ALIKES.get(code, ())}
        promised = f"{name}{city}" not in named
        return (f"{short}){glued}" if rng.random() < 0.5 else glued), promised, shape, code
    if shape == "glued_word":  # another company: the name, a word that is a town's too, a branch
        return f"{name}{rng.choice(TOWN_WORDS)}{rng.choice(OFFICES)}", False, shape, None
    if shape == "note_number":
        note = rng.choice(("ｾｲｷﾕｳ NO.", "NO.", "ｾｲｷﾕｳNO.", "ｾｲｷﾕｳ "))
        return f"{formed} {note}{rng.randrange(1000, 99999)}", True, shape, code
    if shape == "representative":
        return f"{formed} {rng.choice(TITLES)} {rng.choice(PEOPLE)}", True, shape, code
    if shape == "in_charge":
        return f"{formed} ﾀﾝﾄｳ {rng.choice(SURNAMES)}", True, shape, code
    if shape == "owner_word":  # 代表 and the representative, after a company's name
        return f"{formed} ﾀﾞｲﾋﾖｳ {rng.choice(PEOPLE)}", False, shape, code
    if shape == "person_after":
        return f"{name} {rng.choice(PEOPLE)}", False, shape, code
    if shape == "parent":
        return PARENT, False, shape, None
    if shape == "cut_export":
        whole = f"{short}){name}"
        if len(whole) <= EXPORT_CUT:
            return whole, True, "plain", code
        return whole[:EXPORT_CUT], code not in LOOK_ALIKES, shape, code
    return formed, True, shape, code
